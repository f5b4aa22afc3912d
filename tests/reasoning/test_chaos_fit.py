"""The chaos test's sessions without the chaos, in seconds: ToT (2 branches, 3 levels) on its problem against its model,
a local server that counts and cuts a reply a token a byte (tests/fake_openai.py byte_tokens), as a byte-level
tokenizer would. A reply of the offline model longer than a contract's `max_tokens` in bytes is cut there, refused,
and the session fails: a CI run did, after twenty minutes of chaos, when each proposal's state repeated its
derivation. Here it fails at once."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import LLMCall
from reasoning.schemas import SessionIn
from tests.fake_openai import FakeOpenAI, byte_tokens

pytestmark = pytest.mark.django_db(transaction=True)

# tests/chaos/test_chaos.py's session, as it creates it (its module needs the scaled profile to import)
PROBLEM = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."
PARAMS = {"branching": 2, "depth": 3, "keep": 1}
BYTE_PRICE = {"input": 1.0, "output": 2.0}


def test_this_test_runs_the_chaos_tests_session():
    from pathlib import Path

    chaos = (Path(__file__).resolve().parents[1] / "chaos" / "test_chaos.py").read_text()
    assert f"PROBLEM = {json.dumps(PROBLEM)}" in chaos and f"PARAMS = {json.dumps(PARAMS)}" in chaos
    assert f"BYTE_PRICE = {json.dumps(BYTE_PRICE)}" in chaos


async def test_the_chaos_tests_session_fits_a_server_that_counts_a_token_a_byte(alice, settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-a-local-server")
    with FakeOpenAI(default=byte_tokens) as server:
        settings.REASONING = {
            **settings.REASONING,
            "MODELS": {"openai/local": {**BYTE_PRICE, "api_base": server.base_url}},
            "LLM_RETRIES": 0,
        }
        data = SessionIn(problem_text=PROBLEM, mode="tot", params=PARAMS, model_primary="openai/local", budget_usd=0.2)
        session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
        await run_session(session.id)
    await session.arefresh_from_db()
    assert session.status == "solved" and session.final_answer, (session.status, session.error)
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    assert calls and all(c.parse_ok is not False and not c.error for c in calls)  # no reply cut, none refused
