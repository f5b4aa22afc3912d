"""Recovery on every runner (issue 14, item 2): Celery workers sweep for dead runs too, and a delivery whose claim
fails takes over a session whose run died instead of dropping it. A real Celery worker in this process, on the
configured broker (Redis in the scale-out run)."""

import datetime
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

from config import celery_app as app
from reasoning import recovery, services, states, tasks
from reasoning.engine import NOT_CLAIMED
from reasoning.models import LLMCall, ReasoningSession, Status
from reasoning.runner import CeleryRunner
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

DEAD_OWNER = f"{states.HOST}:999999999:gone"  # a pool child that was killed: this host, a pid that does not exist
SMALL = {"branching": 2, "depth": 2, "keep": 1}


@pytest.fixture
def worker():
    app.conf.update(task_always_eager=False, result_backend="cache+memory://")
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30) as running:
        yield running


@pytest.fixture
def on_celery(monkeypatch):
    """The sweep hands sessions to Celery, as on a scale-out worker."""
    monkeypatch.setattr(recovery, "get_runner", CeleryRunner)


def stranded(party, status, **fields):
    data = SessionIn(problem_text="Rebalance a CHF 2m portfolio to 50/50.", mode="tot", params=SMALL)
    session = services.create_session(party.tenant, data, submit=False)
    ReasoningSession.objects.filter(pk=session.pk).update(status=status, **fields)
    return ReasoningSession.objects.get(pk=session.pk)


def rests(session, bound_s=60):
    """The session once it comes to rest (the bound only keeps a broken run from hanging the suite)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        session.refresh_from_db()
        if session.status not in (Status.QUEUED, Status.RUNNING) and not session.run_owner:
            break
        time.sleep(0.05)
    return session


def test_a_workers_sweeper_resumes_a_run_whose_pool_child_died(alice, worker, on_celery):
    session = stranded(alice, Status.RUNNING, run_owner=DEAD_OWNER, budget_reserved_usd=0.004)
    tasks.start_sweeper(interval=0.05)
    try:
        session = rests(session)
    finally:
        tasks.stop_sweeper()
    assert session.status == "solved" and session.nodes.count() == 1 + 2 + 2
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)
    lost = LLMCall.objects.get(session_id=session.pk, outcome="unaccounted")
    assert lost.reserved_usd == pytest.approx(0.004) and lost.cost_usd == 0


def test_a_sweep_dispatches_a_dead_run_once_whoever_sweeps(alice, on_celery, monkeypatch):
    sent = []
    monkeypatch.setattr(CeleryRunner, "submit", lambda self, session_id: sent.append(session_id))
    session = stranded(alice, Status.RUNNING, run_owner=DEAD_OWNER)
    assert recovery.sweep() == [session.pk]
    assert recovery.sweep() == []  # a second sweeper (another worker) finds it queued, not dead
    assert sent == [session.pk]


def test_a_delivery_whose_claim_fails_takes_over_a_dead_run(alice):
    session = stranded(alice, Status.RUNNING, run_owner=DEAD_OWNER, budget_reserved_usd=0.004)
    tasks.run_session_task(str(session.pk))  # a redelivered task, run by the worker that got it
    session.refresh_from_db()
    assert session.status == "solved" and session.run_owner == "" and session.nodes.count() == 1 + 2 + 2
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


def test_a_delivery_leaves_a_session_a_live_run_holds(alice):
    session = stranded(alice, Status.RUNNING, run_owner=states.owner_id(), budget_reserved_usd=0.004)
    assert tasks.run_session_task(str(session.pk)) == NOT_CLAIMED
    session.refresh_from_db()
    assert session.status == "running" and session.run_owner == states.owner_id()
    assert session.budget_reserved_usd == pytest.approx(0.004) and session.nodes.count() == 0


def test_a_queued_session_whose_start_message_was_lost_is_dispatched_again(alice, worker, on_celery):
    session = stranded(alice, Status.QUEUED)  # created, but its message never reached a worker
    assert recovery.sweep() == []  # first seen: marked
    an_hour_ago = ExpressionWrapper(Now() - datetime.timedelta(hours=1), output_field=DateTimeField())
    ReasoningSession.objects.filter(pk=session.pk).update(dispatched_at=an_hour_ago)  # REDISPATCH_S went by
    assert recovery.sweep() == [session.pk]  # still waiting: dispatched again
    assert recovery.sweep() == []  # once
    session = rests(session)
    assert session.status == "solved" and session.dispatched_at is None


def test_a_queued_session_is_not_dispatched_before_it_waited_long_enough(alice, on_celery, monkeypatch):
    sent = []
    monkeypatch.setattr(CeleryRunner, "submit", lambda self, session_id: sent.append(session_id))
    stranded(alice, Status.QUEUED)
    assert recovery.sweep() == [] and recovery.sweep() == [] and sent == []  # REDISPATCH_S is 30 s by default
