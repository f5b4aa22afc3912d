"""offline/noisy on wealth problems: the exact reply, then a guessed judgement or a misstated figure at rate ε, each
on its own; the contract's shape never changes."""

from random import Random

from reasoning.llm.noise import disturb, misstate
from reasoning.llm.offline_answers import answer
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


def test_each_thought_misstates_a_figure_on_its_own():
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
