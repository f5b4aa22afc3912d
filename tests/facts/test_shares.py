"""checks/shares.py: a percent taken of an amount, where the sheet says what it should be taken of."""

from reasoning.facts.check import check
from reasoning.facts.sheet import Fact

# A Vienna client selling part of a depot with a known gain in it, and a company sale with a known acquisition cost.
DEPOT = [
    Fact("Depot", "amount", 2_000_000, "EUR", role="holding"),
    Fact("unrealised gains", "amount", 400_000, "EUR"),
    Fact("residence", "place", "AT", "ISO 3166", role="residence"),
]
SALE = [
    Fact("sale price", "amount", 9_000_000, "EUR", role="holding"),
    Fact("acquisition cost", "amount", 100_000, "EUR"),
    Fact("residence", "place", "FR", "ISO 3166", role="residence"),
]


def failed_at(text, facts):
    return [text[f.start : f.end] for f in check(text, facts) if not f.ok]


def unverified(text, facts):
    return [f.detail for f in check(text, facts) if not f.verified and "charged on" in f.detail]


def test_a_gains_tax_taken_on_the_amount_sold_is_a_wrong_base():
    text = "KESt of 27.5% on the EUR 240,000 sold is about EUR 66,000."
    assert any("27.5%" in span for span in failed_at(text, DEPOT))
    assert not failed_at("KESt of 27.5% on the EUR 48,000 gain is about EUR 13,200.", DEPOT)


def test_a_rate_with_words_between_it_and_the_price_or_a_product_written_after_a_sale_is_a_wrong_base():
    assert failed_at("The 12.8% income-tax part on the EUR 9M price comes to EUR 1.152M.", SALE)
    assert failed_at("At 12.8%, selling EUR 500k of the shares costs EUR 64k of income tax.", DEPOT + SALE[1:2])


def test_a_rate_the_sheet_does_not_have_taken_of_an_amount_is_unverified_not_passed():
    text = "Inheritance tax: 6% of each heir's EUR 1M share, about EUR 60,000."
    assert unverified(text, SALE) and not failed_at(text, SALE)
    assert not unverified("The sale price is EUR 9M.", SALE)


# ---- a share between holdings in more forms (pass four) -----------------------------------------------------------

FAMILY = [
    Fact("brokerage account", "amount", 1_200_000, "USD", role="holding", text="brokerage $1.2M"),
    Fact("Roth IRA", "amount", 300_000, "USD", role="holding", text="Maya's Roth IRA $300k"),
    Fact("beach house", "amount", 900_000, "USD", role="holding", text="beach house in Maine $900k"),
    Fact("city condo", "amount", 600_000, "USD", role="holding", text="city condo in Boston $600k"),
]  # 3.0M in all; real estate 1.5M


def test_a_fraction_after_equals_or_worth_or_the_size_of():
    assert failed_at("The Roth IRA equals about a third of the brokerage account.", FAMILY)  # 25%
    assert failed_at("The city condo is worth about half the beach house.", FAMILY)  # 67%
    assert failed_at("The Roth IRA is about a quarter the size of the city condo.", FAMILY)  # 50%
    assert not failed_at("The Roth IRA is about a quarter of the brokerage account.", FAMILY)


def test_the_share_first_and_one_in_n():
    assert failed_at("Roughly one dollar in three of the brokerage account sits in Maya's Roth IRA.", FAMILY)
    assert not failed_at("Roughly one dollar in ten of their assets sits in Maya's Roth IRA.", FAMILY)


def test_a_share_of_their_real_estate_and_a_holding_named_by_its_place():
    assert failed_at("The Maine beach house is about a third of their real estate.", FAMILY)  # 60%
    assert not failed_at("The Maine beach house is about 60% of their real estate.", FAMILY)
    assert failed_at("The condo is about three quarters of what they own.", FAMILY)  # 20%


def test_a_surtax_taken_of_the_proceeds_is_a_wrong_base():
    """The NIIT is a tax on the gain: on the EUR 240k sold it is taken of the proceeds (the sheet has the gains)."""
    assert failed_at("NIIT at 3.8% on the EUR 240,000 of proceeds: about EUR 9,100.", DEPOT)


def test_a_bands_rate_taken_of_the_whole_is_a_wrong_base():
    """Welsh LTT and the French IFI tax each slice at its own rate (data/jurisdictions.toml bands)."""
    swansea = [Fact("residence", "place", "GB-WLS", "ISO 3166", role="residence")]
    assert failed_at("LTT at 10% of the £900,000 price: £90,000.", swansea)
    assert not failed_at("LTT at 10% of the £150,000 above £750,000: £15,000.", swansea)
    lille = [Fact("residence", "place", "FR-HDF", "ISO 3166", role="residence")]
    assert failed_at("The IFI at 1% on their €3.4M of property is €34,000.", lille)
    assert not failed_at("The IFI at 0.5% on the €500,000 slice is €2,500.", lille)


TRUST = [
    Fact("estate", "amount", 12_000_000, "USD", role="holding"),
    Fact("charitable trust", "amount", 2_000_000, "USD", role="holding"),
    Fact("cash target", "percent", 5.0, "%", base="brokerage", role="target"),
    Fact("brokerage", "amount", 800_000, "USD", role="holding"),
]


def test_a_percents_product_taken_of_another_amount_than_the_one_named():
    assert failed_at("A 4% annual payout from the charitable trust comes to $480k.", TRUST)  # 4% of the estate
    assert not failed_at("A 4% annual payout from the charitable trust comes to $80k.", TRUST)


def test_a_sheet_percents_product_taken_of_another_whole():
    assert failed_at("The 5% cash target on all assets of $2.8M means $140k in the brokerage.", TRUST)
    assert not failed_at("The 5% cash target means $40k in the brokerage, out of $2.8M in all.", TRUST)


HOLDINGS = [
    Fact("portfolio", "amount", 2_200_000, "EUR", role="holding"),
    Fact("BTP", "amount", 800_000, "EUR", role="holding"),
    Fact("savings account", "amount", 95_000, "EUR", role="holding"),
    Fact("savings minimum", "limit", 50_000, "EUR", role="minimum"),
    Fact("securities account", "amount", 740_000, "EUR", role="holding"),
    Fact("dollar bonds", "amount", 300_000, "EUR", role="holding"),
    Fact("bonds", "percent", 30.0, "%", base="portfolio", role="share"),
]


def shares_said(text):
    return [(f.ok, f.text) for f in check(text, HOLDINGS) if f.kind == "figure" and ("share" in f.detail or "checks out" in f.detail)]


def test_a_share_between_holdings_names_them_as_people_write_them():
    """The brackets' name ("Government bonds (BTP)"), one word more ("his personal portfolio"), and the holding of
    that name beside a floor of a like name ("the savings account", not the savings minimum)."""
    assert shares_said("Government bonds (BTP) account for roughly 50 % of his personal portfolio.") == [(False, "roughly 50 %")]
    assert shares_said("Government bonds (BTP) account for about 36% of his personal portfolio.") == [(True, "about 36%")]
    assert shares_said("The savings account is about a quarter of the securities account.") == [(False, "about a quarter")]
    assert shares_said("The savings account is about an eighth of the securities account.") == [(True, "about an eighth")]
    # "the dollar bonds" are the dollar bonds, not the bonds' share with a word more
    assert shares_said("The dollar bonds are about a seventh of the portfolio.") == [(True, "about a seventh")]


def test_a_holding_named_in_another_language_is_its_fact():
    swiss = [Fact("Pensionskasse", "amount", 1_000_000, "CHF", role="holding"),
             Fact("pension buy-in capacity", "amount", 120_000, "CHF")]  # fmt: skip
    assert failed_at("The Einkaufslücke is about a fifth of the Pensionskasse.", swiss)  # 12%
    assert not failed_at("The Einkaufslücke is about an eighth of the Pensionskasse.", swiss)
    french = [Fact("assurance-vie", "amount", 800_000, "EUR", role="holding"), Fact("assurance-vie gains", "amount", 200_000, "EUR")]
    assert failed_at("Gains are about a third of the contract's value.", french)  # 25%
    assert not failed_at("Gains are about a quarter of the contract's value.", french)


def test_a_share_written_between_two_amounts_is_their_ratio():
    """Whatever the sheet holds: the first amount must be that share of the second."""
    assert failed_at("The gifts total $456,000, about a fifth of her $3.8M of investments.", [])  # 12%
    assert failed_at("Sell $120k, 6% of the $2.4M portfolio.", [])  # 5%
    assert not failed_at("The gifts total $456,000, about an eighth of her $3.8M of investments.", [])
    assert not failed_at("The $900,000 cap is about 5.2% of $17.2M.", [])
    # a monthly amount beside a whole is a year's worth of it, most likely: left alone
    assert not failed_at("Spending of CHF 4,000 a month is about 5% of the CHF 960,000.", [])
