"""Honest endings (issue 15): a session is solved only when its final answer passed its contract. A synthesis that
broke its contract or failed on every model ends the session failed, with the best line so far as a partial answer
and the reason, the same on the page, in the API and in solve's exit code; budget exhaustion keeps its own status."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.schemas import SessionIn
from tests.runs import act, ledger_and_node_costs, rows, run_scripted

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Rebalance a CHF 12m portfolio that drifted to 72% equities against a 60/40 target for a Geneva family."
STEPS = [
    {"thoughts": [{"thought": "Sell CHF 1.44m of equities, the lots with the smallest gains first."}]},
    {"score": 0.8, "reason": "Sound and specific."},
]


async def start(party, **fields):
    data = SessionIn(problem_text=PROBLEM, problem_kind="allocation-rebalance", mode="tot", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def test_an_unparseable_synthesis_ends_failed_with_the_best_line_as_a_partial_answer(alice):
    session = await start(
        alice, model_primary="openai/gpt-4o-mini", params={"depth": 1, "branching": 1, "value_samples": 1}
    )
    junk = {"answer": "Meadowermoney_Selling. 10,872,654.39"}
    session = await run_scripted(session, [*STEPS, junk, junk])
    assert session.status == "failed" and session.answer_partial and session.termination_reason == "synthesis_failed"
    assert session.final_answer.startswith("Best line of reasoning so far (the synthesis broke its contract)")
    assert "Sell CHF 1.44m" in session.final_answer and "says nothing about the problem" in session.error
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)  # the refused synthesis is paid for and charged to its node


async def test_a_synthesis_that_fails_on_every_model_keeps_the_tree_and_the_best_line(alice):
    session = await start(
        alice, model_primary="openai/gpt-4o-mini", params={"depth": 1, "branching": 1, "value_samples": 1}
    )
    gateway = await sync_to_async(ModelGateway)(session, retries=0, deployment_params={"primary": {}})
    replies = iter([STEPS[0], STEPS[1]])
    original = gateway.router.acompletion

    async def then_fail(**kwargs):
        import json

        reply = next(replies, None)
        mock = json.dumps(reply) if reply else Exception("the provider is down")
        return await original(**kwargs, mock_response=mock)

    gateway.router.acompletion = then_fail
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    nodes = await rows(session)
    assert len(nodes) == 2 and session.status == "failed" and session.answer_partial
    assert session.final_node_id == nodes[1].id and "Sell CHF 1.44m" in session.final_answer
    assert "the synthesis failed on every model" in session.error and "the provider is down" in session.error


def test_the_api_the_page_and_solve_agree(alice, client):
    import io

    from asgiref.sync import async_to_sync
    from django.core.management import call_command

    data = SessionIn(
        problem_text=PROBLEM,
        problem_kind="allocation-rebalance",
        mode="tot",
        model_primary="openai/gpt-4o-mini",
        params={"depth": 1, "branching": 1, "value_samples": 1},
    )
    session = services.create_session(alice.tenant, data, submit=False)
    junk = {"answer": ",.}, a JSON file ```json {"}
    session = async_to_sync(run_scripted)(session, [*STEPS, junk, junk])
    body = client.get(f"/api/sessions/{session.id}", **alice.auth).json()
    assert body["status"] == "failed" and body["answer_partial"] and body["final_answer"] == session.final_answer
    page = alice_page(client, alice, session).decode()
    assert "Best line of reasoning so far" in page and "markup" in page
    assert solve_exit_code(call_command, io) == 3


def alice_page(client, alice, session):
    client.force_login(alice.user)
    return client.get(f"/sessions/{session.id}/").content


def solve_exit_code(call_command, io):
    """`solve` with an offline synthesis that breaks its contract: the exit code CommandError carries."""
    from unittest import mock

    from django.core.management import CommandError

    from reasoning.llm.offline import answers as offline_answers

    broken = {"tot.synthesize": lambda p, rng: {"answer": "``` { the code is ready"}}
    with mock.patch.dict(offline_answers.HANDLERS, broken):
        try:
            call_command(
                "solve",
                PROBLEM,
                "--mode",
                "tot",
                "--params",
                '{"depth": 1}',
                stdout=io.StringIO(),
                stderr=io.StringIO(),
            )
        except CommandError as error:
            return error.returncode
    return 0


# ---- "solved" never outlives its answer (issue 30) ------------------------------------------------------------------

TRUE = "Sell CHF 1.44m of equities to bring the CHF 12m portfolio back to its 60/40 target."
SLIP = "Sell CHF 1.44 of equities to bring the CHF 12 portfolio back to its 60/40 target."  # two scales dropped
ONE_STEP = {"depth": 1, "branching": 1, "value_samples": 1}


async def solved(party):
    session = await start(party, model_primary="openai/gpt-4o-mini", params=ONE_STEP)
    session = await run_scripted(session, [*STEPS, {"answer": TRUE}])
    assert session.status == "solved" and session.answer_state == "checked" and not session.answer_partial
    return session


def undispatched():
    """An overseer's command saved and its session queued, but left for the test to run with its own script."""
    from unittest import mock

    return mock.patch("reasoning.services.submit_to_runner")


async def test_an_edit_that_makes_every_answer_fail_a_check_ends_the_session_failed_not_solved(alice):
    session = await solved(alice)
    with undispatched():
        await act(services.edit_node, alice.tenant, session.final_node_id, "user:tester", SLIP)
    # The edited step is rescored; its answer, written again with the findings, still fails: the search fails.
    session = await run_scripted(session, [STEPS[1], {"answer": SLIP}, {"answer": SLIP}, {"answer": SLIP}])
    assert session.status == "failed" and session.termination_reason == "fact_check_failed"
    assert session.ended_status == "solved"  # how the search itself first ended stays
    assert session.answer_partial and "no answer passed the checks" in session.error
    body = session.to_dict()
    assert body["answer_state"] == "needs_review" and "scale dropped" in body["answer_badge"]


async def test_an_edit_whose_answer_is_written_again_and_passes_stays_solved(alice):
    session = await solved(alice)
    with undispatched():
        await act(services.edit_node, alice.tenant, session.final_node_id, "user:tester", SLIP)
    session = await run_scripted(session, [STEPS[1], {"answer": SLIP}, {"answer": TRUE}])
    assert session.status == "solved" and session.final_answer == TRUE and session.answer_state == "checked"


async def test_a_person_s_promote_that_fails_a_check_stands_under_needs_review(alice, client):
    session = await solved(alice)
    with undispatched():
        await act(services.promote_node, alice.tenant, session.final_node_id, "user:tester", "the client wants it")
    session = await run_scripted(session, [{"answer": SLIP}])
    assert session.final_answer == SLIP and session.answer_chosen_by == "user:tester"  # a person's choice stands
    body = await sync_to_async(lambda: client.get(f"/api/sessions/{session.id}", **alice.auth).json())()
    assert body["answer_state"] == "needs_review" and "failed" in body["answer_badge"]


async def test_a_fact_change_that_makes_the_answer_fail_writes_it_again_from_the_new_sheet(alice):
    from reasoning.models import CaseFact

    session = await solved(alice)
    fact = await CaseFact.objects.aget(session=session, label="portfolio")
    with undispatched():
        await act(services.update_fact, alice.tenant, session.id, fact.id, "user:tester", {"value": 15_000_000})
    await session.arefresh_from_db()
    assert session.answer_state == "needs_review" and session.status == "queued"  # reopened to write it again
    fixed = TRUE.replace("CHF 12m", "CHF 15m").replace("CHF 1.44m", "CHF 1.8m")  # the trade to the target: 12% of it
    session = await run_scripted(session, [{"answer": fixed}])
    assert session.status == "solved" and session.final_answer == fixed and session.answer_state == "checked"


async def test_a_fact_change_on_a_session_that_cannot_run_says_its_answer_needs_review(alice):
    from reasoning.models import CaseFact, ReasoningSession

    session = await solved(alice)
    await ReasoningSession.objects.filter(pk=session.id).aupdate(budget_used_usd=session.budget_usd)  # spent
    fact = await CaseFact.objects.aget(session=session, label="portfolio")
    with undispatched():
        await act(services.update_fact, alice.tenant, session.id, fact.id, "user:tester", {"value": 15_000_000})
    await session.arefresh_from_db()
    assert session.status == "solved" and session.answer_state == "needs_review"
    assert any(not c["ok"] and "CHF 12m" in c["text"] for c in session.answer_checks)


# ---- a failed or cancelled session's answer says what it is ---------------------------------------------------------


async def test_a_failed_session_s_answer_is_always_partial_with_why(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini", params=ONE_STEP)
    worse = "Sell CHF 1.44 of equities from the CHF 12 portfolio."
    session = await run_scripted(session, [*STEPS, {"answer": worse}, {"answer": worse}])
    assert session.status == "failed" and session.termination_reason == "fact_check_failed"
    assert session.answer_partial and session.error.startswith("no answer passed the checks")


async def test_a_cancelled_session_s_partial_answer_is_not_checked_rather_than_0_of_0(alice):
    from reasoning.engine import write_partial_answer

    session = await start(alice, model_primary="openai/gpt-4o-mini", params=ONE_STEP)
    session = await run_scripted(session, [*STEPS, {"answer": TRUE}])
    await sync_to_async(write_partial_answer)(session.id, None, "cancelled")  # as a cancel writes it
    await session.arefresh_from_db()
    body = session.to_dict()
    assert body["answer_partial"] and body["answer_state"] == "not_checked" and body["answer_badge"] is None
