"""Statutory limits a plan runs into (reasoning/facts/statutes.py): a bracket to stay within and a lock (a Swiss
pension buy-in bars a lump sum for 3 years), on sentences of my own."""

import pytest

from reasoning.facts.statutes import findings
from reasoning.facts.sheet import Fact

# Lucerne: Ruth, 59, retires at 65 and takes her pension fund as a lump sum; her husband Kurt.
LUMP_SUM = [
    Fact("Ruth", "person", 1, "people", role="client"),
    Fact("Kurt", "person", 1, "people", role="spouse"),
    Fact("residence", "place", "CH-LU", "ISO 3166", role="residence"),
    Fact("retirement", "horizon", 65, "age", text="retire at 65", role="by"),
    Fact("goal", "goal", "retire at 65 and draw her pension fund as a lump sum", text="draw it as a lump sum"),
]
# The same without a lump sum: an annuity.
ANNUITY = LUMP_SUM[:4] + [Fact("goal", "goal", "retire at 65 on an annuity", text="an annuity")]
# Arizona retirees converting to Roth within the 22% bracket.
BRACKET = [
    Fact("residence", "place", "US-AZ", "ISO 3166", role="residence"),
    Fact("bracket cap", "limit", 22, "%", text="stay within the 22% bracket", base="federal bracket", role="maximum"),
]
SHEETS = {"lump sum": LUMP_SUM, "annuity": ANNUITY, "bracket": BRACKET}

BREAKING = [
    ("lump sum", "Make the last buy-in at 64 to cut this year's tax."),
    ("lump sum", "Pay the buy-in two years before she retires."),
    ("bracket", "Withdraw $300,000 from the IRA next year to fund the move."),
    ("bracket", "Convert $410K in a single year and be done with it."),
]
KEEPING = [
    ("lump sum", "Buy in at 62, three years ahead of the lump sum at 65."),
    ("lump sum", "Kurt makes his own buy-in at 64."),
    ("lump sum", "The buy-in must be finished by 62, since she retires at 65."),
    ("annuity", "Make the last buy-in at 64 to cut this year's tax."),
    ("bracket", "Withdraw $240,000 from the IRA next year."),
    ("bracket", "Convert $1.2M in all, about $120k each year."),
    ("bracket", "Never convert $500K in one year."),
]


@pytest.mark.parametrize("sheet, sentence", BREAKING, ids=[b[1][:40] for b in BREAKING])
def test_a_plan_against_the_statute_is_flagged(sheet, sentence):
    failed = [f for f in findings(sentence, SHEETS[sheet]) if not f.ok]
    assert failed and all(f.kind == "constraint" and sentence[f.start : f.end] == f.text for f in failed)


@pytest.mark.parametrize("sheet, sentence", KEEPING, ids=[k[1][:40] for k in KEEPING])
def test_a_plan_that_keeps_the_statute_raises_no_alarm(sheet, sentence):
    assert not [(f.text, f.detail) for f in findings(sentence, SHEETS[sheet]) if not f.ok]


def test_a_buy_in_three_years_ahead_is_a_kept_lock_naming_the_law():
    found = findings("Make the buy-in at 61.", LUMP_SUM)
    assert [(f.ok, f.text) for f in found] == [(True, "at 61")] and "79b" in found[0].detail


def test_waiting_with_the_buy_in_until_an_age_inside_the_lock():
    from reasoning.facts.sheet import Fact as F
    from reasoning.facts.statutes import findings as statute_findings

    facts = [
        F("residence", "place", "CH-BE", "ISO 3166", role="residence"),
        F("retirement", "horizon", 64, "age", role="by", text="retire at 64"),
        F("goal", "goal", "retire at 64 and take half the pension as a lump sum", "",
          text="retire at 64 and take half the pension as a lump sum"),
    ]
    broken = [f for f in statute_findings("Hold off on the buy-in until 62, then take the lump sum at 64.", facts)
              if not f.ok]
    assert [f.text for f in broken] == ["until 62"]
    assert all(f.ok for f in statute_findings("Make the buy-in until 60 at the latest.", facts))
