"""ReAct's tools: the registry integrators extend, the built-in wealth tools, and the calculator that never evals."""

import asyncio
import builtins
import json

import pytest
from asgiref.sync import sync_to_async
from pydantic import BaseModel, Field

from reasoning import services, tools
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.models import ReasoningEdge, ReasoningNode
from reasoning.schemas import SessionIn
from reasoning.tools import builtin
from reasoning.tools.calculator import evaluate


def run(name, args):
    return asyncio.run(tools.call(name, args))


def data(name, args):
    return json.loads(run(name, args))


class FxArgs(BaseModel):
    currency: str = Field(description="An ISO currency code.")


@pytest.fixture
def fx_tool():
    """An integrator's tool, registered for one test."""

    @tools.register("fx_rate", "Today's rate of a currency in CHF.", FxArgs)
    def fx_rate(currency):
        return {"currency": currency.upper(), "chf": 0.94}

    yield fx_rate
    tools.unregister("fx_rate")


# ---- the calculator -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, result",
    [
        ("2400000 / 18000000 * 100", 13.3333333333333),
        ("8 / (3 - 8 / 3)", 24),  # exact fractions: not 23.999...
        ("(10 - 4) * (13 - 9)", 24),
        ("-2 ** 2 + 7 % 3", -3),
        ("0.1 + 0.2", 0.3),
        ("1.05 ** 10", 1.62889462677744),
        ("2 ** 0.5", 1.4142135623731),
    ],
)
def test_the_calculator_does_arithmetic(expression, result):
    assert data("calculate", {"expression": expression})["result"] == pytest.approx(result, rel=1e-12)


@pytest.mark.parametrize(
    "expression, refusal",
    [
        ("__import__('os')", "function calls are not allowed"),
        ("__import__('os').system('ls')", "function calls are not allowed"),
        ("os", "names are not allowed"),
        ("(1).real", "attributes are not allowed"),
        ("[1, 2][0]", "subscripts are not allowed"),
        ("[1, 2]", "'List' expressions are not allowed"),
        ("'a' * 3", "only numbers are allowed"),
        ("True + 1", "only numbers are allowed"),
        ("2**10**10", "the exponent 10000000000 is too large"),
        ("9 ** 99", "the result is too large"),
        ("10 ** 18 * 10", "the result is too large"),
        ("1e400", "the number is too large"),
        ("1 / 0", "division by zero"),
        ("1 +", "not an arithmetic expression"),
    ],
)
def test_the_calculator_refuses_everything_but_arithmetic(expression, refusal):
    observation = run("calculate", {"expression": expression})
    assert observation.startswith("error: calculate: ") and refusal in observation


def test_the_calculator_never_calls_eval_or_exec(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert evaluate("(1 + 2) * 8") == 24
    assert "not allowed" in run("calculate", {"expression": "__import__('os')"})


# ---- the built-in tools ---------------------------------------------------------------------


def test_portfolio_values_a_known_client_and_names_the_known_ones_otherwise():
    folio = data("portfolio", {"client_id": "c-1001"})
    assert folio["name"] == "Anna Keller" and folio["canton"] == "ZH"
    assert folio["total_chf"] == sum(h["value_chf"] for h in folio["holdings"]) + folio["cash_chf"]
    assert [h["value_chf"] for h in folio["holdings"]] == sorted(
        (h["value_chf"] for h in folio["holdings"]), reverse=True
    )
    assert data("portfolio", {"client_id": "C-1002"})["total_chf"] > 46_000_000  # the company and the buildings count
    assert run("portfolio", {"client_id": "C-9999"}) == (
        "error: portfolio: no client 'C-9999'; known clients: C-1001, C-1002, C-1003, C-1004"
    )


def test_prices_take_a_list_or_text_and_list_unknown_symbols():
    quotes = data("prices", {"symbols": "nesn, ROG XYZ"})
    assert set(quotes["prices"]) == {"NESN", "ROG"} and quotes["unknown"] == ["XYZ"]
    assert quotes["prices"]["NESN"]["currency"] == "CHF" and "not market data" in quotes["note"]
    assert run("prices", {"symbols": ["XYZ"]}).startswith("error: prices: no prices for XYZ")


@pytest.mark.parametrize(
    "canton, code",
    [
        ("ZH", "ZH"),
        ("Zürich", "ZH"),
        ("Genève", "GE"),
        ("Lugano", "TI"),
        ("canton of Vaud", "VD"),
        ("St. Gallen", "SG"),
    ],
)
def test_swiss_tax_finds_a_canton_by_code_name_or_town(canton, code):
    table = data("swiss_tax", {"canton": canton})
    assert table["canton"] == code and table["note"].startswith("illustrative, not tax advice")


def test_swiss_tax_estimates_with_the_band_rate_and_always_says_illustrative():
    table = data("swiss_tax", {"canton": "Geneva", "income_chf": 400000, "wealth_chf": 40_000_000})
    assert table["income_tax"] == {"income_chf": 400000, "effective_rate": 0.34, "estimated_chf": 136000}
    assert table["wealth_tax"] == {"wealth_chf": 40_000_000, "per_mille": 7.0, "estimated_chf": 280000}
    assert all(
        "illustrative, not tax advice" in run("swiss_tax", {"canton": code})
        for code in builtin.fixture("swiss_tax")["cantons"]
    )
    assert len(builtin.fixture("swiss_tax")["cantons"]) == 26
    refusal = run("swiss_tax", {"canton": "Texas"})
    assert refusal.startswith("error: swiss_tax: no canton 'Texas'") and "illustrative, not tax advice" in refusal
    assert run("swiss_tax", {"canton": "ZH", "wealth_chf": -1}).startswith("error: bad arguments for 'swiss_tax'")


def test_search_documents_ranks_by_keywords_and_quotes_a_whole_sentence():
    found = data("search_documents", {"query": "European healthcare equities"})["results"]
    assert found[0]["id"] == "H-001" and found[0]["excerpt"].startswith("European healthcare trades at about 16 times")
    assert found[0]["excerpt"].endswith(".")
    mine = data("search_documents", {"query": "healthcare", "client_id": "C-1003", "limit": 5})["results"]
    assert {r["client_id"] for r in mine} <= {"C-1003", None}
    assert data("search_documents", {"query": "zeppelin"})["results"] == []
    assert (
        run("search_documents", {"query": "a to"}) == "error: search_documents: the query has no keywords to search for"
    )


# ---- the registry -----------------------------------------------------------------------------


def test_an_integrator_registers_a_tool_and_it_is_in_the_catalogue(fx_tool):
    assert tools.get("fx_rate").fn is fx_tool
    assert data("fx_rate", {"currency": "eur"}) == {"currency": "EUR", "chf": 0.94}
    catalogue = tools.catalogue()
    assert "- fx_rate: Today's rate of a currency in CHF." in catalogue
    assert '"currency": "string, required: An ISO currency code."' in catalogue
    assert [t.name for t in tools.available()][:5] == [
        "portfolio",
        "prices",
        "swiss_tax",
        "calculate",
        "search_documents",
    ]


def test_names_are_checked_and_never_taken_twice(fx_tool):
    with pytest.raises(ValueError, match="registered already"):
        tools.register("fx_rate", "again", FxArgs, fx_tool)
    tools.register("fx_rate", "Replaced.", FxArgs, fx_tool, replace=True)
    assert tools.get("fx_rate").description == "Replaced."
    for bad in ("final_answer", "Has Spaces", ""):
        with pytest.raises(ValueError):
            tools.register(bad, "no", FxArgs, fx_tool)
    with pytest.raises(TypeError):
        tools.register("untyped", "no", dict, fx_tool)


def test_every_failure_of_a_call_is_an_observation(monkeypatch):
    class NoArgs(BaseModel):
        pass

    async def slow():
        await asyncio.sleep(5)

    def broken():
        raise KeyError("feed")

    tools.register("slow_feed", "Slow.", NoArgs, slow)
    tools.register("broken_feed", "Broken.", NoArgs, broken)
    monkeypatch.setattr(tools, "TIMEOUT_S", 0.01)
    try:
        assert run("crystal_ball", {}).startswith("error: unknown tool 'crystal_ball'; available: portfolio, prices")
        assert run("broken_feed", {}) == "error: tool 'broken_feed' failed: KeyError: 'feed'"
        assert run("slow_feed", {}) == "error: tool 'slow_feed' timed out after 0.01 s"
        assert run("portfolio", {"client_id": "C-1001", "extra": 1}).startswith(
            "error: bad arguments for 'portfolio': extra: Extra inputs are not permitted"
        )
        assert run("portfolio", ["C-1001"]).startswith(
            "error: bad arguments for 'portfolio': client_id: Field required"
        )
    finally:
        tools.unregister("slow_feed")
        tools.unregister("broken_feed")


def test_async_tools_are_awaited_and_long_outputs_cut():
    class TextArgs(BaseModel):
        size: int

    async def report(size):
        return "x" * size

    tools.register("long_report", "A long report.", TextArgs, report)
    try:
        assert run("long_report", {"size": 10}) == "x" * 10
        cut = run("long_report", {"size": tools.OBSERVATION_LIMIT + 1})
        assert cut.endswith(f"(cut: the output had {tools.OBSERVATION_LIMIT + 1} characters)")
    finally:
        tools.unregister("long_report")


# An answer the answer's contract keeps (a bare "CHF 0.94." is refused since issue 24, and written again).
ANSWER = "One euro is worth CHF 0.94 at today's rate: the francs a euro buys."


@pytest.mark.django_db(transaction=True)
async def test_the_strategy_calls_a_tool_an_integrator_registered(alice, fx_tool):
    data_in = SessionIn(
        problem_text="What is a euro worth in francs?", mode="react", model_primary="openai/gpt-4o-mini"
    )
    session = await sync_to_async(services.create_session)(alice.tenant, data_in, submit=False)
    replies = iter(
        [
            json.dumps({"thought": "Look the rate up.", "action": {"tool": "fx_rate", "args": {"currency": "eur"}}}),
            json.dumps({"thought": "Done.", "action": {"tool": "final_answer", "args": {"answer": ANSWER}}}),
        ]
    )
    gateway = await sync_to_async(ModelGateway)(session, deployment_params={"primary": {}})
    original = gateway.router.acompletion

    async def scripted(**kwargs):
        assert "- fx_rate: Today's rate of a currency in CHF." in kwargs["messages"][0]["content"]  # in the catalogue
        return await original(**kwargs, mock_response=next(replies))

    gateway.router.acompletion = scripted
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    step = await ReasoningNode.objects.aget(session=session, depth=1)
    edge = await ReasoningEdge.objects.aget(to_node=step)
    assert session.status == "solved" and session.final_answer == ANSWER
    assert edge.action == 'fx_rate({"currency":"eur"})' and edge.observation == '{"currency":"EUR","chf":0.94}'
