"""A session keeps its real timeline (issue 16, item 5): its first start, its active time over every run, and how
the search itself ended, which a resume or a promote never rewrites; a promoted answer says a person chose it."""

from contextlib import contextmanager
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from unittest import mock

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import ending_of
from reasoning.models import ReasoningSession, Status
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Outcome
from tests.runs import HookedGateway, act, pause_at_call, resume, rows, run_session

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def capture_session_events(sent):
    """Every session.updated event's session, as published (the socket's and the page's figures)."""
    from reasoning import events

    real = events.session_updated

    def keep(session):
        event = real(session)
        sent.append(event[1]["session"])
        return event

    with mock.patch.object(events, "session_updated", keep):
        yield

PROBLEM = "Plan the sequence for realising CHF 1.2m of gains across three tax years for a Zurich couple."


async def start(party):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params={"branching": 3, "depth": 4, "keep": 2})
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def test_promote_after_cancel_stays_cancelled_and_says_who_chose_the_answer(alice, runner):
    session = await start(alice)

    async def cancel_on_call_seven(n, contract):
        if n == 7:
            await act(services.cancel_session, alice.tenant, session.id, "user:tester")

    await run_session(session.id, gateway=await sync_to_async(HookedGateway)(session, cancel_on_call_seven))
    await session.arefresh_from_db()
    ended_at = session.ended_at
    assert session.status == Status.CANCELLED and session.ended_status == Status.CANCELLED
    node = next(n for n in await rows(session) if n.depth == 1 and not n.pruned)

    await act(services.promote_node, alice.tenant, node.id, "user:tester", "The lower-risk line.")
    await runner.drain()
    await session.arefresh_from_db()
    assert session.status == Status.CANCELLED  # not "solved": the run was cancelled
    assert session.termination_reason == "cancelled"
    assert session.answer_chosen_by == "user:tester" and session.answer_note == "The lower-risk line."
    assert session.final_node_id == node.id and session.final_answer and not session.answer_partial
    assert session.ended_at == ended_at  # the search's end is not moved by the promote
    assert session.to_dict()["ended_status"] == "cancelled"


async def test_a_resume_keeps_the_first_start_and_adds_up_the_active_time(alice, runner):
    session = await start(alice)
    _, _ = await pause_at_call(alice, session, 5)
    first_start, active_then = session.started_at, session.active_seconds
    assert session.resumed_at == first_start and active_then > 0

    await resume(alice, session, runner)
    assert session.status == Status.SOLVED
    assert session.started_at == first_start  # the first start never moves; the resume is resumed_at
    assert session.resumed_at > first_start
    assert session.active_seconds > active_then
    # Active time is the runs' time, not the wall time from the first start (which includes the pause).
    assert session.active_seconds <= (session.finished_at - first_start).total_seconds() + 0.01
    assert session.to_dict()["started_at"] == first_start.isoformat()


def test_a_later_turn_keeps_how_the_search_ended():
    answer = Outcome("An answer.", None, "solved", chosen_by="user:tester")
    assert ending_of(answer, Status.CANCELLED) == (Status.CANCELLED, None)
    assert ending_of(answer, Status.SOLVED) == (Status.SOLVED, None)
    assert ending_of(answer, "") == (Status.SOLVED, "solved")
    assert ending_of(answer, Status.FAILED) == (Status.SOLVED, "solved")  # a failed search now has an answer
    assert ending_of(Outcome("", None, "budget"), Status.CANCELLED) == (Status.EXHAUSTED, "budget")


class Clock:
    """A frozen clock for django.utils.timezone.now: it moves only when the test says so."""

    def __init__(self, at):
        self.at = at

    def __call__(self):
        return self.at

    def advance(self, seconds):
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    from django.utils import timezone

    frozen = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=dt_timezone.utc))
    monkeypatch.setattr(timezone, "now", frozen)
    return frozen


async def test_one_clock_through_pause_resume_cancel_and_promote_at_known_times(alice, runner, clock, client):
    """Issue 26, item 1: started_at is the first start and never moves; active_seconds counts running time only, and
    every session event already carries it (the paused page read "active 0 s" before)."""
    T0 = clock.at
    session = await start(alice)
    sent = []

    async def pause_after_ten_seconds(n, contract):
        if n == 5:
            clock.advance(10)
            await act(services.pause_session, alice.tenant, session.id, "user:tester")

    with capture_session_events(sent):
        await run_session(session.id, gateway=await sync_to_async(HookedGateway)(session, pause_after_ten_seconds))
    await session.arefresh_from_db()
    assert session.status == Status.PAUSED
    assert (session.started_at, session.resumed_at, session.active_seconds) == (T0, T0, 10.0)
    paused = [s for s in sent if s["status"] == "paused"]
    assert paused and paused[0]["active_seconds"] == 10.0  # the pause's own event, not 0

    clock.advance(50)  # paused for 50 s: not active time
    with mock.patch.object(services, "submit_to_runner", lambda session_id: None):  # this test runs it, below
        await act(services.resume_session, alice.tenant, session.id, "user:tester")

    async def cancel_after_five_seconds(n, contract):
        if n == 2:
            clock.advance(5)
            await act(services.cancel_session, alice.tenant, session.id, "user:tester")

    sent.clear()
    with capture_session_events(sent):
        await run_session(session.id, gateway=await sync_to_async(HookedGateway)(session, cancel_after_five_seconds))
    await session.arefresh_from_db()
    assert session.status == Status.CANCELLED
    assert session.started_at == T0 and session.resumed_at == T0 + timedelta(seconds=60)
    assert session.active_seconds == 15.0 and session.ended_at == T0 + timedelta(seconds=65)
    assert [s["active_seconds"] for s in sent if s["status"] == "cancelled"][0] == 15.0  # not 10, then 19 on reload

    clock.advance(120)  # a person reads the tree, then promotes a node
    node = next(n for n in await rows(session) if n.depth == 1 and not n.pruned)
    await act(services.promote_node, alice.tenant, node.id, "user:tester", "")
    await runner.drain()
    await session.arefresh_from_db()
    assert session.status == Status.CANCELLED and session.final_node_id == node.id
    assert session.started_at == T0  # not the promote's run: an integrator no longer computes 0.2 s
    assert session.resumed_at == T0 + timedelta(seconds=185) == session.finished_at
    assert session.ended_at == T0 + timedelta(seconds=65)
    assert session.active_seconds == 15.0  # the promote's run took no time on the frozen clock

    await sync_to_async(client.force_login)(alice.user)
    body = (await sync_to_async(client.get)(f"/api/sessions/{session.id}")).json()
    assert body["started_at"] == T0.isoformat()
    assert body["resumed_at"] == (T0 + timedelta(seconds=185)).isoformat()
    assert body["ended_at"] == (T0 + timedelta(seconds=65)).isoformat() and body["ended_status"] == "cancelled"
    assert body["active_seconds"] == 15.0 and "first_started_at" not in body


def test_a_running_session_counts_from_its_last_resume(db, alice):
    now = datetime(2026, 3, 2, 9, 0, tzinfo=dt_timezone.utc)
    session = ReasoningSession(
        tenant=alice.tenant, status=Status.RUNNING, active_seconds=12.0, started_at=now - timedelta(minutes=9),
        resumed_at=now - timedelta(seconds=3),
    )
    assert session.active_time(now) == 15.0
    session.status = Status.PAUSED
    assert session.active_time(now) == 12.0


def _crashed_run(party, ran_s, silent_s, banked=0.0):
    """A session whose run ran `ran_s` seconds, then died with its server and was silent for `silent_s` seconds."""
    from django.utils import timezone

    data = SessionIn(problem_text=PROBLEM, mode="lats", params={"iterations": 2})
    session = services.create_session(party.tenant, data, submit=False)
    now = timezone.now()
    ReasoningSession.objects.filter(pk=session.pk).update(
        status=Status.RUNNING, run_owner="another-host:4242:dead", run_epoch=1, active_seconds=banked,
        resumed_at=now - timedelta(seconds=ran_s + silent_s), heartbeat_at=now - timedelta(seconds=silent_s),
    )
    return ReasoningSession.objects.get(pk=session.pk)


def test_a_crashed_run_counts_up_to_its_last_heartbeat_when_it_is_taken_over(db, alice):
    """Issue 33: a LATS run alive 9.4 s, killed with its server and found stale later, counted the wait as running."""
    from reasoning import states

    session = _crashed_run(alice, ran_s=9.4, silent_s=40, banked=2.0)
    assert session.active_time() == pytest.approx(11.4, abs=0.05)  # the API while it still says running
    assert states.take_over(session)
    session.refresh_from_db()
    assert session.status == Status.QUEUED
    assert session.active_seconds == pytest.approx(11.4, abs=0.05)


def test_a_run_left_running_by_a_stopped_server_counts_up_to_its_last_heartbeat(db, alice, client):
    session = _crashed_run(alice, ran_s=9.4, silent_s=30)
    assert services.interrupt_running() == 1
    session.refresh_from_db()
    assert session.status == Status.INTERRUPTED
    assert session.active_seconds == pytest.approx(9.4, abs=0.05)
    client.force_login(alice.user)
    assert client.get(f"/api/sessions/{session.id}").json()["active_seconds"] == pytest.approx(9.4, abs=0.05)
    assert "9 s of running" in client.get(f"/sessions/{session.id}/report/").content.decode()


def test_a_live_run_counts_to_now(db, alice):
    session = _crashed_run(alice, ran_s=9.0, silent_s=1.0)
    assert session.active_time() == pytest.approx(10.0, abs=0.05)
