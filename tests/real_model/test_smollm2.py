"""SmolLM2-135M, a real model on loopback, through the whole product path: creation (priced by the setting),
the gateway (structured output as a json_object with a schema), every strategy, the ledger and the budget."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import selectors, services
from reasoning.engine import run_session
from reasoning.llm.gateway import PROMPT_OVERHEAD_TOKENS
from reasoning.llm.prices import Price
from reasoning.models import LLMCall, ReasoningNode
from reasoning.prompts import format_path, render
from reasoning.schemas import SessionIn
from reasoning.strategies.tot import PROPOSE

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Rebalance a CHF 3m portfolio drifted to 70% equities back to 60/40 within a year, tax-aware."
PRICE = {"input": 0.10, "output": 0.20}  # USD per million tokens: small, but a real number the budget counts
DEFINED_ENDS = {"solved", "failed", "exhausted"}
SMALL = {  # each strategy as small as it goes: a 135M model on two cores takes a few seconds a call
    "tot": {"depth": 2, "branching": 2, "keep": 1},
    "lats": {"iterations": 2, "children": 2, "rollout_depth": 1, "max_depth": 2},
    "reflexion": {"max_attempts": 2, "steps": 2},
    "react": {"max_steps": 3},
    "trm": {"max_steps": 2},
}


@pytest.fixture(autouse=True)
def the_local_model(settings, monkeypatch, real_model, real_model_base):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")  # litellm's OpenAI client wants a key; a local server reads none
    models = {real_model: {**PRICE, "response_format": "json_object", "api_base": real_model_base}}
    # A 135M model breaks about one JSON reply in five: three more tries make a lost call rare (each is a ledger row).
    settings.REASONING = {**settings.REASONING, "MODELS": models, "LLM_TIMEOUT_S": 180.0, "PARSE_RETRIES": 3}


async def run(party, model, mode, params, budget_usd=0.5):
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=params, model_primary=model, budget_usd=budget_usd)
    session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
    await run_session(session.id)
    await session.arefresh_from_db()
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    nodes = [n async for n in ReasoningNode.objects.filter(session=session)]  # the root too: it may carry a cost
    return session, calls, nodes


def assert_accounted(session, calls, nodes):
    assert session.budget_used_usd <= session.budget_usd
    assert session.budget_used_usd == pytest.approx(sum(c.cost_usd for c in calls), abs=1e-12)
    assert sum(n.cost_usd for n in nodes) == pytest.approx(sum(c.cost_usd for c in calls), abs=1e-12)
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)
    answered = [c for c in calls if c.outcome == "ok"]
    assert all(c.prompt and c.reply and c.tokens_in and c.tokens_out and c.cost_usd > 0 for c in answered)


async def test_tree_of_thoughts_is_solved_with_parsed_nodes_and_a_recorded_cost(alice, real_model):
    session, calls, nodes = await run(alice, real_model, "tot", SMALL["tot"])
    assert session.status == "solved", session.error
    assert session.prices[real_model] == {**PRICE, "source": "setting"}
    parsed = [n for n in nodes if n.depth and not n.parse_error]
    assert len(parsed) >= 2 and all(n.model_used == real_model for n in parsed)
    assert session.final_answer and session.budget_used_usd > 0
    assert_accounted(session, calls, nodes)
    sent = [c for c in calls if c.outcome == "ok" and c.parse_ok]
    assert all(json.loads(c.reply, strict=False) for c in sent)  # grammar-bound: every accepted reply is JSON


async def test_a_small_budget_is_exhausted_and_never_passed(alice, real_model):
    # Room for the first proposal's worst case and a little more: whether the model's reply parses or needs asking
    # again, the next call no longer fits, so the session ends exhausted, whatever the small model writes.
    price = Price(PRICE["input"], PRICE["output"], "setting")
    rubric = (await sync_to_async(selectors.rubric_for)(alice.tenant, "general")).as_prompt()
    first = render(
        PROPOSE.name, problem=PROBLEM, kind="general", rubric=rubric, path=format_path([]), k=3, step=1, depth=4
    )
    budget = 1.2 * price.cost(len(first) // 2 + PROMPT_OVERHEAD_TOKENS, PROPOSE.max_tokens)
    session, calls, nodes = await run(alice, real_model, "tot", {"depth": 4, "branching": 3, "keep": 2}, budget)
    assert session.status == "exhausted", session.error
    assert any(c.outcome == "budget" for c in calls) and any(c.outcome == "ok" for c in calls)
    assert_accounted(session, calls, nodes)


@pytest.mark.parametrize("mode", ["lats", "reflexion", "react", "trm"])
async def test_every_strategy_comes_to_a_defined_end(alice, real_model, mode):
    session, calls, nodes = await run(alice, real_model, mode, SMALL[mode])
    assert session.status in DEFINED_ENDS, session.status
    assert "\n" not in session.error and "Traceback" not in session.error
    assert calls and all(c.model_requested == real_model for c in calls)
    assert_accounted(session, calls, nodes)
