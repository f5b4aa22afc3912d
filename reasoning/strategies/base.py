"""The shared tree interface every strategy is written against.

A strategy gets a Context: the problem, its rubric, validated params, a store (the tree,
persisted), a gateway (the model, budgeted), a control (the overseers) and a clock. It never
imports Django, channels or litellm, so it reads on its own and tests with fakes.

A run is re-entrant: it rebuilds the strategy's working state from the stored tree (a fresh
session is the special case of a tree with only its root), applies the overseers' pending
commands, continues the search unless it already ended once, and finishes with the best node.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

# The model layer's types, here too because every strategy uses them.
from reasoning.facts.case import CaseCheck
from reasoning.facts.sheet import Fact, render_sheet
from reasoning.llm.contracts import Answer, BudgetExhausted, Contract, ModelError, Unparseable  # noqa: F401
from reasoning.prompts import format_path, render

from .replies import AnswerOut
from .thoughts import same

log = logging.getLogger(__name__)

VERIFY_SAMPLES = 3  # a final candidate's judgement is asked this many times before it is trusted
VERIFY_TOP = 3  # of several final candidates, at most this many are verified, the best-scored first
ANSWER_TRIES = 3  # an answer pruned while it is written is written again from the best live line, this often
FACT_TRIES = 4  # an answer failing a fact check: written again once with the findings, then from the next-best lines
SYNTHESIS_TRIES = 3  # a synthesis that broke its contract: written from the next-best lines, this many lines in all
BROKE_CONTRACT = "the synthesis broke its contract"
FACTS_FAILED = "fact_check_failed"
ANSWER_FAILED = "answer_check_failed"  # a task's own check (a Game of 24 answer's arithmetic) refused the answer
NO_SUCCESS = "no_success"  # a search whose answer must come from a line that succeeded (LATS) found none


class StopRequested(Exception):
    """The session was paused or cancelled, or its server is stopping: no new model call starts."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


@dataclass
class Node:
    """A strategy's view of one stored node."""

    id: str
    parent_id: str | None
    depth: int
    thought: str
    state: dict = field(default_factory=dict)
    eval_score: float | None = None
    eval_reason: str = ""
    pruned: bool = False  # this node's own flag; Store.is_pruned also looks at its ancestors
    pruned_by: str = ""
    stale: bool = False
    stale_mark: int = 0  # the overseer's count of edits that made it stale: a judgement clears only the marks it saw
    is_terminal: bool = False
    visit_count: int = 0
    total_reward: float = 0.0
    parse_error: str = ""


@dataclass
class Edge:
    """A ReAct-style step between two nodes: the action taken and what it returned."""

    from_id: str
    to_id: str
    action: str = ""
    observation: str = ""


@dataclass
class Critique:
    """A verbal reflection on an attempt, kept as memory for the next one."""

    node_id: str | None
    attempt_num: int
    outcome_score: float
    critique: str
    applied_to_next: bool = False
    id: str = ""


@dataclass
class Command:
    """An overseer's request that only the session's running strategy may carry out."""

    id: int
    action: str  # expand | edit | promote | resynthesize
    node_id: str | None
    payload: dict
    actor: str


@dataclass
class Prior:
    """What the session already holds when a run starts."""

    search_done: bool = False  # the search ended once; a reopened session only applies commands
    final_node_id: str | None = None
    final_answer: str = ""
    partial: bool = False  # that answer is the best line so far (a failed, exhausted or cancelled search's)
    chosen_by: str = ""  # a person promoted the final node: their choice stands until a person changes it
    note: str = ""


class Store(Protocol):
    """The session's tree: reads answer from memory, writes persist (and publish) before they return, except that
    new children may still be being inserted: every later write lands after them, and settled() waits for them."""

    def get(self, node_id: str) -> Node | None: ...

    def nodes(self) -> list[Node]: ...

    def children(self, node: Node) -> list[Node]: ...

    def path(self, node: Node) -> list[Node]:
        """Root-first path to the node."""

    def is_pruned(self, node: Node) -> bool:
        """True if the node or any ancestor is pruned: its whole subtree is out of the search."""

    def edges(self) -> list[Edge]: ...

    def critiques(self) -> list[Critique]:
        """Oldest first: the memory a strategy rebuilds from."""

    async def add_root(self, thought: str, state: dict) -> Node: ...

    async def add_children(self, parent: Node, items: list[dict], answer: Answer | None) -> list[Node]:
        """Children under a parent ({"thought", "state"?, "action"?, "observation"?}: the last two make an edge).

        If an overseer pruned the branch meanwhile, they are kept and is_pruned says so.
        """

    async def settled(self) -> None:
        """Every write so far has landed (raises the error of one that failed)."""

    async def add_critique(
        self, node: Node | None, attempt_num: int, outcome_score: float, critique: str, spent: Answer | None = None
    ) -> Critique: ...

    async def mark_applied(self, critiques: list[Critique]) -> None:
        """These critiques went into the next attempt's prompt."""

    async def update(self, node: Node, **fields) -> None: ...

    async def update_many(self, changes: list[tuple[Node, dict]]) -> None:
        """Several updates in one write; a field `spent` (an Answer or Unparseable) adds its cost and ledger rows."""

    async def prune(self, nodes: list[Node]) -> None:
        """The strategy's own prune (a beam drop)."""

    async def refresh(self) -> None:
        """Re-read what overseers change (prunes, edits, stale marks)."""


class Gateway(Protocol):
    async def ask(
        self, contract: Contract, prompt: str, node_id: str | None = None, expect: int | None = None, samples: int = 1
    ) -> Answer:
        """A parsed reply; `expect` is how many items the prompt asked for, where it asked for a list; `samples`
        independent replies in Answer.samples (a judgement sampled several times)."""

    async def remaining_usd(self) -> float: ...

    def typical_call_usd(self) -> float: ...

    async def close(self) -> None:
        """Release what the gateway holds (leased budget); called by the engine, not by strategies."""


class Memory(Protocol):
    """Judgements kept for the firm's later sessions on the same models and rubric, by a key the strategy gives (what
    its judge's prompt shows of a state no problem changes): the reference's value cache, which lives for its whole run,
    across puzzles. A hit costs no call."""

    async def recall(self, key: str) -> tuple[str, dict] | None:
        """(where it was judged: "session/node", the judgement's fields) or None."""

    async def keep(self, key: str, node: Node, fields: dict) -> None:
        """A fresh judgement, for later sessions (the first one kept stands)."""


class Control(Protocol):
    async def checkpoint(self) -> list[Command]:
        """Raise StopRequested if the session was paused or cancelled; else the overseers' pending commands."""

    async def done(self, command: Command, applied: bool, detail: str = "", after: dict | None = None) -> None:
        """Record a command's outcome."""


class StrictParams(BaseModel):
    # Strict: a count is a JSON integer, not "3", 3.0 or true; a weight a number, not a string.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    check_facts: bool = Field(
        True,
        description="Check every step and the answer against the client's facts (off: to measure what the checks buy).",
    )


@dataclass
class Context:
    problem: str
    kind: str
    rubric: str
    params: StrictParams
    store: Store
    gateway: Gateway
    control: Control
    prior: Prior = field(default_factory=Prior)
    clock: Callable[[], float] = time.monotonic
    # The client's fact sheet, shown in every prompt, and the checker of every answer against it (off by default).
    case: CaseCheck = field(default_factory=lambda: CaseCheck(enabled=False))
    memory: Memory | None = None  # the firm's judgements of states, across its sessions (None: this session's only)


@dataclass
class Outcome:
    final_answer: str
    final_node: Node | None
    reason: str  # "solved", "budget", "synthesis_failed", "no_thoughts", "unchanged", ...
    partial: bool = False
    chosen_by: str = ""
    note: str = ""
    detail: str = ""  # why there is no answer (or only a partial one), in the words of the failure
    checks: list | None = None  # the fact checker's findings on the answer (None: the answer is the one stored)
    model: str = ""  # the model that wrote the answer ("": its final node's own, as a line or a step's answer)
    kept: bool = False  # the answer stored before this turn, as it was (its label stands)
    checked: bool = False  # the checks ran on it (off, or nothing to check against: its badge claims nothing)
    exhausted_by: str = ""  # the call the budget could not cover, and what it needed (an exhausted search's)
    figures: list | None = None  # the figures the model declared with the answer (None: the answer is the one stored)

    @property
    def exhausted(self):
        return self.reason == "budget"


class Strategy(ABC):
    """One search algorithm. Subclasses write the search and its model steps; this class runs the session's turn."""

    # An answer refused by the fact checks is written again with its findings once, then from the next-best lines. A
    # strategy whose answer is refined version by version (TRM) rewrites its refused answer with that answer's own
    # findings at each try instead: its other lines are its earlier versions, which hold the same slips.
    REFINES_ITS_ANSWER = False

    name: ClassVar[str]
    label: ClassVar[str]
    # How the explorer draws it: what its node colours measure (None: it keeps no scores), and the legend's entries
    # that mean something for it (keys of the legend in templates/explorer/session_detail.html).
    scale: ClassVar[str | None] = "score"
    legend: ClassVar[tuple[str, ...]] = ("unscored",)
    Params: ClassVar[type[StrictParams]] = StrictParams
    contracts: ClassVar[tuple[Contract, ...]] = ()  # every prompt step it asks the model, with its reply's shape

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.states: dict[str, tuple[str, asyncio.Future]] | None = None  # state key -> (judged node, its judgement)
        self.exhausted = False
        self.exhausted_by = ""  # the first call (or step) the budget could not cover: which, and what it needed
        self.model_failure: ModelError | None = None  # the first call that failed on every model, if any
        self.promoted: tuple[Node, Command] | None = None
        self.resynthesize = False
        self.findings_note = ""  # the checker's findings on the last answer, shown to the synthesis written again
        self.refused_answer = ""  # that answer, for a strategy that rewrites it (REFINES_ITS_ANSWER)

    # ---- what each strategy writes -------------------------------------------------------

    @abstractmethod
    async def search(self) -> None:
        """Continue the search from the stored tree until it ends (or a node is promoted).

        Call step_boundary() before each step and once after the last one.
        """

    @abstractmethod
    async def expand(self, node: Node, k: int) -> list[Node]:
        """Propose and score k children of one node, on an overseer's demand."""

    @abstractmethod
    async def rescore(self, node: Node) -> None:
        """Score a node again (its thought was edited)."""

    @abstractmethod
    async def synthesize(self, path: list[Node]) -> Answer:
        """The final answer for a root-first path."""

    def final_candidates(self) -> list[Node]:
        """Nodes that each end the search with an answer of their own, verified before one is chosen (none: the
        strategy's own evaluations already decide)."""
        return []

    async def judge(self, node: Node, samples: int) -> dict:
        """The fields a fresh judgement of the node writes (its evaluation asked `samples` times); {} if none came."""
        return {}

    # ---- transpositions: one judgement per state ------------------------------------------------

    shares_states: ClassVar[bool] = False  # its judge can judge a state alone, so equal states share one judgement

    def state_key(self, node: Node) -> str | None:
        """The canonical state a node's thought reaches, where the task defines one by its rules (a Game of 24's numbers
        left); None: the node is judged on its whole line. A line an overseer edited is judged whole, since its state
        may no longer follow from its steps.

        Never a state a model declares: on a wealth problem a step's worth is its line's (the figures and decisions so
        far, each checked against the client's facts), no prompt asks for a canonical state, and two lines that summed
        themselves up alike may still differ in a figure the checks fail: judgements are shared on a puzzle only."""
        if not (self.shares_states and self.ctx.case.defines_states) or node.depth == 0:
            return None
        if node.stale or node.stale_mark:
            return None
        before = [n.thought for n in self.ctx.store.path(node)[1:-1]]
        return self.ctx.case.state_of(node.thought, before, claimed=self.judges_claims())

    def judges_claims(self) -> bool:
        """Whether a step that breaks the task's rules is judged by the state it claims (the reference's way), not on
        its whole line."""
        return False

    def line_failures(self, node: Node) -> list:
        """The failed checks of the line to a node: each step's thought checked against the client's facts (its figures
        and arithmetic, the client's constraints, the jurisdiction's rules). A line with one is no success whatever its
        judge says (LATS, Reflexion), and the findings are the evidence its reflection is written from. A puzzle's steps
        have none: its answer is checked alone."""
        return [f for n in self.ctx.store.path(node)[1:] for f in failures(self.ctx.case(n.thought))]

    def line_evidence(self, node: Node) -> str | None:
        """The failed checks of a node's line, as the evidence its reflection is written from; None where no facts are
        checked (a puzzle, checks off): the prompt then leaves the section out."""
        if not self.ctx.case.active or self.ctx.case.puzzle:
            return None
        return line_evidence(self.line_failures(node))

    def line_key(self, node: Node) -> str:
        """What decides a line's continuation and its answer, where state_key decides its judgement: the line itself
        (its steps, as `same` reads them), unless the task says its state decides the answer too. Two lines are then
        one only when their steps are identical, as the reference dedupes its candidates: on a Game of 24 the board
        decides a step's value, but the answer's expression is written from the steps that made the board."""
        if self.ctx.case.answer_from_state and (key := self.state_key(node)) is not None:
            return key
        return "\n".join(same(n.thought) for n in self.ctx.store.path(node)[1:])

    async def judge_shared(self, node: Node, samples: int) -> dict:
        """The node's judgement; one whose state was judged already in this session, or is being judged now, or in an
        earlier session of the firm (Memory), takes that judgement as it is, for no call (its state names the node
        judged: `reused`, and for another session's, `remembered`)."""
        key = self.state_key(node)
        if key is None:
            return await self.judge(node, samples)
        states = self._judged_states()
        if key not in states:
            states[key] = (node.id, asyncio.ensure_future(self._judged_or_recalled(node, samples)))
            fields = await asyncio.shield(states[key][1])
            if "eval_score" not in fields:
                del states[key]  # no judgement came: the next node of this state asks again
                return fields
            if remembered := fields.get("state", {}).get("remembered"):
                return self.reused(node, fields, key, remembered["node"])
            return self.keyed(node, fields, key)
        source, judging = states[key]
        fields = await asyncio.shield(judging)
        if "eval_score" not in fields:
            return await self.judge_shared(node, samples)
        return self.reused(node, fields, key, source)

    async def _judged_or_recalled(self, node, samples):
        """A state's judgement from the firm's memory where it holds one (marked `remembered`), else a fresh one, kept
        there for later sessions."""
        memory, key = self.ctx.memory, self.memory_key(node, samples)
        if memory is None or key is None:
            return await self.judge(node, samples)
        if (found := await memory.recall(key)) is not None:
            where, fields = found
            session, _, judged = where.partition("/")
            state = {**fields.get("state", {}), "remembered": {"session": session, "node": judged, "key": key}}
            return {**fields, "state": state}
        fields = await self.judge(node, samples)
        if "eval_score" in fields and "spent" in fields:  # a model's judgement, not a check's or a failure's
            await memory.keep(key, node, fields)
        return fields

    def memory_key(self, node: Node, samples: int) -> str | None:
        """What the firm's memory keeps a node's judgement under: the strategy, how its judgement is asked and how
        often, and the state as the task says it stands whatever the problem (a Game of 24 board's numbers left; an
        answer line with its cards); None: this judgement stays in its session."""
        standalone = self.ctx.case.standalone(Strategy.state_key(self, node))
        if standalone is None:
            return None
        return " · ".join(filter(None, (self.name, self.judgement_setting(), f"{samples} asked", standalone)))

    def judgement_setting(self) -> str:
        """The settings a judgement depends on besides its state and its samples (how it is asked)."""
        return ""

    def keyed(self, node, fields, key):
        """A fresh judgement's fields, marked with the state it judged (so a later run finds it)."""
        if "eval_score" in fields:
            fields = {**fields, "state": {**fields.get("state", node.state), "state_key": key}}
        return fields

    def reused(self, node, fields, key, source):
        """A judgement of an equal state taken as this node's: its score and reason, no cost, and whose it is."""
        state = {**node.state, **judgement_marks(fields.get("state") or {}), "state_key": key, "reused": source}
        taken = {name: fields[name] for name in ("eval_score", "eval_reason", "is_terminal") if name in fields}
        return taken | {"state": state, "stale": False, "parse_error": ""}

    def _judged_states(self):
        """This session's judged states: those stored (a resumed run), then each judged by this run as it goes."""
        if self.states is None:
            self.states = {}
            for n in self.ctx.store.nodes():
                key = n.state.get("state_key")
                if key and n.eval_score is not None and not n.parse_error and key not in self.states:
                    done = asyncio.get_running_loop().create_future()
                    done.set_result(stored_judgement(n))
                    self.states[key] = (n.state.get("reused") or n.id, done)
        return self.states

    @classmethod
    def expected_nodes(cls, params) -> int | None:
        """How many nodes a run with these params grows, when the algorithm knows (a progress bar's total)."""
        return None

    @classmethod
    @abstractmethod
    def best_node(cls, store: Store) -> Node | None:
        """The node the answer should come from, given the tree as it stands (pure: also used for idle sessions)."""

    # ---- asking the model ----------------------------------------------------------------

    def case_fields(self, **fields):
        """What every prompt of the session shows: the problem, its kind, its rubric, the client's fact sheet and
        (for a synthesis written again) what the checker found in the last one; `fields` override. A puzzle has no
        client: its prompts leave the two sections out (None), rather than fill them with "(none)"."""
        puzzle = bool(self.ctx.case.puzzle)
        return {
            "problem": self.ctx.problem,
            "kind": self.ctx.kind,
            "rubric": self.ctx.rubric,
            "facts": None if puzzle else render_sheet(self.ctx.case.facts),
            "findings": None if puzzle else self.findings_note or "(none)",
            # A puzzle's numbers are no client's figures: its prompts do not ask to declare them.
            **({"declare_figures": ""} if puzzle else {}),
            **fields,
        }

    def render_on_path(self, contract, path, **fields):
        """A step's prompt with the session's fields and a root-first path shown as numbered steps (the root, the
        problem itself, left out)."""
        return render(contract, **self.case_fields(path=format_path([n.thought for n in path[1:]]), **fields))

    async def ask(self, contract, prompt, node, what, **options):
        """(answer, {}) or (None, the fields that record on the node why nothing came).

        A spent budget sets `exhausted` and records nothing; a broken reply keeps what it cost; a model that failed on
        every attempt is remembered in `model_failure`, so a search that never got a step can fail saying why.
        """
        try:
            return await self.ctx.gateway.ask(contract, prompt, node_id=node.id if node else None, **options), {}
        except BudgetExhausted as error:
            self.out_of_budget(error)
            return None, {}
        except Unparseable as error:
            return None, {"parse_error": f"{what} unparseable: {error}"[:2000], "spent": error}
        except ModelError as error:
            self.model_failure = self.model_failure or error
            return None, {"parse_error": f"model failed on the {what}: {error}"[:2000]}

    async def ask_about(self, contract, prompt, node, what, **options):
        """The answer, or None with why written on the node at once."""
        answer, failure = await self.ask(contract, prompt, node, what, **options)
        if failure:
            await self.ctx.store.update(node, **failure)
        return answer

    async def verify(self, node: Node) -> Node:
        """The node judged again with VERIFY_SAMPLES samples, once: its score becomes their mean (a guess outvoted)."""
        if node.state.get("verified") is not None:
            return node
        fields = await self.judge(node, VERIFY_SAMPLES)
        if "eval_score" in fields:
            got = len(getattr(fields.get("spent"), "samples", None) or [None] * VERIFY_SAMPLES)  # as many as came back
            fields["state"] = {**fields.get("state", node.state), "verified": got}
        elif fields:  # the verification itself failed: the node keeps its score, unverified (0), and what it cost
            fields = {"state": {**node.state, "verified": 0}} | (
                {"spent": fields["spent"]} if "spent" in fields else {}
            )
        if fields:
            await self.ctx.store.update(node, **fields)
        return self.ctx.store.get(node.id)

    async def verify_finals(self):
        """Several final candidates: the best is judged again until the best one is a verified one, so an answer that
        won on one lucky judgement gives way (VERIFY_TOP rounds at most)."""
        for _ in range(VERIFY_TOP):
            finals = self.final_candidates()
            best = max(finals, key=lambda n: n.eval_score or 0.0, default=None)
            if len(finals) < 2 or self.exhausted or best.state.get("verified") is not None:
                return
            await self.verify(best)

    # ---- the run -------------------------------------------------------------------------

    async def run(self) -> Outcome:
        if not self.ctx.store.nodes():
            await self.ctx.store.add_root(self.ctx.problem, {"problem_kind": self.ctx.kind})
        if self.ctx.prior.search_done:
            await self.step_boundary()  # a reopened session: the overseers' commands are the whole turn
        else:
            await self.search()  # its step boundaries apply the commands, the last one after the last step
        outcome = await self.finish()
        outcome.exhausted_by = self.exhausted_by if self.exhausted else ""
        return outcome

    def out_of_budget(self, refused):
        """A call the budget (or the tenant's cap) could not cover: the search is exhausted, and says by which call
        and what it needed (the gateway's words), the first such call."""
        self.exhausted = True
        self.exhausted_by = self.exhausted_by or str(refused)

    def affords(self, calls, remaining, what):
        """Whether what is left covers a step's `calls` at the cost a call has had so far; if not, the step and what
        it needed are kept (`exhausted_by`) for the session to say why it stopped."""
        typical = self.ctx.gateway.typical_call_usd()
        if remaining >= calls * typical:
            return True
        self.exhausted_by = self.exhausted_by or (
            f"the next {what} needs about {calls * typical:.6f} USD ({calls} calls at the {typical:.6f} USD a call "
            f"has cost so far); {max(remaining, 0.0):.6f} USD was left"
        )
        return False

    async def step_boundary(self, *also):
        """Honour overseers: stop if paused or cancelled, re-read their flags, carry out their commands.

        Whatever else the step boundary needs (`also`) runs in the same round; its results are returned.
        """
        commands, _, *results = await settle_all(self.ctx.control.checkpoint(), self.ctx.store.refresh(), *also)
        for command in commands:
            await self.apply(command)
        return results

    async def apply(self, command: Command):
        node = self.ctx.store.get(command.node_id) if command.node_id else None
        handler = getattr(self, f"_apply_{command.action.partition('.')[0]}", None)  # fact.add, fact.edit: _apply_fact
        if handler is None or (command.node_id and node is None):
            await self.ctx.control.done(command, False, f"cannot apply '{command.action}' here")
            return
        # Every node the command adds says so (state["command"]): applied again after a crash took its outcome
        # record, it finds them instead of adding more.
        ctx, self.ctx = self.ctx, replace(self.ctx, store=CommandStore(self.ctx.store, command.id))
        try:
            refusal, after = await handler(node, command)
        except BudgetExhausted as error:
            self.out_of_budget(error)
            refusal, after = "the session's budget is exhausted", None
        finally:
            self.ctx = ctx
        await self.ctx.store.settled()  # the command's effect lands before its outcome is recorded
        await self.ctx.control.done(command, refusal is None, refusal or "", after)

    async def _apply_expand(self, node, command):
        if self.ctx.store.is_pruned(node):
            return "the node is in a pruned branch", None
        children = [c for c in self.ctx.store.children(node) if c.state.get("command") == command.id]
        if children:  # applied before, its outcome lost: score what is left unscored, never add k more
            for child in children:
                if child.eval_score is None and not child.parse_error and not self.ctx.store.is_pruned(child):
                    await self.rescore(child)
        else:
            children = await self.expand(node, int(command.payload.get("k", 3)))
        if not children:
            return self._no_children_reason(node), None
        if self._standing_choice() is None:  # deeper children can move the answer, unless a person chose it
            self._resynthesize_if_on_answer(node)
        return None, {"children": [c.id for c in children]}

    async def _apply_edit(self, node, command):
        await self.rescore(node)
        fresh = self.ctx.store.get(node.id)
        self._resynthesize_if_on_answer(node)
        return None, {"eval_score": fresh.eval_score}

    async def _apply_promote(self, node, command):
        if self.ctx.store.is_pruned(node):
            return "the node is in a pruned branch", None
        self.promoted = (node, command)
        return None, {"final_node_id": node.id}

    async def _apply_fact(self, node, command):
        """An advisor changed the client's facts: later prompts show, and later checks read, the sheet as it now is
        (the steps it touched were marked stale when it changed, and are rescored as stale steps are)."""
        sheet = command.payload.get("facts") or []
        self.ctx.case.facts = [Fact.from_dict({k: v for k, v in f.items() if v is not None}) for f in sheet]
        return None, {"facts": len(self.ctx.case.facts)}

    async def _apply_resynthesize(self, node, command):
        self.resynthesize = True
        return None, None

    def _no_children_reason(self, node):
        if self.exhausted:
            raise BudgetExhausted
        fresh = self.ctx.store.get(node.id)
        return f"no children: {fresh.parse_error}" if fresh and fresh.parse_error else "the model proposed nothing"

    def _resynthesize_if_on_answer(self, node):
        """A change on (or under) the answer's path can change the answer: write it again at the end."""
        final = self.ctx.store.get(self.ctx.prior.final_node_id) if self.ctx.prior.final_node_id else None
        if final is not None and node.id in {n.id for n in self.ctx.store.path(final)}:
            self.resynthesize = True

    async def finish(self) -> Outcome:
        """The answer from the promoted node, else the best one; written again only when it changed.

        An overseer may prune the answer's branch while it is being written: it is then written again from the best
        live line (a few times at most), so the answer never sits in a pruned branch.
        """
        if not self.promoted and self._standing_choice() is None:
            await self.verify_finals()
        for _ in range(ANSWER_TRIES):
            outcome = await self._answer()
            await self.ctx.store.refresh()
            final = self.ctx.store.get(outcome.final_node.id) if outcome.final_node else None
            if final is None or not self.ctx.store.is_pruned(final):
                return outcome
            self.promoted, self.resynthesize = None, True
        return outcome

    def _standing_choice(self) -> Node | None:
        """The node a person promoted in an earlier turn, while it is still in the search: the answer stays there
        whatever a later turn finds (a new promote, or a prune of its branch, is a person changing it)."""
        prior = self.ctx.prior
        node = self.ctx.store.get(prior.final_node_id) if prior.chosen_by and prior.final_node_id else None
        return node if node is not None and not self.ctx.store.is_pruned(node) else None

    async def _answer(self) -> Outcome:
        node, chosen_by, note = self.best_node(self.ctx.store), "", ""
        if self.promoted:
            (node, command), chosen_by = self.promoted, self.promoted[1].actor
            note = str(command.payload.get("note", ""))
        elif (chosen := self._standing_choice()) is not None:
            node, chosen_by, note = chosen, self.ctx.prior.chosen_by, self.ctx.prior.note
        if node is None or node.depth == 0:
            why = "budget" if self.exhausted else "no_live_line" if self.ctx.prior.search_done else "no_thoughts"
            errors = [n.parse_error for n in self.ctx.store.nodes() if n.parse_error]
            return Outcome(final_answer="", final_node=None, reason=why, detail=errors[0] if errors else "")
        prior = self.ctx.prior
        if node.id == prior.final_node_id and prior.final_answer and not self.resynthesize and not self.promoted:
            reason = "unchanged" if not self.exhausted else "budget"
            kept = Outcome(prior.final_answer, node, reason, prior.partial, chosen_by, note, kept=True)
            stands = chosen_by or prior.partial or self.exhausted
            if stands or not failures(self.ctx.case(prior.final_answer, final=True)):
                return kept
            # The answer stored fails a check now (the client's facts changed under it): "solved" must not outlive
            # it, so it is written again as at the end of a run, from the best line that passes.
        outcome = await self._written(node, chosen_by, note)
        if chosen_by:  # a person's choice stands as it is; its findings are shown with it
            return self._checked(outcome)
        return await self._true_to_facts(outcome)

    async def _written(self, node, chosen_by="", note="") -> Outcome:
        """The answer from a node's line; a synthesis that broke its contract is written from the next-best line, as an
        answer refused by a check is (SYNTHESIS_TRIES lines in all), unless a person chose the line. If none is
        written, the first line's partial answer stands."""
        ended = {node.id: node.is_terminal}  # whether each line tried ended one before its synthesis marked it
        tried = [await self._synthesized(node, chosen_by, note)]
        while tried[-1].reason == "synthesis_failed" and tried[-1].detail.startswith(BROKE_CONTRACT):
            if chosen_by or len(tried) >= SYNTHESIS_TRIES:
                break
            node = self.best_node(Without(self.ctx.store, {o.final_node.id for o in tried}))
            if node is None or node.depth == 0:
                break
            ended[node.id] = node.is_terminal
            tried.append(await self._synthesized(node))
        outcome = tried[-1] if tried[-1].reason != "synthesis_failed" else tried[0]
        # A line tried and given up ends no answer: it is unmarked, so a later turn's search still runs through it.
        given_up = [o.final_node for o in tried if o is not outcome and not ended[o.final_node.id]]
        await settle_all(*(self.ctx.store.update(n, is_terminal=False) for n in given_up))
        return outcome

    async def _synthesized(self, node, chosen_by="", note="") -> Outcome:
        """The answer written from the path to a node; a synthesis that fails leaves the line itself, partial."""
        reason = "budget" if self.exhausted else "solved"
        path = self.ctx.store.path(node)
        marking = asyncio.ensure_future(self.mark_answered(node))  # beside the synthesis
        try:
            answer = self.answer_in_line(path) or await self.synthesize(path)
            text, partial, detail, model = answer.parsed.answer, False, "", answer.model
            figures = [f.model_dump() for f in getattr(answer.parsed, "figures", None) or []]
            await self.ctx.store.update(node, spent=answer)
        except (BudgetExhausted, Unparseable, ModelError) as error:
            # No answer passed its contract: the best line so far stands in, marked partial, and the run says why.
            if isinstance(error, BudgetExhausted):
                self.out_of_budget(error)
            if isinstance(error, Unparseable):
                await self.ctx.store.update(node, spent=error)
            why = {BudgetExhausted: "budget exhausted", Unparseable: BROKE_CONTRACT}.get(
                type(error), "the synthesis failed on every model"
            )
            if getattr(error, "limit", "") == "token_cap":
                why = "the token cap stopped it"
            text, partial, detail, model = best_line_text(path, why), True, f"{why}: {error}", ""
            figures = []
            reason = "budget" if self.exhausted else "synthesis_failed"
        finally:
            await marking
        return Outcome(text, node, reason, partial, chosen_by, note, detail, model=model, figures=figures)

    def answer_in_line(self, path) -> Answer | None:
        """The line's own answer where its last thought is one the task checks alone (a Game of 24 answer line): the
        answer as it stands, for no call, as the reference takes its line's; a restatement could only garble it."""
        if path[-1].depth == 0 or self.ctx.case.verdict(path[-1].thought) is None:
            return None
        return Answer(parsed=AnswerOut(answer=path[-1].thought, figures=[]), model="", cost_usd=0.0, latency_ms=0)

    async def mark_answered(self, node):
        """The node an answer is written from ends its line (a strategy whose terminals mean more keeps them so)."""
        await self.ctx.store.update(node, is_terminal=True)

    def _checked(self, outcome: Outcome) -> Outcome:
        figures = outcome.figures
        outcome.checks = self.ctx.case(outcome.final_answer, final=True, figures=figures) if outcome.final_answer else []
        outcome.figures = self.ctx.case.figures(figures, outcome.final_answer) if outcome.final_answer else []
        outcome.checked = self.ctx.case.active
        return outcome

    async def _true_to_facts(self, outcome: Outcome) -> Outcome:
        """An answer that fails a check of the client's facts is not returned as it stands: it is written once more
        with the findings, then from the next-best lines (FACT_TRIES in all; REFINES_ITS_ANSWER: rewritten with its
        findings each time); if none passes, the answer with the fewest failures stands with its findings, and the
        search fails (`fact_check_failed`)."""
        tried = [self._checked(outcome)]
        tries = FACT_TRIES if self.ctx.case.retries else 1
        while failures(tried[-1].checks) and not tried[-1].partial and len(tried) < tries and not self.exhausted:
            if len(tried) == 1 or self.REFINES_ITS_ANSWER:  # the same line, told what the checker found
                self.findings_note = findings_note(tried[-1].checks)
                self.refused_answer = tried[-1].final_answer
                node = tried[-1].final_node
            else:
                node = self.best_node(Without(self.ctx.store, {o.final_node.id for o in tried}))
                if node is None or node.depth == 0:
                    break
            try:
                tried.append(self._checked(await self._synthesized(node)))
            finally:
                self.findings_note, self.refused_answer = "", ""
        passed = [o for o in tried if not o.partial and not failures(o.checks)]
        if passed:
            return passed[0]
        whole = [o for o in tried if not o.partial] or tried
        best = min(whole, key=lambda o: len(failures(o.checks)))
        if failures(best.checks) and best.reason == "solved":
            best.reason = self.ctx.case.failed_reason
            best.detail = "; ".join(f.detail for f in failures(best.checks))[:1000]
        return best


class Without:
    """The store with some nodes' lines taken out of the search: a strategy's best_node then names the next best."""

    def __init__(self, store, node_ids):
        self.inner, self.out = store, set(node_ids)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def is_pruned(self, node):
        return node.id in self.out or self.inner.is_pruned(node)


# What a strategy's judge writes in a node's state about the judgement itself (a reuse takes it too).
JUDGEMENT_MARKS = ("judged", "verified", "success", "decided_by", "remembered")


def judgement_marks(state):
    return {name: state[name] for name in JUDGEMENT_MARKS if name in state}


def stored_judgement(node):
    """A stored node's judgement, as judge() returned it (its uncapped score: `judged`, where the judge kept it)."""
    score = node.state.get("judged", node.eval_score)
    fields = {"eval_score": score, "eval_reason": node.eval_reason, "state": node.state}
    return fields | ({"is_terminal": node.is_terminal} if node.is_terminal else {})


def failures(findings):
    return [f for f in findings or [] if not f.ok]


def line_evidence(findings):
    """The failed checks of a line, for its reflection: each with what the client's facts say; None where nothing was
    checked (a puzzle: the prompt leaves the section out)."""
    if not findings:
        return "(none: every figure, rule and constraint checked in this line held)"
    return "\n".join(f'- the line says "{f.text}": {f.detail}' if f.text else f"- {f.detail}" for f in findings)


def findings_note(findings):
    """What the checker found, for the synthesis written again: each failure, with what the client's facts say."""
    lines = [f'- your answer says "{f.text}": {f.detail}' if f.text else f"- {f.detail}" for f in failures(findings)]
    head = "Your last answer failed these checks against the client's facts; write it again without them:"
    return "\n".join([head, *lines])


class CommandStore:
    """The store as a command sees it: the nodes it adds carry the command's id in their state."""

    def __init__(self, store, command_id):
        self.inner, self.command_id = store, command_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def add_children(self, parent, items, answer):
        tag = {"command": self.command_id}
        return await self.inner.add_children(
            parent, [{**i, "state": {**(i.get("state") or {}), **tag}} for i in items], answer
        )


def best_line_text(path, why):
    """The answer when no synthesis can be written: the line of reasoning itself, saying why."""
    steps = "\n".join(f"{i}. {n.thought}" for i, n in enumerate(path[1:], 1)) or "(no steps yet)"
    return f"Best line of reasoning so far ({why}):\n{steps}"


def deepest_best(store: Store) -> Node | None:
    """The deepest live scored node, the best-scored at that depth: where a beam search's answer comes from."""
    candidates = [n for n in answer_candidates(store) if n.eval_score is not None]
    return max(candidates, key=lambda n: (n.depth, n.eval_score), default=None)


def above_fork(store: Store) -> set[str]:
    """The ids of a fork's copied nodes above the node it was forked at: the path it continues from, never its
    answer (the fork continues under its node, so its answer's line passes through it)."""
    return {n.parent_id for n in store.nodes() if n.state.get("copied") and n.parent_id}


def fork_node(store: Store) -> Node | None:
    """The node a fork continues from (the deepest copy of its path), or None in a session that is no fork."""
    return max((n for n in store.nodes() if n.depth and n.state.get("copied")), key=lambda n: n.depth, default=None)


def answer_candidates(store: Store) -> list[Node]:
    """The live nodes below the root an answer may come from (in a fork, none of the path above its node)."""
    above = above_fork(store)
    return [n for n in store.nodes() if n.depth > 0 and n.id not in above and not store.is_pruned(n)]


async def settle_all(*awaitables):
    """Like gather, but every awaitable finishes before the first error is raised: no write is left running. The first
    error is raised; any other is logged, never dropped without a word."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    errors = [result for result in results if isinstance(result, BaseException)]
    for dropped in errors[1:]:
        if not isinstance(dropped, (BudgetExhausted, StopRequested, asyncio.CancelledError)):  # expected endings
            log.error("a step running beside another that failed also failed", exc_info=dropped)
    if errors:
        raise errors[0]
    return results
