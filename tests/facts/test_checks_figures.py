"""checks/figures.py: each amount is the client's, or derived from the client's; the forms people write."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

# A foundation: CHF 20M of assets, a 5% spending rate of them (CHF 1M a year).
SHEET = [
    Fact("foundation assets", "amount", 20_000_000, "CHF", role="holding"),
    Fact("spending rate", "percent", 5.0, "%", base="foundation assets", role="spending"),
    Fact("office lease", "amount", 90_000, "CHF", role="expense"),
]


def failed(text):
    return failures(check(text, SHEET))


def test_a_narrow_range_that_holds_a_derived_figure_passes_at_both_ends():
    assert failed("Plan on CHF 0.95–1.05 Mio. of grants each year.") == []
    assert failed("Plan on CHF 950k to CHF 1.1M of grants each year.") == []


def test_a_range_that_misses_the_figure_is_not_checked_and_fails_as_a_result():
    text = "Plan on CHF 1.2–1.3 Mio. of grants each year."
    assert failed(text) == [] and not all(f.verified for f in check(text, SHEET) if f.start >= 0)
    assert failed("5% of CHF 20M gives CHF 1.2–1.3 Mio. of grants each year.")


def test_a_wide_range_holds_nothing_by_chance():
    text = "Plan on CHF 0.5–1.5 Mio. of grants each year."
    assert not any(f.verified and f.ok for f in check(text, SHEET) if f.text == "1.5 Mio.")


# A Vienna client over target in equities: 70% today, 50% the target, of a EUR 900k depot (EUR 180k to move).
DEPOT = [
    Fact("depot", "amount", 900_000, "EUR", role="holding"),
    Fact("equities", "percent", 70.0, "%", base="depot", role="share"),
    Fact("equities target", "percent", 50.0, "%", base="depot", role="target"),
]


def test_the_gap_to_target_split_into_instalments_is_derived():
    assert failures(check("Across two years that makes eight quarterly sales of EUR 22.500.", DEPOT)) == []
    assert failures(check("Spread over the year, that is twelve monthly sales of EUR 15,000.", DEPOT)) == []


def test_a_wrong_instalment_of_the_gap_fails():
    # with no operand written, the instalment is unverified; as the result of the gap written, it fails
    text = "Across two years that makes eight quarterly sales of EUR 27.500."
    assert not any(f.verified for f in check(text, DEPOT) if f.text == "EUR 27.500")
    found = failures(check("The EUR 180.000 to move, in eight quarterly sales, makes EUR 27.500 each.", DEPOT))
    assert [f.text for f in found] == ["EUR 27.500"]


def test_more_in_a_holding_than_it_holds_fails_and_a_part_of_it_passes():
    found = failures(check("With EUR 1.1M in the depot, the sale can be spread out.", DEPOT))
    assert [f.text for f in found] == ["EUR 1.1M"] and "more than the depot holds" in found[0].detail
    assert failures(check("With EUR 180k in the depot set aside for bonds, the switch is easy.", DEPOT)) == []


def test_a_projection_may_exceed_todays_balance():
    assert not [f for f in failures(check("By 2035 there will be EUR 1.1M in the depot.", DEPOT)) if "holds" in f.detail]


def test_a_class_stated_in_money_is_its_share_of_the_base():
    assert failures(check("Equities, at 70 %, are roughly EUR 630k today.", DEPOT)) == []
    text = "The depot was reviewed in May. Equities, at 70 %, are roughly EUR 700k today."
    found = failures(check(text, DEPOT))
    assert [f.text for f in found] == ["EUR 700k"] and "EUR 630k" in found[0].detail


def test_a_class_after_a_change_or_at_its_target_is_not_todays_position():
    assert failures(check("After the switch, equities are EUR 450k.", DEPOT)) == []
    assert failures(check("The equities target is EUR 450k.", DEPOT)) == []


def test_put_with_a_person_as_its_object_states_a_result_not_a_proposal():
    estate = [Fact("estate", "amount", 8_000_000, "GBP", role="holding")]
    assert failures(check("That puts her £7.675M above the £325k nil-rate band.", estate)) == []
    assert [f.text for f in failures(check("That puts her £8.675M above the £325k nil-rate band.", estate))] == ["£8.675M"]
    assert failures(check("Give her £40k now, from the cash.", estate)) == []


def test_a_rate_the_sentence_computes_from_its_own_amounts_is_no_restatement_of_the_sheets():
    # the sheet's spending rate is 5 %; a CHF 1.2M cap on CHF 20M is 6 %, written as the cap's own rate
    assert failed("At CHF 20M the CHF 1.2M cap equals a spending rate of about 6%.") == []
    assert failed("At CHF 20M the grants equal a spending rate of about 6%.") != []  # no amounts give 6 %


def test_the_upper_end_of_a_range_in_words_is_no_share_of_the_client():
    assert failed("The levy will take between 40 and 50 % of the foundation assets' yield.") == []


def test_a_threshold_after_exceeds_in_a_sentence_about_a_rule_is_undecided():
    found = check("The allowance is of no help: it phases out completely once the gain exceeds CHF 45,160.", SHEET)
    assert failures(found) == []
    assert any(not f.verified and "CHF 45,160" in f.text for f in found)


def test_what_remains_of_a_named_position_after_a_written_sale_must_follow():
    sheet = SHEET + [Fact("equity sleeve", "percent", 60.0, "%", base="foundation assets", role="share")]
    # the equity sleeve is 60 % of CHF 20M, CHF 12M: after selling CHF 2M it holds CHF 10M
    assert failures(check("After selling CHF 2M, the equity sleeve holds CHF 10M.", sheet)) == []
    found = failures(check("After selling CHF 2M, the equity sleeve holds CHF 11M.", sheet))
    assert found and "CHF 10M" in found[0].detail


def test_a_per_person_goal_for_all_its_people_is_no_restatement_of_it():
    sheet = [
        Fact("grandchildren", "person", 4, "people", role="grandchild"),
        Fact("gift per grandchild", "amount", 19_000, "USD", role="goal"),
    ]
    assert failures(check("That is less than one year of grandchild gifts ($76,000).", sheet)) == []
    assert failures(check("That is less than one year of grandchild gifts ($66,000).", sheet)) != []


def test_todays_share_in_a_sentence_about_a_goal_is_no_restatement_of_the_goals_figure():
    sheet = [Fact("goal", "goal", "single stock under 20% of investable assets over 4 years"),
             Fact("employer stock", "amount", 4_956_000, "USD", role="holding")]  # fmt: skip
    text = "Total investable assets are $7.63M, of which the single stock is about 65%."
    assert failures(check(text, sheet)) == []
    assert failures(check("Bring the single stock under 25% of investable assets over 4 years.", sheet)) != []


def test_the_change_named_after_from_a_to_b_is_their_difference():
    assert failures(check("Bonds go from CHF 440'200 to CHF 568'000, a purchase of CHF 127'800.", SHEET)) == []
    found = failures(check("Bonds go from CHF 440'200 to CHF 568'000, a purchase of CHF 137'800.", SHEET))
    assert found and "127,800" in found[0].detail


def test_a_years_worth_of_a_monthly_product_follows_from_it():
    """"CHF 3'780 a month (150 % of CHF 2'520), i.e. CHF 45'360 a year": twelve months of the product."""
    right = "The annuity is CHF 3'780 a month (150 % of CHF 2'520), i.e. CHF 45'360 a year."
    assert failures(check(right, [])) == []
    wrong = "The annuity is CHF 3'780 a month (150 % of CHF 2'520), i.e. CHF 48'360 a year."
    assert [f.text for f in failures(check(wrong, []))] == ["CHF 48'360"]


def test_a_quantity_per_or_on_an_item_is_not_the_item():
    """"Gain per share €12.80; on the whole position €1,228,800": neither the share price nor the position's value."""
    sheet = [Fact("share price", "amount", 31.4, "EUR"), Fact("Palfinger position", "amount", 3_014_400, "EUR",
                                                               role="holding")]  # fmt: skip
    assert failures(check("Gain per share €12.80; on the whole position €1,228,800.", sheet)) == []
    assert [f.text for f in failures(check("Share price €12.80.", sheet))] == ["€12.80"]


def test_years_of_a_monthly_figure_are_not_a_restatement_of_it():
    """"Four years of spending (£336,000)": 48 months of £7,000, not the monthly spending misstated."""
    sheet = [Fact("monthly spending", "amount", 7_000, "GBP", role="expense")]
    assert failures(check("Four years of spending (£336,000) must come from the GIA.", sheet)) == []
    assert [f.text for f in failures(check("Monthly spending (£9,000) is covered.", sheet))] == ["£9,000"]
