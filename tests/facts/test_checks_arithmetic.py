"""checks/arithmetic.py: sums, products and conversions the text writes out, recomputed (issue 30, section 2)."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

SHEET = [
    Fact("sale price", "amount", 9_000_000, "EUR", role="holding"),
    Fact("securities account", "amount", 700_000, "EUR", role="holding"),
]


def arithmetic(text):
    return [f for f in check(text, SHEET) if f.kind == "arithmetic"]


def test_a_bracketed_sum_of_bare_thousands_is_read_at_their_own_scale():
    found = arithmetic("Both taxes come to roughly €2.41M (1,163k + 1,244k) in all.")
    assert [f.ok for f in found] == [True]


def test_a_wrong_bracketed_sum_of_bare_thousands_is_still_flagged():
    found = arithmetic("Both taxes come to roughly €2.61M (1,160k + 1,250k) in all.")
    assert [f.ok for f in found] == [False]
    assert "EUR 2.41M" in found[0].detail


def test_a_bracketed_sum_in_millions_is_still_scaled_up():
    assert [f.ok for f in arithmetic("Together about EUR 9.7M (9 + 0.7).")] == [True]


def test_an_operand_written_as_a_clients_figure_is_that_figure_exactly():
    # "EUR 9 Mio." could mean EUR 8.5-9.5M as written, but it is the sale price, EUR 9,000,000: 40% of it is 3.6M
    assert [f.ok for f in arithmetic("Her part of the price: 40 % × EUR 9 Mio. = EUR 3,6 Mio.")] == [True]
    assert [f.ok for f in arithmetic("Her part of the price: 40 % × EUR 9 Mio. = EUR 3,75 Mio.")] == [False]


def test_an_operand_that_is_no_clients_figure_keeps_its_written_range():
    assert [f.ok for f in arithmetic("A quarter of the buyer's offer: 25 % × EUR 8 Mio. = EUR 2,1 Mio.")] == [True]


def test_so_many_of_an_amount_is_a_product():
    assert [f.ok for f in arithmetic("Seven yearly gifts of €36k add up to €252k.")] == [True]
    assert [f.ok for f in arithmetic("Seven yearly gifts of €36k add up to €216k.")] == [False]
    assert [f.ok for f in arithmetic("12 monthly draws of EUR 5,000 come to EUR 50,000.")] == [False]


def test_points_of_an_amount_are_a_percent_of_it():
    assert [f.ok for f in arithmetic("Fifteen points of EUR 700k comes to EUR 105k.")] == [True]
    found = arithmetic("Trimming by 15 points of EUR 700k means selling EUR 150k.")
    assert [f.ok for f in found] == [False]
    assert "EUR 105k" in found[0].detail


def test_a_change_from_one_share_to_another_is_not_read_as_the_second_share():
    assert arithmetic("Going from 60% to 75% of EUR 700k means buying EUR 105k.") == []


def test_a_conversion_called_approximate_may_be_rounded():
    sheet = SHEET + [Fact("Zurich account", "amount", 300_000, "CHF", role="holding")]
    text = "Quoted as CHF/EUR 1,064, the CHF 300'000 come to roughly EUR 320.000."
    assert [f.ok for f in check(text, sheet) if f.kind == "arithmetic"] == [True]


def test_so_many_at_an_amount_each_then_a_colon_is_a_product_and_its_result():
    assert [f.ok for f in arithmetic("Three grandchildren at about €45,500 each: some €136,500 in all.")] == [True]
    found = arithmetic("Three grandchildren at about €45,500 each: some €116,500 in all.")
    assert [f.ok for f in found] == [False] and "EUR 136,500" in found[0].detail


def test_a_bracketed_sum_after_its_total_is_still_read():
    assert [f.ok for f in arithmetic("Both accounts hold EUR 9.7M (EUR 9M + EUR 0.7M).")] == [True]


def test_a_colon_that_opens_a_sum_with_its_own_result_is_no_result():
    assert [f.ok for f in arithmetic("Four tranches of EUR 175k: EUR 175k x 4 = EUR 700k.")] == [True]


def test_a_sums_first_term_with_its_scale_in_words_is_read_at_that_scale():
    assert [f.ok for f in arithmetic("She keeps EUR 9.75 million: 9.05 million + 700,000.")] == [True]
    assert [f.ok for f in arithmetic("She keeps EUR 9.95 million: 9.05 million + 700,000.")] == [False]


def test_where_amounts_group_thousands_with_points_so_do_the_bare_numbers_beside_them():
    # German style: points group thousands and a comma is the decimal mark, in the operands too
    assert [f.ok for f in arithmetic("Gewinn: 900.000 − 700.000 = EUR 200.000.")] == [True]
    assert [f.ok for f in arithmetic("Gewinn: 900.000 − 700.000 = EUR 250.000.")] == [False]
    assert [f.ok for f in arithmetic("In Franken: 700.000 × 0,94 = EUR 658.000.")] == [True]
    # a rate next to an amount with a scale keeps its point: "$1.2M × 0.925 = €1.11M"
    assert [f.ok for f in arithmetic("Converted, $1.2M × 0.925 = €1.11M.")] == [True]


def test_a_figure_after_on_is_a_base_not_the_result_of_what_follows():
    # "on €5M: 2 % of ... plus ..., i.e. a + b = c": the colon introduces the tax on that base, not €5M itself
    text = "Tax on €5M: 2 % of €3M plus 3 % of €2M, i.e. €60,000 + €60,000 = €120,000."
    assert not [f for f in arithmetic(text) if not f.ok]
    text = "Tax: 0.5 % on €800k + 0.7 % on €600k = €4,000 + €4,200 = €8,200."
    assert not [f for f in arithmetic(text) if not f.ok]
    text = "Tax: 0.5 % on €800k + 0.7 % on €600k = €4,000 + €4,200 = €9,200."
    assert [f for f in arithmetic(text) if not f.ok]  # the chain's own sum still checked


def test_a_surcharge_is_a_percent_of_the_rate_not_added_to_it():
    assert not [f for f in arithmetic("At the 45 % top rate plus 5,5 % Soli (47,475 %) the tax is high.") if not f.ok]
    assert [f for f in arithmetic("At the 45 % top rate plus 5,5 % Soli (48,475 %) the tax is high.") if not f.ok]


def test_a_colon_that_opens_a_split_or_a_list_introduces_no_result():
    text = "Eight quarterly instalments of EUR 250.000 each: EUR 150.000 into equities and EUR 100.000 into bonds."
    assert not [f for f in failures(check(text, SHEET)) if f.kind in ("arithmetic", "figure")]
    text = "In total she gives away EUR 600.000: 2 × 200.000 to the children and 4 × 50.000 to the grandchildren."
    assert not [f for f in arithmetic(text) if not f.ok]


def test_a_slash_allocation_is_a_mix_not_a_division():
    text = "Rebalancing to 60/30/10 means selling about EUR 70k of the securities account."
    assert not [f for f in arithmetic(text) if not f.ok]


def test_a_figure_after_a_relation_word_is_no_subject_of_the_expression_after_it():
    sheet = [Fact("cash", "amount", 310_000, "USD", role="holding")]
    text = "Cash above the $250,000 floor is $310,000 − $250,000 = $60,000."
    assert not [f for f in check(text, sheet) if f.kind == "arithmetic" and not f.ok]
    text = "Cash above the $250,000 floor is $310,000 − $250,000 = $70,000."
    assert [f for f in check(text, sheet) if f.kind == "arithmetic" and not f.ok]


def test_figures_grouped_with_two_points_and_shares_at_a_price_are_read():
    sheet = [Fact("Fixpreis", "amount", 4_800_000, "EUR", role="holding")]
    assert not [f for f in failures(check("Der Gewinn beträgt 4.800.000 − 250.000 = 4.550.000 EUR.", sheet))]
    assert [f for f in check("Der Gewinn beträgt 4.800.000 − 250.000 = 4.650.000 EUR.", sheet) if not f.ok]
    shares = [Fact("employer shares", "amount", 4_956_000, "USD", role="holding")]
    assert not failures(check("42,000 shares at $118 = $4.956M.", shares))
    assert failures(check("42,000 shares at $118 = $4.596M.", shares))


def test_swiss_grouped_numbers_times_a_percent_and_what_an_annuity_would_pay():
    sheet = [Fact("residence", "place", "CH-SG", "ISO 3166"), Fact("Pensionskasse", "amount", 980_000, "CHF", role="holding")]
    assert not failures(check("A full annuity would pay 980'000 × 5,4 % = CHF 52'920 a year.", sheet))
    assert failures(check("A full annuity would pay 980'000 × 5,4 % = CHF 54'920 a year.", sheet))
    pot = [Fact("pot", "amount", 480_000, "GBP", role="holding")]
    assert not failures(check("Annuitising all £480,000 at 6.8% would pay £32,640 a year.", pot))
    assert failures(check("Annuitising all £480,000 at 6.8% would pay £36,240 a year.", pot))


def test_a_monthly_amount_as_a_share_of_a_whole_is_a_years_worth_of_it():
    assert [f.ok for f in arithmetic("Spending of CHF 4,000 a month is about 5% of the CHF 960,000.")] == [True]
    assert [f.ok for f in arithmetic("Spending of CHF 4,000 a month is about 8% of the CHF 960,000.")] == [False]
    assert [f.ok for f in arithmetic("Spending of CHF 4,000 is about 5% of the CHF 960,000.")] == [False]
