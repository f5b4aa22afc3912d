"""What a real model's replies are held to, through the scripted loopback server (issue 24): a count asked for is
the count accepted, a figure off its scale is a refused reply asked again (llama.cpp's grammar ignores `minimum`
and `maximum`), and ReAct's tool arguments are held to each tool's own shape."""

import json

import pytest

from reasoning.llm.contracts import Unparseable
from reasoning.strategies.reflexion import ATTEMPT
from reasoning.strategies.tot import EVALUATE
from reasoning.strategies.trm import REASON
from tests.fake_openai import FakeOpenAI, reply_json
from tests.llm.test_gateway_faults import PRICES, ask_once, gateway_for, ledger, session_on

pytestmark = pytest.mark.django_db(transaction=True)

LLAMACPP = {**PRICES, "response_format": "json_object"}
STEP = {"thought": "Sell CHF 300k of equities from the lots with the smallest gains."}


async def asked(alice, contract, replies, prompt="Rebalance a CHF 3m portfolio.", **options):
    session = await session_on(alice, fallback="")
    with FakeOpenAI() as server:
        server.script("primary", [reply_json(r) for r in replies])
        try:
            answer = await ask_once(session, gateway_for(session, server.base_url), contract, prompt, **options)
        finally:
            requests = list(server.requests)
    return answer, requests, await ledger(session)


async def test_reflexion_s_attempt_of_another_count_of_steps_is_refused_and_asked_again(alice, models):
    models(**{"openai/primary": LLAMACPP})
    answer, requests, rows = await asked(alice, ATTEMPT, [{"steps": [STEP]}, {"steps": [STEP] * 3}], expect=3)
    assert len(answer.parsed.steps) == 3
    assert [r.parse_ok for r in rows] == [False, True]
    assert "holds 1 steps; exactly 3 were asked for" in rows[0].error
    steps = requests[0]["response_format"]["schema"]["properties"]["steps"]
    assert steps["minItems"] == steps["maxItems"] == 3  # the grammar holds the count the prompt asks for


async def test_reflexion_keeps_no_chain_of_another_length_than_it_asked_for(alice):
    from reasoning.strategies.reflexion import Reflexion
    from tests.fakes import FakeStore, ScriptedGateway, context

    script = {
        "reflexion.attempt": {"steps": [STEP] * 3},
        "reflexion.evaluate": {"score": 0.9, "reason": "fine"},
        "reflexion.reflect": {"critique": "Say when."},
        "reflexion.synthesize": {"answer": "Sell CHF 300k of equities this quarter."},
    }
    store = FakeStore()
    await Reflexion(context(Reflexion, ScriptedGateway(script), store, params={"max_attempts": 1, "steps": 2})).run()
    [attempt] = [n for n in store.nodes() if n.depth == 1]
    assert attempt.state["failed"] and "exactly 2 were asked for" in attempt.parse_error


@pytest.mark.parametrize(
    "contract, bad, good",
    [
        (EVALUATE, {"score": 100.92, "reason": "sure"}, {"score": 0.92, "reason": "sure"}),
        (
            REASON,
            {"insight": "a", "issue": "b", "missing": "c", "suggestion": "d", "confidence": 100.92},
            {"insight": "a", "issue": "b", "missing": "c", "suggestion": "d", "confidence": 0.5},
        ),
    ],
    ids=["score", "confidence"],
)
async def test_a_figure_off_its_scale_is_a_refused_reply_asked_again(alice, models, contract, bad, good):
    models(**{"openai/primary": LLAMACPP})
    answer, _, rows = await asked(alice, contract, [bad, good])
    assert [r.parse_ok for r in rows] == [False, True] and "100.92" not in json.dumps(answer.parsed.model_dump())
    with pytest.raises(Unparseable):  # never clamped into a perfect 1.0
        await asked(alice, contract, [bad, bad])


async def test_react_s_schema_holds_each_tool_to_its_own_arguments(alice, models):
    from reasoning import tools
    from reasoning.strategies.react import FINAL, STEP

    models(**{"openai/primary": LLAMACPP})
    good = {"thought": "Look up the client's holdings first.", "action": {"tool": "portfolio", "args": {}}}
    _, requests, _ = await asked(alice, STEP, [good])
    schema = requests[0]["response_format"]["schema"]
    calls = [schema["$defs"][ref["$ref"].rsplit("/", 1)[1]] for ref in schema["properties"]["action"]["anyOf"]]
    by_tool = {c["properties"]["tool"]["const"]: c["properties"]["args"] for c in calls}
    assert set(by_tool) == {t.name for t in tools.available()} | {FINAL}
    portfolio = schema["$defs"][by_tool["portfolio"]["$ref"].rsplit("/", 1)[1]]
    assert "client_id" in portfolio["properties"] and portfolio["additionalProperties"] is False
    final = schema["$defs"][by_tool[FINAL]["$ref"].rsplit("/", 1)[1]]
    assert final["required"] == ["answer"]  # the grammar cannot end a run without its answer


async def test_a_call_retrying_leaves_a_primary_that_was_set_to_rest_for_its_fallback(alice, models, settings):
    from tests.fake_openai import status

    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    settings.REASONING = {**settings.REASONING, "LLM_RETRIES": 4, "COOLDOWN_AFTER": 2, "COOLDOWN_S": 30}
    session = await session_on(alice)
    good = {"score": 0.7, "reason": "Specific and sound."}
    with FakeOpenAI(default=lambda body: status(500)) as primary, FakeOpenAI(default=lambda b: reply_json(good)) as up:
        answer = await ask_once(session, gateway_for(session, primary.base_url, up.base_url))
        # Two failures set it to rest: its three retries left go to the fallback, not to the resting primary.
        assert len(primary.requests) == 2 and len(up.requests) == 1
    assert answer.model == "openai/backup"
