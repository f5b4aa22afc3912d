"""What a sentence acts on: a mention of an instrument or goal is addressed only by a sentence that acts on it."""

import pytest

from reasoning.facts.acting import acts, addressed
from reasoning.facts.checks.coverage import findings as coverage_findings
from reasoning.facts.sheet import Fact

ESTATE = [
    Fact("GRAT", "instrument", "grantor retained annuity trust", text="a GRAT"),
    Fact("ILIT", "instrument", "irrevocable life insurance trust", text="an ILIT"),
]

ADDRESSED = [
    (
        "The GRAT is the better vehicle: it shifts the appreciation out of the estate at little gift-tax cost.",
        "GRAT",
        True,
    ),
    ("A CRT fits her goal of income plus a charitable legacy; fund it with the low-basis shares.", "CRT", True),
    ("Exchange fund: contribute USD 2M of the stock for seven years of diversification.", "Exchange fund", True),
    ("We do not recommend the ILIT: the estate is below the exemption.", "ILIT", True),
    ("The DAF lets her bunch five years of gifts into this year's deduction.", "DAF", True),
    ("Roth conversion: convert USD 100k a year while her bracket is 24%.", "Roth conversion", True),
    ("Pillar 3a: pay in CHF 7,258 each year until 64.", "Pillar 3a", True),
    ("The collar protects the downside for 12 months.", "collar", True),
    ("The GRAT could be considered later.", "GRAT", False),
    ("Other options, such as a CRT, exist.", "CRT", False),
    ("See the notes on the ILIT.", "ILIT", False),
    ("The DAF: to be discussed.", "DAF", False),
    ("- Exchange fund (see above)", "Exchange fund", False),
    ("Fund a 2-year GRAT with USD 1.5M of the shares in Q1.", "GRAT", True),
    ("Set up an ILIT to hold the second-to-die policy.", "ILIT", True),
    ("Gift appreciated shares to the DAF each December.", "DAF", True),
    ("Open a pillar 3a account for Anna and contribute the maximum.", "pillar 3a", True),
    ("Convert the traditional IRA to a Roth over four years.", "Roth", True),
    ("Skip the CRT: the client needs the income now.", "CRT", True),
    ("The exchange fund: contribute USD 2M of the stock in the next window.", "exchange fund", True),
    ("GRAT: weigh it against the plan above.", "GRAT", False),
    ("A CRT could also be considered.", "CRT", False),
    ("Consider the ILIT as well.", "ILIT", False),
    ("The DAF remains an option.", "DAF", False),
    ("Exchange fund: see above.", "Exchange fund", False),
    ("Review the GRAT next year.", "GRAT", False),
]


@pytest.mark.parametrize("text, mention, expected", ADDRESSED, ids=[t[:40] for t, _, _ in ADDRESSED])
def test_a_mention_is_addressed_only_by_a_sentence_that_acts_on_it(text, mention, expected):
    start = text.index(mention)
    assert addressed(text, start, start + len(mention)) is expected


def test_addressed_reads_only_the_sentence_around_the_mention():
    text = "Fund the GRAT with USD 1.5M in Q1. ILIT: weigh it against the plan above."
    start = text.index("ILIT")
    assert addressed(text, start, start + 4) is False
    assert addressed(text, text.index("GRAT"), text.index("GRAT") + 4) is True


def test_coverage_requires_each_instrument_to_be_acted_on():
    answer = "Fund a 2-year GRAT with USD 1.5M of the shares in Q1. ILIT: weigh it against the plan above."
    found = {f.detail: f.ok for f in coverage_findings(answer, ESTATE)}
    assert found == {
        "the answer addresses the grantor retained annuity trust the client listed": True,
        "the answer names the irrevocable life insurance trust the client listed but never acts on it": False,
    }


def test_coverage_fails_an_instrument_never_named():
    found = coverage_findings("Sell the shares over four years.", ESTATE)
    assert [(f.ok, f.start) for f in found] == [(False, -1), (False, -1)]
    assert found[0].detail == "the answer never addresses the grantor retained annuity trust the client listed"


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Transfer the GmbH stake to the daughter in three gifts from 2026.", True),
        ("Passing the business to their daughter: weigh it against the plan above.", False),
        ("Rebalance yearly.", False),
    ],
)
def test_a_goal_is_addressed_by_the_sentences_that_act(answer, expected):
    (found,) = coverage_findings(answer, [Fact("goal", "goal", "pass the business to their daughter")])
    assert found.kind == "coverage" and found.ok is expected


@pytest.mark.parametrize(
    "sentence",
    [
        "GRAT: weigh it against the plan above.",
        "pillar 3a: contribute and withdraw in the order the steps above set.",
        "retire at 64: each yearly review measures the plan against it.",
    ],
)
def test_a_line_that_points_back_at_the_answer_and_names_no_amount_acts_on_nothing(sentence):
    assert not acts(sentence)


def test_a_line_with_an_amount_acts_even_where_it_points_back():
    assert acts("DAF: seed it with USD 500k of the low-basis shares, as the plan above says.")


def test_an_answer_that_acts_on_nothing_fails_coverage_even_with_nothing_listed():
    # SmolLM2 once ended a rebalancing session solved with this: no figure, no action, no date.
    junk = "The client's portfolio, which includes returns on property tax and estate taxes. This task requires a report."
    (found,) = coverage_findings(junk, [Fact("portfolio", "amount", 3e6, "CHF")])
    assert not found.ok and "acts on nothing" in found.detail
    assert coverage_findings("Sell CHF 300k of equities over the year.", [Fact("portfolio", "amount", 3e6, "CHF")]) == []


def test_an_answer_to_a_case_with_targets_acts_on_one_of_them():
    targets = [Fact("equities target", "percent", 60, "%", base="portfolio", role="target"),
               Fact("bonds target", "percent", 40, "%", base="portfolio", role="target")]  # fmt: skip
    junk = "This is a 2019 report on the rebalancing process, to be completed within two days."
    (found,) = coverage_findings(junk, targets)
    assert not found.ok and "targets" in found.detail
    assert coverage_findings("Sell CHF 300k of equities in 2026 to reach 60%.", targets) == []
