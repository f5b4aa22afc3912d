"""A model priced at 0 (a local server) is unmetered: the USD budget cannot stop it, and everything that shows a budget
says so; an optional token cap binds it instead, reserved before each call as the budget is (issue 24)."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import UNMETERED, LLMCall, ReasoningSession
from reasoning.schemas import SessionIn
from tests.fake_openai import FakeOpenAI, byte_tokens
from tests.reasoning.test_commands import run
from tests.reasoning.test_real_models import PROBLEM, SMALL_TOT, dummy_key  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

FREE = {"input": 0, "output": 0}


def serve(settings, server):
    settings.REASONING = {
        **settings.REASONING,
        "MODELS": {"openai/local": {**FREE, "api_base": server.base_url}},
        "LLM_RETRIES": 0,
    }


async def start(party, **fields):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params=SMALL_TOT, model_primary="openai/local", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def test_an_unmetered_session_says_its_budget_does_not_bind_in_the_api_and_the_page(alice, settings, client):
    with FakeOpenAI(default=byte_tokens) as server:
        serve(settings, server)
        session = await start(alice, budget_usd=0.000001)
    body = (await sync_to_async(client.get)(f"/api/sessions/{session.id}", **alice.auth)).json()
    assert body["unmetered"] is True and body["budget_note"] == UNMETERED == "unmetered model: the budget does not bind"
    assert body["prices"]["openai/local"] == {"input": 0.0, "output": 0.0, "source": "setting", "note": UNMETERED}
    await sync_to_async(client.force_login)(alice.user)
    page = (await sync_to_async(client.get)(f"/sessions/{session.id}/")).content.decode()
    badge = page.split('id="session-unmetered"', 1)[1].split("</span>", 1)[0]
    assert " hidden" not in badge and badge.endswith(UNMETERED)


async def test_a_metered_session_shows_no_such_note(alice, settings, client):
    session = await sync_to_async(services.create_session)(
        alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False
    )
    body = (await sync_to_async(client.get)(f"/api/sessions/{session.id}", **alice.auth)).json()
    assert body["unmetered"] is False and body["budget_note"] is None and body["token_cap"] is None


async def run_on_local(alice, settings, **fields):
    """A session run to its end on the scripted local model priced at 0; (session, requests the server got)."""
    with FakeOpenAI(default=byte_tokens) as server:
        serve(settings, server)
        session = await start(alice, **fields)
        await run_session(session.id)
    await session.arefresh_from_db()
    return session, server.requests


async def test_a_token_cap_binds_an_unmetered_model_reserved_before_each_call(alice, settings):
    session, requests = await run_on_local(alice, settings, token_cap=9000)
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    used = sum(c.tokens_in + c.tokens_out for c in calls)
    assert session.status == "exhausted" and session.budget_used_usd == 0
    assert 0 < used <= 9000  # never past the cap: each call's most was held before it was sent
    refused = [c for c in calls if c.outcome == "budget"]
    assert refused and len(requests) == len(calls) - len(refused)


async def test_an_unmetered_session_stopped_by_its_token_cap_says_so(alice, settings, client):
    """Issue 33: it ended with termination_reason "budget" and "(budget exhausted)", where its budget does not bind."""
    session, _ = await run_on_local(alice, settings, token_cap=9000)
    assert session.status == "exhausted" and session.termination_reason == "token_cap"
    assert "budget exhausted" not in (session.final_answer or "") and "budget" not in (session.error or "")
    await sync_to_async(client.force_login)(alice.user)
    report = (await sync_to_async(client.get)(f"/sessions/{session.id}/report/")).content.decode()
    assert "Stopped: the session&#x27;s token cap is reached" in report


async def test_without_a_cap_the_unmetered_session_runs_to_its_end(alice, settings):
    session, _ = await run_on_local(alice, settings, budget_usd=0.000001)
    assert session.status in {"solved", "failed"} and session.budget_used_usd == 0  # as the note says


def test_a_token_cap_must_be_a_positive_count(client, alice):
    for cap in (0, -5, "many", 1.5):
        body = {"problem_text": PROBLEM, "token_cap": cap}
        response = client.post("/api/sessions", data=json.dumps(body), content_type="application/json", **alice.auth)
        assert response.status_code == 422, response.content
        assert "token_cap" in json.dumps(response.json())
    assert not ReasoningSession.objects.exists()


def test_the_cli_says_the_budget_does_not_bind_an_unmetered_model(settings):
    with FakeOpenAI(default=byte_tokens) as server:
        serve(settings, server)
        args = [PROBLEM, "--mode", "tot", "--params", json.dumps(SMALL_TOT), "--model", "openai/local"]
        out, _ = run("solve", *args, "--tenant", "cli", "--token-cap", "100000")
    assert f"{UNMETERED}; token cap 100,000" in out
    assert f"spent: 0.0000 USD of 0.5000 USD ({UNMETERED}; token cap 100,000)" in out
    assert "answer written by: openai/local" in out
