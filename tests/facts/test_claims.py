"""Claims that a tax is absent (reasoning/facts/claims.py, read by rules.findings): wrong where the client's places
levy it, left alone where it is right or hangs on a condition."""

import pytest

from reasoning.facts import rules
from reasoning.facts.sheet import Fact


def places(*codes):
    return [Fact("residence", "place", code, "ISO 3166") for code in codes]


WRONG = [
    (("DE",), "Share gains are tax-free for her, so sell the winners first.", "tax-free"),
    (("FR",), "The capital gains are untaxed, so the sale costs nothing.", "untaxed"),
    (("US-NY",), "With no state income tax to pay, the bonus nets more.", "income tax"),
    (("CH-GE",), "There is no wealth tax, so holding cash costs nothing.", "wealth tax"),
    (("AT",), "His gains on the ETFs stay tax-free.", "tax-free"),
]
RIGHT = [
    (("CH-ZH",), "Private capital gains are tax-free, so rebalance freely."),
    (("GB",), "Gains inside the ISA are tax-free."),
    (("US-FL",), "Long-term gains are tax-free in the 0% bracket."),
    (("US-TX",), "Texas levies no personal income tax, so the gain bears no state tax."),
    (("AT",), "Gains on shares bought before 2011 are tax-free."),
    (("DE",), "Gains on the house held over ten years are tax-free."),
    (("US-NY",), "Florida has no state income tax; New York's tops out at 10.9%."),
    (("CH-ZH",), "There is no federal wealth tax; the canton levies it."),
    (("US-NY",), "There is no estate tax for them below the exemption."),
    (("GB",), "Gains up to the annual exempt amount are tax-free."),
]


def test_a_claim_is_judged_by_the_home_places_not_where_assets_are_held():
    facts = places("CH-ZH") + [Fact("assets", "place", "DE", "ISO 3166", role="assets")]
    text = "There is no capital gains tax on the portfolio, only the wealth tax."
    assert not [f for f in rules.findings(text, facts) if not f.ok]


@pytest.mark.parametrize("codes, text, span", WRONG, ids=[w[1][:40] for w in WRONG])
def test_a_tax_the_client_pays_claimed_absent_is_flagged(codes, text, span):
    failed = [f for f in rules.findings(text, places(*codes)) if not f.ok]
    assert [f.text for f in failed] == [span], [(f.text, f.detail) for f in failed]
    assert "levy" in failed[0].detail


@pytest.mark.parametrize("codes, text", RIGHT, ids=[r[1][:40] for r in RIGHT])
def test_a_right_or_conditional_claim_is_left_alone(codes, text):
    assert not [(f.text, f.detail) for f in rules.findings(text, places(*codes)) if not f.ok]


def test_an_institution_s_claims_are_left_to_its_own_exemptions():
    seat = [Fact("seat", "place", "US-IL", "ISO 3166", role="seat")]
    text = "The college pays no income tax, and its gains are tax-free."
    assert not [f for f in rules.findings(text, seat) if not f.ok]
    assert [f for f in rules.findings(text, places("US-IL")) if not f.ok]  # a resident of Illinois does pay
