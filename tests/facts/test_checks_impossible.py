"""Figures no client can have and names no account has (checks/impossible.py): the noisy model's one-digit slips that
ended sessions solved fail whatever the sheet says; the ordinary forms pass. The sentences are this test's own."""

import pytest

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

SHEET = [Fact("client's age", "age", 66, "years", role="client"), Fact("portfolio", "amount", 2e6, "CHF")]


@pytest.mark.parametrize(
    "text, span",
    [
        ("Walk the 660-year-old client through the sequence.", "660-year-old"),
        ("Sell the Milan assets before 4054: every step keeps to it.", "4054"),
        ("Fill the client's assets, pillar 6a and pension buy-in first.", "pillar 6a"),
        ("Keep the liquidity. - 4030(b): its USD 75k stays invested.", "4030(b)"),
    ],
)
def test_an_impossible_age_year_or_account_fails(text, span):
    assert span in [f.text for f in failures(check(text, SHEET))]


@pytest.mark.parametrize(
    "text",
    [
        "Walk the 66-year-old client through the sequence before 2054.",
        "Fill pillar 3a first, then the 401(k) and the 529 plan; a 1031 exchange in 2027.",
        "Buy 2500 shares in 2026; she moved in 1987.",
    ],
)
def test_the_ordinary_forms_pass(text):
    assert failures(check(text, SHEET)) == []


def test_a_loss_over_the_whole_holding_fails_unless_the_sentence_names_leverage():
    slip = "Stress-test the mix against a scenario that loses 30-120%, its odds and the cash it would need."
    assert [f.text for f in failures(check(slip, SHEET))] == ["120%"]
    assert failures(check("Stress-test the mix against a scenario that loses 30-40%, its odds.", SHEET)) == []
    assert failures(check("A position on margin can lose 150% of the equity put up.", SHEET)) == []
