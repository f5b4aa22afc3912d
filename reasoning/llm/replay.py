"""The gateway of a replay: every call answered from the session's ledger, never from a model, and nothing charged.

A call is matched by its contract and its prompt as sent (the ledger's `purpose` and `prompt`), never by its order:
sibling calls run concurrently, so the order the rows were written in is not the order a replay asks them in. Equal
prompts of one contract take their recorded replies in the ledger's order. A recorded failure replays as the
failure it was: a call the budget refused raises BudgetExhausted, a call every model failed raises ModelError. A
prompt the ledger never saw (the replayed search went elsewhere) raises NotRecorded, a ModelError, so the strategy
records it on its node as it records any failed call, and the replay names it.

Parsing, parse retries and samples are the real gateway's own code (ModelGateway.ask): only the model and the money
are replaced.
"""

import asyncio
import collections
import copy

from reasoning.models import LLMCall, Status

from reasoning.strategies.base import StopRequested

from .contracts import BudgetExhausted, ModelError
from .gateway import SAMPLE_BREAK, ModelGateway

ANSWERED = (LLMCall.Outcome.OK, LLMCall.Outcome.FALLBACK)


class NotRecorded(ModelError):
    """The replay asked a call the ledger holds no reply for."""


class Book:
    """A session's ledger as a replay consumes it, shared by the gateways of its turns: the replies left for each
    (turn, contract, prompt), what the replayed calls cost as recorded, and the calls the ledger could not answer.
    A turn is answered from the rows its run wrote (rows written before turns were recorded serve any turn)."""

    def __init__(self, rows):
        self.left = collections.defaultdict(collections.deque)
        # Equal prompts take their replies in the order the run asked them: the k-th ask gets the k-th ask's reply.
        for row in sorted(rows, key=lambda r: (r.turn or 0, r.asked or 0)):
            self.left[(row.turn, row.purpose, row.prompt)].append(row)
        self.spent, self.used = 0.0, 0
        self.missed = []  # (contract, prompt) of each call the ledger held no reply for

    def has_left(self, turn):
        """Whether the run of this turn made calls the replay has not asked yet."""
        return any(queue for (of, _, _), queue in self.left.items() if of == turn)

    def take(self, turn, contract_name, prompt):
        """The recorded reply row for this call, after the failed attempts that preceded it; raises as recorded."""
        queue = self.left.get((turn, contract_name, prompt)) or self.left.get((None, contract_name, prompt))
        failures = []
        while queue:
            row = queue.popleft()
            if row.outcome in ANSWERED:
                self.used += 1
                return row
            if row.outcome == LLMCall.Outcome.BUDGET:
                raise BudgetExhausted(f"{contract_name}: refused by the budget here, as recorded")
            failures.append(row.error)
        if failures:
            raise ModelError(f"every model failed, as recorded; last: {failures[-1]}"[:500])
        raise NotRecorded(f"the ledger holds no reply to this {contract_name} prompt")

    def unused(self):
        """Recorded replies no replayed call asked for."""
        return sum(1 for queue in self.left.values() for row in queue if row.outcome in ANSWERED)


class ReplayGateway(ModelGateway):
    """ModelGateway's asking and parsing over a Book instead of litellm and the budget. One per turn, as each run has
    its own gateway (a step's budget check reads the turn's typical call); the book spans the turns."""

    def __init__(self, session, book, turn=None, stopping=None, lost=None):  # no router, no prices, no database
        self.session_id, self.tenant_id = session.id, session.tenant_id
        self.turn = turn
        # Past where the recorded run was stopped (a pause met mid-step): its status, else None. A call that run never
        # made is then the stop itself, as the engine's guard refused it.
        self.stopping = stopping or (lambda: None)
        self.lost = lost or (lambda: False)  # a turn whose run was lost: a call the ledger lacks is where it stopped
        self.primary = session.model_primary
        self.routes = [("primary", self.primary, None)]
        self.parse_retries = _settings()["PARSE_RETRIES"]
        self.book, self.budget = book, session.budget_usd
        self.spent, self.calls = 0.0, 0
        self.answered, self.unwritten = [], []
        self.fence = None

    async def _complete(self, contract, messages, node_id, first_attempt, expect=None, samples=1):
        # A model call is in flight while its siblings start theirs: each of them writes its prompt before any reply
        # lands, as in the recorded run (a reply that came back at once would show in a sibling's prompt).
        await asyncio.sleep(0)
        try:
            row = self.book.take(self.turn, contract.name, messages[-1]["content"])
        except NotRecorded:
            if self.stopping() is not None:
                raise StopRequested(self.stopping()) from None
            if self.lost():
                raise StopRequested(Status.INTERRUPTED) from None
            self.book.missed.append((contract.name, messages[-1]["content"]))
            raise
        n = samples if self._takes_n(self.primary) else 1
        texts = row.reply.split(SAMPLE_BREAK) if n > 1 else [row.reply]
        # The recorded row stands for the call. Loaded, not added: no store writes it, so no ledger row is added.
        call = copy.copy(row)
        call.node_id, call.attempt = node_id, first_attempt
        self.spent, self.calls = self.spent + row.cost_usd, self.calls + 1
        self.book.spent += row.cost_usd
        return texts, call

    async def _flush_if_due(self):
        pass

    async def flush(self):
        pass

    async def remaining_usd(self):
        """The budget less what the replayed calls cost as recorded (the original's reading, less in-flight leases)."""
        return self.budget - self.book.spent

    async def close(self):
        pass


def _settings():
    from django.conf import settings

    return settings.REASONING
