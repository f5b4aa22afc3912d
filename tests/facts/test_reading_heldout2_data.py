"""fixtures/fact_reading_heldout2.json, issue 30's second held-out reading set (written blind after the reader was
tuned): valid JSON with its conventions stated, every case well formed by the same rules as the first two sets
(tests/facts/test_reading_sets.py, reused here), its numeric spans whole quantities, and the set new and apart
from every older set (no case id, no sentence shared)."""

import re
from collections import Counter

import pytest

from tests.facts import test_reading_sets as sets

HELDOUT2 = sets.FIXTURES / "fact_reading_heldout2.json"
OTHERS = [sets.DEV, sets.HELDOUT, *sorted(sets.FIXTURES.glob("wealth_cases*.json"))]
KINDS_WANTED = {"swiss-pension": 2, "us-estate": 2, "foundation-rebalance": 1, "endowment-rebalance": 1,
                "investment-thesis": 2, "tax-sequence": 3, "wealth-transfer": 2, "family-business": 1}


def _cases():
    return sets._load(HELDOUT2)["cases"]


def test_file_is_json_with_conventions_and_the_planned_mix():
    data = sets._load(HELDOUT2)
    assert set(data) == {"about", "cases"}
    assert len(data["about"].split()) > 300, "the about states the labelling conventions"
    assert "written blind" in data["about"] and "fact_reading_cases.json" in data["about"]
    cases = data["cases"]
    assert len(cases) == 14
    assert len({c["id"] for c in cases}) == len(cases)
    assert Counter(c["problem_kind"] for c in cases) == KINDS_WANTED
    assert {c["style"] for c in cases} == sets.STYLES


@pytest.mark.parametrize("case", _cases(), ids=[c["id"] for c in _cases()])
def test_case_is_well_formed(case):
    sets.test_case_is_well_formed(HELDOUT2.name, case)


@pytest.mark.parametrize("case", _cases(), ids=[c["id"] for c in _cases()])
def test_numeric_spans_are_whole_quantities(case):
    text = case["problem_text"]
    for fact in case["facts"]:
        if fact["kind"] in sets.NUMERIC:
            before, after = text[fact["start"] - 1:fact["start"]], text[fact["end"]:fact["end"] + 1]
            assert not re.fullmatch(r"[\w.,']", before), fact
            assert not re.fullmatch(r"\w", after), fact


def test_case_is_dense():
    for case in _cases():
        kinds = {f["kind"] for f in case["facts"]}
        assert len(case["facts"]) >= 15, case["id"]
        assert {"amount", "place"} <= kinds or {"amount", "percent"} <= kinds, case["id"]


def test_set_is_new_and_apart():
    mine = set().union(*(sets._sentences(c["problem_text"]) for c in _cases()))
    ids = {c["id"] for c in _cases()}
    for path in OTHERS:
        theirs = sets._load(path)["cases"]
        assert not ids & {c["id"] for c in theirs}, path.name
        shared = mine & set().union(*(sets._sentences(c["problem_text"]) for c in theirs))
        assert not shared, (path.name, len(shared))
