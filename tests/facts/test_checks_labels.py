"""checks/labels.py (and words.named_fact): a figure under another fact's label, and the shares that are not that."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

SHEET = [
    Fact("farm", "amount", 12_000_000, "GBP", role="holding"),
    Fact("pension pot", "amount", 2_000_000, "GBP", role="holding"),
    Fact("cash", "amount", 400_000, "GBP", role="holding"),
]


def labels(text):
    return [f for f in failures(check(text, SHEET)) if f.kind == "label"]


def test_a_figure_after_a_fraction_of_a_label_is_a_share_of_it_not_it():
    assert labels("The pension is roughly a sixth of the farm: £2M of £12M.") == []
    assert labels("Cash is a thirtieth part of the farm (£400k of £12M).") == []
    assert labels("Pension and cash together are two tenths of the farm: £2.4M against £12M.") == []


def test_a_figure_under_another_facts_label_is_still_a_label_slip():
    found = labels("Against that, the farm: £2M, and the pension pot besides.")
    assert [f.text for f in found] == ["£2M"]
    assert "not the farm" in found[0].detail


def test_a_label_right_after_a_figure_is_that_figures_not_the_next_ones():
    sheet = SHEET + [Fact("annual pension withdrawal", "amount", 100_000, "GBP", role="goal")]
    text = "Income tax on a £100k withdrawal: £40k if all of it is taxed at 40%."
    assert [f for f in failures(check(text, sheet)) if f.kind in ("label", "figure")] == []
    found = failures(check("Against the rest, the withdrawal: £40k a year.", sheet))
    assert [f.text for f in found] == ["£40k"]


def test_a_gains_tax_on_a_holdings_whole_value_is_a_wrong_base_where_the_sheet_gives_its_gain():
    facts = [Fact("residence", "place", "DE-BE", "ISO 3166"), Fact("Depot", "amount", 900_000, "EUR", role="holding"),
             Fact("unrealised gains", "amount", 200_000, "EUR")]  # fmt: skip
    slip = "Abgeltungsteuer of 26,375 % on the EUR 900.000 Depot is roughly EUR 237.400."
    assert [f.kind for f in failures(check(slip, facts))] == ["label"]
    assert failures(check("Abgeltungsteuer of 26,375 % on the EUR 200.000 gain is roughly EUR 52.750.", facts)) == []


def test_a_figure_in_brackets_after_what_share_of_a_label_is_that_labels_value():
    # "what share of the house (EUR 2.3M)" asks a question: the bracket gives the house's value, not a share of it
    facts = [Fact("house", "amount", 1_900_000, "CHF", role="holding"), Fact("life insurance", "amount", 2_300_000, "EUR")]
    slip = "Decide who should receive what share of the house (EUR 2.3M), and when."
    assert [f.kind for f in failures(check(slip, facts))] == ["label"]
    assert failures(check("Decide who should receive what share of the house (CHF 1.9M), and when.", facts)) == []
    assert failures(check("Each child receives one third of the house (CHF 633k).", facts)) == []


def test_a_label_before_a_colon_and_an_expression_is_the_expressions():
    # "Pension per year: £2M / 25": the label names the result, not the pension pot it divides
    assert labels("Cash per year: £400k / 4 = £100k.") == []
    assert labels("Farm and cash: £12M plus £400k, i.e. £12.4M.") == []


def test_a_difference_written_just_before_a_figure_is_no_restatement_of_a_label():
    sheet = SHEET + [Fact("house purchase", "amount", 900_000, "GBP", role="goal")]
    text = "The cash goes from £400k to £250k: a purchase of £150k."
    assert [f for f in failures(check(text, sheet)) if "given as" in f.detail] == []
    text = "The purchase of £150k comes from the cash."
    assert [f for f in failures(check(text, sheet)) if "given as" in f.detail]


def test_a_limit_of_all_the_investable_assets_has_no_single_holding_as_its_base():
    sheet = SHEET + [Fact("issuer cap", "limit", 10, "%", base="investable assets", role="cap"),
                     Fact("other portfolio", "amount", 900_000, "GBP", role="holding")]
    # 10 % of the £14.4M of investable assets is no share of the "other portfolio"
    assert [f for f in failures(check("At 10% of £14.4M the farm may be at most £1.44M.", sheet)) if f.kind == "label"] == []


def test_a_cost_in_german_is_the_cost_basis():
    sheet = [Fact("Kaufpreis", "amount", 5_000_000, "EUR", role="holding"), Fact("Anschaffungskosten", "amount", 50_000, "EUR")]
    assert failures(check("Gain: EUR 5.000.000 minus EUR 50.000 cost = EUR 4.950.000.", sheet)) == []


def test_a_gains_tax_on_a_whole_holding_whose_gain_the_sheet_gives_is_the_wrong_base():
    sheet = [
        Fact("residence", "place", "GB-SCT", "ISO 3166", role="residence"),
        Fact("GIA", "amount", 260_000, "GBP", role="holding"),
        Fact("GIA gains", "amount", 72_000, "GBP"),
    ]
    found = failures(check("Cashing in the entire £260,000 GIA means £62,400 of CGT at the 24% rate.", sheet))
    assert any("whole GIA" in f.detail for f in found)
    assert not [f for f in failures(check("Cashing in the GIA means £17,280 of CGT at the 24% rate.", sheet))
                if f.kind == "label"]  # fmt: skip


def test_a_percent_equal_to_a_limits_is_that_limit_only_where_the_sentence_names_it():
    sheet = [Fact("Fixpreis", "amount", 4_800_000, "EUR", role="holding"),
             Fact("equity cap", "limit", 60.0, "%", base="Fixpreis", role="cap")]  # fmt: skip
    text = "Its taxable part under the Teileinkünfteverfahren is about EUR 1.11M (60 % of EUR 1.85M)."
    assert labels_of(text, sheet) == []
    assert labels_of("Keep the equity share under the cap: 60 % of EUR 1.85M.", sheet) != []
    # with no tax in the sentence the percent is still the cap's, named or not (a noisy model's "10% of the chalet")
    assert labels_of("Sizing: 60 % of EUR 1.85M = EUR 1.11M.", sheet) != []


def labels_of(text, sheet):
    return [f for f in failures(check(text, sheet)) if f.kind == "label"]


def test_a_limits_percent_said_to_mean_an_amount_must_be_that_share_of_its_base():
    sheet = [Fact("Depot", "amount", 1_640_000, "EUR", role="holding"),
             Fact("Depot sale cap", "limit", 25.0, "%", text="no more than 25 % of the Depot", base="Depot", role="cap"),
             Fact("drawdown cap", "limit", 4.0, "%", text="4% of the remaining pot", base="Depot", role="cap")]  # fmt: skip
    found = failures(check("The 25 % sale cap allows EUR 497.350 of sales.", sheet))
    assert found and "EUR 410k" in found[0].detail
    assert failures(check("The 25 % sale cap allows EUR 410.000 of sales.", sheet)) == []
    # a base the sheet does not hold ("the remaining pot") is left alone
    assert failures(check("The 4% drawdown cap is EUR 19,200 a year.", sheet)) == []


def test_a_caps_percent_of_another_holding_in_another_currency_is_the_wrong_base():
    sheet = [Fact("portfolio", "amount", 4_500_000, "EUR", role="holding"),
             Fact("LVMH stock share", "percent", 45.0, "%", base="portfolio", role="share"),
             Fact("chalet", "amount", 2_000_000, "CHF", role="holding"),
             Fact("sales cap", "limit", 10.0, "%", base="shares", role="cap")]  # fmt: skip
    found = labels_of("Sizing: 10% of the CHF 2M chalet = CHF 200k a year.", sheet)
    assert found and "EUR 2.025M" in found[0].detail
    assert labels_of("Sizing: 10% of the EUR 2.025M position = EUR 202.5k a year.", sheet) == []


def test_words_that_compare_a_figure_with_a_label_do_not_name_it():
    """"120.000 EUR liegen unter dem Freibetrag": the gift compared with the allowance, not called the allowance."""
    sheet = [Fact("gift per grandchild", "amount", 120_000, "EUR", role="goal")]
    for text in ("Enkel: 120.000 EUR liegen unter dem Freibetrag von 200.000 EUR.",
                 "Grandchildren: EUR 120,000 lies below the allowance of EUR 200,000."):  # fmt: skip
        assert not [f for f in failures(check(text, sheet)) if f.kind == "label"], text


def test_a_percent_whose_product_of_another_amount_follows_is_that_amounts():
    """"capped at 30 % of AGI: $270,000" where the bonds are also 30 % of the portfolio: the law's limit on the AGI."""
    sheet = [
        Fact("portfolio", "amount", 2_000_000, "USD", role="holding"),
        Fact("bonds", "percent", 30.0, "%", base="portfolio", role="share"),
        Fact("AGI", "amount", 900_000, "USD", role="income"),
    ]
    assert not [f for f in failures(check("Deduction capped at 30 % of AGI: $270,000.", sheet)) if f.kind == "label"]
    assert [f for f in failures(check("Deduction capped at 30 % of AGI.", sheet)) if f.kind == "label"]
