"""A client's rule that forbids an act (checks/prohibitions.py): the rule read from the sheet's constraint, a
sentence that does the act to the thing fails, one that keeps the rule is kept, and a rule in force only for a while,
a cap ("no more than") or a phrasal verb is left alone. The sentences are this test's own."""

import pytest

from reasoning.facts.check import check
from reasoning.facts.checks.prohibitions import rule_of
from reasoning.facts.sheet import Fact

BUILDINGS = Fact("constraint", "constraint", "without selling any of the directly held buildings")
BUY_IN = Fact("constraint", "constraint", "cannot make a pension buy-in any more because of the three-year lock")
NO_NEW = Fact("constraint", "constraint", "no new private equity commitments")
SECTION = Fact("constraint", "constraint", "without selling the home section of the ranch")


def constraint_findings(text, rule):
    return [(f.ok, f.text) for f in check(text, [rule]) if f.kind == "constraint"]


@pytest.mark.parametrize(
    "text, rule, span",
    [
        ("Dispose of the two buildings in Locarno over nine months.", BUILDINGS, "buildings"),
        ("Sell CHF 5M of the directly held buildings to fund the bonds.", BUILDINGS, "buildings"),
        ("Pension buy-in: implement it in the first quarter.", BUY_IN, "buy-in"),
        ("Make a pension buy-in of CHF 50k in 2026 to cut the tax bill.", BUY_IN, "buy-in"),
        ("Sign two private equity commitments of EUR 1M each this year.", NO_NEW, "commitments"),
        ("Sell the home section to a neighbour for $3M.", SECTION, "section"),
    ],
)
def test_a_sentence_that_does_the_forbidden_act_fails(text, rule, span):
    assert (False, span) in constraint_findings(text, rule)


@pytest.mark.parametrize(
    "text, rule",
    [
        ("Keep the buildings and sell CHF 5M of equities instead.", BUILDINGS),
        ("No pension buy-in: the lock bars it, so the lump sum comes first.", BUY_IN),
        ("Sell CHF 6.4M of equities; the buildings stay untouched.", BUILDINGS),
        ("The buildings yield 3.1% a year.", BUILDINGS),
        ("Sell 2,000 acres of the ranch in 2026 as planned.", SECTION),
        ("Meet the existing private equity commitments from the bond ladder.", NO_NEW),
    ],
)
def test_a_sentence_that_keeps_the_rule_or_does_not_act_on_the_thing_does_not_fail(text, rule):
    assert all(ok for ok, _ in constraint_findings(text, rule))


def test_the_rule_is_read_with_its_verb_and_the_thing_it_protects():
    rule = rule_of("without selling the home section of the ranch")
    assert rule.thing == "home section" and rule.head == "section" and "divest" in rule.acts
    assert rule_of("cannot make a pension buy-in any more").acts is None  # "make": any act on the buy-in


@pytest.mark.parametrize(
    "text",
    [
        "Cannot touch the Roth before 2030",  # a while: the horizon's to judge
        "No more than 5 % turnover per quarter",  # a cap
        "He cannot give up control of the LLC",  # a phrasal verb is another act
        "without delay",  # nothing protected
        "keep the house",  # no prohibition
    ],
)
def test_what_is_no_prohibition_or_cannot_be_read_is_left_alone(text):
    assert rule_of(text) is None


def test_coverage_asks_nothing_of_an_instrument_the_client_may_not_use():
    buy_in = Fact("pension buy-in", "instrument", "pension buy-in", text="pension buy-in")
    found = check("Take half the pension fund as a lump sum at 64.", [BUY_IN, buy_in], final=True)
    assert not [f for f in found if f.kind == "coverage" and "buy-in" in f.detail]


def test_a_named_holding_is_named_by_its_name_not_by_its_kind():
    rule = Fact("constraint", "constraint", "cannot sell the Roche shares (CHF 900’000) for family reasons")
    assert rule_of(rule.value).head == "roche"
    assert all(ok for ok, _ in constraint_findings("Sell CHF 400k of the other Swiss shares in two steps.", rule))
    assert (False, "Roche") in constraint_findings("Sell half the Roche shares in 2026.", rule)


def test_a_cap_on_the_act_is_no_prohibition():
    """ "without realising more than CHF 50k of gains" caps the gains (constraints.py); read as a ban it had failed the
    answer's own line that kept it ("the plan acts on the than CHF")."""
    assert rule_of("without realising more than CHF 50k of gains this year") is None
    assert rule_of("cannot sell above CHF 1M of the shares") is None
