"""The gateway against a misbehaving OpenAI-compatible server on loopback: litellm's real client path runs,
only the server is scripted. Each attempt is a ledger row, retried as configured, then the fallback."""

import asyncio
import json

import pytest

from reasoning.llm.gateway import BudgetExhausted, ModelError, ModelGateway
from reasoning.models import LLMCall, ReasoningSession
from reasoning.prompts import render
from reasoning.strategies.tot import EVALUATE, PROPOSE
from tests.fake_openai import FakeOpenAI, close, empty_choices, free_port, hang, malformed, reply_json, status
from tests.reasoning.test_gateway import PROMPT  # the evaluation prompt those tests ask with

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {"score": 0.7, "reason": "Specific and sound."}
PRICES = {"input": 1.0, "output": 2.0}  # USD per million tokens
DEAR = {"input": 10.0, "output": 40.0}


async def session_on(party, primary="openai/primary", fallback="openai/backup", **fields):
    return await ReasoningSession.objects.acreate(
        tenant=party.tenant,
        problem_text="Rebalance a CHF 3m portfolio.",
        model_primary=primary,
        model_fallback=fallback,
        budget_usd=fields.pop("budget_usd", 0.5),
        **fields,
    )


def gateway_for(session, primary_url, fallback_url=None, timeout=None):
    params = {"primary": {"api_base": primary_url, "api_key": "x"}}
    if fallback_url:
        params["fallback"] = {"api_base": fallback_url, "api_key": "x"}
    return ModelGateway(session, deployment_params=params, timeout=timeout)


async def ledger(session):
    return [c async for c in LLMCall.objects.filter(session=session).order_by("attempt", "id")]


async def ask_once(session, gateway, contract=EVALUATE, prompt=PROMPT, **kwargs):
    try:
        return await gateway.ask(contract, prompt, **kwargs)
    finally:
        await gateway.close()


@pytest.mark.parametrize(
    "fault, line",
    [
        (empty_choices(), "Stream ended before a finish_reason"),  # streamed: litellm refuses a stream of no choice
        (malformed(), "NoStream: the server sent no stream"),  # asked as a stream, a body that is no stream
        (status(500), "InternalServerError"),
        (status(503), "ServiceUnavailableError"),
        (close(), "ConnectionDropped: the connection closed before a reply"),  # no 500: no server sent one
    ],
    ids=["empty-choices", "malformed", "500", "503", "dropped"],
)
async def test_a_transient_fault_is_retried_on_the_same_model_and_every_attempt_is_a_row(alice, models, fault, line):
    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    session = await session_on(alice)
    with FakeOpenAI() as primary:
        primary.script("primary", [fault, reply_json(GOOD)])
        result = await ask_once(session, gateway_for(session, primary.base_url))
        assert len(primary.requests) == 2  # litellm's and the SDK's own retries are off: one request per row
    failed, answered = await ledger(session)
    assert result.parsed.score == 0.7 and result.model == "openai/primary"
    assert (failed.outcome, failed.attempt, failed.cost_usd, failed.model_requested) == (
        "error",
        1,
        0,
        "openai/primary",
    )
    assert line in failed.error and "\n" not in failed.error and "Traceback" not in failed.error
    assert failed.prompt == PROMPT and failed.reply == ""
    assert (answered.outcome, answered.attempt, answered.reply) == ("ok", 2, json.dumps(GOOD))


async def test_a_429_waits_as_long_as_the_provider_asks_then_retries(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with FakeOpenAI() as primary:
        primary.script("primary", [status(429, retry_after=0.2), reply_json(GOOD)])
        result = await ask_once(session, gateway_for(session, primary.base_url))
    rows = await ledger(session)
    assert result.parsed.score == 0.7
    assert [r.outcome for r in rows] == ["error", "ok"] and "RateLimitError" in rows[0].error


async def test_a_429_asking_for_a_long_wait_goes_to_the_fallback_at_once(alice, models, settings):
    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    session = await session_on(alice)
    with FakeOpenAI() as primary, FakeOpenAI() as backup:
        primary.script("primary", [status(429, retry_after=3600)])
        backup.script("backup", [reply_json(GOOD)])
        result = await ask_once(session, gateway_for(session, primary.base_url, backup.base_url))
        assert len(primary.requests) == 1
    assert result.model == "openai/backup"
    assert [(r.model_requested, r.outcome) for r in await ledger(session)] == [
        ("openai/primary", "error"),
        ("openai/backup", "fallback"),
    ]


async def test_a_hung_connection_times_out_is_retried_then_falls_back(alice, models):
    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    session = await session_on(alice)
    with FakeOpenAI() as primary, FakeOpenAI() as backup:
        primary.script("primary", [hang(5), hang(5), hang(5)])
        backup.script("backup", [reply_json(GOOD)])
        result = await ask_once(session, gateway_for(session, primary.base_url, backup.base_url, timeout=0.3))
    rows = await ledger(session)
    assert result.model == "openai/backup"
    assert [r.attempt for r in rows] == [1, 2, 3, 4]
    assert all("Timeout" in r.error for r in rows[:3]) and rows[3].outcome == "fallback"


async def test_a_primary_down_for_good_and_no_fallback_is_one_plain_model_error(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with pytest.raises(ModelError) as failed:
        await ask_once(session, gateway_for(session, free_port()))
    assert str(failed.value).startswith("every model failed (3 attempts); last: openai/primary:")
    assert "\n" not in str(failed.value) and "Traceback" not in str(failed.value)
    assert [r.outcome for r in await ledger(session)] == ["error"] * 3
    await session.arefresh_from_db()
    assert session.budget_used_usd == 0 and session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


async def test_a_bad_request_is_not_retried_on_the_same_model(alice, models):
    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    session = await session_on(alice)
    with FakeOpenAI() as primary, FakeOpenAI() as backup:
        primary.script("primary", [status(400, message="model 'primary' not loaded")])
        backup.script("backup", [reply_json(GOOD)])
        await ask_once(session, gateway_for(session, primary.base_url, backup.base_url))
        assert len(primary.requests) == 1


# ---- prices and the budget ---------------------------------------------------------------


async def test_each_attempt_is_reserved_at_the_price_of_the_model_it_calls(alice, models):
    models(**{"openai/primary": PRICES, "openai/backup": DEAR})
    session = await session_on(alice)
    gateway_args = {}
    with FakeOpenAI() as primary, FakeOpenAI() as backup:
        primary.script("primary", [status(500), status(500), status(500)])
        backup.script("backup", [reply_json(GOOD, prompt_tokens=300, completion_tokens=20)])
        gateway = gateway_for(session, primary.base_url, backup.base_url, **gateway_args)
        await ask_once(session, gateway)
    rows = await ledger(session)
    cheap, dear = rows[0].reserved_usd, rows[-1].reserved_usd
    assert {r.reserved_usd for r in rows[:3]} == {cheap}
    # The prompt is the same, so the reservations differ exactly by the prices: 10x input, 20x output.
    assert cheap < dear < 20 * cheap and dear > 10 * cheap
    assert rows[-1].cost_usd == pytest.approx((300 * 10.0 + 20 * 40.0) / 1e6)  # the fallback's price, not the primary's


async def test_a_budget_of_a_tenth_of_a_cent_stops_within_one_call_of_it(alice, models):
    models(**{"openai/primary": {"input": 0.2, "output": 0.4}})
    session = await session_on(alice, fallback="", budget_usd=0.001)
    calls = []
    with FakeOpenAI(default=lambda body: reply_json(GOOD, prompt_tokens=400, completion_tokens=80)) as primary:
        gateway = gateway_for(session, primary.base_url)
        with pytest.raises(BudgetExhausted):
            while True:
                calls.append(await gateway.ask(EVALUATE, PROMPT))
        await gateway.close()
    await session.arefresh_from_db()
    one_call = calls[0].cost_usd
    assert len(calls) > 1 and one_call > 0
    assert session.budget_used_usd <= session.budget_usd
    # Refused only when the next call's worst case no longer fits: the money left is less than one reservation.
    reservation = (await ledger(session))[-1].reserved_usd
    assert session.budget_usd - session.budget_used_usd < reservation
    assert session.budget_used_usd == pytest.approx(sum(c.cost_usd for c in calls))


# ---- structured output ---------------------------------------------------------------------


async def test_structured_output_is_asked_where_the_model_takes_it_and_not_elsewhere(alice, models):
    models(
        **{
            "openai/llamacpp": {**PRICES, "response_format": "json_object"},
            "openai/plain": PRICES,
            "openai/forced-off": {**PRICES, "response_format": "none"},
        }
    )
    bodies = {}
    for model in ("openai/llamacpp", "openai/plain", "openai/forced-off", "openai/gpt-4o-mini"):
        session = await session_on(alice, primary=model, fallback="")
        with FakeOpenAI(default=lambda body: reply_json(GOOD)) as server:
            await ask_once(session, gateway_for(session, server.base_url))
            bodies[model] = server.requests[0]
    sent = bodies["openai/llamacpp"]["response_format"]
    assert sent["type"] == "json_object" and sent["schema"]["required"] == ["score"]
    assert sent["schema"]["properties"]["score"] == {"maximum": 1, "minimum": 0, "title": "Score", "type": "number"}
    assert "maxLength" not in json.dumps(sent)  # a local server spells out each bound in its grammar: too big
    assert "response_format" not in bodies["openai/plain"]  # litellm's map does not know it: asked in the prompt only
    assert "response_format" not in bodies["openai/forced-off"]
    known = bodies["openai/gpt-4o-mini"]["response_format"]  # litellm's map says it supports a response schema
    assert known["type"] == "json_schema" and known["json_schema"]["schema"]["properties"].keys() == {"score", "reason"}


async def test_a_line_contract_is_held_to_its_json_form_where_the_model_takes_structured_output(alice, models):
    from reasoning.strategies.trm import REASON

    models(**{"openai/llamacpp": {**PRICES, "response_format": "json_object"}, "openai/plain": PRICES})
    bodies = {}
    wire = {
        "insight": "The order of sales is right.",
        "issue": "No cash buffer.",
        "missing": "Fees.",
        "suggestion": "Keep six months of spending in cash.",
        "confidence": 0.6,
    }
    for model in ("openai/llamacpp", "openai/plain"):
        session = await session_on(alice, primary=model, fallback="")
        with FakeOpenAI(default=lambda body: reply_json(wire)) as server:
            result = await ask_once(session, gateway_for(session, server.base_url), contract=REASON, prompt="Judge.")
            bodies[model] = server.requests[0]
        assert result.parsed.confidence == 0.6 and result.parsed.issues == ["No cash buffer."]
    sent = bodies["openai/llamacpp"]["response_format"]["schema"]
    assert set(sent["required"]) == {"insight", "issue", "missing", "suggestion", "confidence"}
    assert "response_format" not in bodies["openai/plain"]  # asked for lines, in the prompt only


# ---- the audit record ----------------------------------------------------------------------


async def test_a_parse_retry_keeps_both_replies_and_the_prompt_it_sent_again(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    prompt = render("tot.propose", problem="P", kind="general", rubric="R", path="(none yet)", k=2, step=1, depth=2)
    echoed = {"thoughts": [{"thought": "<one next step, at most 80 words>"}, {"thought": "Sell bonds."}]}
    short = {"thoughts": [{"thought": "{{ next step }}"}]}
    with FakeOpenAI() as server:
        server.script("primary", [reply_json(echoed), reply_json(short)])
        with pytest.raises(Exception) as broken:
            await ask_once(session, gateway_for(session, server.base_url), contract=PROPOSE, prompt=prompt, expect=2)
    first, second = broken.value.records
    assert type(broken.value).__name__ == "Unparseable" and "template text" in str(broken.value)
    assert first.parse_ok is False and "placeholder" in first.error and first.reply == json.dumps(echoed)
    assert first.prompt == prompt
    assert second.attempt == 2 and second.reply == json.dumps(short)
    assert second.prompt.startswith(prompt + "\n### YOUR LAST REPLY WAS REFUSED\n")
    assert "placeholder" in second.prompt and json.dumps(echoed) not in second.prompt  # what was wrong, not the reply


async def test_concurrent_faults_never_lose_a_row(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with FakeOpenAI(default=lambda body: reply_json(GOOD)) as server:
        server.script("primary", [status(500)] * 4)
        gateway = gateway_for(session, server.base_url)
        await asyncio.gather(*(gateway.ask(EVALUATE, PROMPT) for _ in range(6)))
        await gateway.close()
        assert await LLMCall.objects.filter(session=session).acount() == len(server.requests) == 10


async def test_the_call_in_flight_when_the_server_died_is_a_dropped_connection_not_a_500(alice, models):
    """Issue 33: the call in flight when the model server died was recorded as "InternalServerError (500)"."""
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with FakeOpenAI() as primary:
        primary.script("primary", [close(), reply_json(GOOD)])
        await ask_once(session, gateway_for(session, primary.base_url))
    dropped = (await ledger(session))[0]
    assert dropped.outcome == "error" and dropped.error.startswith("ConnectionDropped: "), dropped.error
    assert "500" not in dropped.error and "InternalServerError" not in dropped.error
