"""fixtures/wealth_cases.json, the fact-fidelity benchmark: every case well formed and its hand-labelled facts
consistent with its text, the conventions its `about` states, and the trap counts the benchmark promises."""

import json
import re
from collections import Counter
from pathlib import Path

import pycountry
import pytest

from reasoning.facts.sheet import KINDS, Fact

PATH = Path(__file__).resolve().parents[2] / "fixtures" / "wealth_cases.json"

PROBLEM_KINDS = {
    "it": "investment-thesis",
    "ar": "allocation-rebalance",
    "ts": "tax-optim-sequence",
    "wt": "wealth-transfer",
    "dr": "data-driven-research",
    "ge": "general",
}
FIELDS = {"label", "kind", "value", "unit", "text", "start", "end", "base"}
ACCOUNTS = {"401(k)", "IRA", "Roth IRA", "529 plan", "pillar 3a", "pension fund", "ISA", "SIPP", "brokerage account"}
INSTRUMENTS = {
    "exchange fund", "charitable remainder trust", "donor-advised fund", "collar", "prepaid variable forward",
    "covered calls", "Roth conversion", "ETF", "municipal bonds", "annuity", "family foundation", "trust", "GRAT",
    "life insurance", "mortgage",
}
PLACE_ROLES = {"residence", "property location", "citizenship", "asset location", "place"}
UNITS = {"percent": "%", "age": "years", "year": "", "place": "ISO 3166", "account": "", "instrument": "",
         "goal": "", "constraint": ""}
TRAPS = {"several amounts", "two currencies", "residence unlike assets' place", "listed instruments",
         "numbers in words", "percent with a base", "similar labels"}
# Labels that may repeat within a case: a place's label is its role, a goal's or constraint's is its kind.
REPEATABLE = {"place", "goal", "constraint"}
NUMBER_WORDS = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)\b",
    re.IGNORECASE,
)
MINIMUM_TRAPS = {"two currencies": 20, "residence unlike assets' place": 20, "listed instruments": 25,
                 "numbers in words": 15, "several amounts": 30}

DATA = json.loads(PATH.read_text(encoding="utf-8"))
CASES = DATA["cases"]


def _valid_place(code):
    if "-" in code:
        return pycountry.subdivisions.get(code=code) is not None
    return pycountry.countries.get(alpha_2=code) is not None


def _of(case, *kinds):
    return [f for f in case["facts"] if f["kind"] in kinds]


def test_file_loads_with_about_and_cases():
    assert set(DATA) == {"about", "cases"}
    assert isinstance(DATA["about"], str) and len(DATA["about"].split()) > 50
    assert len(CASES) >= 60


def test_ids_unique_and_prefixed_by_kind():
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for case in CASES:
        match = re.fullmatch(r"(it|ar|ts|wt|dr|ge)-\d\d-[a-z0-9-]+", case["id"])
        assert match, case["id"]
        assert case["problem_kind"] == PROBLEM_KINDS[match[1]], case["id"]


def test_the_three_required_cases_come_first():
    assert [c["id"] for c in CASES[:3]] == ["it-01-ca-concentrated", "wt-01-swiss-german-family",
                                            "ts-01-florida-retiree"]
    first = {f["label"]: f for f in CASES[0]["facts"]}
    assert (first["portfolio"]["value"], first["portfolio"]["unit"]) == (3200000, "USD")
    assert (first["employer stock share"]["value"], first["employer stock share"]["base"]) == (70, "portfolio")
    assert first["cost basis"]["value"] == 400000 and first["salary"]["value"] == 450000
    assert first["age"]["value"] == 58 and first["residence"]["value"] == "US-CA"
    assert {f["value"] for f in _of(CASES[0], "instrument")} == {
        "exchange fund", "charitable remainder trust", "donor-advised fund", "collar"}
    second = CASES[1]
    assert {(f["value"], f["unit"]) for f in _of(second, "amount")} >= {
        (1800000, "CHF"), (650000, "EUR"), (2500000, "EUR")}
    assert {f["value"] for f in _of(second, "place")} >= {"CH-BS", "DE-BY"}
    assert "pillar 3a" in {f["value"] for f in _of(second, "account")}
    assert any("daughter" in f["value"] for f in _of(second, "goal"))
    third = CASES[2]
    assert {f["value"] for f in _of(third, "account")} == {"401(k)", "Roth IRA", "brokerage account"}
    assert (2400000, "USD") in {(f["value"], f["unit"]) for f in _of(third, "amount")}
    assert {f["value"] for f in _of(third, "place")} == {"US-FL"}
    assert 67 in {f["value"] for f in _of(third, "age")}
    assert "IRMAA" not in {f["text"] for f in third["facts"]}


def test_ten_cases_per_kind_at_least():
    counts = Counter(c["problem_kind"] for c in CASES)
    assert set(counts) == set(PROBLEM_KINDS.values())
    assert min(counts.values()) >= 10, counts


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_is_well_formed(case):
    assert set(case) == {"id", "problem_kind", "problem_text", "facts", "traps"}
    text = case["problem_text"]
    assert 40 <= len(text.split()) <= 140
    assert case["facts"]
    amounts = {f["label"] for f in _of(case, "amount")}
    starts = [f["start"] for f in case["facts"]]
    assert starts == sorted(starts), "facts are listed in text order"
    labels = Counter(f["label"] for f in case["facts"] if f["kind"] not in REPEATABLE)
    assert not [label for label, n in labels.items() if n > 1], labels
    places = Counter(f["value"] for f in _of(case, "place"))
    assert all(n == 1 for n in places.values()), f"one place fact per code: {places}"
    for fact in case["facts"]:
        assert set(fact) == FIELDS, fact
        Fact.from_dict(fact)
        kind, value, unit = fact["kind"], fact["value"], fact["unit"]
        assert kind in KINDS, fact
        assert 0 <= fact["start"] < fact["end"] <= len(text), fact
        assert fact["text"] == text[fact["start"]:fact["end"]], fact
        assert fact["text"] == fact["text"].strip(), fact
        assert fact["label"] and fact["label"] == fact["label"].strip(), fact
        if kind == "amount":
            assert re.fullmatch(r"[A-Z]{3}", unit) and pycountry.currencies.get(alpha_3=unit), fact
            assert isinstance(value, int | float) and value > 0, fact
        else:
            assert unit == UNITS[kind], fact
        if kind == "percent":
            assert isinstance(value, int | float) and 0 < value <= 100, fact
        if kind == "age":
            assert isinstance(value, int | float) and 0 < value < 120, fact
        if kind == "year":
            assert isinstance(value, int) and 1900 <= value <= 2100, fact
        if kind == "place":
            assert _valid_place(value), fact
            assert fact["label"] in PLACE_ROLES, fact
        if kind == "account":
            assert value in ACCOUNTS, fact
        if kind == "instrument":
            assert value in INSTRUMENTS, fact
        if kind in ("goal", "constraint"):
            assert value == fact["text"], fact
        if fact["base"]:
            assert kind == "percent", fact
            assert fact["base"] in amounts, f"a percent's base names an amount fact: {fact}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_traps_match_the_facts(case):
    traps = set(case["traps"])
    assert traps <= TRAPS, traps - TRAPS
    assert "a tax of another place nearby in the text" not in traps
    amounts = _of(case, "amount")
    places = _of(case, "place")
    residence = {f["value"] for f in places if f["label"] == "residence"}
    holdings = {f["value"] for f in places if f["label"] in ("asset location", "property location")}
    numeric = _of(case, "amount", "percent", "age", "year")
    checks = {
        "several amounts": len(amounts) >= 2,
        "two currencies": len({f["unit"] for f in amounts}) >= 2,
        "residence unlike assets' place": bool(residence) and bool(holdings - residence),
        "listed instruments": len(_of(case, "account", "instrument")) >= 2,
        "numbers in words": any(NUMBER_WORDS.search(f["text"]) for f in numeric),
        "percent with a base": any(f["base"] for f in _of(case, "percent")),
    }
    for trap, holds in checks.items():
        assert (trap in traps) == holds, f"{trap!r} listed: {trap in traps}, holds: {holds}"
    if "similar labels" in traps:
        assert any(n >= 2 for n in Counter(f["kind"] for f in numeric).values())


def test_trap_counts_across_the_file():
    counts = Counter(trap for case in CASES for trap in case["traps"])
    for trap, minimum in MINIMUM_TRAPS.items():
        assert counts[trap] >= minimum, (trap, counts[trap])
