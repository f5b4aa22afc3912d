"""LATS (Zhou et al. 2023): Monte Carlo tree search over thoughts, with an LLM value and self-reflection.

Each iteration selects a leaf by UCB1, expands it with n children in one call, values them concurrently,
rolls out a few steps from the best child, and backpropagates the last value on the rollout to the root.
Failed terminal lines get a written reflection that later expansions read. Every statistic lives on the
stored nodes (visit_count, total_reward, state["iteration"]), so a run rebuilds its search from the tree:
the iteration count is the root's visit_count, and an iteration expanded but not yet backpropagated (its
nodes carry the next iteration number) is finished before a new one starts.
"""

import math

from pydantic import BaseModel, Field

from reasoning.prompts import format_path, render

from .base import BudgetExhausted, Contract, ModelError, Strategy, StrictParams, Unparseable, deepest_best, settle_all
from .replies import AnswerOut, Prose, ScoreOut, ThoughtsOut

RECENT_REFLECTIONS = 3  # enough memory to steer an expansion without drowning its prompt


class ReflectOut(BaseModel):
    reflection: Prose = Field(min_length=1, max_length=4000)


class ValueOut(ScoreOut):
    is_terminal: bool = False  # the step completes a solution


EXPAND = Contract("lats.expand", ThoughtsOut, max_tokens=1200)
EVALUATE = Contract("lats.evaluate", ValueOut, max_tokens=300)
REFLECT = Contract("lats.reflect", ReflectOut, max_tokens=400)
SYNTHESIZE = Contract("lats.synthesize", AnswerOut, max_tokens=1000)


class LATSParams(StrictParams):
    iterations: int = Field(8, ge=1, le=40, description="MCTS iterations (select, expand, simulate, backpropagate).")
    children: int = Field(3, ge=1, le=6, description="Children proposed per expansion.")
    exploration: float = Field(1.0, ge=0, le=4, description="UCB1 exploration weight c.")
    max_depth: int = Field(5, ge=1, le=10, description="Deepest level a node may reach.")
    rollout_depth: int = Field(2, ge=0, le=4, description="Simulation steps from the best new child.")
    threshold: float = Field(0.8, ge=0, le=1, description="Value at which a terminal node counts as a success.")


class LanguageAgentTreeSearch(Strategy):
    name = "lats"
    label = "LATS (MCTS)"
    Params = LATSParams
    contracts = (EXPAND, EVALUATE, REFLECT, SYNTHESIZE)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.reasons = {}  # node id -> the evaluator's reason, for reflections written in this run

    async def search(self):
        while not self.exhausted:
            # The step boundary: honour overseers and read the budget in the same round.
            (remaining,) = await self.step_boundary(self.ctx.gateway.remaining_usd())
            if self.promoted or self._done():
                return
            if not self._can_afford(remaining):
                self.exhausted = True
                return
            if not await self._iterate():
                break  # no live leaf is left to expand
        await self.step_boundary()

    # ---- one iteration ------------------------------------------------------------------

    async def _iterate(self):
        """One MCTS iteration (or the rest of an interrupted one); False when there is nothing left to expand."""
        iteration = self._root().visit_count + 1
        children = self._pending(iteration)
        if not children:
            leaf = self._select(self._root())
            if leaf is None:
                return False
            children = await self._expand(leaf, self.ctx.params.children, "expand", iteration)
        children = [self.ctx.store.get(c.id) for c in children]  # as valued since they were made
        await self._score([c for c in children if self._needs_value(c)])
        start = self._best_valued(children)
        if start is None:
            return True  # the leaf or its children failed to parse: they stay dead ends, another leaf is selected
        end = await self._simulate(start, iteration)
        # The reward of the rollout goes up the tree beside the reflections on any failed ending.
        await settle_all(self._backpropagate(end), self._reflect_failures())
        return True

    def _pending(self, iteration):
        """The children of an iteration expanded but never backpropagated (a run cut off mid-iteration)."""
        live = [n for n in self._live() if n.state.get("iteration") == iteration and not n.parse_error]
        return [n for n in live if n.state.get("kind") == "expand"]

    def _select(self, node):
        """Descend by UCB1 to a leaf to expand; backtrack out of subtrees with nothing left to expand."""
        if not self._proposed(node):
            return node if self._expandable(node) else None
        for child in sorted(self._selectable(node), key=lambda c: self._ucb(node, c), reverse=True):
            leaf = self._select(child)
            if leaf is not None:
                return leaf
        return None

    def _ucb(self, parent, child):
        # An unvisited child is tried first (the better-valued first among them).
        if child.visit_count == 0:
            return math.inf, child.eval_score
        mean = child.total_reward / child.visit_count
        explore = math.sqrt(math.log(max(parent.visit_count, 1)) / child.visit_count)
        return mean + self.ctx.params.exploration * explore, child.eval_score

    async def _simulate(self, start, iteration):
        """A bounded rollout from the best new child; returns the last valued node, whose value is the reward."""
        node, steps = start, 0
        for stored in self._rollout_line(start, iteration):  # a resumed iteration continues its own rollout
            if self._needs_value(stored):
                await self._score([stored])
            stored = self.ctx.store.get(stored.id)
            if stored.eval_score is None or self.ctx.store.is_pruned(stored):
                return node
            node, steps = stored, steps + 1
        while steps < self.ctx.params.rollout_depth and self._can_continue(node):
            proposed = await self._expand(node, 1, "rollout", iteration)
            if not proposed or self.ctx.store.get(proposed[0].id).eval_score is None:
                break
            node, steps = self.ctx.store.get(proposed[0].id), steps + 1
        return node

    def _rollout_line(self, start, iteration):
        line, node = [], start
        while True:
            kids = [
                c
                for c in self.ctx.store.children(node)
                if c.state.get("rollout") and c.state.get("iteration") == iteration
            ]
            if not kids:
                return line
            node = kids[0]
            line.append(node)

    async def _backpropagate(self, end):
        """One visit and the reward for every node from the simulated end to the root, in one write."""
        reward = end.eval_score
        path = self.ctx.store.path(end)
        await self.ctx.store.update_many(
            [(n, {"visit_count": n.visit_count + 1, "total_reward": n.total_reward + reward}) for n in path]
        )

    # ---- model steps --------------------------------------------------------------------

    async def _expand(self, parent, k, kind, iteration=None):
        """Propose k children in one call and value them concurrently; recent reflections go into the prompt."""
        reflections = self.ctx.store.critiques()[-RECENT_REFLECTIONS:]
        children = await self._propose(parent, k, kind, iteration, reflections)
        fresh = [c for c in reflections if not c.applied_to_next] if children else []
        live = [c for c in children if not self.ctx.store.is_pruned(c)]
        await settle_all(self._score(live), self.ctx.store.mark_applied(fresh))
        return children

    async def _propose(self, parent, k, kind, iteration, reflections):
        path = self.ctx.store.path(parent)
        prompt = self._render(
            EXPAND,
            path,
            k=k,
            step=parent.depth + 1,
            depth=max(self.ctx.params.max_depth, parent.depth + 1),
            reflections=format_reflections(reflections),
        )
        try:
            answer = await self.ctx.gateway.ask(EXPAND, prompt, node_id=parent.id, expect=k)
        except BudgetExhausted:
            self.exhausted = True
            return []
        except Unparseable as error:
            await self.ctx.store.update(parent, parse_error=f"proposals unparseable: {error}", spent=error)
            return []
        except ModelError as error:
            await self.ctx.store.update(parent, parse_error=f"model failed: {error}")
            return []
        items = [{"thought": t.thought, "state": t.state | marks(kind, iteration)} for t in answer.parsed.thoughts[:k]]
        return await self.ctx.store.add_children(parent, items, answer)

    async def _score(self, nodes):
        if nodes:
            results = await settle_all(*(self._evaluate(node) for node in nodes))
            await self.ctx.store.update_many([(n, fields) for n, fields in zip(nodes, results, strict=True) if fields])

    async def _evaluate(self, node):
        """Value one node; returns the fields to store (none if the budget ran out first)."""
        path = self.ctx.store.path(node)
        prompt = self._render(
            EVALUATE, path[:-1], thought=node.thought, step=node.depth, depth=max(self.ctx.params.max_depth, node.depth)
        )
        try:
            answer = await self.ctx.gateway.ask(EVALUATE, prompt, node_id=node.id)
        except BudgetExhausted:
            self.exhausted = True
            return {}
        except Unparseable as error:
            return {"parse_error": f"evaluation unparseable: {error}", "spent": error}
        except ModelError as error:
            return {"parse_error": f"model failed: {error}"}
        value = answer.parsed
        self.reasons[node.id] = value.reason
        fields = {"eval_score": value.score, "eval_reason": value.reason, "is_terminal": value.is_terminal}
        return fields | {"stale": False, "parse_error": "", "spent": answer}

    async def _reflect_failures(self):
        """A self-reflection on each failed terminal line not reflected on yet (the memory rebuilds from critiques)."""
        done = {c.node_id for c in self.ctx.store.critiques()}
        failed = [n for n in self._live() if self._failed(n) and n.id not in done and not n.parse_error]
        await settle_all(*(self._reflect(n) for n in failed))

    async def _reflect(self, node):
        path = self.ctx.store.path(node)
        reason = self.reasons.get(node.id, "(not recorded in this run)")
        prompt = self._render(REFLECT, path[:-1], thought=node.thought, score=f"{node.eval_score:.2f}", reason=reason)
        try:
            answer = await self.ctx.gateway.ask(REFLECT, prompt, node_id=node.id)
        except BudgetExhausted:
            self.exhausted = True
            return
        except (Unparseable, ModelError) as error:
            spent = error if isinstance(error, Unparseable) else None
            await self.ctx.store.update(node, parse_error=f"reflection failed: {error}", spent=spent)
            return
        attempt = node.state.get("iteration") or self._root().visit_count + 1
        await self.ctx.store.add_critique(node, attempt, node.eval_score, answer.parsed.reflection, spent=answer)

    # ---- overseer steps and the answer --------------------------------------------------

    async def expand(self, node, k):
        """A hand expansion: k valued children, left unvisited (no backpropagation) so UCB1 tries them first."""
        return await self._expand(node, k, "hand")

    async def rescore(self, node):
        await self._score([self.ctx.store.get(node.id)])

    async def synthesize(self, path):
        return await self.ctx.gateway.ask(SYNTHESIZE, self._render(SYNTHESIZE, path), node_id=path[-1].id)

    @classmethod
    def best_node(cls, store):
        """The best-valued live terminal node; else the end of the most-visited live path from the root."""
        live = [n for n in store.nodes() if n.depth > 0 and not store.is_pruned(n)]
        terminals = [n for n in live if n.is_terminal and n.eval_score is not None]
        if terminals:
            return max(terminals, key=lambda n: (n.eval_score, n.visit_count))
        node = next((n for n in store.nodes() if n.depth == 0), None)
        while node is not None:
            visited = [c for c in store.children(node) if c.visit_count and not store.is_pruned(c)]
            if not visited:
                break
            node = max(visited, key=lambda c: (c.visit_count, c.total_reward / c.visit_count))
        # Nothing backpropagated yet (the budget ran out in the first iteration): the best valued node then.
        return node if node is not None and node.depth > 0 else deepest_best(store)

    # ---- reading the tree ---------------------------------------------------------------

    def _root(self):
        return next(n for n in self.ctx.store.nodes() if n.depth == 0)

    def _live(self):
        return [n for n in self.ctx.store.nodes() if not self.ctx.store.is_pruned(n)]

    def _done(self):
        """The iteration limit, or a live terminal node at or above the threshold (early stop)."""
        solved = any(self._succeeded(n) for n in self._live())
        return solved or self._root().visit_count >= self.ctx.params.iterations

    def _succeeded(self, node):
        return node.is_terminal and node.eval_score is not None and node.eval_score >= self.ctx.params.threshold

    def _failed(self, node):
        return node.is_terminal and node.eval_score is not None and node.eval_score < self.ctx.params.threshold

    def _proposed(self, node):
        """Children an expansion made (a rollout child alone leaves its parent a leaf, still to widen)."""
        return [c for c in self.ctx.store.children(node) if not c.state.get("rollout")]

    def _selectable(self, node):
        kids = [c for c in self.ctx.store.children(node) if not self.ctx.store.is_pruned(c)]
        # Unvisited rollout nodes belong to an unfinished iteration; terminal and unvalued nodes end a line.
        return [
            c
            for c in kids
            if c.eval_score is not None
            and not c.is_terminal
            and not c.parse_error
            and not (c.state.get("rollout") and not c.visit_count)
        ]

    def _expandable(self, node):
        if self.ctx.store.is_pruned(node) or node.is_terminal or node.parse_error:
            return False
        return node.depth < self.ctx.params.max_depth

    def _can_continue(self, node):
        return not self.exhausted and self._expandable(node) and not self.ctx.store.children(node)

    def _needs_value(self, node):
        return (node.eval_score is None or node.stale) and not node.parse_error and not self.ctx.store.is_pruned(node)

    def _best_valued(self, nodes):
        fresh = [self.ctx.store.get(n.id) for n in nodes]
        valued = [n for n in fresh if n.eval_score is not None and not self.ctx.store.is_pruned(n)]
        return max(valued, key=lambda n: n.eval_score, default=None)

    def _can_afford(self, remaining):
        """The per-iteration budget check: its calls plus a reflection and the synthesis, at the observed cost."""
        p = self.ctx.params
        calls = 1 + p.children + 2 * p.rollout_depth + 2
        return remaining >= calls * self.ctx.gateway.typical_call_usd()

    def _render(self, contract, path, **fields):
        return render(
            contract,
            problem=self.ctx.problem,
            kind=self.ctx.kind,
            rubric=self.ctx.rubric,
            path=format_path([n.thought for n in path[1:]]),
            **fields,
        )


def marks(kind, iteration):
    """How a node was made (expand, rollout or hand) and in which iteration: what a run rebuilds its search from."""
    mark = {"kind": kind} | ({"rollout": True} if kind == "rollout" else {})
    return mark | ({"iteration": iteration} if iteration else {})


def format_reflections(critiques):
    if not critiques:
        return "(none yet)"
    return "\n".join(f"- attempt {c.attempt_num}, valued {c.outcome_score:.2f}: {c.critique}" for c in critiques)
