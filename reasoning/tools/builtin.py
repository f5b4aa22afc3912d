"""The built-in wealth tools, over small invented fixtures (fixtures/react_*.json): illustrative, never live data.

Each is an ordinary registered tool, the way an integrator adds one: an args model and a function.
"""

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from . import ToolError, register
from .calculator import evaluate, show

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NOT_ADVICE = "illustrative, not tax advice"
WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+")
QUIET = set("the and for with from that this what which into about over their them how does should client".split())


@cache
def fixture(name):
    return json.loads((FIXTURES / f"react_{name}.json").read_text(encoding="utf-8"))


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt argument is reported, not silently dropped


# ---- portfolio ---------------------------------------------------------------------------


class PortfolioArgs(Args):
    client_id: str = Field(min_length=1, max_length=40, description="The client's id, e.g. C-1001.")


def portfolio(client_id):
    clients = fixture("portfolios")["clients"]
    client = clients.get(client_id.strip().upper())
    if client is None:
        raise ToolError(f"no client '{client_id}'; known clients: {', '.join(clients)}")
    holdings = sorted((_holding(s, q) for s, q in client["holdings"].items()), key=lambda h: -h["value_chf"])
    liquid = sum(h["value_chf"] for h in holdings) + client["cash_chf"]
    other = sum(a["value_chf"] for a in client["other_assets"])
    return {
        "client_id": client_id.strip().upper(),
        "name": client["name"],
        "canton": client["canton"],
        "age": client["age"],
        "risk_profile": client["risk_profile"],
        "target_allocation_pct": client["target_allocation"],
        "holdings": holdings,
        "cash_chf": client["cash_chf"],
        "liquid_total_chf": round(liquid),
        "other_assets": client["other_assets"],
        "total_chf": round(liquid + other),
        "as_of": fixture("prices")["as_of"],
        "note": fixture("portfolios")["note"],
    }


def _holding(symbol, quantity):
    quote = fixture("prices")["prices"][symbol]
    rate = fixture("prices")["fx_to_chf"][quote["currency"]]
    return {
        "symbol": symbol,
        "name": quote["name"],
        "quantity": quantity,
        "price": quote["price"],
        "currency": quote["currency"],
        "value_chf": round(quantity * quote["price"] * rate),
    }


# ---- prices ------------------------------------------------------------------------------


class PricesArgs(Args):
    symbols: list[str] = Field(min_length=1, max_length=20, description='Ticker symbols, e.g. ["NESN", "ROG"].')

    @field_validator("symbols", mode="before")
    @classmethod
    def split_text(cls, value):
        # Models often send "NESN, ROG" for a list of two.
        return [s for s in re.split(r"[\s,;]+", value) if s] if isinstance(value, str) else value


def prices(symbols):
    data = fixture("prices")
    wanted = list(dict.fromkeys(s.strip().upper() for s in symbols))
    found = {
        s: data["prices"][s] | {"chf_per_unit": data["fx_to_chf"][data["prices"][s]["currency"]]}
        for s in wanted
        if s in data["prices"]
    }
    unknown = [s for s in wanted if s not in data["prices"]]
    if not found:
        raise ToolError(f"no prices for {', '.join(unknown)}; known symbols: {', '.join(data['prices'])}")
    return {"as_of": data["as_of"], "prices": found, "unknown": unknown, "note": data["note"]}


# ---- swiss_tax ---------------------------------------------------------------------------


class SwissTaxArgs(Args):
    canton: str = Field(min_length=2, max_length=40, description="A canton's code or name, or its main town.")
    income_chf: float | None = Field(None, ge=0, le=1e10, description="Yearly taxable income, for an estimate.")
    wealth_chf: float | None = Field(None, ge=0, le=1e12, description="Taxable net wealth, for an estimate.")


def swiss_tax(canton, income_chf=None, wealth_chf=None):
    table = fixture("swiss_tax")
    code = canton_code(canton)
    if code is None:
        raise ToolError(f"no canton '{canton}' in the table ({NOT_ADVICE}); known: {', '.join(table['cantons'])}")
    entry = table["cantons"][code]
    income = _bands(table["income_bands_chf"], entry["income_rates"], "effective_rate")
    wealth = _bands(table["wealth_bands_chf"], entry["wealth_per_mille"], "per_mille")
    return {
        "canton": code,
        "name": entry["name"],
        "income_tax": income
        if income_chf is None
        else _estimate(income, income_chf, "income_chf", "effective_rate", 1),
        "wealth_tax": wealth if wealth_chf is None else _estimate(wealth, wealth_chf, "wealth_chf", "per_mille", 1e-3),
        "capital_gains": table["federal"]["capital_gains"],
        "descendants_inheritance": entry["descendants_inheritance"],
        "pillar_3a_max_chf": table["federal"]["pillar_3a_max_chf"],
        "note": f"{NOT_ADVICE}. {table['note']}",
    }


def canton_code(text):
    key = _plain(text)
    for code, entry in fixture("swiss_tax")["cantons"].items():
        if key in {_plain(name) for name in [code, entry["name"], *entry["aliases"]]}:
            return code
    return None


def _plain(text):
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z]", "", text.lower().removeprefix("canton of ").removeprefix("canton "))


def _bands(limits, rates, field):
    return [{"up_to_chf": limit, field: rate} for limit, rate in zip(limits, rates, strict=True)]


def _estimate(bands, amount, name, field, scale):
    """The rate of the band the amount falls in, applied to the whole amount (an effective rate)."""
    band = next(b for b in bands if b["up_to_chf"] is None or amount <= b["up_to_chf"])
    return {name: amount, field: band[field], "estimated_chf": round(amount * band[field] * scale)}


# ---- calculate ---------------------------------------------------------------------------


class CalculateArgs(Args):
    expression: str = Field(
        min_length=1, max_length=200, description="Arithmetic with numbers, + - * / ** % and parentheses."
    )


def calculate(expression):
    return {"expression": expression.strip(), "result": show(evaluate(expression))}


# ---- search_documents --------------------------------------------------------------------


class SearchArgs(Args):
    query: str = Field(min_length=1, max_length=200, description="Keywords to look for.")
    client_id: str | None = Field(None, max_length=40, description="Only this client's documents and house notes.")
    limit: int = Field(3, ge=1, le=5, description="How many documents to return.")


def search_documents(query, client_id=None, limit=3):
    terms = [t for t in WORD.findall(query.lower()) if len(t) > 2 and t not in QUIET]
    if not terms:
        raise ToolError("the query has no keywords to search for")
    documents = fixture("documents")["documents"]
    if client_id:
        documents = [d for d in documents if d["client_id"] in (client_id.strip().upper(), None)]
    scored = sorted(((_score(d, terms), i, d) for i, d in enumerate(documents)), key=lambda s: (-s[0], s[1]))
    results = [_hit(d, terms, score) for score, _, d in scored[:limit] if score > 0]
    return {"query": query, "results": results, "note": fixture("documents")["note"]}


def _score(document, terms):
    """Keyword hits, the title counting double; a word matches a term that starts it (tax, taxes)."""
    title, text = WORD.findall(document["title"].lower()), WORD.findall(document["text"].lower())
    return sum(2 * _hits(title, t) + _hits(text, t) for t in terms)


def _hits(words, term):
    return sum(w.startswith(term[:6]) for w in words)


def _hit(document, terms, score):
    sentences = SENTENCE.split(document["text"])
    best = max(sentences, key=lambda s: _score({"title": "", "text": s}, terms))
    return {
        "id": document["id"],
        "client_id": document["client_id"],
        "title": document["title"],
        "date": document["date"],
        "score": score,
        "excerpt": best,
    }


# ---- the registry entries ----------------------------------------------------------------

register(
    "portfolio",
    "A client's portfolio: holdings valued in CHF, cash, other assets and totals.",
    PortfolioArgs,
    portfolio,
)
register(
    "prices", "Market prices (illustrative) for ticker symbols, with each currency's rate in CHF.", PricesArgs, prices
)
register(
    "swiss_tax",
    "A canton's illustrative tax table (income and wealth tax, inheritance for descendants, pillar 3a); "
    "gives estimates when an income or wealth is passed. Illustrative, not tax advice.",
    SwissTaxArgs,
    swiss_tax,
)
register("calculate", "Exact arithmetic on numbers with + - * / ** % and parentheses.", CalculateArgs, calculate)
register(
    "search_documents",
    "Keyword search over the client documents and house notes; best matches first.",
    SearchArgs,
    search_documents,
)
