"""Tree of Thoughts (Yao et al. 2023) as a beam search: propose k steps per node, score them, keep the best.

Each level proposes from every frontier node at once and scores each child as soon as its
parent's proposals arrive, so a level costs one propose plus one evaluate on the clock.
"""

import asyncio

from pydantic import Field

from reasoning.prompts import format_path, render

from .base import BudgetExhausted, Outcome, Strategy, StrictParams, Unparseable, settle_all


class ToTParams(StrictParams):
    branching: int = Field(3, ge=1, le=8, description="Thoughts proposed per expanded node.")
    depth: int = Field(4, ge=1, le=8, description="Levels below the root.")
    keep: int = Field(2, ge=1, le=6, description="Best thoughts kept per level (the beam).")


class TreeOfThoughts(Strategy):
    name = "tot"
    Params = ToTParams

    async def run(self):
        params = self.ctx.params
        self.exhausted = False
        root = await self.ctx.store.add_root(self.ctx.problem, {"problem_kind": self.ctx.kind})
        frontier, dropped = [root], []
        for depth in range(1, params.depth + 1):
            # The step boundary, in one round: mark the last level's losers, honour overseers (pause, cancel,
            # prune), check the budget.
            _, _, refreshed, remaining = await settle_all(
                self.ctx.store.prune(dropped),
                self.ctx.control.checkpoint(),
                self.ctx.store.refresh(frontier),
                self.ctx.gateway.remaining_usd(),
            )
            dropped = []
            frontier = [n for n in refreshed if not n.pruned]
            if not frontier or not self._can_afford_level(len(frontier), remaining):
                self.exhausted = self.exhausted or bool(frontier)
                break
            level = await self._expand_level(frontier, depth)
            frontier, dropped = self._keep_best(level, frontier)
            if self.exhausted:
                break
        await self.ctx.store.prune(dropped)
        return await self._finish(frontier)

    def _can_afford_level(self, width, remaining):
        """The per-level budget check: this level's calls plus the synthesis, at the observed cost per call."""
        calls = width * (1 + self.ctx.params.branching) + 1
        return remaining >= calls * self.ctx.gateway.typical_call_usd()

    async def _expand_level(self, frontier, depth):
        groups = await asyncio.gather(*(self._expand_and_score(parent, depth) for parent in frontier))
        return [node for group in groups for node in group]

    async def _expand_and_score(self, parent, depth):
        children = await self._propose(parent, depth)
        scores = await asyncio.gather(*(self._evaluate(child) for child in children))
        await self.ctx.store.update_many(
            [(child, fields) for child, fields in zip(children, scores, strict=True) if fields]
        )
        return children

    async def _propose(self, parent, depth):
        path = await self.ctx.store.path(parent)
        prompt = self._render("tot.propose", path, k=self.ctx.params.branching, step=depth, depth=self.ctx.params.depth)
        try:
            answer = await self.ctx.gateway.ask("tot.propose", prompt, node_id=parent.id)
        except BudgetExhausted:
            self.exhausted = True
            return []
        except Unparseable as error:
            await self.ctx.store.update(parent, parse_error=f"proposals unparseable: {error}")
            return []
        items = [t.model_dump() for t in answer.parsed.thoughts[: self.ctx.params.branching]]
        return await self.ctx.store.add_children(parent, items, answer)

    async def _evaluate(self, node):
        """Score one node; returns the fields to store (none if the budget ran out first)."""
        path = await self.ctx.store.path(node)
        prompt = self._render("tot.evaluate", path[:-1], thought=node.thought)
        try:
            answer = await self.ctx.gateway.ask("tot.evaluate", prompt, node_id=node.id)
        except BudgetExhausted:
            self.exhausted = True
            return {}
        except Unparseable as error:
            return {"parse_error": f"evaluation unparseable: {error}", "add_cost": error.cost_usd}
        node.eval_score = answer.parsed.score
        return {"eval_score": node.eval_score, "eval_reason": answer.parsed.reason, "add_cost": answer.cost_usd}

    def _keep_best(self, level, previous):
        """(kept, dropped): the best-scored nodes of the level; unscored ones leave the beam, never scored 0."""
        scored = sorted((n for n in level if n.eval_score is not None), key=lambda n: n.eval_score, reverse=True)
        kept = scored[: self.ctx.params.keep]
        dropped = [n for n in level if n not in kept]
        # Nothing scored at this level: the previous beam is still the best we have.
        return (kept or previous), dropped

    async def _finish(self, frontier):
        best = max(frontier, key=lambda n: n.eval_score if n.eval_score is not None else -1.0, default=None)
        if best is None or best.depth == 0:
            reason = "budget" if self.exhausted else "no_thoughts"
            return Outcome(final_answer="", final_node=None, reason=reason)
        path = await self.ctx.store.path(best)
        marking = asyncio.ensure_future(self.ctx.store.update(best, is_terminal=True))  # beside the synthesis
        try:
            answer = await self.ctx.gateway.ask("tot.synthesize", self._render("tot.synthesize", path), node_id=best.id)
            text = answer.parsed.answer
        except (BudgetExhausted, Unparseable) as error:
            self.exhausted = self.exhausted or isinstance(error, BudgetExhausted)
            text = "Best line of reasoning so far (no synthesis: %s):\n%s" % (
                "budget exhausted" if isinstance(error, BudgetExhausted) else f"synthesis unparseable: {error}",
                format_path([n.thought for n in path[1:]]),
            )
        finally:
            await marking
        return Outcome(final_answer=text, final_node=best, reason="budget" if self.exhausted else "solved")

    def _render(self, contract, path, **fields):
        return render(
            contract,
            problem=self.ctx.problem,
            kind=self.ctx.kind,
            rubric=self.ctx.rubric,
            path=format_path([n.thought for n in path[1:]]),
            **fields,
        )

