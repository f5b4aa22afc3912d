"""The in-process runner: sessions run as tasks on the bound loop, never more at once than the cap."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.models import ReasoningSession
from reasoning.runner import InProcessRunner
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)


async def test_it_runs_at_most_the_cap_at_once(alice, runner, settings):
    settings.REASONING = {**settings.REASONING, "OFFLINE_LATENCY_MS": 20}
    capped = InProcessRunner(limit=1)
    data = SessionIn(
        problem_text="Rebalance a CHF 2m portfolio to 50/50.",
        mode="tot",
        params={"branching": 2, "depth": 2, "keep": 1},
    )
    sessions = [await sync_to_async(services.create_session)(alice.tenant, data, submit=False) for _ in range(2)]
    for session in sessions:
        capped.submit(session.id)
    await capped.drain()
    first, second = [await ReasoningSession.objects.aget(pk=s.id) for s in sessions]
    assert first.status == second.status == "solved"
    assert second.started_at >= first.finished_at


async def test_it_takes_sessions_from_other_threads(alice, runner):
    data = SessionIn(
        problem_text="Rebalance a CHF 2m portfolio to 50/50.",
        mode="tot",
        params={"branching": 1, "depth": 1, "keep": 1},
    )
    session = await sync_to_async(services.create_session)(alice.tenant, data)  # submitted on commit, from a thread
    await runner.drain()
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "solved"


async def test_a_tenant_waits_for_one_slot_not_behind_another_tenants_burst(alice, bob, runner):
    capped = InProcessRunner(limit=1)
    data = SessionIn(
        problem_text="Rebalance a CHF 2m portfolio to 50/50.",
        mode="tot",
        params={"branching": 1, "depth": 1, "keep": 1},
    )
    burst = [await sync_to_async(services.create_session)(alice.tenant, data, submit=False) for _ in range(4)]
    other = await sync_to_async(services.create_session)(bob.tenant, data, submit=False)
    for session in [*burst, other]:
        capped.submit(session.id)
    await capped.drain()
    order = [s.id async for s in ReasoningSession.objects.order_by("started_at")]
    assert {s.status async for s in ReasoningSession.objects.all()} == {"solved"}
    assert order == [burst[0].id, other.id, *(s.id for s in burst[1:])]  # bob's session starts second, not fifth


async def test_shutdown_interrupts_the_runs_and_leaves_waiting_sessions_queued(alice, runner, settings):
    settings.REASONING = {**settings.REASONING, "OFFLINE_LATENCY_MS": 200}
    capped = InProcessRunner(limit=1)
    data = SessionIn(problem_text="Rebalance a CHF 2m portfolio to 50/50.", mode="tot")
    running, waiting = [await sync_to_async(services.create_session)(alice.tenant, data, submit=False) for _ in "ab"]
    capped.submit(running.id)
    capped.submit(waiting.id)
    for _ in range(100):
        if await ReasoningSession.objects.filter(pk=running.id, status="running").aexists():
            break
        await asyncio.sleep(0.05)
    await capped.shutdown(grace_s=2)
    await capped.drain()
    assert (await ReasoningSession.objects.aget(pk=running.id)).status == "interrupted"
    assert (await ReasoningSession.objects.aget(pk=waiting.id)).status == "queued"  # the next server runs it
    assert not capped.sessions and not capped.waiting
