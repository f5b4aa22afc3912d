"""checks/lawfigures.py: the law's figures the sentence names are checked against data/law.toml for the client's
countries; taxes charged by bands (checks/shares.py) fail a flat rate on a whole base."""

from reasoning.facts.check import check, failures
from reasoning.facts.checks.lawfigures import entries
from reasoning.facts.checks.shares import due_by_bands as _due
from reasoning.facts.sheet import Fact


def sheet(place, unit="GBP"):
    return [Fact("residence", "place", place, "ISO 3166"), Fact("portfolio", "amount", 1_700_000, unit)]


def findings(text, place="GB-SCT", unit="GBP"):
    return [f for f in check(text, sheet(place, unit)) if f.start >= 0]


def test_every_figure_has_a_place_words_values_unit_and_year():
    for e in entries():
        assert e["place"] and e["words"] and e["values"] and e["unit"] and e["year"] >= 2024, e["name"]


def test_the_right_law_figure_is_verified():
    (found,) = [f for f in findings("Each of them has a £325,000 nil-rate band to pass on.") if f.text == "£325,000"]
    assert found.ok and found.verified and "nil-rate band" in found.detail


def test_a_wrong_law_figure_fails_naming_the_right_one():
    (found,) = failures(findings("Each of them has a £352,000 nil-rate band to pass on."))
    assert "GBP 325k" in found.detail


def test_a_multiple_of_the_law_figure_is_unverified_not_failed():
    (found,) = [f for f in findings("Together their £650,000 nil-rate bands shelter the home.") if f.text == "£650,000"]
    assert found.ok and not found.verified


def test_another_countrys_law_is_left_alone():
    found = findings("Each of them has a £352,000 nil-rate band to pass on.", place="US-NY", unit="USD")
    assert [f for f in failures(found) if f.kind == "figure"] == []


def test_a_law_percent_is_not_read_as_the_clients_share():
    text = "On the EUR 90,000 gain, KESt 27.5 % of the portfolio gain is EUR 24,750."
    assert failures(findings(text, place="AT-9", unit="EUR")) == []
    assert failures(findings("KESt 25 % applies to the gain.", place="AT-9", unit="EUR"))


def test_a_flat_band_rate_on_a_whole_base_fails_against_the_bands():
    text = "LTT at 10% of £800,000: £80,000."
    (found,) = failures(findings(text, place="GB-WLS"))
    assert "by bands" in found.detail


def test_a_slice_below_the_band_is_left_alone():
    assert failures(findings("The slice above £400,000 pays LTT at 7.5% of £60,000: £4,500.", place="GB-WLS")) == []


def test_bands_add_up_slice_by_slice():
    bands = [[0, 0], [225000, 6], [400000, 7.5], [750000, 10], [1500000, 12]]
    assert _due(bands, 450_000) == 175_000 * 0.06 + 50_000 * 0.075


def test_an_entry_with_when_words_speaks_only_of_sentences_that_have_one():
    # Austria's KESt is 25 % on bank interest, 27.5 % on gains and other capital income
    assert failures(findings("The savings interest of EUR 1,200 loses 25 % KESt.", place="AT-9", unit="EUR")) == []
    assert failures(findings("KESt 25 % applies to the fund's gains.", place="AT-9", unit="EUR"))


def test_a_rate_in_brackets_right_after_the_laws_words_is_the_laws():
    text = "Selling costs about EUR 13.000 of Abgeltungsteuer with Soli (27 % of the EUR 50.000 gain)."
    assert "27 %" in [f.text for f in failures(findings(text, place="DE-BE", unit="EUR"))]
    right = "Selling costs about EUR 13.188 of Abgeltungsteuer with Soli (26,375 % of the EUR 50.000 gain)."
    assert [f for f in failures(findings(right, place="DE-BE", unit="EUR")) if "Abgeltungsteuer" in f.detail] == []


def test_a_freibetrag_is_verified_against_whichever_allowance_it_is():
    text = "Each gift of EUR 300.000 stays inside the 400.000 EUR Freibetrag per parent and child."
    assert failures(findings(text, place="DE-NW", unit="EUR")) == []


def test_the_french_allowance_per_grandchild_is_the_laws_figure():
    text = "Each gift stays below the EUR 31,865 Marie may give a grandchild free of duty."
    assert failures(findings(text, place="FR-OCC", unit="EUR")) == []
    assert failures(findings("Each gift stays below the EUR 38,165 she may give a grandchild free of duty.", place="FR-OCC", unit="EUR"))


def test_a_clients_own_balance_named_like_a_law_figure_is_the_clients():
    from reasoning.facts.check import check, failures
    from reasoning.facts.sheet import Fact

    sheet = [Fact("residence", "place", "CH-SG", "ISO 3166", role="residence"),
             Fact("Säule 3a", "amount", 88_000, "CHF", role="holding")]  # fmt: skip
    assert failures(check("Including the Säule 3a of CHF 88'000, the liquid assets are larger.", sheet)) == []
    assert failures(check("The Säule 3a maximum is CHF 8'000 this year.", sheet))  # the law's, and wrong
