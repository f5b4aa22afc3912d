"""A real model reads the client's facts too, once, at the first run (contract case.facts); the deterministic reader
keeps only what the problem bears out, so no fact is invented; the offline model is not asked (its reading is the
deterministic one). Served by the scripted OpenAI-compatible server on loopback: litellm's whole path runs."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.offline.answers import answer
from reasoning.models import CaseFact, LLMCall, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from tests.fake_openai import FakeOpenAI, offline_reply, reply

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock (cost basis $400k). Her salary is "
    "$450k. She is considering an exchange fund and a collar."
)
READING = {
    "facts": [
        {"label": "salary", "kind": "amount", "value": "$450k", "unit": "USD", "text": "$450k"},
        {"label": "inheritance", "kind": "amount", "value": 999000, "unit": "USD", "text": "$999k"},
        {"label": "residence", "kind": "place", "value": "JP", "text": "Tokyo"},
    ]
}


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch, settings):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-a-local-server")
    settings.REASONING = {**settings.REASONING, "MODEL_READS_FACTS": True}  # tests/conftest.py turns it off


def model(body):
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("### CONTRACT\ncase.facts"):
        return reply(json.dumps(READING), prompt_tokens=len(prompt) // 4, completion_tokens=60)
    return offline_reply(body)


async def start(party, primary):
    data = SessionIn(
        problem_text=PROBLEM, mode="tot", model_primary=primary, params={"depth": 1, "branching": 2, "keep": 1}
    )
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def test_a_real_model_s_facts_are_grounded_in_the_text_and_nothing_is_invented(alice, settings):
    with FakeOpenAI(default=model) as server:
        settings.REASONING = {
            **settings.REASONING,
            "MODELS": {"openai/local": {"input": 1.0, "output": 2.0, "api_base": server.base_url}},
        }
        session = await start(alice, "openai/local")
        await CaseFact.objects.filter(session=session, number=450_000).adelete()  # one the reader "missed"
        await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    assert session.status == "solved", session.error
    facts = [f async for f in CaseFact.objects.filter(session=session)]
    assert any(f.number == 450_000 and f.text == "$450k" and PROBLEM[f.start : f.end] == "$450k" for f in facts)
    assert not any(f.number == 999_000 or f.name == "JP" for f in facts)  # not in the problem: dropped
    assert session.meta["facts_read"] == {"model": "openai/local", "returned": 3, "grounded": 1, "added": 1}
    reading = await LLMCall.objects.aget(session=session, purpose="case.facts")
    root = await ReasoningNode.objects.aget(session=session, depth=0)
    assert reading.cost_usd > 0 and reading.node_id == root.id  # paid for, counted, and charged to the root
    nodes = [n async for n in ReasoningNode.objects.filter(session=session)]
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    assert sum(n.cost_usd for n in nodes) == pytest.approx(sum(c.cost_usd for c in calls), abs=1e-12)
    assert session.budget_used_usd == pytest.approx(sum(c.cost_usd for c in calls), abs=1e-12)


async def test_the_offline_model_is_not_asked_its_reading_is_the_deterministic_one(alice):
    session = await start(alice, "offline/sim")
    await run_session(session.id)
    assert not await LLMCall.objects.filter(session=session, purpose="case.facts").aexists()
    prompt = "### CONTRACT\ncase.facts\n### PROBLEM\n" + PROBLEM + "\n### OUTPUT\n"
    read = json.loads(answer(prompt, seed=7))["facts"]
    stored = [f async for f in CaseFact.objects.filter(session=session).order_by("position")]
    assert [(f["kind"], f["text"]) for f in read] == [(f.kind, f.text) for f in stored]
