"""The offline model's text generator: every contract parses, replies are deterministic and specific to the client's
fact sheet (Game of 24: tests/llm/test_puzzle.py; the sheet against the fact checker: test_offline_facts.py). No Django
and no network needed."""

import json
from pathlib import Path

import pytest

from reasoning.facts.quantities import format_amount
from reasoning.facts.sheet import EMPTY, Fact, render_sheet
from reasoning.llm.offline.answers import answer, facts, read_prompt
from reasoning.prompts import format_path, parse, render

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = {r["problem_kind"]: r for r in json.loads((ROOT / "fixtures" / "rubrics.json").read_text())}
PROBLEMS = {
    "investment-thesis": "A 62-year-old entrepreneur in Zug holds CHF 2.4m, 35% of it in Nestlé shares. "
    "She wants a thesis for investing USD 500,000 in global healthcare over a 10-year horizon.",
    "allocation-rebalance": "A couple in Geneva has EUR 1.2 million that drifted to 72% equities against a 60% target; "
    "they withdraw EUR 40,000 a year.",
    "tax-optim-sequence": "Married couple in Vaud, he is aged 58, income CHF 320,000, pension buy-in room CHF 450,000, "
    "two 3a accounts; plan buy-ins and withdrawals before retirement at 65.",
    "wealth-transfer": "The founder, 70, owns 80% of Keller Metallbau AG, valued at CHF 18m, and wants to pass it to "
    "two children in Lucerne; only one works in the firm.",
    "data-driven-research": "Should the client add $3m to Roche shares? Check valuation against peers and drawdowns.",
    "general": "A 45-year-old client has CHF 900,000 in savings in Zurich and asks what to do with it.",
}
# Each problem's facts as the sheet gives them: the offline model writes from these, never from the problem text.
FACTS = {
    "investment-thesis": [
        Fact("age", "age", 62, "years"),
        Fact("residence", "place", "CH-ZG", "ISO 3166"),
        Fact("portfolio", "amount", 2_400_000, "CHF"),
        Fact("Nestlé share", "percent", 35, "%", base="portfolio"),
        Fact("investment", "amount", 500_000, "USD"),
    ],
    "allocation-rebalance": [
        Fact("residence", "place", "CH-GE", "ISO 3166"),
        Fact("portfolio", "amount", 1_200_000, "EUR"),
        Fact("equity weight now", "percent", 72, "%"),
        Fact("equity target", "percent", 60, "%"),
        Fact("annual withdrawal", "amount", 40_000, "EUR"),
    ],
    "tax-optim-sequence": [
        Fact("residence", "place", "CH-VD", "ISO 3166"),
        Fact("husband's age", "age", 58, "years"),
        Fact("income", "amount", 320_000, "CHF"),
        Fact("pension buy-in room", "amount", 450_000, "CHF"),
        Fact("pillar 3a", "account", "pillar 3a"),
    ],
    "wealth-transfer": [
        Fact("age", "age", 70, "years"),
        Fact("ownership share", "percent", 80, "%", base="Keller Metallbau AG value"),
        Fact("Keller Metallbau AG value", "amount", 18_000_000, "CHF"),
        Fact("residence", "place", "CH-LU", "ISO 3166"),
    ],
    "data-driven-research": [Fact("investment", "amount", 3_000_000, "USD")],
    "general": [
        Fact("age", "age", 45, "years"),
        Fact("savings", "amount", 900_000, "CHF"),
        Fact("residence", "place", "CH-ZH", "ISO 3166"),
    ],
}
KINDS = list(PROBLEMS)


def rubric_text(kind):
    """The rubric as Rubric.as_prompt() writes it for the evaluator."""
    rubric = RUBRICS.get(kind, RUBRICS["general"])
    lines = [f"{rubric['name']}: {rubric['description']}"]
    lines += [f"- {c['name']} (weight {c['weight']:g}): {c['description']}" for c in rubric["criteria"]]
    return "\n".join(lines)


def sheet(problem):
    """The fact sheet of one of PROBLEMS (none for any other problem)."""
    kind = next((k for k, text in PROBLEMS.items() if text == problem), None)
    return render_sheet(FACTS[kind]) if kind else EMPTY


def propose_prompt(problem, kind="general", steps=(), k=3, step=None, depth=4):
    step = step or len(steps) + 1
    return render(
        "tot.propose",
        problem=problem,
        kind=kind,
        rubric=rubric_text(kind),
        facts=sheet(problem),
        path=format_path(list(steps)),
        k=k,
        step=step,
        depth=depth,
    )


def evaluate_prompt(problem, thought, kind="general", steps=()):
    return render(
        "tot.evaluate",
        problem=problem,
        kind=kind,
        rubric=rubric_text(kind),
        facts=sheet(problem),
        path=format_path(list(steps)),
        thought=thought,
    )


def synthesize_prompt(problem, steps, kind="general"):
    return render(
        "tot.synthesize",
        problem=problem,
        kind=kind,
        rubric=rubric_text(kind),
        facts=sheet(problem),
        path=format_path(list(steps)),
        findings="(none)",
    )


def propose(problem, kind="general", steps=(), k=3, seed=7, **fields):
    parsed, how = parse("tot.propose", answer(propose_prompt(problem, kind, steps, k, **fields), seed))
    assert how == "strict"
    return [t.model_dump() for t in parsed.thoughts]


def evaluate(problem, thought, kind="general", steps=(), seed=7):
    parsed, how = parse("tot.evaluate", answer(evaluate_prompt(problem, thought, kind, steps), seed))
    assert how == "strict"
    return parsed


def synthesize(problem, steps, kind="general", seed=7):
    parsed, how = parse("tot.synthesize", answer(synthesize_prompt(problem, steps, kind), seed))
    assert how == "strict"
    return parsed.answer


def walk(problem, kind, depth=4, seed=7):
    """A ToT line of reasoning that always keeps the first proposal."""
    steps = []
    for step in range(1, depth + 1):
        steps.append(propose(problem, kind, steps, step=step, depth=depth, seed=seed)[0]["thought"])
    return steps


# Contracts and determinism


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 3, 5])
def test_propose_returns_exactly_k_thoughts_with_a_summary(kind, k):
    thoughts = propose(PROBLEMS[kind], kind, k=k)
    assert len(thoughts) == k
    assert all(t["thought"].strip() and t["state"]["summary"].strip() for t in thoughts)


def test_k_is_clamped_to_one_to_eight():
    assert len(propose(PROBLEMS["general"], k=20)) == 8
    assert len(propose(PROBLEMS["general"], k=0)) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_every_contract_parses_strictly_along_a_whole_line(kind):
    steps = walk(PROBLEMS[kind], kind)
    for i, thought in enumerate(steps):
        assert 0 <= evaluate(PROBLEMS[kind], thought, kind, steps[:i]).score <= 1
    assert synthesize(PROBLEMS[kind], steps, kind)


def test_the_same_prompt_and_seed_give_the_same_bytes():
    for prompt in (
        propose_prompt(PROBLEMS["general"]),
        evaluate_prompt(PROBLEMS["general"], "Hold cash."),
        synthesize_prompt(PROBLEMS["general"], ["Hold cash."]),
    ):
        assert answer(prompt, 3) == answer(prompt, 3)


def test_another_seed_changes_the_output():
    prompt = propose_prompt(PROBLEMS["investment-thesis"], "investment-thesis", k=3)
    assert len({answer(prompt, seed) for seed in range(6)}) > 1
    prompt = evaluate_prompt(PROBLEMS["general"], "Keep CHF 50,000 as a cash reserve.")
    assert len({json.loads(answer(prompt, seed))["score"] for seed in range(6)}) > 1


def test_a_retry_conversation_still_reads_the_first_sections():
    prompt = propose_prompt(PROBLEMS["general"], k=2)
    retry = prompt + "\n\nassistant: oops\n\nuser: Your reply was not valid JSON. Try again.\n### K\n7"
    assert len(json.loads(answer(retry, 1))["thoughts"]) == 2


# Content quality


def figures(kind):
    """The sheet's amounts as the offline model writes them ("CHF 2.4M")."""
    return [format_amount(f.value, f.unit) for f in FACTS[kind] if f.kind == "amount"]


@pytest.mark.parametrize("kind", ["investment-thesis", "general"])
def test_proposals_reuse_an_amount_from_the_sheet(kind):
    thoughts = propose(PROBLEMS[kind], kind, k=3, step=1)
    assert any(a in t["thought"] for t in thoughts for a in figures(kind))


@pytest.mark.parametrize("kind", KINDS)
def test_the_synthesis_states_every_amount_on_the_sheet_with_its_label(kind):
    text = synthesize(PROBLEMS[kind], walk(PROBLEMS[kind], kind), kind)
    for fact in (f for f in FACTS[kind] if f.kind == "amount"):
        shown = format_amount(fact.value, fact.unit)  # listed, or named as the base of a figure ("of the CHF 2.4M portfolio")
        assert f"{fact.label}: {shown}" in text or f"{shown} {fact.label}" in text


def words(kind, problem=None):
    return facts(read_prompt(propose_prompt(problem or PROBLEMS[kind], kind)))


def test_derived_numbers_come_from_the_sheet_with_their_arithmetic():
    f = words("investment-thesis")
    # The sum in scope is the holding the sheet implies (35% of the portfolio), its working shown, and a third of it.
    assert f["amount"] == "Nestlé (35% of the CHF 2.4M portfolio = CHF 840k)"
    assert f["tranche"] == " (35% of the CHF 2.4M portfolio = CHF 840k; CHF 840k / 3 = CHF 280k each)"
    assert f["client"] == "the 62-year-old client" and f["place"] == "Zug"
    assert words("allocation-rebalance")["band"] == "5 points either side of the equity target (60%)"


def test_a_percent_is_applied_to_its_own_base_only():
    # The 35% is of the portfolio (CHF 2.4M), never of the USD 500k investment.
    f = words("investment-thesis")
    written = " ".join(str(value) for value in f.values())
    assert "USD 175k" not in written and "35% of the USD" not in written
    # The rebalance's 72% and 60% have no base on the sheet: compared in points, never applied to an amount.
    text = synthesize(PROBLEMS["allocation-rebalance"], [], "allocation-rebalance")
    assert "equity weight now 72% against the equity target 60%: 12 points over" in text
    assert "72% of" not in text and "60% of" not in text


def test_the_problem_text_is_never_read_for_facts():
    problem = "A 45-year-old client has CHF 900,000 in savings in Zurich and USD 250,000 in Geneva."
    f = words("general", problem)
    assert f["amount"] == "the investable assets" and f["place"] == "the client's jurisdiction"
    assert f["client"] == "the client"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_siblings_are_real_alternatives(kind, step):
    steps = walk(PROBLEMS[kind], kind)[: step - 1]
    thoughts = [t["thought"] for t in propose(PROBLEMS[kind], kind, steps, k=5, step=step)]
    titles = [t.split(":")[0] for t in thoughts]
    assert len(set(titles)) == 5
    for i, a in enumerate(thoughts):
        for b in thoughts[i + 1 :]:
            words_a, words_b = set(a.lower().split()), set(b.lower().split())
            assert len(words_a & words_b) / len(words_a | words_b) < 0.5, (a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_later_steps_cite_the_previous_step_and_do_not_repeat_it(kind):
    steps = walk(PROBLEMS[kind], kind)
    taken = [s.split(":")[0] for s in steps]
    assert len(set(taken)) == len(taken)
    for i in range(1, len(steps)):
        assert f"Builds on step {i} ({taken[i - 1]})" in steps[i]


@pytest.mark.parametrize("kind", KINDS)
def test_thoughts_stay_within_eighty_words_and_have_no_placeholders(kind):
    for k_steps in range(4):
        steps = walk(PROBLEMS[kind], kind)[:k_steps]
        for t in propose(PROBLEMS[kind], kind, steps, k=8, step=k_steps + 1):
            assert len(t["thought"].split()) <= 80 and "{" not in t["thought"] and "lorem" not in t["thought"].lower()


def test_a_problem_without_facts_still_reads_naturally():
    thoughts = propose("What should I do?", "wealth-transfer", k=4)
    assert all("{" not in t["thought"] and "  " not in t["thought"] for t in thoughts)
    assert any("the estate" in t["thought"] or "the family assets" in t["thought"] for t in thoughts)


def test_evaluation_scores_vary_and_name_the_deciding_criteria():
    kind, problem = "allocation-rebalance", PROBLEMS["allocation-rebalance"]
    thoughts = [t["thought"] for t in propose(problem, kind, k=8, step=2)] + ["Do something.", "Wait and see."]
    verdicts = [evaluate(problem, t, kind) for t in thoughts]
    scores = [v.score for v in verdicts]
    assert all(0 <= s <= 1 for s in scores) and len(set(scores)) >= 5
    names = [c["name"] for c in RUBRICS[kind]["criteria"]]
    assert all(any(name in v.reason for name in names) for v in verdicts)
    assert max(scores[:8]) > max(scores[8:]) + 0.15  # a concrete step beats a vague one


def test_a_repeated_step_scores_lower_than_a_new_one():
    problem, kind = PROBLEMS["wealth-transfer"], "wealth-transfer"
    first = propose(problem, kind, step=1)[0]["thought"]
    fresh = evaluate(problem, first, kind).score
    again = evaluate(problem, first, kind, steps=[first])
    assert again.score < fresh and "repeats" in again.reason


@pytest.mark.parametrize("kind", KINDS)
def test_synthesis_is_a_recommendation_with_numbered_actions(kind):
    steps = walk(PROBLEMS[kind], kind)
    text = synthesize(PROBLEMS[kind], steps, kind)
    assert text.startswith("Recommendation:") and "Main risk:" in text and "Mitigation:" in text
    assert all(f"{i}. {s.split(':')[0]}:" in text for i, s in enumerate(steps, 1))
    assert any(a in text for a in figures(kind))
    assert len(text.split()) <= 250


def test_synthesis_without_chosen_steps_still_answers():
    text = synthesize(PROBLEMS["general"], [])
    assert "1. " in text and "savings: CHF 900k" in text


@pytest.mark.parametrize("prompt", ["### CONTRACT\nlats.select\n### PROBLEM\nx", "", "hello, no sections"])
def test_an_unknown_contract_gets_a_plain_answer(prompt):
    reply = json.loads(answer(prompt, 1))
    assert set(reply) == {"answer"} and "offline model" in reply["answer"]
