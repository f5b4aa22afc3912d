"""LATS (Zhou et al. 2023): Monte Carlo tree search over thoughts, with an LLM value and self-reflection.

Each iteration selects a leaf by UCB1 (a child never visited counts at its value, so the search goes deeper on the
best line before it widens weak ones), expands it with n children in one call, values them, and rolls out from the
best child: at each rollout step `rollout_samples` children are proposed and valued and the best is followed (a
terminal first), down to a terminal node, `max_depth` or `rollout_depth` steps. The reward then goes up the path: a
successful terminal's 1; a failed terminal gets -1 itself and 0 above it; a rollout that reached max_depth without an
end gets -1; any other rollout the reference's mean over the rollout (its list of rewards starts at 0 in the start
node's place, then the value of each step it followed). A value is the model's judgement (with the reflections on
failed lines in its prompt). The paper mixes in self-consistency, (1 - w) * LM + w * SC, with SC from n children
sampled independently; ours are asked for in one call as distinct thoughts, so SC would be a constant among siblings
(1/n, or 2/n for a slip) that only tilts the final pick: its weight is 0 unless set.

Whether a terminal line succeeded is decided as the reference decides it, from the terminal itself, never from the
mixed value (a unique thought among 3 proposals has SC 1/3, so a perfect judgement would mix to 0.83 and one guessed
sample under the threshold): by the task's checker where the task has one that judges an answer alone (a Game of 24
answer's arithmetic: the environment's reward, no model call), else by the model's own judgement of the terminal
(state["judged"], verified with several samples) at the threshold, and where the client's facts are checked, only if
the terminal passes those checks too: the evaluator alone never reaches success on a task with a checker. Failed
terminal lines get a written reflection that later expansions and values read.

Rollout samples are simulated, as the reference's are (it keeps them out of node.children): stored and shown (kind
"rollout"), valued and visited, but never selected into and never counted as an expansion, so a node the rollout
passed through is still expanded to its full width when selection reaches it.

Every statistic lives on the stored nodes (visit_count, total_reward, state["iteration"]), so a run rebuilds its
search from the tree: the iteration count is the root's visit_count, and an iteration expanded but not yet
backpropagated (its nodes carry the next iteration number) is finished, its rollout included, before a new one.
"""

import math

from pydantic import BaseModel, Field

from reasoning.modes import LABELS
from reasoning.prompts import render

from .base import (
    NO_SUCCESS,
    VERIFY_SAMPLES,
    Contract,
    Strategy,
    StrictParams,
    answer_candidates,
    deepest_best,
    fork_node,
    settle_all,
)
from .replies import AnswerOut, Commentary, ScoreOut, ThoughtsOut
from .thoughts import listed, merge_duplicates, same

RECENT_REFLECTIONS = 3  # enough memory to steer an expansion without drowning its prompt
FAILED_TERMINAL = -1.0  # the reward of a terminal line that failed, and of a rollout that ran out of depth
SUCCESS = 1.0  # the reward of a terminal line that succeeded (the reference's environment reward r = 1)
# The reference (hotpot/lats.py) writes reflections while fewer than 4 distinct failed lines (by their final answer)
# exist: at most 3, each on a line whose answer none reflected on yet.
MAX_REFLECTIONS = 3


class ReflectOut(BaseModel):
    reflection: Commentary = Field(min_length=1, max_length=4000)


class ValueOut(ScoreOut):
    is_terminal: bool = False  # the step completes a solution


EXPAND = Contract("lats.expand", ThoughtsOut, max_tokens=1500)
EVALUATE = Contract("lats.evaluate", ValueOut, max_tokens=300)
STATE_EVALUATE = Contract("lats.state_evaluate", ValueOut, max_tokens=300)  # a position alone (equal ones share it)
REFLECT = Contract("lats.reflect", ReflectOut, max_tokens=400)
SYNTHESIZE = Contract("lats.synthesize", AnswerOut, max_tokens=1500)


class LATSParams(StrictParams):
    iterations: int = Field(8, ge=1, le=40, description="MCTS iterations (select, expand, simulate, backpropagate).")
    children: int = Field(3, ge=1, le=6, description="Children proposed per expansion.")
    # 1.0 as the LATS reference's programming/mcts.py (uct's exploration_weight); its HotpotQA code (hotpot/lats.py)
    # takes √2, writing sqrt(2 ln N / n).
    exploration: float = Field(1.0, ge=0, le=4, description="UCB1 exploration weight c (the reference: 1, or √2).")
    max_depth: int = Field(5, ge=1, le=10, description="Deepest level a node may reach.")
    rollout_depth: int = Field(
        4, ge=0, le=10, description="Most simulation steps from the best new child (it stops at a terminal node)."
    )
    rollout_samples: int = Field(
        2, ge=1, le=6, description="Children proposed per simulation step; the best is followed (the reference: 5)."
    )
    value_samples: int = Field(
        3, ge=1, le=5, description="Judgements asked per value, in one request where the model allows (their mean)."
    )
    # 0: the children come from one call that asks for distinct thoughts, not from n independent samples as in the
    # paper, so the share of repeats is a slip of that reply, the same for every sibling (issue 31).
    consistency: float = Field(
        0.0, ge=0, le=1, description="Weight of self-consistency (how often a thought was proposed) in a value."
    )
    threshold: float = Field(
        0.8, ge=0, le=1, description="The model's own judgement of a terminal at which it counts as a success."
    )


class LanguageAgentTreeSearch(Strategy):
    name = "lats"
    label = LABELS["lats"]
    scale = "value"
    legend = ("unscored", "visits", "rollout", "reflection")
    Params = LATSParams
    contracts = (EXPAND, EVALUATE, STATE_EVALUATE, REFLECT, SYNTHESIZE)
    shares_states = True

    async def search(self):
        barren = 0  # expansions in this run that gave nothing to simulate: a bound, so failures cannot loop forever
        while not self.exhausted and barren <= self.ctx.params.iterations:
            # The step boundary: honour overseers and read the budget in the same round.
            (remaining,) = await self.step_boundary(self.ctx.gateway.remaining_usd())
            if self.promoted or self._done():
                return
            if not self._can_afford(remaining):
                self.exhausted = True
                return
            simulated = await self._iterate()
            if simulated is None:
                break  # no live leaf is left to expand
            barren += not simulated
        await self.step_boundary()

    # ---- one iteration ------------------------------------------------------------------

    async def _iterate(self):
        """One MCTS iteration (or the rest of an interrupted one): True if it simulated, False if its expansion gave
        nothing to simulate, None when there is nothing left to expand."""
        if self._copied_to_value():
            await self._value_copied()  # a fork's first work: its copied path valued in LATS's own terms
            return True
        iteration = self._root().visit_count + 1
        children = self._pending(iteration)
        if not children:
            leaf = select_leaf(self._root(), self._selectable, self._proposed, self._expandable, self.ctx.params)
            if leaf is None:
                return None
            children = await self._expand(leaf, self.ctx.params.children, "expand", iteration)
        await self._score([c for c in self._fresh(children) if self._needs_value(c)])
        start = self._best_valued(children)
        if start is None:
            return False  # the leaf or its children failed to parse: they stay dead ends, another leaf is selected
        end, values = await self._simulate(start, iteration)
        # The reward goes up the tree beside the reflections on any failed ending.
        await settle_all(self._backpropagate(end, values), self._reflect_failures(end))
        return True

    def _pending(self, iteration):
        """The children of an iteration expanded but never backpropagated (a run cut off mid-iteration)."""
        live = [n for n in self._live() if n.state.get("iteration") == iteration and not n.parse_error]
        return [n for n in live if n.state.get("kind") == "expand" and not n.state.get("copied")]

    async def _simulate(self, start, iteration):
        """The rollout from the best new child: best of `rollout_samples` per step; (its end, the values on the way).

        A resumed iteration continues its own rollout: the samples already stored under a node are valued, not
        proposed again.
        """
        node, values = start, [start.eval_score]
        for _ in range(self.ctx.params.rollout_depth):
            if node.is_terminal or not self._expandable(node) or self.exhausted:
                break
            samples = [c for c in self.ctx.store.children(node) if c.state.get("iteration") == iteration]
            samples = [c for c in samples if not c.state.get("copied")]  # a copied path's marks are another run's
            if samples:
                await self._score([c for c in samples if self._needs_value(c)])
            else:
                samples = await self._expand(node, self.ctx.params.rollout_samples, "rollout", iteration)
            valued = [c for c in self._fresh(samples) if c.eval_score is not None and not self.ctx.store.is_pruned(c)]
            if not valued:
                break
            node = max([c for c in valued if c.is_terminal] or valued, key=lambda c: (succeeded(c), c.eval_score))
            values.append(node.eval_score)
        return node, values

    def _copied_to_value(self):
        """A fork's copied path still to value: its nodes without a value, and the fork's node itself, judged again
        once (its terminal flag is never copied), so selection descends the path and expands under its end."""
        copied = [n for n in self._live() if n.depth and n.state.get("copied") and not n.parse_error]
        end = fork_node(self.ctx.store)
        fresh = [n for n in copied if not n.state.get("revalued")]
        return [n for n in fresh if n.eval_score is None or (end is not None and n.id == end.id)]

    async def _value_copied(self):
        nodes = self._copied_to_value()
        end = fork_node(self.ctx.store)
        results = await settle_all(*(self.judge(node, self.ctx.params.value_samples) for node in nodes))
        changes = []
        for node, fields in zip(nodes, results, strict=True):
            if "eval_score" in fields:
                fields["state"] = {**fields.get("state", node.state), "revalued": True}
                if node.id != end.id:  # a node above the fork's continues in its copied child: it ends no line
                    fields["is_terminal"] = False
            if fields:
                changes.append((node, fields))
        await self.ctx.store.update_many(changes)

    async def _backpropagate(self, end, values):
        """One visit and the reward for every node from the simulated end to the root, in one write."""
        path = self.ctx.store.path(end)
        rewards = path_rewards(path, end, values, self.ctx.params, succeeded(end))
        await self.ctx.store.update_many(
            [(n, {"visit_count": n.visit_count + 1, "total_reward": n.total_reward + r}) for n, r in zip(path, rewards)]
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
        # A rollout's samples are simulated, outside the tree: an expansion may propose them again as its own.
        siblings = [c.thought for c in self._in_tree(parent, kind == "rollout")]
        prompt = self.render_on_path(
            EXPAND,
            self.ctx.store.path(parent),
            k=k,
            step=parent.depth + 1,
            depth=max(self.ctx.params.max_depth, parent.depth + 1),
            reflections=format_reflections(reflections),
            proposed=listed(siblings),
        )
        answer = await self.ask_about(EXPAND, prompt, parent, "proposals", expect=k)
        if answer is None:
            return []
        proposed = [
            {"thought": t.thought, "state": t.state | marks(kind, iteration), "figures": t.figures}
            for t in answer.parsed.thoughts[:k]
        ]
        items = merge_duplicates(proposed, {same(t) for t in siblings})
        for item in items:  # self-consistency: the share of this call's proposals that were this thought
            item["state"]["consistency"] = round(item["state"].get("proposed", 1) / len(proposed), 4)
        return await self.ctx.store.add_children(parent, items, answer)

    async def _score(self, nodes):
        """Value nodes concurrently; a terminal judged at the threshold is verified before it can end the search."""
        if nodes:
            samples = self.ctx.params.value_samples
            results = await settle_all(*(self.judge_shared(node, samples) for node in nodes))
            await self.ctx.store.update_many([(n, fields) for n, fields in zip(nodes, results, strict=True) if fields])
            hopeful = [n for n in self._fresh(nodes) if self._unverified_success(n)]
            await settle_all(*(self.verify(n) for n in hopeful))

    async def judge(self, node, samples):
        """The node's value (its fields to store; none if the budget ran out): the task's checker's verdict on an
        answer it judges alone; else the model's judgement, `samples` times asked, mixed with self-consistency."""
        checked = self.ctx.case.verdict(node.thought)
        if checked is not None:  # the environment's reward, as the reference's: no model call
            state = {**node.state, "success": checked.ok, "decided_by": "checker"}
            why = f"the task's checker: {checked.detail}"
            fields = {"eval_score": 1.0 if checked.ok else 0.0, "eval_reason": why, "is_terminal": True, "state": state}
            return fields | {"stale": False, "parse_error": ""}
        reflections = format_reflections(self.ctx.store.critiques()[-RECENT_REFLECTIONS:])
        position = Strategy.state_key(self, node)
        if position is not None:  # a position judged alone: every equal one shares the judgement
            contract = STATE_EVALUATE
            prompt = render(contract, **self.case_fields(state=position, reflections=reflections))
        else:
            contract = EVALUATE
            prompt = self.render_on_path(
                contract,
                self.ctx.store.path(node)[:-1],
                thought=node.thought,
                step=node.depth,
                depth=max(self.ctx.params.max_depth, node.depth),
                reflections=reflections,
            )
        answer, failure = await self.ask(contract, prompt, node, "evaluation", samples=samples)
        if answer is None:
            return failure
        judged = sum(s.score for s in answer.samples) / len(answer.samples)
        terminal = 2 * sum(s.is_terminal for s in answer.samples) > len(answer.samples)  # the samples' majority
        consistency = node.state.get("consistency", 1.0)
        value = mixed_value(judged, consistency, self.ctx.params.consistency)
        got = len(answer.samples)  # what came back, whatever was asked: a label never claims more
        reason = answer.parsed.reason + (f" (mean of {got} judgements)" if got > 1 else "")
        state = {**node.state, "judged": round(judged, 4)}
        if got >= VERIFY_SAMPLES:
            state["verified"] = got  # judged as many times as a verification would: nothing to ask again
        if terminal:
            state |= self._judged_success(node, judged)
        fields = {"eval_score": value, "eval_reason": reason, "is_terminal": terminal, "state": state}
        return fields | {"stale": False, "parse_error": "", "spent": answer}

    def state_key(self, node):
        """A node's state, and the reflections its judge is shown: a new reflection asks for a new judgement, as the
        reference's value cache is keyed by its whole prompt."""
        position = super().state_key(node)
        shown = [c.id or str(c.attempt_num) for c in self.ctx.store.critiques()[-RECENT_REFLECTIONS:]]
        return f"{position} · after reflections {', '.join(shown)}" if position and shown else position

    def memory_key(self, node, samples):
        """Only a judgement shown no reflection is kept for the firm's later sessions: a reflection is this session's."""
        return None if self.ctx.store.critiques() else super().memory_key(node, samples)

    def reused(self, node, fields, key, source):
        """An equal position's judgement, mixed with this node's own self-consistency."""
        shared = super().reused(node, fields, key, source)
        judged = shared["state"].get("judged")
        if judged is None or shared["state"].get("decided_by") == "checker":
            return shared
        shared["eval_score"] = mixed_value(judged, node.state.get("consistency", 1.0), self.ctx.params.consistency)
        if shared.get("is_terminal"):
            shared["state"] |= self._judged_success(node, judged)
        return shared

    async def _reflect_failures(self, end):
        """A self-reflection on each failed terminal line a simulation ended on (this one's `end` included, its visit
        being written beside) whose answer none reflected on yet, MAX_REFLECTIONS in all, as the reference caps them;
        rollout samples never followed get none."""
        critiques = self.ctx.store.critiques()
        reflected = [self.ctx.store.get(c.node_id) for c in critiques if c.node_id]
        done = {same(n.thought) for n in reflected if n is not None}
        ended = [n for n in self._live() if n.visit_count or n.id == end.id]
        failed = reflection_due([n for n in ended if self._failed(n) and not n.parse_error], done, len(critiques))
        await settle_all(*(self._reflect(n) for n in failed))

    async def _reflect(self, node):
        path = self.ctx.store.path(node)
        reason = node.eval_reason or "(no reason was given)"  # stored on the node, so a resumed run still has it
        score = f"{node.eval_score:.2f}"
        evidence = self.line_evidence(node)
        prompt = self.render_on_path(
            REFLECT, path[:-1], thought=node.thought, score=score, reason=reason, findings=evidence
        )
        answer = await self.ask_about(REFLECT, prompt, node, "reflection")
        if answer is None:
            return
        attempt = node.state.get("iteration") or self._root().visit_count + 1
        await self.ctx.store.add_critique(node, attempt, node.eval_score, answer.parsed.reflection, spent=answer)

    # ---- overseer steps and the answer --------------------------------------------------

    async def expand(self, node, k):
        """A hand expansion: k valued children, left unvisited (no backpropagation); selection weighs them by value."""
        return await self._expand(node, k, "hand")

    async def rescore(self, node):
        await self._score([self.ctx.store.get(node.id)])

    async def synthesize(self, path):
        return await self.ctx.gateway.ask(SYNTHESIZE, self.render_on_path(SYNTHESIZE, path), node_id=path[-1].id)

    def final_candidates(self):
        """Every live valued terminal node ends a line with an answer of its own."""
        return [n for n in self._live() if n.is_terminal and n.eval_score is not None and not n.parse_error]

    @classmethod
    def best_node(cls, store):
        """The best live terminal that succeeded; where none did, the best line that did not fail: a terminal whose
        success is not verified yet, else the end of the most-visited live path from the root that stops short of a
        failed terminal (one the tree draws as failed, its reward -1), else the best valued node; a failed terminal
        only when nothing else is left. The answer of a search with no success says so (`_answer`)."""
        terminals = [n for n in answer_candidates(store) if n.is_terminal and n.eval_score is not None]
        won = [n for n in terminals if succeeded(n)] or [n for n in terminals if succeeded(n, verified=False)]
        if won:
            return max(won, key=lambda n: (n.eval_score, n.visit_count))
        node = next((n for n in store.nodes() if n.depth == 0), None)
        while node is not None:
            kids = [c for c in store.children(node) if c.visit_count and not store.is_pruned(c)]
            visited = [c for c in kids if not failed_end(c)]
            if not visited:
                break
            node = max(visited, key=lambda c: (c.visit_count, c.total_reward / c.visit_count))
        if node is not None and node.depth > 0:
            return node
        # Nothing backpropagated yet (the budget ran out in the first iteration): the best valued node then.
        return deepest_best(WithoutFailedEnds(store)) or max(terminals, key=lambda n: n.eval_score, default=None)

    async def mark_answered(self, node):
        """A terminal here is a line that ended, judged a success or a failure: an answer written from a line that did
        not end (no terminal succeeded) leaves it open, never a terminal judged by nobody."""
        if node.is_terminal:
            await super().mark_answered(node)

    async def _answer(self):
        """The answer; from a line no terminal of which succeeded, it is the best line so far, and the search says so
        (a person's promote stands as it is)."""
        outcome = await super()._answer()
        node = self.ctx.store.get(outcome.final_node.id) if outcome.final_node else None
        plain = outcome.reason in ("solved", "unchanged") and not outcome.chosen_by and outcome.final_answer
        if plain and (node is None or not succeeded(node)):
            outcome.reason, outcome.partial = NO_SUCCESS, True
            outcome.detail = (
                f"no terminal line reached the threshold {self.ctx.params.threshold} of its verified judgement or "
                "passed the task's checks"
            )
        return outcome

    # ---- reading the tree ---------------------------------------------------------------

    def _root(self):
        return next(n for n in self.ctx.store.nodes() if n.depth == 0)

    def _live(self):
        return [n for n in self.ctx.store.nodes() if not self.ctx.store.is_pruned(n)]

    def _fresh(self, nodes):
        return [self.ctx.store.get(n.id) for n in nodes]

    def _done(self):
        """The iteration limit, or a live terminal node that succeeded (early stop)."""
        solved = any(succeeded(n) for n in self._live())
        return solved or self._root().visit_count >= self.ctx.params.iterations

    def _judged_success(self, node, judged):
        """A terminal the model judged: a success at the threshold of its own judgement (never the mixed value), and
        where the client's facts are checked, only if its whole line passes those checks too: a line that misstated a
        figure two steps up is a failure, backpropagated as one and reflected on with the findings."""
        if self.line_failures(node):
            return {"success": False, "decided_by": "checker"}
        return {"success": judged >= self.ctx.params.threshold, "decided_by": "judgement"}

    def _unverified_success(self, node):
        """A success the model's judgement alone decided, on fewer samples than a verification asks."""
        judged = node.state.get("decided_by") == "judgement"
        return judged and succeeded(node, verified=False) and node.state.get("verified") is None

    def _failed(self, node):
        if not node.is_terminal or node.eval_score is None:
            return False
        success = node.state.get("success")
        if success is None:  # a terminal valued before success was recorded: its own judgement decides
            success = node.state.get("judged", node.eval_score) >= self.ctx.params.threshold
        return not success

    def _in_tree(self, node, rollouts=False):
        """A node's children in the tree: what an expansion or a hand made, and a fork's copied path (rollout samples
        only if asked)."""
        kids = self.ctx.store.children(node)
        return [c for c in kids if rollouts or not c.state.get("rollout") or c.state.get("copied")]

    def _proposed(self, node):
        """Whether a node was expanded (rollout samples are simulated: a node with only those is still a leaf)."""
        return bool(self._in_tree(node))

    def _selectable(self, node):
        """Children selection may descend into: in the tree, live, valued, not terminal (a terminal ends its line)."""
        kids = [c for c in self._in_tree(node) if not self.ctx.store.is_pruned(c)]
        return [c for c in kids if c.eval_score is not None and not c.is_terminal and not c.parse_error]

    def _expandable(self, node):
        if self.ctx.store.is_pruned(node) or node.is_terminal or node.parse_error:
            return False
        return node.depth < self.ctx.params.max_depth

    def _needs_value(self, node):
        return (node.eval_score is None or node.stale) and not node.parse_error and not self.ctx.store.is_pruned(node)

    def _best_valued(self, nodes):
        valued = [n for n in self._fresh(nodes) if n.eval_score is not None and not self.ctx.store.is_pruned(n)]
        return max(valued, key=lambda n: n.eval_score, default=None)

    def _can_afford(self, remaining):
        """The next call an iteration needs (its expansion) and the synthesis that answers. Not the whole iteration:
        a cut one still backs up what it valued, and asking for all its calls up front (19 by default, at the cost of
        the first calls, a fact sheet's reading) ended searches on a local model before their first iteration with
        nine tenths of their budget unspent (issue 32). The gateway refuses any later call the budget cannot cover."""
        return self.affords(2, remaining, "expansion and the synthesis")



# ---- the rules, pure ------------------------------------------------------------------------------


def ucb(child, parent_visits, exploration):
    """UCB1; a child never visited counts at its value (as the reference code does), not at infinity."""
    if not child.visit_count:
        return child.eval_score or 0.0
    mean = child.total_reward / child.visit_count
    return mean + exploration * math.sqrt(math.log(max(parent_visits, 1)) / child.visit_count)


def select_leaf(node, selectable, proposed, expandable, params):
    """Descend by UCB1 to a leaf to expand; backtrack out of subtrees with nothing left to expand."""
    if not proposed(node):
        return node if expandable(node) else None
    ranked = sorted(selectable(node), key=lambda c: (ucb(c, node.visit_count, params.exploration), c.eval_score))
    for child in reversed(ranked):
        leaf = select_leaf(child, selectable, proposed, expandable, params)
        if leaf is not None:
            return leaf
    return None


def mixed_value(judged, consistency, weight):
    """The LATS value: the model's judgement and self-consistency, weighted."""
    return round((1 - weight) * judged + weight * consistency, 4)


def succeeded(node, verified=True):
    """A terminal that succeeded: by the task's checker, or by the model's judgement (verified, unless not asked)."""
    if not node.is_terminal or node.eval_score is None or not node.state.get("success"):
        return False
    return not verified or node.state.get("decided_by") != "judgement" or bool(node.state.get("verified"))


def failed_end(node):
    """A terminal that failed (the tree draws it so, and its line's simulation took a reward of -1)."""
    return node.is_terminal and node.eval_score is not None and not succeeded(node, verified=False)


class WithoutFailedEnds:
    """The store with failed terminals out of the search, for deepest_best."""

    def __init__(self, store):
        self.inner = store

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def is_pruned(self, node):
        return failed_end(node) or self.inner.is_pruned(node)


def path_rewards(path, end, values, params, success):
    """The reward each node of a root-first path gets for one simulation ending at `end` (the path's last node)."""
    if end.is_terminal and success:
        return [SUCCESS] * len(path)
    if end.is_terminal:
        return [0.0] * (len(path) - 1) + [FAILED_TERMINAL]  # a failed end: -1 for it, nothing gained above it
    if end.depth >= params.max_depth:
        return [FAILED_TERMINAL] * len(path)  # ran out of depth without an ending
    return [rollout_reward(values)] * len(path)


def rollout_reward(values):
    """The reference's reward of a rollout that ended on no terminal (hotpot/lats.py's rollout): the mean of its list
    of rewards, which starts at 0 in the start node's place and takes the value of each step followed. `values` are
    the start's value, then the steps': for 0.7, 0.7, 0.7 the reference's (0 + 0.7 + 0.7) / 3 = 0.47."""
    followed = [v for v in values[1:] if v is not None]
    return sum(followed) / (1 + len(followed))


def reflection_due(failed, answered, written):
    """The failed lines to reflect on now: each whose answer (its terminal thought) none reflected on yet, once, up to
    MAX_REFLECTIONS in all with the `written` ones."""
    due, seen = [], set(answered)
    for node in failed:
        if same(node.thought) not in seen and written + len(due) < MAX_REFLECTIONS:
            due.append(node)
            seen.add(same(node.thought))
    return due


def marks(kind, iteration):
    """How a node was made (expand, rollout or hand) and in which iteration: what a run rebuilds its search from."""
    mark = {"kind": kind} | ({"rollout": True} if kind == "rollout" else {})
    return mark | ({"iteration": iteration} if iteration else {})


def format_reflections(critiques):
    if not critiques:
        return "(none yet)"
    return "\n".join(f"- attempt {c.attempt_num}, valued {c.outcome_score:.2f}: {c.critique}" for c in critiques)
