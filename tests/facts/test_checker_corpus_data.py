"""fixtures/checker_corpus.json (dev) and fixtures/checker_corpus_heldout.json (held out): the hand-labelled sentences
the fact checker is measured on (issue 30, section 2). This test checks the data only, never the checker: every case
well formed against the fact schema, every sentence tied to a case, one slip kind at most, the balance of right and
wrong, and a note that names the wrong span and the right figure (slips) or shows the arithmetic (right sentences)."""

import json
import math
import re
from collections import Counter
from pathlib import Path

import pycountry
import pytest

from reasoning.facts.sheet import KINDS, ROLES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEV = FIXTURES / "checker_corpus.json"
HELDOUT = FIXTURES / "checker_corpus_heldout.json"
HELDOUT3 = FIXTURES / "checker_corpus_heldout3.json"  # the third blind corpus (2026-12-07), checked by the same rules
HELDOUT4 = FIXTURES / "checker_corpus_heldout4.json"  # and the fourth
HELDOUT5 = FIXTURES / "checker_corpus_heldout5.json"  # and the fifth
HELDOUT6 = FIXTURES / "checker_corpus_heldout6.json"  # and the sixth
HELDOUT7 = FIXTURES / "checker_corpus_heldout7.json"  # and the seventh
SLIPS = (
    "product", "fraction", "remainder", "inverted_rate", "wrong_base", "mislabel", "dropped_scale", "mixed_currency",
    "jurisdiction", "jurisdiction_rate", "constraint", "wrong_figure",
)  # fmt: skip
FACT_FIELDS = {"label", "kind", "value", "unit", "base", "role", "text"}
SENTENCE_FIELDS = {"id", "case", "text", "slip", "final", "note"}
CURRENCIES = {"CHF", "EUR", "USD", "GBP", "CAD"}  # a Seattle foundation pays a grant in Vancouver
LIMIT_UNITS = {"months", "years", "%", "shares"} | CURRENCIES  # "at most 20,000 shares a year"
MULTIPLE = re.compile(r"^x [A-Za-z]+$")  # a limit as a multiple: net debt at most 2.5 "x EBITDA"
HORIZON_UNITS = {"months", "years", "year", "age"}
SPAN = re.compile(r'^span "(?P<span>.+?)" is wrong; right: .+')
RATE = re.compile(r"^(?P<a>[A-Z]{3})/(?P<b>[A-Z]{3})$")


def load(path):
    return json.loads(path.read_text())


CORPORA = [
    pytest.param(DEV, id="dev"), pytest.param(HELDOUT, id="heldout"), pytest.param(HELDOUT3, id="heldout3"),
    pytest.param(HELDOUT4, id="heldout4"), pytest.param(HELDOUT5, id="heldout5"), pytest.param(HELDOUT6, id="heldout6"),
    pytest.param(HELDOUT7, id="heldout7"),
]


def present(path):
    if not path.exists():
        pytest.skip(f"{path.name} not written yet")
    return load(path)


@pytest.mark.parametrize("path", CORPORA)
def test_it_states_its_conventions(path):
    data = present(path)
    assert set(data) == {"about", "cases", "sentences"}
    assert len(data["about"]) > 200


@pytest.mark.parametrize("path", CORPORA)
def test_each_fact_follows_the_schema(path):
    for case in present(path)["cases"]:
        assert case["id"] and case["jurisdiction_note"] and case["problem_text"]
        for pair, rate in case.get("rates", {}).items():
            assert RATE.match(pair) and rate > 0, (case["id"], pair)
        for fact in case["facts"]:
            where = (case["id"], fact["label"])
            assert set(fact) == FACT_FIELDS, where
            assert fact["kind"] in KINDS, where
            assert fact["role"] in ROLES.get(fact["kind"], ("",)), where
            assert fact["text"] in case["problem_text"], where
            assert fact["label"] not in ("amount", "percent"), where
            if fact["kind"] == "amount":
                assert fact["unit"] in CURRENCIES and fact["value"] > 0, where
            if fact["kind"] == "percent":
                assert fact["unit"] == "%" and fact["base"], where
                labels = {f["label"] for f in case["facts"]}
                assert fact["base"] in labels or fact["base"] in case["problem_text"], where
            if fact["kind"] == "limit":
                assert (fact["unit"] in LIMIT_UNITS or MULTIPLE.match(fact["unit"])) and fact["base"], where
            if fact["kind"] == "horizon":
                assert fact["unit"] in HORIZON_UNITS, where
            if fact["kind"] in ("person", "age"):
                assert fact["unit"] == ("people" if fact["kind"] == "person" else "years"), where
            if fact["kind"] == "place":
                assert fact["unit"] == "ISO 3166", where
                code = fact["value"]
                assert pycountry.subdivisions.get(code=code) or pycountry.countries.get(alpha_2=code), where


@pytest.mark.parametrize("path", CORPORA)
def test_a_foundation_or_college_has_no_citizenship_or_age(path):
    for case in present(path)["cases"]:
        kinds = {(f["kind"], f["role"]) for f in case["facts"]}
        if ("place", "seat") in kinds:
            assert ("place", "citizenship") not in kinds and not any(k == "age" for k, _ in kinds), case["id"]


@pytest.mark.parametrize("path", CORPORA)
def test_each_sentence_belongs_to_a_case_and_has_at_most_one_slip(path):
    data = present(path)
    cases = {c["id"] for c in data["cases"]}
    ids = [s["id"] for s in data["sentences"]]
    assert len(ids) == len(set(ids))
    for sentence in data["sentences"]:
        assert set(sentence) == SENTENCE_FIELDS, sentence["id"]
        assert sentence["case"] in cases, sentence["id"]
        assert sentence["slip"] is None or sentence["slip"] in SLIPS, sentence["id"]
        assert sentence["final"] is False, sentence["id"]
        assert sentence["text"].strip(), sentence["id"]


@pytest.mark.parametrize("path", CORPORA)
def test_each_note_names_the_wrong_span_or_shows_why_it_is_right(path):
    for sentence in present(path)["sentences"]:
        note = sentence["note"]
        if sentence["slip"]:
            match = SPAN.match(note)
            assert match, sentence["id"]
            assert match["span"] in sentence["text"], sentence["id"]
        else:
            assert len(note) > 15 and not note.startswith("span "), sentence["id"]


@pytest.mark.parametrize("path", CORPORA)
def test_right_sentences_with_figures_show_their_arithmetic(path):
    """A right sentence whose figures are derived carries its checked steps ('expr = exact ~ written')."""
    data = present(path)
    derived = [s for s in data["sentences"] if s["slip"] is None and "Arithmetic:" in s["note"]]
    for sentence in derived:
        steps = sentence["note"].split("Arithmetic:", 1)[1]
        for step in steps.strip(" .").split("; "):
            expr, rest = step.split(" = ", 1)
            exact = float(rest.split(" ~ ")[0].replace(",", ""))  # as written: a figure or a range ("35500-41500")
            found = eval(expr, {"__builtins__": {}, "ceil": math.ceil})  # "years under the cap": ceil(720000/300000)
            assert found == pytest.approx(exact, abs=1e-3), (sentence["id"], step)
    assert len(derived) >= len([s for s in data["sentences"] if s["slip"] is None]) * 0.6


def test_the_dev_corpus_is_large_and_balanced():
    data = load(DEV)
    sentences = data["sentences"]
    slips = Counter(s["slip"] for s in sentences if s["slip"])
    assert len(data["cases"]) >= 14 and len(sentences) >= 240
    assert sum(1 for s in sentences if s["slip"] is None) >= 0.45 * len(sentences)
    assert {kind: n for kind, n in slips.items() if n < 10} == {}
    assert set(slips) == set(SLIPS)
    for case in data["cases"]:
        assert any(s["case"] == case["id"] and s["slip"] is None for s in sentences), case["id"]


def test_the_heldout_corpus_is_balanced_and_shares_nothing_with_dev():
    heldout = present(HELDOUT)
    dev = load(DEV)
    sentences = heldout["sentences"]
    assert len(heldout["cases"]) >= 4 and len(sentences) >= 64
    assert sum(1 for s in sentences if s["slip"] is None) >= 0.45 * len(sentences)
    assert {s["slip"] for s in sentences if s["slip"]} == set(SLIPS)
    assert not {c["id"] for c in heldout["cases"]} & {c["id"] for c in dev["cases"]}
    assert not {s["text"] for s in sentences} & {s["text"] for s in dev["sentences"]}
