"""Nothing stranded: a server or worker that starts resumes the sessions a dead run left behind."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import recovery, services, states
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Status
from reasoning.schemas import SessionIn
from reasoning.tasks import resume_sessions_on_worker_start

pytestmark = pytest.mark.django_db(transaction=True)

DEAD_OWNER = f"{states.HOST}:999999999:gone"  # this host, a pid that does not exist


def stranded(party, status, **fields):
    data = SessionIn(problem_text="Plan a CHF 4m wealth transfer to two heirs in Vaud.", mode="tot")
    session = services.create_session(party.tenant, data, submit=False)
    ReasoningSession.objects.filter(pk=session.pk).update(status=status, **fields)
    return ReasoningSession.objects.get(pk=session.pk)


def test_a_run_whose_process_is_gone_is_dead_and_a_live_one_is_not(alice):
    session = stranded(alice, Status.RUNNING, run_owner=DEAD_OWNER)
    assert states.is_dead(session)
    session.run_owner = states.owner_id()
    assert not states.is_dead(session)
    session.run_owner = f"{states.HOST}:{states.os.getpid()}:another-incarnation"
    assert states.is_dead(session)


async def test_a_server_start_resumes_running_interrupted_and_queued_sessions(alice, runner):
    running = await sync_to_async(stranded)(alice, Status.RUNNING, run_owner=DEAD_OWNER, budget_reserved_usd=0.004)
    interrupted = await sync_to_async(stranded)(alice, Status.INTERRUPTED)
    queued = await sync_to_async(stranded)(alice, Status.QUEUED)
    finished = await sync_to_async(stranded)(alice, Status.SOLVED)
    resumed = await sync_to_async(recovery.resume_stranded)()
    assert set(resumed) == {running.pk, interrupted.pk, queued.pk}
    await runner.drain()
    for session in (running, interrupted, queued):
        await session.arefresh_from_db()
        assert session.status == "solved" and session.budget_reserved_usd == pytest.approx(0, abs=1e-12)
    assert (await ReasoningSession.objects.aget(pk=finished.pk)).status == "solved"
    lost = await LLMCall.objects.aget(session_id=running.pk, outcome="unaccounted")
    assert lost.reserved_usd == pytest.approx(0.004) and lost.cost_usd == 0


async def test_the_sweep_leaves_a_live_run_alone(alice, runner):
    alive = await sync_to_async(stranded)(alice, Status.RUNNING, run_owner=states.owner_id())
    assert await sync_to_async(recovery.resume_dead_runs)() == []
    assert (await ReasoningSession.objects.aget(pk=alive.pk)).status == "running"


async def test_a_worker_start_resumes_dead_runs(alice, runner):
    session = await sync_to_async(stranded)(alice, Status.RUNNING, run_owner=DEAD_OWNER)
    await sync_to_async(resume_sessions_on_worker_start)()
    await runner.drain()
    await session.arefresh_from_db()
    assert session.status == "solved"
    assert await ReasoningNode.objects.filter(session_id=session.pk, depth=0).acount() == 1
