"""checks/results.py: an amount the checker cannot place fails only where the sentence presents it as a result; else
it is unverified (ok, never counted as checked)."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

# A retired couple in Lisbon: a brokerage account, a rental flat with a loan on it, a yearly pension.
SHEET = [
    Fact("residence", "place", "PT", "ISO 3166"),
    Fact("brokerage account", "amount", 2_600_000, "EUR", role="holding"),
    Fact("rental flat", "amount", 900_000, "EUR", role="holding"),
    Fact("flat loan", "amount", 250_000, "EUR", role="liability"),
    Fact("annual pension", "amount", 48_000, "EUR", role="income"),
]


def findings(text):
    return [f for f in check(text, SHEET) if f.start >= 0]


def at(text, figure):
    return [f for f in findings(text) if f.text == figure]


def test_an_unplaced_figure_with_no_derivation_cue_is_unverified_not_failed():
    text = "The grandchildren's schooling will cost EUR 35,000 a year from here on."
    (found,) = at(text, "EUR 35,000")
    assert found.ok and not found.verified
    assert failures(findings(text)) == []


def test_a_result_after_a_cue_over_placed_figures_fails_when_it_does_not_follow():
    text = "Selling EUR 400,000 of the brokerage account leaves EUR 2.5M there."
    (found,) = at(text, "EUR 2.5M")
    assert not found.ok
    assert at("Selling EUR 400,000 of the brokerage account leaves EUR 2.2M there.", "EUR 2.2M")[0].ok


def test_a_result_of_a_figure_the_checker_cannot_place_is_unverified():
    # EUR 610,000 is on no sheet: the EUR 540,000 said to follow from it cannot be placed either
    text = "The heirs would pay 28 % of (EUR 610,000 minus EUR 120,000) = EUR 540,000."
    (found,) = at(text, "EUR 540,000")
    assert found.ok and not found.verified


def test_one_written_product_decides_its_result_whatever_its_operand():
    assert failures(findings("Twelve per cent on EUR 730,000 comes to EUR 78,600 over the decade."))
    assert not failures(findings("Twelve per cent on EUR 730,000 comes to EUR 87,600 over the decade."))


def test_a_count_at_an_amount_each_is_a_product():
    assert failures(findings("Five nephews at EUR 31,000 each receive EUR 165,000 between them."))
    assert not failures(findings("Five nephews at EUR 31,000 each receive EUR 155,000 between them."))


def test_equal_slices_divide_the_amount():
    assert not failures(findings("Sell the EUR 600,000 in four equal slices, that is EUR 150,000 a quarter."))


def test_a_value_given_to_a_named_item_of_the_client_is_checked():
    assert failures(findings("The rental flat is worth EUR 1.1M today."))


def test_two_named_items_and_a_change_derive_their_difference():
    assert not failures(findings("Net of the flat loan, the rental flat is worth EUR 650,000 to them."))
    assert failures(findings("Net of the flat loan, the rental flat is worth EUR 560,000 to them."))


def test_a_figure_derived_in_an_earlier_sentence_is_known_to_the_later_ones():
    text = "20 % of the brokerage account is EUR 520,000. Half of that goes to each daughter: EUR 260,000."
    assert not failures(findings(text))
    assert all(f.verified for f in at(text, "EUR 260,000"))


def test_months_of_a_yearly_item_are_a_derivation():
    assert not failures(findings("Over the next six months the annual pension brings in EUR 24,000."))


def test_a_share_of_a_named_item_is_of_that_item_not_of_another_that_happens_to_fit():
    # 5 % of the brokerage account (EUR 2.6M) is EUR 130,000; EUR 45,000 is 5 % of the rental flat, not of the account
    assert failures(findings("A 5 % yearly draw from the brokerage account would be EUR 45,000."))
    assert not failures(findings("A 5 % yearly draw from the brokerage account would be EUR 130,000."))


def test_an_unplaced_figure_is_unverified_in_a_step_and_fails_in_the_answer_the_client_reads():
    from reasoning.facts.check import check
    from reasoning.facts.sheet import Fact

    facts = [Fact("portfolio", "amount", 3e6, "CHF"), Fact("equities target", "percent", 60, "%", base="portfolio",
                                                           role="target")]  # fmt: skip
    text = "70% USD 2,240,000 (rebalancing in 6 months)"  # SmolLM2's answer to a CHF 3M rebalancing
    step = [f for f in check(text, facts) if f.text == "USD 2,240,000"]
    answer = [f for f in check(text, facts, final=True) if f.text == "USD 2,240,000"]
    assert step and step[0].ok and not step[0].verified
    assert answer and not answer[0].ok


def test_givers_who_each_give_are_a_factor_no_number_writes():
    # "Ann and Bob can each give the five grandchildren $19,000": two givers × five × $19,000, not five × $19,000
    facts = [Fact("Ann", "person", 1, "people", role="client"), Fact("Bob", "person", 1, "people", role="spouse")]
    text = "Ann and Bob can each give the five grandchildren $19,000 a year: $190,000 in total."
    assert failures(check(text, facts)) == []
    alone = "Ann can give each of the five grandchildren $19,000 a year: $190,000 in total."
    assert "$190,000" in [f.text for f in failures(check(alone, facts))]


def test_a_result_of_the_laws_share_named_in_words_must_follow():
    from reasoning.facts.check import check, failures
    from reasoning.facts.sheet import Fact

    sheet = [
        Fact("residence", "place", "US-OR", "ISO 3166", role="residence"),
        Fact("foundation assets", "amount", 64_000_000, "USD", role="holding"),
    ]
    # a private foundation's minimum payout is 5 % (IRC § 4942): USD 3.2M on USD 64M
    assert failures(check("The minimum payout comes to $3.2M on $64M of assets.", sheet)) == []
    found = failures(check("The minimum payout comes to $2.3M on $64M of assets.", sheet))
    assert found and "3.2M" in found[0].detail


def test_so_many_periods_of_an_amount_multiply_it_and_a_further_term_stops_the_product():
    sheet = [Fact("residence", "place", "GB-SCT", "ISO 3166"), Fact("SIPP", "amount", 780_000, "GBP", role="holding")]
    assert failures(check("Four years of £50,000 come to £200,000.", sheet)) == []
    assert failures(check("Four years of £50,000 come to £250,000.", sheet)) != []
    text = "Four years of £50,000 taxable plus the matching tax-free cash take about £266,700 out of the SIPP."
    assert failures(check(text, sheet)) == []


def test_a_yearly_figure_restated_per_month_is_no_product_of_the_percent_before_it():
    sheet = [Fact("residence", "place", "GB-NIR", "ISO 3166"), Fact("pot", "amount", 480_000, "GBP", role="holding")]
    assert failures(check("The 4% ceiling on drawdown is £19,200 a year, i.e. £1,600 a month.", sheet)) == []
    assert failures(check("The 4% ceiling on drawdown is £19,200 a year, i.e. £1,900 a month.", sheet)) != []


def test_what_parts_leave_of_a_whole_the_sentence_does_not_write_is_unverified():
    """"£150,000 of cash + the euro account's £158,120 leave £404,680 to come from the GIA": the need they are taken
    from is in another sentence. One amount less, with the whole named, still fails."""
    sheet = [Fact("residence", "place", "GB", "ISO 3166"), Fact("cash", "amount", 150_000, "GBP", role="holding"),
             Fact("GIA", "amount", 900_000, "GBP", role="holding"),
             Fact("euro account", "amount", 158_120, "GBP", role="holding")]  # fmt: skip
    text = "£150,000 of cash + the euro account's £158,120 leave £404,680 to come from the GIA."
    (found,) = [f for f in check(text, sheet) if f.text == "£404,680"]
    assert found.ok and not found.verified
    assert not at("Selling EUR 400,000 of the brokerage account leaves EUR 2.5M there.", "EUR 2.5M")[0].ok


def test_a_tax_on_an_item_is_not_the_item():
    """"EUR 7,000 of flat tax" is no value of the rental flat: a figure next to a tax word is a tax."""
    (found,) = at("For the flat that is EUR 7,000 of tax.", "EUR 7,000")
    assert found.ok and not found.verified
