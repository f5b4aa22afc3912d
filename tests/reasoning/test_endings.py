"""Honest endings (issue 15): a session is solved only when its final answer passed its contract. A synthesis that
broke its contract or failed on every model ends the session failed, with the best line so far as a partial answer
and the reason, the same on the page, in the API and in solve's exit code; budget exhaustion keeps its own status."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.schemas import SessionIn
from tests.runs import ledger_and_node_costs, rows, run_scripted

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

    from reasoning.llm import offline_answers

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
