"""The reservation holds for any text: the prompt is counted by the model's tokenizer, the reply at the limit the
call sends. Dense text (mathematical letters, emoji, CJK) takes a token or more a character."""

import litellm
import pytest

from reasoning.llm.gateway import BudgetExhausted, prompt_tokens
from reasoning.models import LLMCall
from reasoning.strategies.tot import EVALUATE
from tests.fake_openai import FakeOpenAI, reply_json
from tests.llm.test_gateway_faults import GOOD, ask_once, gateway_for, session_on

pytestmark = pytest.mark.django_db(transaction=True)

# The prompt is what costs here: a dear input price, a cheap reply.
PROMPT_DEAR = {"input": 100.0, "output": 1.0}
DENSE = {
    "math": "Score this: " + "𝔸𝔹ℂ𝔻𝔼𝔽𝔾" * 400,
    "emoji": "Score this: " + "📈💰🏦🧾" * 500,
    "cjk": "評価してください：" + "資産配分の見直しと税務" * 300,
}


def tokenizer_reply(body):
    """The scripted server bills the prompt as a real tokenizer counts it, and writes a short reply."""
    return reply_json(GOOD, prompt_tokens=litellm.token_counter(model="gpt-4o", messages=body["messages"]))


@pytest.mark.parametrize("text", DENSE.values(), ids=DENSE.keys())
async def test_a_dense_prompt_costs_no_more_than_its_reservation(alice, models, text):
    models(**{"openai/primary": PROMPT_DEAR})
    session = await session_on(alice, fallback="", budget_usd=5)
    with FakeOpenAI() as server:
        server.default = tokenizer_reply
        await ask_once(session, gateway_for(session, server.base_url), prompt=text)
        sent = server.requests[0]
    call = await LLMCall.objects.aget(session=session)
    assert call.cost_usd <= call.reserved_usd
    assert sent["max_tokens"] == EVALUATE.max_tokens  # the reply limit reserved is the one the call sends


async def test_a_budget_short_of_a_dense_prompt_refuses_the_call_before_it_is_sent(alice, models):
    models(**{"openai/primary": PROMPT_DEAR})
    messages = [{"role": "user", "content": DENSE["math"]}]
    # Enough for the prompt at two characters a token and a full reply, not for the prompt as it is counted.
    budget = (len(DENSE["math"]) // 2 + 64) * 100e-6 + EVALUATE.max_tokens * 1e-6
    assert budget < prompt_tokens("openai/primary", messages) * 100e-6
    session = await session_on(alice, fallback="", budget_usd=budget)
    with FakeOpenAI() as server:
        server.default = tokenizer_reply
        with pytest.raises(BudgetExhausted):
            await ask_once(session, gateway_for(session, server.base_url), prompt=DENSE["math"])
        assert server.requests == []
    await session.arefresh_from_db()
    assert session.budget_used_usd == 0 and session.budget_reserved_usd == pytest.approx(0, abs=1e-12)


def test_a_model_that_would_lose_max_tokens_is_reserved_at_the_most_it_can_write(monkeypatch):
    from reasoning.llm import gateway

    gateway.reply_ceiling.cache_clear()
    monkeypatch.setattr(litellm, "get_supported_openai_params", lambda model=None, **_: ["temperature"])
    try:
        takes_limit, most = gateway.reply_ceiling("openai/gpt-4o-mini")
    finally:
        gateway.reply_ceiling.cache_clear()
    assert (takes_limit, most) == (False, 16384)  # litellm's map: what drop_params leaves unbounded


async def test_a_whole_session_on_dense_text_never_passes_its_budget(alice, models, monkeypatch):
    """The issue's case: a problem written in mathematical letters, billed by a real tokenizer, spent 2.03x its budget."""
    from asgiref.sync import sync_to_async

    from reasoning import services
    from reasoning.engine import run_session
    from reasoning.models import ReasoningSession
    from reasoning.schemas import SessionIn
    from tests.fake_openai import offline_reply, reply

    def billed_by_tokenizer(body):
        prompt = body["messages"][-1]["content"]
        text = offline_reply(body).payload["choices"][0]["message"]["content"]
        tokens = litellm.token_counter(model="gpt-4o", messages=body["messages"])
        return reply(text, prompt_tokens=tokens, completion_tokens=max(1, len(text) // 4) if prompt else 1)

    models(**{"openai/primary": PROMPT_DEAR})
    problem = "Rebalance the portfolio described here: " + "𝔸𝔹ℂ𝔻𝔼𝔽𝔾 " * 500
    budget = 5.0  # a few calls' worth: each prompt costs about 1 USD as the tokenizer counts it
    with FakeOpenAI(default=billed_by_tokenizer) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        data = SessionIn(problem_text=problem, mode="tot", model_primary="openai/primary", budget_usd=budget)
        session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
        await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    spent = sum([c.cost_usd async for c in LLMCall.objects.filter(session=session)])
    assert session.status == "exhausted" and spent > 0
    assert session.budget_used_usd == pytest.approx(spent) and spent <= budget


# The case: the README's problem, then Chinese text to 8,000 characters (three UTF-8 bytes a character), on a
# local model whose tokenizer falls back to one token per byte: litellm's cl100k counted about half of it.
README_PROBLEM = (
    "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains. "
)
CJK_PROBLEM = (README_PROBLEM + "客户希望在退休前重新平衡投资组合，同时尽量减少已实现收益的税负。" * 200)[:8000]
BYTE_PRICE = {"input": 0.8, "output": 1.6}  # a prompt of 24,000 bytes costs about 0.02 USD


@pytest.mark.parametrize("mode", ["tot", "reflexion", "trm", "lats", "react"])
async def test_a_byte_per_token_model_never_takes_a_session_past_its_budget(alice, models, monkeypatch, mode):
    """Issue 23, item 1: spent <= budget in every session when the server counts a token per UTF-8 byte."""
    from asgiref.sync import sync_to_async

    from reasoning import services
    from reasoning.engine import run_session
    from reasoning.models import ReasoningSession
    from reasoning.schemas import SessionIn
    from tests.fake_openai import byte_tokens

    models(**{"openai/local": BYTE_PRICE})
    budget = 0.05
    with FakeOpenAI(default=byte_tokens) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        data = SessionIn(problem_text=CJK_PROBLEM, mode=mode, model_primary="openai/local", budget_usd=budget)
        session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
        await run_session(session.id)
        assert server.requests and all(r["max_tokens"] for r in server.requests)  # every reply capped
    session = await ReasoningSession.objects.aget(pk=session.id)
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    spent = sum(c.cost_usd for c in calls)
    assert spent > 0 and all(c.cost_usd <= c.reserved_usd + 1e-12 for c in calls)
    assert session.budget_used_usd == pytest.approx(spent) and spent <= budget
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)
