"""Reflexion (Shinn et al. 2023): whole attempts judged against the rubric, and a verbal critique of each one
that falls short kept as memory for the next.

Attempt k is a chain under the root (in a fork, under the fork's node: the copied path is attempt 1, and every later
attempt continues from it): its first step a child of that node, each further step a child of the one before, every
node's state {"attempt": k, "step": i, "of": n}. It is written in one call and stored step by step,
the call's cost charged to its first step; its score (and the critique's cost) lives on its last node. Under the
threshold it gets a critique, and the last `memory` live critiques (the paper keeps 3) go into the next attempt's
### MEMORY and are marked applied. The search stops at the first attempt that reaches the threshold once verified
(judged again, several samples, so one lucky judgement does not end it), or after max_attempts.

Everything is read back from the stored tree, so a paused, cut or steered run goes on where it stands: an attempt
cut off before its evaluation is evaluated (as it stands, even when its chain is shorter than asked: its steps
cannot be completed without writing it again), the latest scored attempt without its critique gets one, and the
next attempt's number follows the highest one used. A pruned attempt leaves the memory and the answer.
"""

from dataclasses import dataclass

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from reasoning.modes import LABELS
from reasoning.prompts import format_path, render

from .base import Answer, Contract, Node, Strategy, StrictParams, answer_candidates, settle_all
from .replies import AnswerOut, Commentary, Figures, Prose, ScoreOut
from .thoughts import listed, merge_duplicates, same


class Step(BaseModel):
    thought: Prose = Field(min_length=1, max_length=4000)
    figures: Figures


class AttemptOut(BaseModel):
    steps: list[Step] = Field(min_length=1, max_length=12)

    @model_validator(mode="after")
    def exactly_as_asked(self, info: ValidationInfo):
        """The prompt asks for exactly `steps` steps (the count in the context): another count is a broken reply,
        asked again, never a chain quietly cut or left short of what its judgement and label say."""
        asked = (info.context or {}).get("expect")
        if asked and len(self.steps) != asked:
            raise ValueError(f"holds {len(self.steps)} steps; exactly {asked} were asked for")
        return self


class ReflectOut(BaseModel):
    critique: Commentary = Field(min_length=1, max_length=4000)


class AlternativesOut(BaseModel):
    """Alternative next steps: thoughts alone, as the prompt asks (an attempt's steps carry no summary)."""

    thoughts: list[Step] = Field(min_length=1, max_length=20)


ATTEMPT = Contract("reflexion.attempt", AttemptOut, max_tokens=1500)
EVALUATE = Contract("reflexion.evaluate", ScoreOut, max_tokens=300)
REFLECT = Contract("reflexion.reflect", ReflectOut, max_tokens=500)
EXPAND = Contract("reflexion.expand", AlternativesOut, max_tokens=1500)
SYNTHESIZE = Contract("reflexion.synthesize", AnswerOut, max_tokens=1500)


class ReflexionParams(StrictParams):
    max_attempts: int = Field(3, ge=1, le=6, description="Attempts at most, each a whole chain of steps.")
    steps: int = Field(3, ge=1, le=6, description="Steps per attempt.")
    threshold: float = Field(0.8, ge=0, le=1, description="Rubric score at or above which an attempt is accepted.")
    memory: int = Field(
        3, ge=1, le=6, description="Most recent critiques carried into the next attempt (the paper: 3)."
    )


@dataclass
class Attempt:
    num: int
    chain: list[Node]

    @property
    def last(self):
        return self.chain[-1]

    @property
    def score(self):
        return self.last.eval_score


def in_attempt(node, num=None):
    """A step of an attempt's own chain (an overseer's expanded alternative is not one)."""
    state = node.state if isinstance(node.state, dict) else {}
    if state.get("attempt") is None or state.get("alternative"):
        return False
    return num is None or state["attempt"] == num


def copied_attempt(store, root):
    """The path a fork copied, taken as attempt 1: its steps are the attempt's chain, its last node's score the
    attempt's, so the next attempt continues from it, written from its critique."""
    first = next((c for c in store.children(root) if c.state.get("copied")), None)
    if first is None:
        return None
    chain = [first]
    while following := next((c for c in store.children(chain[-1]) if c.state.get("copied")), None):
        chain.append(following)
    return Attempt(1, chain)


class Reflexion(Strategy):
    name = "reflexion"
    label = LABELS["reflexion"]
    legend = ("unscored", "critique", "attempt")
    Params = ReflexionParams
    contracts = (ATTEMPT, EVALUATE, REFLECT, EXPAND, SYNTHESIZE)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.unreflectable = set()  # attempts whose critique came back unusable in this run: not asked again

    async def search(self):
        # Attempts are sequential by nature (each needs the critique before it); only evaluations run concurrently.
        while True:
            # The step boundary, in one round: honour overseers, check the budget.
            [remaining] = await self.step_boundary(self.ctx.gateway.remaining_usd())
            if self.promoted or self.exhausted:
                return
            step = self._next_step()
            if step is None:
                return
            phase, target, calls = step
            if not self._can_afford(calls, remaining):
                self.exhausted = True
                return
            await phase(target)

    # ---- the working state, rebuilt from the stored tree -----------------------------------

    def _root(self):
        return next(n for n in self.ctx.store.nodes() if n.depth == 0)

    def _base(self):
        """Where attempts start: the root, or in a fork the end of its copied path (attempt 1)."""
        copied = copied_attempt(self.ctx.store, self._root())
        return copied.last if copied is not None else self._root()

    def _attempts(self):
        """Every attempt's chain, by number: a child of the base that starts one, then its steps one by one (in a
        fork, the copied path first, as attempt 1)."""
        store = self.ctx.store
        copied = copied_attempt(store, self._root())
        found = [copied] if copied is not None else []
        for first in store.children(self._base()):
            if not in_attempt(first) or first.state.get("copied"):
                continue
            num, chain = first.state["attempt"], [first]
            while following := next((c for c in store.children(chain[-1]) if in_attempt(c, num)), None):
                chain.append(following)
            found.append(Attempt(num, chain))
        return sorted(found, key=lambda a: a.num)

    def _live(self, attempts):
        # The last node is pruned, by its own flag or an ancestor's, whenever any step of the chain is.
        return [a for a in attempts if not self.ctx.store.is_pruned(a.last)]

    def _memory(self):
        """The last `memory` critiques of attempts still in the search, oldest first."""
        store = self.ctx.store
        judged = {c.node_id: store.get(c.node_id) for c in store.critiques() if c.node_id}
        live = [c for c in store.critiques() if not (judged.get(c.node_id) and store.is_pruned(judged[c.node_id]))]
        return live[-self.ctx.params.memory :]

    def _next_step(self):
        """(phase, its target, model calls it needs) for the next step, or None when the search is over."""
        attempts = self._attempts()
        live = self._live(attempts)
        unscored = self._unscored(live)
        if unscored:
            return self._evaluate_lines, unscored, len(unscored)
        passing = [a.last for a in live if a.score is not None and a.score >= self.ctx.params.threshold]
        passing = [n for n in passing if n.state.get("decided_by") != "checker"]  # a failed check is no pass
        unverified = [n for n in passing if n.state.get("verified") is None]
        if unverified:
            return self._verify_all, unverified, len(unverified)
        if any(n.state.get("verified") for n in passing):
            return None  # accepted (a verification that failed, verified 0, accepts nothing: the attempts go on)
        if len(attempts) >= self.ctx.params.max_attempts:
            return None
        latest = attempts[-1] if attempts else None
        if latest and self._needs_critique(latest):
            return self._reflect, latest, 1
        return self._write_attempt, (latest.num if latest else 0) + 1, 2  # the attempt and its evaluation

    def _unscored(self, live):
        """Line ends cut off before their evaluation (or stale after an edit); an unparseable one keeps its error."""
        alternatives = [n for n in self.ctx.store.nodes() if n.state.get("alternative")]
        ends = [a.last for a in live] + [n for n in alternatives if not self.ctx.store.is_pruned(n)]
        return [n for n in ends if (n.eval_score is None or n.stale) and not n.parse_error]

    def _needs_critique(self, attempt):
        written = {c.attempt_num for c in self.ctx.store.critiques()}
        return (
            attempt.score is not None
            and not self.ctx.store.is_pruned(attempt.last)
            and attempt.num not in written | self.unreflectable
        )

    def _can_afford(self, calls, remaining):
        """This step's calls plus the synthesis, at the observed cost per call."""
        return self.affords(calls + 1, remaining, "step and the synthesis")

    # ---- the phases -------------------------------------------------------------------------

    async def _write_attempt(self, num):
        """Attempt `num` in one call, with the last critiques as its memory; those critiques are then applied."""
        base, memory, steps = self._base(), self._memory(), self.ctx.params.steps
        so_far = format_path([n.thought for n in self.ctx.store.path(base)[1:]])  # a fork's path: it continues there
        prompt = self._render(
            ATTEMPT, memory=memory, attempt=num, max_attempts=self.ctx.params.max_attempts, steps=steps, path=so_far
        )
        answer, failure = await self.ask(ATTEMPT, prompt, base, "attempt", expect=steps)
        if failure:
            await self._record_failed_attempt(base, num, failure)
        if answer is None:
            return
        thoughts = [(s.thought, s.figures) for s in answer.parsed.steps]
        fresh = [c for c in memory if not c.applied_to_next]
        await settle_all(self._add_chain(base, num, thoughts, answer), self.ctx.store.mark_applied(fresh))

    async def _add_chain(self, base, num, thoughts, answer):
        """One child at a time, each under the one before; the call's cost goes with the first step, and every step
        carries the model that wrote it."""
        parent, written = base, Answer(parsed=None, model=answer.model, cost_usd=0.0, latency_ms=0)
        for i, (thought, figures) in enumerate(thoughts, 1):
            state = {"attempt": num, "step": i, "of": len(thoughts)}
            item = {"thought": thought, "state": state, "figures": figures}
            [parent] = await self.ctx.store.add_children(parent, [item], answer if i == 1 else written)

    async def _record_failed_attempt(self, base, num, failure):
        """An attempt that could not be written still takes its number: a one-node chain holding the error."""
        state = {"attempt": num, "step": 1, "of": 1, "failed": True}
        why = failure["parse_error"].split(":")[0]
        item = {"thought": f"Attempt {num} could not be written: {why}.", "state": state}
        [node] = await self.ctx.store.add_children(base, [item], None)
        await self.ctx.store.update(node, **failure)

    async def _verify_all(self, nodes):
        await settle_all(*(self.verify(n) for n in nodes))

    async def _evaluate_lines(self, nodes):
        """Each line judged as a whole against the rubric; evaluations, and nothing else, run concurrently."""
        results = await settle_all(*(self.judge(node, 1) for node in nodes))
        await self.ctx.store.update_many([(n, fields) for n, fields in zip(nodes, results, strict=True) if fields])

    async def judge(self, node, samples):
        """The fields to store on a line's last node, its judgement asked `samples` times (none if the budget ran
        out)."""
        steps = [n.thought for n in self.ctx.store.path(node)[1:]]
        prompt = self._render(EVALUATE, path=format_path(steps))
        answer, failure = await self.ask(EVALUATE, prompt, node, "evaluation", samples=samples)
        if answer is None:
            return failure
        score = round(sum(s.score for s in answer.samples) / len(answer.samples), 4)
        got = len(answer.samples)  # what came back, whatever was asked
        reason = answer.parsed.reason + (f" (mean of {got} judgements)" if got > 1 else "")
        return self._checked_line(node, score, reason) | {"stale": False, "spent": answer}

    def _checked_line(self, node, score, reason):
        """A line's judgement and the checks of its steps: an attempt that fails one is a failure whatever the judge
        says (its score capped as a failed step's is, state["success"] False, decided by the checker), so it is never
        accepted and its critique is written from the findings."""
        from reasoning.facts.check import capped  # the checker's patterns load where a line is checked

        failed = self.line_failures(node)
        if not failed:
            return {"eval_score": score, "eval_reason": reason}
        score, why = capped(score, failed)
        state = {**node.state, "success": False, "decided_by": "checker"}
        return {"eval_score": score, "eval_reason": f"{reason} {why}".strip(), "state": state}

    async def _reflect(self, attempt):
        """A critique of an attempt under the threshold, kept on its last node as memory for the next one."""
        prompt = self._render(
            REFLECT,
            attempt=attempt.num,
            path=format_path([n.thought for n in self.ctx.store.path(attempt.last)[1:]]),  # a fork's path included
            score=f"{attempt.score:g}",
            threshold=f"{self.ctx.params.threshold:g}",
            # The evaluator's reason is stored on the node, so a resumed run critiques with it too.
            reason=attempt.last.eval_reason or "(no reason was given; judge from the rubric)",
            findings=self.line_evidence(attempt.last),
        )
        answer, failure = await self.ask(REFLECT, prompt, attempt.last, "critique")
        if failure:
            # The next attempt goes ahead without it rather than asking for the same critique again.
            self.unreflectable.add(attempt.num)
            await self.ctx.store.update(attempt.last, **failure)
        if answer is not None:
            await self.ctx.store.add_critique(
                attempt.last, attempt.num, attempt.score, answer.parsed.critique.strip(), spent=answer
            )

    # ---- the overseers' requests ------------------------------------------------------------

    async def expand(self, node, k):
        """k alternative next steps under a node, in one call, each judged as the line it ends."""
        if node.state.get("failed"):
            return []  # a failed attempt holds no steps to continue
        path = self.ctx.store.path(node)
        step = node.depth + 1  # an attempt's step i sits at depth i, and so does an alternative
        depth = max(self.ctx.params.steps, step)
        siblings = [c.thought for c in self.ctx.store.children(node)]
        prompt = self._render(
            EXPAND,
            path=format_path([n.thought for n in path[1:]]),
            step=step,
            depth=depth,
            k=k,
            proposed=listed(siblings),
        )
        answer = await self.ask_about(EXPAND, prompt, node, "alternatives", expect=k)
        if answer is None:
            return []
        state = {"attempt": node.state.get("attempt", 0), "step": step, "alternative": True}
        proposed = [
            {"thought": t.thought, "state": dict(state), "figures": t.figures} for t in answer.parsed.thoughts[:k]
        ]
        items = merge_duplicates(proposed, {same(t) for t in siblings})
        children = await self.ctx.store.add_children(node, items, answer)
        # Alternatives that arrive under a branch an overseer pruned meanwhile are kept, but not judged.
        await self._evaluate_lines([c for c in children if not self.ctx.store.is_pruned(c)])
        return children

    async def rescore(self, node):
        """An edited step: the whole line it belongs to is judged again, and that line is fresh once more."""
        line = self._line_of(node)
        if not line or self.ctx.store.is_pruned(line[-1]):
            return
        fields = await self.judge(line[-1], 1)
        if not fields or "eval_score" not in fields:
            if fields:
                await self.ctx.store.update(line[-1], **fields)
            return
        fresh = [(n, {"stale": False}) for n in line[:-1] if n.stale]
        await self.ctx.store.update_many([(line[-1], fields), *fresh])

    def _line_of(self, node):
        """The nodes judged together with this one: its attempt's chain, or an alternative's own path."""
        if node.depth == 0:
            return []
        if in_attempt(node):
            attempt = next((a for a in self._attempts() if a.num == node.state["attempt"]), None)
            if attempt and any(n.id == node.id for n in attempt.chain):
                return attempt.chain
        return self.ctx.store.path(node)[1:]

    # ---- the answer -------------------------------------------------------------------------

    async def synthesize(self, path):
        prompt = self._render(SYNTHESIZE, path=format_path([n.thought for n in path[1:]]))
        return await self.ctx.gateway.ask(SYNTHESIZE, prompt, node_id=path[-1].id)

    def final_candidates(self):
        """Every live judged line end: an attempt's last step, or an alternative."""
        ends = [a.last for a in self._live(self._attempts())]
        ends += [n for n in self.ctx.store.nodes() if n.state.get("alternative") and not self.ctx.store.is_pruned(n)]
        return [n for n in ends if n.eval_score is not None and not n.parse_error]

    @classmethod
    def best_node(cls, store):
        """The last node of the best-scored live line (a later attempt wins a tie): only line ends carry scores."""
        lines = [n for n in answer_candidates(store) if n.eval_score is not None]  # in a fork, from its node down
        return max(lines, key=lambda n: (n.eval_score, n.state.get("attempt") or 0), default=None)

    @classmethod
    def expected_nodes(cls, params):
        return 1 + params.max_attempts * params.steps  # the most: a run that meets the threshold early grows fewer

    def _render(self, contract, memory=None, **fields):
        return render(
            contract,
            **self.case_fields(
                memory=format_memory(self._memory() if memory is None else memory),
                **fields,
            ),
        )


def format_memory(critiques):
    if not critiques:
        return "(none yet: this is the first attempt)"
    return "\n".join(
        f"- Attempt {c.attempt_num} (score {c.outcome_score:g}): {' '.join(c.critique.split())}" for c in critiques
    )
