"""fixtures/fact_reading_cases.json (dev) and fixtures/fact_reading_heldout.json (held out), the reader's labelled sets
for issue 30: every file valid JSON with its conventions stated, every fact well formed against the schema of
reasoning/facts/sheet.py (kinds, roles, units), its text exactly its span of the problem, and the two sets new and
apart (no case of the older wealth sets, no sentence shared between dev and held out)."""

import json
import re
from collections import Counter
from pathlib import Path

import pycountry
import pytest

from reasoning.facts.sheet import KINDS, ROLES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEV = FIXTURES / "fact_reading_cases.json"
HELDOUT = FIXTURES / "fact_reading_heldout.json"
HELDOUT4 = FIXTURES / "fact_reading_heldout4.json"  # the fourth blind set (2026-12-07), by the same rules
# name -> (path, the fewest cases, the fewest words its "about" states its conventions in)
HELDOUT5 = FIXTURES / "fact_reading_heldout5.json"  # the fifth (2026-12-07, later)
SETS = {
    DEV.name: (DEV, 44, 300), HELDOUT.name: (HELDOUT, 12, 300), HELDOUT4.name: (HELDOUT4, 24, 100),
    HELDOUT5.name: (HELDOUT5, 16, 120),
}  # fmt: skip

PREFIXES = {
    "sp": "swiss-pension", "ue": "us-estate", "fr": "foundation-rebalance", "en": "endowment-rebalance",
    "it": "investment-thesis", "ts": "tax-sequence", "wt": "wealth-transfer", "fb": "family-business",
}
STYLES = {"terse", "narrative", "bullets", "words", "swiss-german", "us-format"}
FIELDS = {"label", "kind", "value", "unit", "base", "role", "text", "start", "end"}
CURRENCIES = {"CHF", "USD", "EUR", "GBP"}
UNITS = {
    "percent": {"%"}, "age": {"years"}, "person": {"people"}, "place": {"ISO 3166"}, "amount": CURRENCIES,
    "limit": {"months", "years", "%"} | CURRENCIES, "horizon": {"months", "years", "year", "age"},
    "year": {""}, "account": {""}, "instrument": {""}, "goal": {""}, "constraint": {""},
}
NUMERIC = {"amount", "percent", "age", "year", "person", "limit", "horizon"}
REPEATABLE = {"place", "goal", "constraint"}


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _cases():
    return [(name, case) for name, (path, *_) in SETS.items() for case in _load(path)["cases"]]


def _sentences(text):
    return {s.strip().lower() for s in re.split(r"(?<=[.;?!])\s+|\n", text) if len(s.strip()) > 25}


@pytest.mark.parametrize("name", SETS)
def test_file_is_json_with_conventions_and_enough_cases(name):
    path, minimum, words = SETS[name]
    data = _load(path)
    assert set(data) == {"about", "cases"}
    assert len(data["about"].split()) > words, "the about states the labelling conventions"
    assert len(data["cases"]) >= minimum
    ids = [c["id"] for c in data["cases"]]
    assert len(ids) == len(set(ids))
    kinds = Counter(c["problem_kind"] for c in data["cases"])
    assert set(kinds) == set(PREFIXES.values()), kinds
    styles = Counter(c["style"] for c in data["cases"])
    assert set(styles) == STYLES, styles


@pytest.mark.parametrize(("name", "case"), _cases(), ids=[f"{n}:{c['id']}" for n, c in _cases()])
def test_case_is_well_formed(name, case):
    assert set(case) == {"id", "problem_kind", "style", "problem_text", "facts"}
    prefix = re.fullmatch(r"([a-z]{2})-\d\d-[a-z0-9-]+", case["id"])
    assert prefix and PREFIXES[prefix[1]] == case["problem_kind"], case["id"]
    text = case["problem_text"]
    assert case["facts"]
    starts = [f["start"] for f in case["facts"]]
    assert starts == sorted(starts), "facts are listed in text order"
    labels = Counter((f["kind"], f["label"]) for f in case["facts"] if f["kind"] not in REPEATABLE)
    assert not [label for label, n in labels.items() if n > 1], labels
    places = Counter((f["value"], f["role"]) for f in case["facts"] if f["kind"] == "place")
    assert all(n == 1 for n in places.values()), places
    for fact in case["facts"]:
        assert set(fact) == FIELDS, fact
        assert fact["kind"] in KINDS, fact
        assert text[fact["start"]:fact["end"]] == fact["text"] and fact["text"].strip() == fact["text"], fact
        assert fact["role"] in ROLES.get(fact["kind"], ("",)), fact
        multiple = fact["kind"] == "limit" and re.fullmatch(r"x [A-Za-z]+", fact["unit"])  # 2.5 "x EBITDA"
        assert fact["unit"] in UNITS[fact["kind"]] or multiple, fact
        assert fact["label"] and fact["label"] not in {"amount", "percent"}, fact
        if fact["kind"] in NUMERIC:
            assert isinstance(fact["value"], (int, float)) and not isinstance(fact["value"], bool), fact
        else:
            assert isinstance(fact["value"], str) and fact["value"], fact
        if fact["kind"] in {"goal", "constraint"}:
            assert fact["value"] == fact["text"] and fact["label"] == fact["kind"], fact
        if fact["kind"] == "place":
            code = fact["value"]
            found = pycountry.subdivisions.get(code=code) if "-" in code else pycountry.countries.get(alpha_2=code)
            assert found is not None and fact["label"] == fact["role"], fact
        if fact["kind"] == "person":
            assert fact["value"] >= 1, fact
        if fact["kind"] == "limit":
            assert fact["base"], "a limit says what it applies to"
    seats = {f["start"] for f in case["facts"] if f["kind"] == "place" and f["role"] in {"seat", "domicile"}}
    assert not [f for f in case["facts"] if f["kind"] == "place" and f["role"] == "citizenship" and f["start"] in seats]


def test_sets_are_new_and_apart():
    old = set()
    for path in FIXTURES.glob("wealth_cases*.json"):
        for case in _load(path)["cases"]:
            old |= _sentences(case["problem_text"])
    dev = set().union(*(_sentences(c["problem_text"]) for c in _load(DEV)["cases"]))
    held = set().union(*(_sentences(c["problem_text"]) for c in _load(HELDOUT)["cases"]))
    assert not dev & held, dev & held
    assert not (dev | held) & old
    assert not {c["id"] for c in _load(DEV)["cases"]} & {c["id"] for c in _load(HELDOUT)["cases"]}
