"""Runs that cannot collide (issue 14, item 1): every write of a run carries its fence, the claim's owner and epoch.

A run that stalls (here: inside a model call, its heartbeat gone stale) is taken over; when it wakes up, its nodes,
its finish, its ledger rows and its budget leases are refused in the statement that would write them, and it ends
quietly. Heartbeats are written and judged on the database's clock.
"""

import asyncio
import datetime

import pytest
from asgiref.sync import sync_to_async
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

from reasoning import engine, ledger, services, states
from reasoning.engine import run_session
from reasoning.fence import RunLost
from reasoning.llm.gateway import AFTER_TAKEOVER, ModelGateway
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Status
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Outcome
from tests.runs import ledger_and_node_costs

pytestmark = pytest.mark.django_db(transaction=True)

ELSEWHERE = "another-host:4242:a1b2c3d4"  # a run on another machine: only its heartbeat can say it is alive
PROBLEM = "Plan a CHF 4m wealth transfer to two heirs in Vaud, with the house kept in the family."


async def start(party, **fields):
    data = SessionIn(problem_text=PROBLEM, mode="tot", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


class StallingGateway(ModelGateway):
    """The real gateway on the offline model, whose n-th model call stalls (after its budget is leased) until
    `resume` is set; `inside` is set when it stalls. Its own router, so the stall never leaks into other runs."""

    def __init__(self, session, at_call):
        super().__init__(session, deployment_params={"primary": {}})
        self.inside, self.resume, self.count = asyncio.Event(), asyncio.Event(), 0
        original = self.router.acompletion

        async def stalling(**kwargs):
            self.count += 1
            if self.count == at_call:
                self.inside.set()
                await self.resume.wait()
            return await original(**kwargs)

        self.router.acompletion = stalling


def go_stale(session_id):
    """The run's host stalled: its heartbeat is an hour old on the database's clock."""
    an_hour_ago = ExpressionWrapper(Now() - datetime.timedelta(hours=1), output_field=DateTimeField())
    ReasoningSession.objects.filter(pk=session_id).update(heartbeat_at=an_hour_ago)


async def tree_of(session):
    return sorted([(str(n.id), n.thought) async for n in ReasoningNode.objects.filter(session_id=session.id)])


@pytest.mark.parametrize("budget", [None, 0.02])  # a whole run costs about 0.03 USD: the second one runs out
async def test_a_run_taken_over_inside_a_model_call_writes_nothing_when_it_wakes(alice, settings, budget):
    # Neither the heartbeat nor the status poll runs during the test: only the fence can stop the old run.
    settings.REASONING = {**settings.REASONING, "HEARTBEAT_S": 3600.0, "CONTROL_POLL_S": 3600.0}
    session = await start(alice, **({"budget_usd": budget} if budget else {}))
    old_gateway = await sync_to_async(StallingGateway)(session, at_call=3)
    old = asyncio.create_task(run_session(session.id, gateway=old_gateway, owner=ELSEWHERE))
    # The old run is inside its third model call, with budget leased (the bound only keeps a broken run from hanging).
    await asyncio.wait_for(old_gateway.inside.wait(), 60)
    old_fence = old_gateway.fence
    await sync_to_async(go_stale)(session.id)
    seen = await ReasoningSession.objects.aget(pk=session.id)
    assert seen.run_owner == ELSEWHERE and seen.budget_reserved_usd > 0
    assert await sync_to_async(states.is_dead)(seen)
    assert await sync_to_async(states.take_over)(seen)

    await run_session(session.id)  # the new run takes the session to its end
    await session.arefresh_from_db()
    ended = (session.status, session.final_answer, session.seq, await tree_of(session))
    assert session.status in ("solved", "exhausted") and session.final_answer

    old_gateway.resume.set()  # the old run wakes up with its answer
    assert await old is None  # and ends quietly

    await session.arefresh_from_db()
    assert (session.status, session.final_answer, await tree_of(session)) == ended[:2] + ended[3:]
    assert session.seq == ended[2] + 1  # one session.updated: the budget used, with what the old run paid for
    # What the old run's call cost was paid all the same (issue 23, item 2): its row is written, marked as after the
    # take-over, with no node (its node was refused), and the budget used counts it.
    late = [c async for c in LLMCall.objects.filter(session_id=session.id, error__startswith=AFTER_TAKEOVER)]
    late_usd = sum(c.cost_usd for c in late)
    assert late and late_usd > 0 and all(c.node_id is None and c.outcome == "ok" for c in late)
    ledger_usd, nodes_usd = await ledger_and_node_costs(session)
    assert ledger_usd == pytest.approx(nodes_usd + late_usd)
    assert session.budget_used_usd == pytest.approx(ledger_usd)
    assert all(c.cost_usd <= c.reserved_usd for c in late)
    assert session.budget_used_usd - late_usd <= session.budget_usd + 1e-12  # the new run kept within the budget
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12) and session.run_owner == ""
    lost = await LLMCall.objects.aget(session_id=session.id, outcome="unaccounted")
    assert lost.reserved_usd >= late_usd and lost.cost_usd == 0  # within what the take-over found reserved

    # Whatever it tries later is refused in the statement: a lease, a settlement, a status move, a heartbeat.
    with pytest.raises(RunLost):
        await sync_to_async(ledger.reserve)(session.id, 1e-6, fence=old_fence)
    with pytest.raises(RunLost):
        await sync_to_async(ledger.settle)(session.id, 0.001, fence=old_fence)
    with pytest.raises(RunLost):
        await sync_to_async(states.transition)(session.id, Status.QUEUED, fence=old_fence)
    assert await sync_to_async(states.beat)(old_fence) is None
    assert await sync_to_async(states.release)(old_fence) is None
    await session.arefresh_from_db()
    assert (session.status, session.seq) == (ended[0], ended[2] + 1)


async def test_the_old_run_cannot_finish_the_new_runs_session(alice):
    session = await start(alice)
    old = await sync_to_async(states.claim)(session.id, ELSEWHERE)
    await sync_to_async(go_stale)(session.id)
    assert await sync_to_async(states.take_over)(await ReasoningSession.objects.aget(pk=session.id))
    new = await sync_to_async(states.claim)(session.id, ELSEWHERE)  # even under the same owner id
    assert new.epoch > old.epoch
    outcome = Outcome("an answer from a run that lost the session", None, "done")
    with pytest.raises(RunLost):
        await sync_to_async(engine.finish)(session.id, outcome, old)
    with pytest.raises(RunLost):
        await sync_to_async(engine.failed)(session.id, ValueError("late"), old)
    await session.arefresh_from_db()
    assert session.status == "running" and session.final_answer == "" and session.run_epoch == new.epoch


async def test_heartbeats_are_judged_on_the_database_clock(alice, monkeypatch):
    session = await start(alice)
    fence = await sync_to_async(states.claim)(session.id, ELSEWHERE)
    assert await sync_to_async(states.beat)(fence) == "running"
    # This host's clock runs an hour ahead of the one that wrote the heartbeat: the run is still alive.
    ahead = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
    monkeypatch.setattr(states.timezone, "now", lambda: ahead)
    seen = await ReasoningSession.objects.aget(pk=session.id)
    assert not await sync_to_async(states.is_dead)(seen)
    assert not await sync_to_async(states.take_over)(seen)


async def test_a_take_over_judged_on_an_old_read_leaves_a_live_lease_alone(alice, monkeypatch):
    session = await start(alice)
    fence = await sync_to_async(states.claim)(session.id, ELSEWHERE)
    assert await sync_to_async(ledger.reserve)(session.id, 0.01, fence=fence)
    await sync_to_async(go_stale)(session.id)
    # The sweeper judged the run dead on a read from before its heartbeat; the run beat since.
    monkeypatch.setattr(states, "is_dead", lambda session: True)
    assert await sync_to_async(states.beat)(fence) == "running"
    assert not await sync_to_async(states.take_over)(await ReasoningSession.objects.aget(pk=session.id))
    await session.arefresh_from_db()
    assert session.run_owner == ELSEWHERE and session.run_epoch == fence.epoch
    assert session.budget_reserved_usd == pytest.approx(0.01)
    assert not await LLMCall.objects.filter(session_id=session.id, outcome="unaccounted").aexists()
