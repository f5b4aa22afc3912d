"""The gateway: every call costed and recorded, budgets never passed, the fallback taking over."""

import pytest

from reasoning.llm.gateway import ModelError, ModelGateway
from reasoning.models import LLMCall, ReasoningSession
from reasoning.prompts import render
from reasoning.strategies.base import BudgetExhausted, Unparseable
from reasoning.strategies.tot import EVALUATE

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = render(
    "tot.evaluate",
    problem="Rebalance a CHF 3m portfolio drifted to 70% equities.",
    kind="general",
    rubric="- Soundness (weight 1): right",
    path="(none yet)",
    thought="Sell CHF 300,000 of equities.",
)


def make_session(party, **fields):
    defaults = {"problem_text": "Rebalance a CHF 3m portfolio.", "model_primary": "offline/sim", "budget_usd": 0.5}
    return ReasoningSession.objects.create(tenant=party.tenant, **{**defaults, **fields})


async def test_it_records_the_cost_of_each_call(alice):
    session = await make_session_async(alice)
    gateway = ModelGateway(session)
    answer = await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    call = await LLMCall.objects.aget(session=session)
    await session.arefresh_from_db()
    assert 0 <= answer.parsed.score <= 1
    assert call.outcome == "ok" and call.model_used == "offline/sim"
    assert call.tokens_in > 0 and call.tokens_out > 0
    assert call.cost_usd == pytest.approx(answer.cost_usd) and call.cost_usd > 0
    assert session.budget_used_usd == pytest.approx(call.cost_usd)
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


async def test_it_refuses_a_call_that_could_pass_the_budget(alice):
    session = await make_session_async(alice, budget_usd=0.0001)
    gateway = ModelGateway(session)
    with pytest.raises(BudgetExhausted):
        await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    await session.arefresh_from_db()
    assert session.budget_used_usd == 0
    assert await LLMCall.objects.filter(session=session, outcome="budget").acount() == 1


async def test_it_leases_budget_so_most_calls_skip_the_database(alice):
    session = await make_session_async(alice)
    gateway = ModelGateway(session)
    answer = await gateway.ask(EVALUATE, PROMPT)
    remaining = await gateway.remaining_usd()  # a step boundary
    await session.arefresh_from_db()
    # The answer's ledger row travels with it, to be written with the node it produces; its cost stays reserved.
    assert len(answer.records) == 1 and await LLMCall.objects.filter(session=session).acount() == 0
    assert session.budget_reserved_usd == pytest.approx(gateway.lease + answer.cost_usd)
    assert remaining == pytest.approx(session.budget_usd - session.budget_used_usd - answer.cost_usd)
    await gateway.close()  # no strategy stored it: the gateway writes it rather than lose it
    await session.arefresh_from_db()
    assert await LLMCall.objects.filter(session=session).acount() == 1
    assert session.budget_used_usd == pytest.approx(answer.cost_usd)
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


async def test_concurrent_calls_never_spend_past_the_budget(alice):
    import asyncio

    gateway_session = await make_session_async(alice, budget_usd=0.004)
    gateway = ModelGateway(gateway_session)
    results = await asyncio.gather(*(gateway.ask(EVALUATE, PROMPT) for _ in range(12)), return_exceptions=True)
    await gateway_session.arefresh_from_db()
    assert any(isinstance(r, BudgetExhausted) for r in results)
    assert any(not isinstance(r, Exception) for r in results)
    assert gateway_session.budget_used_usd <= gateway_session.budget_usd


async def test_it_falls_back_when_the_primary_raises(alice, settings):
    settings.REASONING = {**settings.REASONING, "ALLOW_OFFLINE_FALLBACK": True}
    session = await make_session_async(alice, model_primary="openai/gpt-4o-mini", model_fallback="offline/sim")
    gateway = ModelGateway(
        session, retries=0, deployment_params={"primary": {"mock_response": Exception("primary is down")}}
    )
    answer = await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    failed, call = [c async for c in LLMCall.objects.filter(session=session).order_by("attempt")]
    assert answer.model == "offline/sim" and answer.records == [call]
    assert failed.outcome == "error" and failed.model_requested == "openai/gpt-4o-mini" and failed.attempt == 1
    assert "primary is down" in failed.error and "\n" not in failed.error and failed.cost_usd == 0
    assert call.outcome == "fallback" and call.model_used == "offline/sim" and call.attempt == 2


async def test_it_uses_the_primary_through_litellm_mock_response(alice):
    session = await make_session_async(alice, model_primary="openai/gpt-4o-mini", model_fallback="offline/sim")
    gateway = ModelGateway(session, deployment_params={"primary": {"mock_response": '{"score": 0.8, "reason": "ok"}'}})
    answer = await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    call = await LLMCall.objects.aget(session=session)
    assert answer.parsed.score == 0.8
    assert call.outcome == "ok" and call.cost_usd > 0  # priced by litellm's own price list


async def test_an_unparseable_reply_is_retried_then_reported(alice):
    session = await make_session_async(alice, model_primary="openai/gpt-4o-mini")
    gateway = ModelGateway(session, deployment_params={"primary": {"mock_response": "I think it is a fine step."}})
    with pytest.raises(Unparseable) as error:
        await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    assert len(calls) == 2 and all(c.parse_ok is False for c in calls)
    assert "JSON" in str(error.value) and error.value.cost_usd > 0


async def test_it_records_a_failed_call_when_every_model_fails(alice):
    session = await make_session_async(alice, model_primary="openai/gpt-4o-mini")
    gateway = ModelGateway(session, retries=0, deployment_params={"primary": {"mock_response": Exception("down")}})
    with pytest.raises(ModelError):
        await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    call = await LLMCall.objects.aget(session=session)
    await session.arefresh_from_db()
    assert call.outcome == "error" and "down" in call.error
    assert session.budget_used_usd == 0 and session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


async def make_session_async(party, **fields):
    from asgiref.sync import sync_to_async

    return await sync_to_async(make_session)(party, **fields)


async def test_parse_outcomes_survive_a_flush_between_calls(alice, monkeypatch):
    from reasoning.llm import gateway as gateway_module

    monkeypatch.setattr(gateway_module, "FLUSH_EVERY_CALLS", 1)  # write the ledger after every call
    session = await make_session_async(alice, model_primary="openai/gpt-4o-mini")
    gateway = ModelGateway(session, deployment_params={"primary": {"mock_response": "not json"}})
    with pytest.raises(Unparseable):
        await gateway.ask(EVALUATE, PROMPT)
    await gateway.close()
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    assert [c.parse_ok for c in calls] == [False, False] and all("JSON" in c.error for c in calls)


async def test_what_is_left_is_never_more_than_the_tenants_month_has(alice):
    """A strategy's budget check at each step sees the cap too, so it stops (and synthesises) inside it."""
    from reasoning.models import Tenant

    session = await make_session_async(alice)
    gateway = ModelGateway(session)
    assert await gateway.remaining_usd() == pytest.approx(session.budget_usd)  # no cap: the session's budget
    await Tenant.objects.filter(pk=alice.tenant.pk).aupdate(monthly_cap_usd=0.004)
    answer = await gateway.ask(EVALUATE, PROMPT)
    remaining = await gateway.remaining_usd()
    assert remaining == pytest.approx(0.004 - answer.cost_usd)  # its own lease counted as its own
    await gateway.close()
