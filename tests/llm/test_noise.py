"""offline/noisy on wealth problems: the exact reply, then a guessed judgement, or a step or answer that slips in one
of the ways real models do, at rate ε, each chance on its own; the contract's shape never changes. Over the whole
fixture, against the checker: tests/llm/test_offline_facts.py."""

import re
from random import Random

import pytest

from reasoning.facts.sheet import Fact, render_sheet
from reasoning.llm.offline import noise
from reasoning.llm.offline.noise import disturb, misstate, slip
from reasoning.llm.offline.answers import answer
from reasoning.llm.offline.facts import read_case
from reasoning.prompts import format_path, parse, render

PROBLEM = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target for a Geneva family."


def rate(events):
    events = list(events)
    return sum(events) / len(events)


def test_at_noise_zero_the_reply_is_the_exact_one():
    reply = {"score": 0.8, "reason": "fine"}
    assert disturb(reply, Random(1), 0.0) is reply


def test_scores_are_guessed_at_the_noise_rate():
    guessed = [disturb({"score": 0.8, "reason": "r"}, Random(i), 0.3)["score"] != 0.8 for i in range(2000)]
    assert 0.25 < rate(guessed) < 0.35


def test_each_thought_slips_on_its_own():
    thoughts = {"thoughts": [{"thought": f"Sell CHF 1,440,000 of equities in step {i}."} for i in range(4)]}
    changed = []
    for i in range(500):
        after = disturb(thoughts, Random(i), 0.3)["thoughts"]
        changed += [a["thought"] != b["thought"] for a, b in zip(after, thoughts["thoughts"])]
    assert 0.25 < rate(changed) < 0.35


def test_a_misstated_figure_is_a_different_number_and_list_numbers_stay():
    text = "1. Sell CHF 1,440,000 now.\n2. Keep 12 months of spending."
    for seed in range(50):
        wrong = misstate(text, Random(seed))
        assert wrong != text and wrong.startswith("1. Sell") and "\n2. Keep" in wrong


def test_every_wealth_contract_still_parses_at_full_noise():
    fields = {"problem": PROBLEM, "kind": "allocation-rebalance", "rubric": "- Soundness (weight 1): right."}
    cases = {
        "tot.propose": {"path": format_path([]), "k": 3, "step": 1, "depth": 4, "proposed": "(none)"},
        "tot.evaluate": {"path": format_path([]), "thought": "Sell CHF 1.44m of equities."},
        "tot.value": {"path": format_path([]), "thought": "Sell CHF 1.44m of equities."},
        "tot.synthesize": {"path": format_path(["Sell CHF 1.44m of equities."])},
    }
    for contract, extra in cases.items():
        for seed in range(5):
            parse(contract, answer(render(contract, **fields, **extra), seed, 1.0))


# ---- each way to slip, on the Californian's sheet ----------------------------------------------------------------

CASE = read_case(
    render_sheet(
        [
            Fact("residence", "place", "US-CA", "ISO 3166"),
            Fact("employer stock share", "percent", 70, "%", base="portfolio"),
            Fact("portfolio", "amount", 3_200_000, "USD"),
            Fact("salary", "amount", 450_000, "USD"),
            Fact("apartment in Munich", "amount", 650_000, "EUR"),
            Fact("exchange fund", "instrument", "exchange fund"),
            Fact("collar", "instrument", "collar"),
        ]
    )
)
STEP = (
    "Sell the employer stock (70% of the USD 3.2M portfolio = USD 2.24M) in three stages; keep the salary (USD 450k)."
)
ANSWER = "Recommendation: diversify.\n- exchange fund: swaps the shares.\n- collar: sets a floor.\n\nMain risk: a fall."


def made(kind, text=STEP, answer=False):
    """The text with a slip of one kind, on the first seed that draws it."""
    for seed in range(200):
        log = []
        wrong = slip(text, Random(seed), CASE, answer, lambda *s: log.append(noise.Slip(*s)))
        if log and log[0].kind == kind:
            return wrong
    raise AssertionError(f"no {kind} slip drawn")


def test_a_wrong_label_puts_another_facts_figure_where_one_belongs():
    wrong = made("label")
    assert wrong != STEP and any(f in wrong for f in ("USD 3.2M", "USD 450k", "EUR 650k"))


def test_a_dropped_scale_keeps_the_figure_without_its_scale():
    assert re.search(r"USD (?:3\.2|2\.24|450)(?![\dMk.])", made("scale"))


def test_a_wrong_base_applies_the_percent_to_another_amount():
    wrong = made("base")
    assert re.search(r"70% of the (?:USD 450k salary = USD 315k|EUR 650k apartment in Munich = EUR 455k)", wrong)


def test_a_jurisdiction_slip_is_never_the_clients_own_place():
    for seed in range(50):
        wrong = slip(STEP, Random(seed), CASE, False)
        assert "California" not in wrong.replace(STEP, "")
    assert all(rule[0] != "US-CA" for rule in noise._foreign(CASE))


def test_mixed_currencies_combine_the_two_with_no_rate():
    combined = re.search(r"(USD|EUR) [\d.,]+[Mk]? [/+] (USD|EUR) [\d.,]+[Mk]?", made("currency"))
    assert combined and combined[1] != combined[2]


def test_an_instrument_left_out_is_only_made_in_an_answer_and_leaves_no_mention():
    with pytest.raises(AssertionError):
        made("coverage", STEP)  # a step is never checked for coverage: no such slip in one
    wrong = made("coverage", ANSWER, answer=True)
    assert ("exchange fund" in wrong) != ("collar" in wrong)


def test_the_kinds_are_drawn_with_equal_odds_among_those_a_text_allows():
    counts = {}
    for seed in range(3000):
        log = []
        slip(STEP, Random(seed), CASE, False, lambda *s: log.append(s[0]))
        counts[log[0]] = counts.get(log[0], 0) + 1
    assert set(counts) == {"figure", "label", "scale", "base", "jurisdiction", "currency"}
    assert max(counts.values()) < 1.25 * min(counts.values())
