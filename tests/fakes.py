"""Fakes for pure strategy tests: an in-memory store, a scripted gateway and a control, with no database and no patches.

A strategy only meets the world through these three (strategies/base.py), so a test can script the model's
replies by contract, watch every write, and act as an overseer between steps:

    gateway = ScriptedGateway({"tot.propose": propose, "tot.evaluate": lambda prompt: {"score": 0.5}})
    strategy = TreeOfThoughts(context(TreeOfThoughts, gateway=gateway, params={"depth": 2}))
    outcome = await strategy.run()
"""

import itertools
import json
from dataclasses import replace

from reasoning.llm.contracts import Answer, BudgetExhausted, ParseError, Unparseable
from reasoning.strategies.base import Command, Context, Critique, Edge, Node, Prior, StopRequested

CALL_USD = 0.001


class FakeStore:
    """The Store protocol in memory; `writes` lists every write in order, as (kind, details)."""

    def __init__(self):
        self.rows, self.kids, self.edge_rows, self.critique_rows, self.writes = {}, {}, [], [], []
        self.ids = (f"n{i}" for i in itertools.count())

    # reads
    def get(self, node_id):
        return replace(self.rows[node_id]) if node_id in self.rows else None

    def nodes(self):
        return [replace(n) for n in self.rows.values()]

    def children(self, node):
        return [replace(self.rows[i]) for i in self.kids.get(node.id, [])]

    def path(self, node):
        lineage = []
        current = self.rows.get(node.id)
        while current is not None:
            lineage.append(replace(current))
            current = self.rows.get(current.parent_id)
        return lineage[::-1]

    def is_pruned(self, node):
        return any(n.pruned for n in self.path(node))

    def edges(self):
        return list(self.edge_rows)

    def critiques(self):
        return list(self.critique_rows)

    # writes
    async def add_root(self, thought, state):
        return self._add(None, {"thought": thought, "state": state})

    async def settled(self):
        """Every write here lands as it is made."""

    async def add_children(self, parent, items, answer):
        children = [self._add(parent, item) for item in items]
        self.writes.append(("children", [c.id for c in children]))
        return children

    def _add(self, parent, item):
        node = Node(
            id=next(self.ids),
            parent_id=parent.id if parent else None,
            depth=parent.depth + 1 if parent else 0,
            thought=item["thought"],
            state=item.get("state") or {},
        )
        self.rows[node.id] = node
        self.kids.setdefault(node.parent_id, []).append(node.id)
        if item.get("action") or item.get("observation"):
            self.edge_rows.append(Edge(parent.id, node.id, item.get("action", ""), item.get("observation", "")))
        return replace(node)

    async def update(self, node, **fields):
        await self.update_many([(node, fields)])

    async def update_many(self, changes):
        for node, fields in changes:
            fields = {k: v for k, v in fields.items() if k != "spent"}
            # As in the real store: a judgement clears only the stale mark it saw, never a later edit's.
            if fields.get("stale") is False and (not node.stale or self.rows[node.id].stale_mark > node.stale_mark):
                del fields["stale"]
            for name, value in fields.items():
                setattr(self.rows[node.id], name, value)
            self.writes.append(("update", node.id, fields))

    async def prune(self, nodes):
        for node in nodes:
            self.rows[node.id].pruned, self.rows[node.id].pruned_by = True, "strategy"
        if nodes:
            self.writes.append(("prune", [n.id for n in nodes]))

    async def refresh(self):
        pass  # an overseer in a test changes self.rows directly (see prune_by_hand)

    async def add_critique(self, node, attempt_num, outcome_score, critique, spent=None):
        memory = Critique(node.id if node else None, attempt_num, outcome_score, critique, False, f"c{attempt_num}")
        self.critique_rows.append(memory)
        return memory

    async def mark_applied(self, critiques):
        for critique in critiques:
            critique.applied_to_next = True

    def edit_by_hand(self, node_id):
        """What an overseer's edit leaves on a node below the edited one: a new stale mark."""
        self.rows[node_id].stale, self.rows[node_id].stale_mark = True, self.rows[node_id].stale_mark + 1

    def prune_by_hand(self, node_id):
        """What an overseer's prune leaves in the database, seen at the next step boundary."""
        self.rows[node_id].pruned, self.rows[node_id].pruned_by = True, "overseer"


class ScriptedGateway:
    """Replies by contract name: a reply is a dict (sent as JSON), a string (sent as is), or a function of the prompt
    returning either. `budget_calls` refuses calls past that many, as the real gateway does past the budget."""

    def __init__(self, script, budget_calls=None):
        self.script, self.budget_calls, self.calls, self.samples_asked = script, budget_calls, [], []

    async def ask(self, contract, prompt, node_id=None, expect=None, samples=1):
        """One call; with `samples` > 1 a function script is asked once per sample (a list script gives them in turn)."""
        if self.budget_calls is not None and len(self.calls) >= self.budget_calls:
            raise BudgetExhausted(f"{contract.name}: the scripted budget is spent")
        self.calls.append((contract.name, node_id, prompt))
        self.samples_asked.append(samples)
        parsed = [self._parse(contract, self._reply(contract.name, prompt, i), prompt, expect) for i in range(samples)]
        return Answer(parsed=parsed[0], model="scripted", cost_usd=CALL_USD, latency_ms=0, samples=parsed)

    def _reply(self, name, prompt, sample):
        reply = self.script[name]
        if isinstance(reply, list):
            reply = reply[sample % len(reply)]
        return reply(prompt) if callable(reply) else reply

    @staticmethod
    def _parse(contract, reply, prompt, expect):
        text = reply if isinstance(reply, str) else json.dumps(reply)
        try:
            return contract.parse(text, {"prompt": prompt, "expect": expect})[0]
        except ParseError as error:
            raise Unparseable(str(error), cost_usd=CALL_USD) from None

    async def remaining_usd(self):
        left = float("inf") if self.budget_calls is None else self.budget_calls - len(self.calls)
        return left * CALL_USD

    def typical_call_usd(self):
        return CALL_USD

    async def close(self):
        pass

    def count(self, contract_name):
        return sum(1 for name, _, _ in self.calls if name == contract_name)


class FakeControl:
    """The overseers: `stop_with` pauses or cancels at the next boundary; `commands` are handed out once."""

    def __init__(self):
        self.stop_with, self.commands, self.outcomes, self.boundaries = None, [], [], 0

    async def checkpoint(self):
        self.boundaries += 1
        if self.stop_with:
            raise StopRequested(self.stop_with)
        commands, self.commands = self.commands, []
        return commands

    async def done(self, command, applied, detail="", after=None):
        self.outcomes.append((command.action, applied, detail, after))

    def command(self, action, node_id=None, **payload):
        self.commands.append(Command(len(self.outcomes) + len(self.commands) + 1, action, node_id, payload, "tester"))


def context(strategy_class, gateway, store=None, control=None, params=None, prior=None, **fields):
    """A Context on the fakes; `fields` override the rest (a problem, a `case` with a checker)."""
    return Context(
        problem="Rebalance a CHF 3m portfolio drifted to 70% equities against a 60/40 target.",
        kind="allocation-rebalance",
        rubric="- Soundness (weight 1): each step follows.",
        params=strategy_class.Params.model_validate(params or {}),
        store=store or FakeStore(),
        gateway=gateway,
        control=control or FakeControl(),
        prior=prior or Prior(),
    ) if not fields else replace(context(strategy_class, gateway, store, control, params, prior), **fields)
