"""A trade to a target (checks/trades.py): where the sheet has a holding's share today and its target on one whole,
a sentence that trades it to the target with another amount, or the other way, fails; the right trade passes; a
staged part of it is left to the figure check. The sentences are this test's own."""

import pytest

from reasoning.facts.check import check
from reasoning.facts.checks.trades import trades
from reasoning.facts.checks.doc import read
from reasoning.facts.extract import extract

PROBLEM = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."


def trade_findings(text):
    return [(f.ok, f.text) for f in check(text, extract(PROBLEM)) if f.kind == "figure" and "target" in f.detail]


def test_the_sheet_fixes_the_sale_to_the_target():
    (trade,) = trades(read("", extract(PROBLEM)))
    assert (trade.holding, trade.value, trade.unit, trade.sale) == ("equities", pytest.approx(1_440_000), "CHF", True)


@pytest.mark.parametrize(
    "text, span",
    [
        # the equities minus the bonds' target: right arithmetic, the wrong trade
        ("Sell CHF 3.84M of equities (CHF 8.64M - CHF 4.8M = CHF 3.84M) to reach the target.", "CHF 3.84M"),
        ("Sell CHF 2M of equities to bring them back to 60%.", "CHF 2M"),  # within the figure check's rounding
        ("Buy CHF 1.44M of equities to restore the target weight.", "CHF 1.44M"),  # the wrong way
    ],
)
def test_a_wrong_trade_to_the_target_fails(text, span):
    assert (False, span) in trade_findings(text)


@pytest.mark.parametrize(
    "text",
    [
        "Sell CHF 1.44M of equities to bring them back to 60%.",
        "Rebalance by selling about CHF 1.4M of equities.",
        "Sell the first CHF 480k of equities in a first tranche toward the target.",  # a part of the trade
        "Sell CHF 500k of equities to fund the gifts.",  # no claim to reach the target
    ],
)
def test_the_right_trade_or_a_part_of_it_does_not_fail(text):
    assert all(ok for ok, _ in trade_findings(text))


def test_a_sheet_without_a_target_fixes_no_trade():
    facts = extract("A CHF 12m portfolio is 72% equities.")
    assert trades(read("", facts)) == []
    assert all(f.ok for f in check("Sell CHF 3M of equities to rebalance.", facts) if f.kind == "figure")


REBALANCE = "Rebalance a CHF 3m portfolio drifted to 70% equities back to 60/40 within a year, tax-aware."


def level_findings(text):
    return [(f.ok, f.text) for f in check(text, extract(REBALANCE)) if "client's targets" in f.detail]


def test_a_move_to_a_level_that_is_none_of_the_clients_targets_fails():
    """SmolLM2 ended this rebalancing session solved with 'a piece of the portfolio (60%) was shifted back to 75%'."""
    junk = ", a piece of the portfolio (60%) was shifted back to 75% on the tax-aware horizon, after an extra year."
    assert level_findings(junk) == [(False, "75%")]


@pytest.mark.parametrize(
    "text",
    [
        "Bring equities back to 60% within the year.",
        "Move the bonds to 40%.",
        "Sell equities to 65% first, then to 60%.",  # an interim level on the way
        "If equities fall to 50%, rebalance.",  # a scenario, not a move
    ],
)
def test_a_move_to_a_target_or_a_step_on_the_way_passes(text):
    assert level_findings(text) == []
