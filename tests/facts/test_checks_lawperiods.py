"""The law's periods (checks/lawperiods.py, data/periods.toml): a statute's window misstated in the advice fails where
the client lives under it, whatever the client's figures; the window as the law writes it passes; a duration the
rule's words do not tie to it is left alone. The sentences are this test's own, in an advisor's words."""

import pytest

from reasoning.facts.check import check, failures
from reasoning.facts.checks import lawperiods
from reasoning.facts.sheet import Fact

US = [Fact("residence", "place", "US-NJ", "", role="residence"), Fact("portfolio", "amount", 3e6, "USD")]
CH = [Fact("residence", "place", "CH-ZH", "", role="residence"), Fact("portfolio", "amount", 3e6, "CHF")]
DE = [Fact("residence", "place", "DE", "", role="residence"), Fact("flat", "amount", 9e5, "EUR")]


def period_findings(text, sheet):
    return [f for f in check(text, sheet) if f.kind == "figure" and ("window" in f.detail or "holding period" in f.detail)]


@pytest.mark.parametrize(
    "text, span",
    [
        ("Wash-sale audit: check the spouse's IRA for purchases of the same securities within 90 days of a loss sale.",
         "90 days"),
        ("Harvest the losing lots, but never rebuy the same security within 300 days before or after, or the wash-sale "
         "rule disallows the loss.", "300 days"),
        ("Under the wash sale rule, a repurchase within 3 months of the sale voids the loss.", "3 months"),
    ],
)  # fmt: skip
def test_a_misstated_wash_sale_window_fails_for_a_us_client(text, span):
    assert span in [f.text for f in failures(check(text, US))]


def test_the_window_as_the_law_writes_it_passes_and_a_near_one_is_only_unverified():
    exact = "Under the wash-sale rule, do not buy back the same shares within 30 days of the sale."
    near = "Under the wash-sale rule, do not buy back the same shares within a month of the sale."
    (found,) = period_findings(exact, US)
    assert found.ok and found.verified and found.text == "30 days"
    (found,) = period_findings(near, US)
    assert found.ok and not found.verified and found.detail.startswith("unverified")


@pytest.mark.parametrize(
    "text",
    [
        "Harvest losses over the next 3 years; the wash-sale rule applies to each sale.",  # no cue near the duration
        "Keep a 31-day log for every sale and every purchase in all accounts, so no trade triggers a wash sale.",
        "Rebuy the same securities within 90 days of the rebalancing.",  # no wash-sale rule named
    ],
)
def test_durations_the_rule_does_not_tie_to_its_window_are_left_alone(text):
    assert period_findings(text, US) == []


def test_a_window_of_another_countrys_law_is_not_read():
    text = "Under the wash-sale rule, do not rebuy the same security within 90 days of the sale."
    assert period_findings(text, CH) == []


def test_a_holding_period_in_years_is_checked_too():
    assert "5 years" in [f.text for f in failures(check(
        "The Spekulationsfrist taxes the gain if the property is sold within 5 years of its purchase.", DE))]  # fmt: skip
    assert failures(check("The Spekulationsfrist taxes the gain if the property is sold within 10 years.", DE)) == []


def test_every_period_in_the_table_names_its_unit_and_source():
    for entry in lawperiods.entries():
        assert entry["unit"] in ("days", "months", "years") and entry["period"] > 0 and entry["source"], entry
        assert entry["topic"] and entry["cues"], entry
