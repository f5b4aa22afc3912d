"""fixtures/wealth_cases_heldout.json, the held-out fact-fidelity cases: 18 client problems, 3 per problem kind,
never used to tune the reader, each well formed and labelled under the conventions of fixtures/wealth_cases.json
(the same per-case checks as tests/facts/test_wealth_cases.py, reused from there)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.facts.test_wealth_cases import CASES as MAIN_CASES
from tests.facts.test_wealth_cases import PROBLEM_KINDS, TRAPS
from tests.facts.test_wealth_cases import test_case_is_well_formed as _well_formed
from tests.facts.test_wealth_cases import test_traps_match_the_facts as _traps_match

PATH = Path(__file__).resolve().parents[2] / "fixtures" / "wealth_cases_heldout.json"
DATA = json.loads(PATH.read_text(encoding="utf-8"))
CASES = DATA["cases"]


def test_file_loads_with_a_held_out_about_and_18_cases():
    assert set(DATA) == {"about", "cases"}
    assert isinstance(DATA["about"], str) and "held-out" in DATA["about"].lower()
    assert len(CASES) == 18


def test_three_cases_per_problem_kind_with_prefixed_ids():
    counts = Counter(c["problem_kind"] for c in CASES)
    assert counts == {kind: 3 for kind in PROBLEM_KINDS.values()}, counts
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for case in CASES:
        assert PROBLEM_KINDS[case["id"][:2]] == case["problem_kind"], case["id"]


def test_new_cases_not_copies_of_the_tuned_ones():
    main_ids = {c["id"] for c in MAIN_CASES}
    main_texts = {c["problem_text"] for c in MAIN_CASES}
    assert not main_ids & {c["id"] for c in CASES}
    assert not main_texts & {c["problem_text"] for c in CASES}


def test_every_trap_kind_is_exercised():
    counts = Counter(trap for case in CASES for trap in case["traps"])
    assert set(counts) == TRAPS, TRAPS - set(counts)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_is_well_formed(case):
    """Spans equal problem_text[start:end], text order, units (ISO 4217), place codes (pycountry), closed lists."""
    _well_formed(case)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_traps_match_the_facts(case):
    _traps_match(case)
