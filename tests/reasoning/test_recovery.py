"""Nothing stranded: a server or worker that starts resumes the sessions a dead run left behind."""

import time
from datetime import timedelta

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection
from django.utils import timezone

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


ELSEWHERE = "another-host:4242:a1b2c3d4"  # a run on another machine: only its heartbeat can say it is alive
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks and idle transactions are PostgreSQL's (SQLite's take turns)"
)


def frozen_inside_a_transaction(session, idle_s):
    """A run's process frozen (SIGSTOP) just after it wrote its session's row, before it committed: its connection,
    opened as the app opens them but ended by the database after `idle_s` idle, holds the row's lock."""
    place = ("dbname", "user", "password", "host", "port")
    params = {k: v for k, v in connection.get_connection_params().items() if k in place}
    held = psycopg.connect(**params, options=f"-c idle_in_transaction_session_timeout={int(idle_s * 1000)}")
    held.execute("UPDATE reasoning_reasoningsession SET heartbeat_at = heartbeat_at WHERE id = %s", [session.pk])
    return held


@on_postgresql
def test_a_run_frozen_inside_a_transaction_is_taken_over_once_the_database_ends_it(alice, monkeypatch):
    submitted = []
    monkeypatch.setattr(recovery, "_submit", submitted.append)  # what the runner then does is not this test's
    stale = {"run_owner": ELSEWHERE, "heartbeat_at": timezone.now() - timedelta(hours=1)}
    frozen = stranded(alice, Status.RUNNING, **stale)
    other = stranded(alice, Status.RUNNING, **stale)
    held = frozen_inside_a_transaction(frozen, idle_s=3)
    try:
        # The sweep does not wait on the held row (before, it waited, and every sweeper with it): it takes over the
        # other dead run and leaves this one to a later sweep.
        assert recovery.resume_dead_runs() == [other.pk]
        assert ReasoningSession.objects.get(pk=frozen.pk).run_owner == ELSEWHERE
        # The database ends the frozen transaction; the next sweep takes the run over.
        deadline = time.monotonic() + 30
        while ReasoningSession.objects.get(pk=frozen.pk).run_owner and time.monotonic() < deadline:
            time.sleep(0.2)
            recovery.resume_dead_runs()
        frozen.refresh_from_db()
        assert (frozen.status, frozen.run_owner, frozen.run_epoch) == (Status.QUEUED, "", 1)
        assert submitted == [other.pk, frozen.pk]
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):  # its write was never committed
            held.execute("SELECT 1")
    finally:
        held.close()


@on_postgresql
def test_the_apps_connections_end_a_transaction_left_idle_before_its_run_would_be_stale():
    with connection.cursor() as cursor:
        cursor.execute("SELECT setting::int FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'")
        idle_ms = cursor.fetchone()[0]
    stale, beat = settings.REASONING["HEARTBEAT_STALE_S"], settings.REASONING["HEARTBEAT_S"]
    assert 0 < idle_ms <= (stale - beat) * 1000
