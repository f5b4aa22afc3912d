"""The offline model's text keeps to the client's facts (issue 16, item 2), checked as properties over many
generated problems rather than as fixed strings: the problem's jurisdiction, currency, client and goal; every figure
it derives computed right; no answer ending on a cut fragment; each Reflexion attempt a real change that answers its
critique. No Django and no network needed."""

import itertools
import random
import re

import pytest

from reasoning.llm.offline_answers import answer, facts, jurisdictions, money_spans
from reasoning.prompts import contract_of, format_path, render
from reasoning.strategies.base import Critique
from reasoning.strategies.reflexion import format_memory
from tests.llm.test_offline_answers import rubric_text

SWISS_ONLY = re.compile(r"pillar 3a|\b3a\b|canton|\bAHV\b|wealth tax|Switzerland|\bSwiss\b", re.I)
ONLY_FOR_A_BUSINESS = re.compile(r"founder|voting control|family holding", re.I)
FIGURE = re.compile(
    r"(\d+(?:\.\d+)?)%(?: \(the target\))? of ((?:CHF|USD|EUR|GBP) [\d.,]+(?:bn|m|k)?) = "
    r"((?:CHF|USD|EUR|GBP) [\d.,]+(?:bn|m|k)?)"
)
OF_WEALTH = re.compile(
    r"5-10% of wealth \(((?:CHF|USD|EUR|GBP) [\d.,]+(?:bn|m|k)?) to "
    r"((?:CHF|USD|EUR|GBP) [\d.,]+(?:bn|m|k)?)\)"
)

WHERE = {  # jurisdiction -> (how the problem says where the client lives, its currency)
    "ch": [("in Zurich", "CHF"), ("in Geneva", "CHF"), ("in the canton of Vaud", "CHF")],
    "us": [("in California", "USD"), ("in New York", "USD"), ("a Californian", "USD")],
    "de": [("in Munich", "EUR"), ("in Berlin", "EUR")],
    "uk": [("in London", "GBP")],
}
CLIENTS = [
    "a widow, 74,",
    "a married couple, both 61,",
    "the founder of Keller Metallbau AG, 68,",
    "a retired doctor, 66,",
]
GOALS = {  # kind -> a goal sentence with {amount} (the whole) and {share} (a percentage of it)
    "tax-optim-sequence": "holds {amount} with {share}% of it in losing tech stocks and wants a tax-loss harvest "
    "before year end",
    "wealth-transfer": "wants to pass {amount} on to two children over the next 10 years",
    "allocation-rebalance": "has a {amount} portfolio drifted to {share}% equities against a 60/40 target",
    "investment-thesis": "holds {amount}; a {share}% position in Roche shares should be sold over the next year",
    "general": "has {amount} in savings and asks what to do with it",
}
SIZES = ["1.2m", "3m", "5m", "12m", "750,000", "40m"]


def problems(count=60, seed=16):
    """Generated problems: a client, a place and its currency, an amount, a share and a goal, in every combination."""
    rng = random.Random(seed)
    combos = list(itertools.product(WHERE, CLIENTS, GOALS))
    rng.shuffle(combos)
    for juris, client, kind in combos[:count]:
        where, code = rng.choice(WHERE[juris])
        share = rng.choice([5, 12, 35, 72]) if kind == "allocation-rebalance" else rng.choice([5, 12, 20, 35])
        amount = f"{code} {rng.choice(SIZES)}"
        sentence = f"{client.capitalize()} {where}, {GOALS[kind].format(amount=amount, share=share)}."
        yield pytest.param(sentence, kind, juris, id=f"{kind}-{juris}-{CLIENTS.index(client)}")


PROBLEMS = list(problems())


def ask(contract, seed=7, **fields):
    """The reply, parsed as the engine parses it: with the prompt, so an echo of it is refused."""
    prompt = render(contract, **fields)
    parsed, how = contract_of(contract).parse(answer(prompt, seed), context={"prompt": prompt})
    assert how == "strict"
    return parsed


def walk(problem, kind, k=3):
    """Every proposal of a four-step Tree of Thoughts line that keeps the first one, and its synthesis."""
    steps, proposed = [], []
    for step in range(1, 5):
        thoughts = ask(
            "tot.propose",
            problem=problem,
            kind=kind,
            rubric=rubric_text(kind),
            path=format_path(steps),
            k=k,
            step=step,
            depth=4,
        ).thoughts
        proposed += [t.thought for t in thoughts]
        steps.append(thoughts[0].thought)
    text = ask("tot.synthesize", problem=problem, kind=kind, rubric=rubric_text(kind), path=format_path(steps)).answer
    return steps, proposed, text


def value(written):
    number, scale = re.match(r"[A-Z]{3} ([\d.,]+)(bn|m|k)?", written).groups()
    return float(number.replace(",", "")) * {"bn": 1e9, "m": 1e6, "k": 1e3, None: 1}[scale]


def close(a, b):
    return abs(a - b) <= max(0.006 * abs(b), 500)  # money() rounds to 3 significant figures at most


@pytest.mark.parametrize("problem, kind, juris", PROBLEMS)
def test_the_text_follows_the_problems_jurisdiction_currency_client_and_goal(problem, kind, juris):
    steps, proposed, text = walk(problem, kind)
    everything = "\n".join(proposed + [text])
    assert jurisdictions(problem)[0] == juris
    if juris != "ch":
        assert not SWISS_ONLY.search(everything), SWISS_ONLY.search(everything)
    allowed = {code for _, _, code in money_spans(problem)}
    assert {code for _, _, code in money_spans(everything)} <= allowed, everything
    if "AG" not in problem and "founder" not in problem:
        assert not ONLY_FOR_A_BUSINESS.search(everything), ONLY_FOR_A_BUSINESS.search(everything)
    if "widow" in problem:
        assert "marriage contract" not in everything and "spouse coordination" not in everything.lower()
    if kind == "tax-optim-sequence" and juris == "us":
        assert "wash-sale" in everything  # a US loss harvest is bound by the wash-sale rule
    if "tax-loss" in problem:
        assert text.startswith("Recommendation: Realise the losses")


@pytest.mark.parametrize("problem, kind, juris", PROBLEMS)
def test_every_figure_it_states_is_computed_from_the_problem(problem, kind, juris):
    _, proposed, text = walk(problem, kind)
    whole = max(v for _, v, _ in money_spans(problem))
    for share, of, result in FIGURE.findall(text):
        assert close(value(result), float(share) / 100 * value(of)), (share, of, result)
    for low, high in OF_WEALTH.findall("\n".join(proposed)):
        assert close(value(low), 0.05 * whole) and close(value(high), 0.1 * whole), (low, high)
    for written, amount, _ in money_spans("\n".join(proposed)):
        assert amount <= whole * 1.001, written  # nothing staged or moved is larger than the whole
    scope = facts(problem, kind)
    if "position" in problem:  # the position, not the portfolio, is what is sold
        share = float(re.search(r"(\d+)% position", problem)[1])
        assert close(scope["amount_value"], share / 100 * whole)
        assert close(value(scope["third"]), scope["amount_value"] / 3)


@pytest.mark.parametrize("problem, kind, juris", PROBLEMS)
def test_an_answer_never_ends_on_a_cut_fragment(problem, kind, juris):
    steps, _, text = walk(problem, kind)
    assert text.rstrip().endswith(".") and "…" not in text
    assert text.count("(") == text.count(")") and text.count('"') % 2 == 0
    for line in re.findall(r"^\d+\. (.*)$", text, re.M):
        body = line.rstrip(".")
        source = next(s for s in steps if s.startswith(body.split(":")[0]))
        after = source[len(body) : len(body) + 1]
        assert source.startswith(body) and after in ("", " ", ",", ";", "."), (line, source)


@pytest.mark.parametrize("problem, kind, juris", PROBLEMS[::4])
def test_each_reflexion_attempt_changes_what_its_critique_asked_for(problem, kind, juris):
    rubric = rubric_text(kind)
    memory, previous, scores = [], None, []
    for num in (1, 2, 3):
        steps = [
            s.thought
            for s in ask(
                "reflexion.attempt",
                problem=problem,
                kind=kind,
                rubric=rubric,
                memory=format_memory(memory),
                attempt=num,
                max_attempts=3,
                steps=3,
            ).steps
        ]
        score = ask("reflexion.evaluate", problem=problem, kind=kind, rubric=rubric, path=format_path(steps)).score
        scores.append(score)
        assert not any("as the review of attempt" in s for s in steps)
        assert all(s.rstrip().endswith(".") for s in steps)
        if previous is not None:
            names = re.findall(r"^- (.+?) \(weight", rubric, re.M)
            raised = [name for name in names if name in memory[-1].critique]
            changed = [s for s in steps if s not in previous]
            assert changed, "the attempt repeats the one before it"
            for name in raised:  # each criterion the critique named has a step written for it, under its name
                assert any(name in s.split(":")[0] for s in steps), (name, steps)
        critique = ask(
            "reflexion.reflect",
            problem=problem,
            kind=kind,
            rubric=rubric,
            memory=format_memory(memory),
            attempt=num,
            path=format_path(steps),
            score=score,
            reason="",
            threshold=0.8,
        ).critique
        memory.append(Critique(None, num, score, critique))
        previous = steps
    assert scores[-1] >= scores[0]
