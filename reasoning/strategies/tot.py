"""Tree of Thoughts (Yao et al. 2023) as a beam search: propose k steps per node, score them, keep the best.

Each level proposes from every beam node at once and scores each child as soon as its parent's
proposals arrive, so a level costs one propose plus one evaluate on the clock. A judgement is asked
`value_samples` times (in one request where the model allows), as a number or, in the paper's
categorical mode, as sure / likely / impossible; the samples' mean is the score (in categorical mode the
paper's weighted sum), so one wild guess is outvoted. A reply with fewer than k thoughts gives fewer children, and a thought proposed twice
under one node is one child (state["proposed"] counts it), never scored twice.

The beam is read from the stored tree, so a run that was paused, killed or steered continues where it
stands: the level above is cut to its best `keep` as it stands at the step boundary (a node an overseer
pruned frees its slot for the next best), parents left without children are proposed under, and every
live node left unscored or marked stale (at any level) is scored, then the search goes on below. A parent
pruned while its level runs frees its slot too: the level runs again with the next best in it (the beam's
drops are pruned only once their level is done). The rules themselves are pure functions at the end.
"""

from typing import Literal

from pydantic import BaseModel, Field

from reasoning.modes import LABELS
from reasoning.prompts import render

from .base import Contract, Strategy, StrictParams, deepest_best, settle_all
from .replies import AnswerOut, OptionalProse, ScoreOut, ThoughtsOut
from .thoughts import listed, merge_duplicates, same

PROPOSE = Contract("tot.propose", ThoughtsOut, max_tokens=1500)  # the thoughts and their declared figures
EVALUATE = Contract("tot.evaluate", ScoreOut, max_tokens=300)
SYNTHESIZE = Contract("tot.synthesize", AnswerOut, max_tokens=1500)  # the answer and its declared figures
# The paper's value weights (its tasks/game24.py): a thought's value is the SUM over its samples, and a sample that
# cannot be read counts 0. Shown on the 0..1 scale as that sum over the most it could be (every sample "sure"),
# which keeps the paper's order: [sure, impossible, impossible] (20.002) ranks above [likely x3] (3).
VERDICT_WEIGHTS = {"sure": 20.0, "likely": 1.0, "impossible": 0.001}


class VerdictOut(BaseModel):
    verdict: Literal["sure", "likely", "impossible"]
    reason: OptionalProse = Field(default="", max_length=4000)


VALUE = Contract("tot.value", VerdictOut, max_tokens=300)
# The same judgements of a state alone (the position a step leaves), as the paper's value prompt sees only the numbers
# left: every candidate that reaches a state judged already shares that judgement (Strategy.judge_shared).
STATE_EVALUATE = Contract("tot.state_evaluate", ScoreOut, max_tokens=300)
STATE_VALUE = Contract("tot.state_value", VerdictOut, max_tokens=300)


class ToTParams(StrictParams):
    branching: int = Field(3, ge=1, le=8, description="Thoughts proposed per expanded node.")
    depth: int = Field(4, ge=1, le=8, description="Levels below the root.")
    keep: int = Field(2, ge=1, le=6, description="Best thoughts kept per level (the beam).")
    value_samples: int = Field(
        3, ge=1, le=5, description="Judgements asked per thought (their mean is its score; the paper takes 3)."
    )
    value_mode: Literal["score", "categorical"] = Field(
        "score", description="A judgement as a 0-1 score, or as sure / likely / impossible (the paper's value prompt)."
    )
    answer_width: int = Field(
        0,
        ge=0,
        le=8,
        description="Answers proposed under a line whose next thought is its answer (a Game of 24 board with one "
        "number left); 0: as many as `branching`. The paper writes 1 (its chain-of-thought step, n = 1).",
    )
    value_by: Literal["line", "claim"] = Field(
        "line",
        description="A step that breaks the task's rules (a Game of 24 step with a number not on the board) is judged "
        "on its whole line, where the mistake shows; 'claim': by the numbers it says are left, as the paper's value "
        "prompt sees them (its judgement then shared with every equal board, here and in the firm's later sessions).",
    )
    answer_checker: bool = Field(
        False,
        description="Score an answer the task can check alone (a Game of 24 answer's arithmetic) by that check, as "
        "LATS's environment reward, not by the model (off: the paper's method).",
    )


class TreeOfThoughts(Strategy):
    name = "tot"
    label = LABELS["tot"]
    legend = ("unscored", "dropped")
    Params = ToTParams
    contracts = (PROPOSE, EVALUATE, VALUE, STATE_EVALUATE, STATE_VALUE, SYNTHESIZE)
    shares_states = True

    async def search(self):
        depth, keep = max(1, self._deepest_live_level()), self.ctx.params.keep
        dropped = []  # the level above's beam drops, pruned once its level is done (a hand prune may free a slot)
        while depth <= self.ctx.params.depth:
            # The step boundary, in one round: honour overseers (their prunes are read), check the budget, and prune
            # the last level's beam drops.
            remaining, _ = await self.step_boundary(self.ctx.gateway.remaining_usd(), self.ctx.store.prune(dropped))
            if self.promoted:
                return
            # The level above is cut to its beam now, as it stands: a node pruned by hand frees its slot.
            parents, unscored, dropped = level_work(self._live(), depth, keep, self._proposed, self.line_key)
            parents = [p for p in parents if not self._dead_end(p)]
            if not parents and not unscored and not any(n.depth == depth for n in self._live()):
                break  # nothing above could be expanded (every proposal failed): the search ends here
            if not self._can_afford(len(parents), len(unscored), remaining):
                self.exhausted = self.exhausted or bool(parents or unscored)
                await self.ctx.store.prune(dropped)
                return
            proposals = (self._expand_and_score(p, self._width(p)) for p in parents)
            await settle_all(*proposals, self._score(unscored))
            if self.exhausted:
                break
            if any(self.ctx.store.is_pruned(p) for p in parents):
                dropped = []  # a parent pruned by hand as the level ran: the level runs again, the next best in its slot
                continue
            depth += 1
        await self.step_boundary()
        losers = beam_losers(self._live(), min(depth, self.ctx.params.depth), keep, self.line_key)
        await self.ctx.store.prune([*dropped, *losers])
        if not self.exhausted:
            await self._score(self._stale())  # an edit during the last level leaves nothing stale behind

    def _deepest_live_level(self):
        return max((n.depth for n in self._live()), default=0)

    def _live(self):
        return [n for n in self.ctx.store.nodes() if not self.ctx.store.is_pruned(n)]

    def _stale(self):
        return [n for n in self._live() if n.stale and n.depth > 0 and not n.parse_error]

    def _proposed(self, node):
        return bool(self.ctx.store.children(node))

    def _can_afford(self, parents, unscored, remaining):
        """The per-level budget check: this level's calls plus the synthesis, at the observed cost per call."""
        calls = parents * (1 + self.ctx.params.branching) + unscored + 1  # at most: equal states share a judgement
        return self.affords(calls, remaining, "level and the synthesis")

    def _dead_end(self, parent):
        """A line the task's rules say nothing can follow (a Game of 24 board whose one number is not 24): the search
        proposes nothing under it, where the reference pays for a proposal and its judgement (an overseer may still
        expand it by hand)."""
        return self.ctx.case.dead_end([n.thought for n in self.ctx.store.path(parent)[1:]])

    def _width(self, parent):
        """Thoughts proposed under a beam node: `branching`, or `answer_width` where the task says the next thought is
        the line's answer. The paper writes one answer a line (its chain-of-thought prompt, n = 1, once 24 is left):
        its kept lines to 24 are its tries, where eight answers a line are mostly restatements, each judged; with a
        narrow beam (keep 2) the answers a line gets are most of its tries, so the default stays `branching`."""
        line = [n.thought for n in self.ctx.store.path(parent)[1:]]
        due = self.ctx.params.answer_width and self.ctx.case.answer_due(line)
        return self.ctx.params.answer_width if due else self.ctx.params.branching

    async def expand(self, node, k):
        return await self._expand_and_score(node, k)

    async def rescore(self, node):
        await self._score([node])

    async def _expand_and_score(self, parent, k):
        children = await self._propose(parent, k)
        # Children that arrive under a branch an overseer pruned meanwhile are kept, but not scored.
        await self._score([c for c in children if not self.ctx.store.is_pruned(c)])
        return children

    async def _score(self, nodes):
        if nodes:
            samples = self.ctx.params.value_samples
            results = await settle_all(*(self.judge_shared(node, samples) for node in nodes))
            await self.ctx.store.update_many([(n, fields) for n, fields in zip(nodes, results, strict=True) if fields])

    async def _propose(self, parent, k):
        path = self.ctx.store.path(parent)
        step, depth = parent.depth + 1, max(self.ctx.params.depth, parent.depth + 1)
        siblings = [c.thought for c in self.ctx.store.children(parent)]
        prompt = self.render_on_path(PROPOSE, path, k=k, step=step, depth=depth, proposed=listed(siblings))
        answer = await self.ask_about(PROPOSE, prompt, parent, "proposals", expect=k)
        if answer is None:
            return []
        taken = {same(t) for t in siblings}
        items = merge_duplicates([t.model_dump() for t in answer.parsed.thoughts[:k]], taken)
        return await self.ctx.store.add_children(parent, items, answer)

    async def judge(self, node, samples):
        """Score one node, its judgement asked `samples` times; the fields to store (none if the budget ran out). A node
        with a canonical state is judged on that state alone; any other on its whole line."""
        checked = self.ctx.case.verdict(node.thought) if self.ctx.params.answer_checker else None
        if checked is not None:  # the task's checker, as LATS's environment reward: no model call
            state = {**node.state, "judged": float(checked.ok), "decided_by": "checker"}
            why = f"the task's checker: {checked.detail}"
            return {"eval_score": float(checked.ok), "eval_reason": why, "stale": False, "state": state}
        categorical = self.ctx.params.value_mode == "categorical"
        state = self.state_key(node)
        if state is not None:
            contract = STATE_VALUE if categorical else STATE_EVALUATE
            prompt = render(contract, **self.case_fields(state=state))
        else:
            contract = VALUE if categorical else EVALUATE
            prompt = self.render_on_path(contract, self.ctx.store.path(node)[:-1], thought=node.thought)
        answer, failure = await self.ask(contract, prompt, node, "evaluation", samples=samples)
        if answer is None:
            return failure
        score, reason = sampled_value(answer.samples, asked=samples)
        # `judged`: the judgement as the model gave it, before any cap of a failed fact check (what a reuse takes).
        fields = {"eval_score": score, "eval_reason": reason, "stale": False, "spent": answer}
        return fields | {"state": {**node.state, "judged": score}}

    def judgement_setting(self):
        return self.ctx.params.value_mode

    def judges_claims(self):
        return self.ctx.params.value_by == "claim"

    async def synthesize(self, path):
        return await self.ctx.gateway.ask(SYNTHESIZE, self.render_on_path(SYNTHESIZE, path), node_id=path[-1].id)

    @classmethod
    def best_node(cls, store):
        return deepest_best(store)

    @classmethod
    def expected_nodes(cls, params):
        total, width = 1, 1
        for _ in range(params.depth):
            width = min(width, params.keep) * params.branching  # the beam, then its proposals
            total += width
        return total

# ---- the rules, pure ------------------------------------------------------------------------------


def beam_losers(live, depth, keep, line_of=None):
    """The live nodes of a level that leave the beam: all but the best `keep` scored ones; unscored ones leave too
    (never scored 0). With nothing scored at the level, the level above is still the best there is: nobody leaves.
    The beam keeps one node of each line (`line_of`, Strategy.line_key; default: every node its own line), never one
    of each state: lines to an equal board share its judgement, but each writes its own answer from its own steps,
    so each is a try of its own (the reference dedupes only identical candidates)."""
    level = [n for n in live if n.depth == depth and depth > 0]
    scored = sorted((n for n in level if n.eval_score is not None), key=lambda n: n.eval_score, reverse=True)
    kept, lines = [], set()
    for node in scored:
        line = line_of(node) if line_of else node.id
        if len(kept) < keep and line not in lines:
            kept.append(node.id)
            lines.add(line)
    return [n for n in level if n.id not in kept] if kept else []


def level_work(live, depth, keep, proposed, line_of=None):
    """(parents to propose under, nodes to score, the level above's beam drops) for a level, from the live nodes as they
    stand: the level above cut to its best `keep` (a node pruned by hand is not live, so the next best takes its slot),
    those of them not proposed under yet, this level's unscored nodes, and every live stale node wherever it is (an
    edit above marks its descendants stale). A node whose reply was unparseable keeps its error, never asked again."""
    dropped = beam_losers(live, depth - 1, keep, line_of)
    out = {n.id for n in dropped}
    kept = [n for n in live if n.id not in out and not n.parse_error]
    parents = [n for n in kept if n.depth == depth - 1 and not proposed(n)]
    unscored = [n for n in kept if n.depth > 0 and ((n.depth == depth and n.eval_score is None) or n.stale)]
    return parents, unscored, dropped


def sampled_value(samples, asked=None):
    """(score, reason) from one or more judgements, and the count asked (a sample that never came counts 0 in the
    paper's sum). Scores: their mean. Verdicts: the paper's weighted sum, over its most (every sample sure)."""
    asked = max(asked or len(samples), len(samples))
    if hasattr(samples[0], "verdict"):
        verdicts = [s.verdict for s in samples]
        score = round(sum(VERDICT_WEIGHTS[v] for v in verdicts) / (VERDICT_WEIGHTS["sure"] * asked), 4)
        listed = ", ".join(verdicts + ["unread"] * (asked - len(samples)))
        what = f"sum of {asked} verdicts weighted sure 20, likely 1, impossible 0.001: {listed}"
    else:
        values = [s.score for s in samples]
        score = round(sum(values) / len(values), 4)
        listed = ", ".join(f"{v:g}" for v in values)
        what = f"mean of {len(values)} judgements: {listed}"
    reason = samples[0].reason
    if asked > 1:
        reason = f"{reason} ({what})".strip()
    return score, reason
