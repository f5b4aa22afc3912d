"""Tree of Thoughts (Yao et al. 2023) as a beam search: propose k steps per node, score them, keep the best.

Each level proposes from every beam node at once and scores each child as soon as its parent's
proposals arrive, so a level costs one propose plus one evaluate on the clock. The beam is read
from the stored tree, so a run that was paused, killed or steered continues where it stands:
the deepest level with live nodes is completed (parents left without children proposed, unscored
or stale children scored, the best kept), then the search goes on below it.
"""

from pydantic import Field

from reasoning.prompts import format_path, render

from .base import BudgetExhausted, Contract, ModelError, Strategy, StrictParams, Unparseable, deepest_best, settle_all
from .replies import AnswerOut, ScoreOut, ThoughtsOut

PROPOSE = Contract("tot.propose", ThoughtsOut, max_tokens=1200)
EVALUATE = Contract("tot.evaluate", ScoreOut, max_tokens=300)
SYNTHESIZE = Contract("tot.synthesize", AnswerOut, max_tokens=1000)


class ToTParams(StrictParams):
    branching: int = Field(3, ge=1, le=8, description="Thoughts proposed per expanded node.")
    depth: int = Field(4, ge=1, le=8, description="Levels below the root.")
    keep: int = Field(2, ge=1, le=6, description="Best thoughts kept per level (the beam).")


class TreeOfThoughts(Strategy):
    name = "tot"
    label = "Tree of Thoughts"
    Params = ToTParams
    contracts = (PROPOSE, EVALUATE, SYNTHESIZE)

    async def search(self):
        store, dropped = self.ctx.store, []
        for depth in range(max(1, self._deepest_live_level()), self.ctx.params.depth + 1):
            # The step boundary, in one round: mark the last level's losers, honour overseers, check the budget.
            _, remaining = await self.step_boundary(store.prune(dropped), self.ctx.gateway.remaining_usd())
            dropped = []
            if self.promoted:
                return
            parents, unscored = self._level_work(depth)
            if not parents and not any(n.depth == depth for n in self._live()):
                break  # nothing above could be expanded (every proposal failed): the search ends here
            if not self._can_afford(len(parents), len(unscored), remaining):
                self.exhausted = self.exhausted or bool(parents or unscored)
                return
            await settle_all(
                *(self._expand_and_score(p, self.ctx.params.branching) for p in parents), self._score(unscored)
            )
            dropped = self._beam_losers(depth)
            if self.exhausted:
                break
        await self.step_boundary(store.prune(dropped))

    def _deepest_live_level(self):
        return max((n.depth for n in self._live()), default=0)

    def _live(self):
        return [n for n in self.ctx.store.nodes() if not self.ctx.store.is_pruned(n)]

    def _level_work(self, depth):
        """(parents to propose under, children to score) for a level: all of it when fresh, the rest when re-entered."""
        live = self._live()
        # A parent whose proposals came back unparseable keeps its parse error rather than being asked forever.
        parents = [n for n in live if n.depth == depth - 1 and not self.ctx.store.children(n) and not n.parse_error]
        unscored = [n for n in live if n.depth == depth and (n.eval_score is None or n.stale) and not n.parse_error]
        return parents, unscored

    def _can_afford(self, parents, unscored, remaining):
        """The per-level budget check: this level's calls plus the synthesis, at the observed cost per call."""
        calls = parents * (1 + self.ctx.params.branching) + unscored + 1
        return remaining >= calls * self.ctx.gateway.typical_call_usd()

    def _beam_losers(self, depth):
        """The live nodes of the level that leave the beam; unscored ones leave it too, never scored 0."""
        level = [n for n in self._live() if n.depth == depth]
        scored = sorted((n for n in level if n.eval_score is not None), key=lambda n: n.eval_score, reverse=True)
        kept = {n.id for n in scored[: self.ctx.params.keep]}
        # Nothing scored at this level: the level above is still the best we have, and stays the beam.
        return [n for n in level if n.id not in kept] if kept else []

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
            results = await settle_all(*(self._evaluate(node) for node in nodes))
            await self.ctx.store.update_many([(n, fields) for n, fields in zip(nodes, results, strict=True) if fields])

    async def _propose(self, parent, k):
        path = self.ctx.store.path(parent)
        step, depth = parent.depth + 1, max(self.ctx.params.depth, parent.depth + 1)
        prompt = self._render(PROPOSE, path, k=k, step=step, depth=depth)
        try:
            answer = await self.ctx.gateway.ask(PROPOSE, prompt, node_id=parent.id, expect=k)
        except BudgetExhausted:
            self.exhausted = True
            return []
        except Unparseable as error:
            await self.ctx.store.update(parent, parse_error=f"proposals unparseable: {error}", spent=error)
            return []
        except ModelError as error:  # this node's proposals failed; the rest of the level goes on
            await self.ctx.store.update(parent, parse_error=f"model failed: {error}"[:2000])
            return []
        items = [t.model_dump() for t in answer.parsed.thoughts[:k]]
        return await self.ctx.store.add_children(parent, items, answer)

    async def _evaluate(self, node):
        """Score one node; returns the fields to store (none if the budget ran out first)."""
        path = self.ctx.store.path(node)
        prompt = self._render(EVALUATE, path[:-1], thought=node.thought)
        try:
            answer = await self.ctx.gateway.ask(EVALUATE, prompt, node_id=node.id)
        except BudgetExhausted:
            self.exhausted = True
            return {}
        except Unparseable as error:
            return {"parse_error": f"evaluation unparseable: {error}", "spent": error}
        except ModelError as error:
            return {"parse_error": f"model failed: {error}"[:2000]}
        return {"eval_score": answer.parsed.score, "eval_reason": answer.parsed.reason, "stale": False, "spent": answer}

    async def synthesize(self, path):
        return await self.ctx.gateway.ask(SYNTHESIZE, self._render(SYNTHESIZE, path), node_id=path[-1].id)

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

    def _render(self, contract, path, **fields):
        return render(
            contract,
            problem=self.ctx.problem,
            kind=self.ctx.kind,
            rubric=self.ctx.rubric,
            path=format_path([n.thought for n in path[1:]]),
            **fields,
        )
