"""The extraction scorer: kinds and units must agree; numbers within 0.5%, places by code, named things by span."""

import json
from pathlib import Path

from reasoning.facts.extract import extract
from reasoning.facts.fidelity import score_extraction, score_set, same_fact
from reasoning.facts.sheet import Fact

PROBLEM = "Salary $450k, a $3.2M portfolio in Zug and a Roth IRA. She wants to retire early."


def test_a_perfect_extraction_scores_one():
    facts = extract(PROBLEM)
    score = score_extraction(facts, [f.to_dict() for f in facts])
    assert (score["precision"], score["recall"], score["missed"], score["extra"]) == (1.0, 1.0, [], [])
    assert len(score["matched"]) == len(facts)


def test_numbers_within_half_a_percent_and_the_same_unit():
    labelled = Fact("portfolio", "amount", 3_200_000, "USD")
    assert same_fact(Fact("x", "amount", 3_215_000, "USD"), labelled)
    assert not same_fact(Fact("x", "amount", 3_220_000, "USD"), labelled)
    assert not same_fact(Fact("x", "amount", 3_200_000, "CHF"), labelled)
    assert not same_fact(Fact("x", "percent", 3_200_000, "%"), labelled)
    assert same_fact(Fact("x", "year", 0, ""), Fact("y", "year", 0, ""))


def test_places_by_code_and_named_things_by_overlapping_span():
    assert same_fact(Fact("a", "place", "CH-ZG", "ISO 3166"), Fact("b", "place", "CH-ZG", "ISO 3166"))
    assert not same_fact(Fact("a", "place", "CH", "ISO 3166"), Fact("b", "place", "CH-ZG", "ISO 3166"))
    goal = Fact("goal", "goal", "retire early", text="retire early", start=10, end=22)
    assert same_fact(Fact("goal", "goal", "to retire", start=5, end=14), goal)
    assert not same_fact(Fact("goal", "goal", "retire early", start=22, end=30), goal)
    assert same_fact(Fact("ira", "account", "Roth IRA"), Fact("Roth IRA", "account", "roth ira", start=3, end=11))


def test_missed_and_extra_are_counted_once_each():
    labelled = [Fact("gift", "amount", 50_000, "USD"), Fact("gift 2", "amount", 50_000, "USD")]
    extracted = [Fact("gift", "amount", 50_000, "USD"), Fact("age", "age", 58, "years")]
    score = score_extraction(extracted, labelled)
    assert (score["precision"], score["recall"]) == (0.5, 0.5)
    assert [f.label for f in score["missed"]] == ["gift 2"] and [f.label for f in score["extra"]] == ["age"]
    assert score_extraction([], []) == {"precision": 1.0, "recall": 1.0, "matched": [], "missed": [], "extra": []}


def test_the_benchmark_cases_meet_the_goal():
    """Scored in the set's own terms (fidelity.legacy_view): it labels no people, limits, horizons or roles."""
    path = Path(__file__).resolve().parents[2] / "fixtures" / "wealth_cases.json"
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    every = score_set(cases, extract, legacy=True)["all"]
    assert every["recall"] >= 0.95 and every["precision"] >= 0.98


def test_a_percents_base_matches_by_the_amount_it_names_not_only_by_its_words():
    from reasoning.facts.fidelity import matches_strictly

    read = [Fact("vermögen", "amount", 27e6, "CHF"), Fact("grants", "amount", 9e5, "CHF")]
    labelled = [Fact("assets", "amount", 27e6, "CHF"), Fact("grants", "amount", 9e5, "CHF")]
    want = Fact("equities target", "percent", 35, "%", base="assets", role="target")
    same_whole = Fact("equities target", "percent", 35, "%", base="vermögen", role="target")
    other_amount = Fact("equities target", "percent", 35, "%", base="grants", role="target")
    assert matches_strictly(same_whole, want, amounts=(read, labelled))
    assert not matches_strictly(other_amount, want, amounts=(read, labelled))
    assert not matches_strictly(same_whole, want)  # without the amounts, words alone decide
