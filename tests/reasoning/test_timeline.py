"""A session keeps its real timeline (issue 16, item 5): its first start, its active time over every run, and how
the search itself ended, which a resume or a promote never rewrites; a promoted answer says a person chose it."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import ending_of
from reasoning.models import ReasoningSession, Status
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Outcome
from tests.runs import HookedGateway, act, pause_at_call, resume, rows, run_session

pytestmark = pytest.mark.django_db(transaction=True)

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
    first_start, active_then = session.first_started_at, session.active_seconds
    assert first_start is not None and active_then > 0

    await resume(alice, session, runner)
    assert session.status == Status.SOLVED
    assert session.first_started_at == first_start  # started_at moved with the second run; the first start did not
    assert session.started_at > first_start
    assert session.active_seconds > active_then
    # Active time is the runs' time, not the wall time from the first start (which includes the pause).
    assert session.active_seconds <= (session.finished_at - first_start).total_seconds() + 0.01
    assert session.to_dict()["first_started_at"] == first_start.isoformat()


def test_a_later_turn_keeps_how_the_search_ended():
    answer = Outcome("An answer.", None, "solved", chosen_by="user:tester")
    assert ending_of(answer, Status.CANCELLED) == (Status.CANCELLED, None)
    assert ending_of(answer, Status.SOLVED) == (Status.SOLVED, None)
    assert ending_of(answer, "") == (Status.SOLVED, "solved")
    assert ending_of(answer, Status.FAILED) == (Status.SOLVED, "solved")  # a failed search now has an answer
    assert ending_of(Outcome("", None, "budget"), Status.CANCELLED) == (Status.EXHAUSTED, "budget")


def test_an_older_session_without_a_timeline_reads_start_to_end(db, alice):
    from django.utils import timezone

    now = timezone.now()
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="x", model_primary="offline/sim", started_at=now, status=Status.SOLVED
    )
    session.finished_at = now + timezone.timedelta(seconds=35)
    assert session.active_time() == 35.0
