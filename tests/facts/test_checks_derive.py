"""checks/derive.py (and the rates doc.py reads): derivations a reader redoes without the text writing them out."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

# A Geneva client with a sterling account; the sheet holds GBP/CHF 1.12 as the reader writes it.
SHEET = [
    Fact("portfolio", "amount", 3_000_000, "CHF", role="holding"),
    Fact("London account", "amount", 400_000, "GBP", role="holding"),
    Fact("GBP/CHF exchange rate", "amount", 1.12, "CHF", text="GBP/CHF 1.12"),
]


def failed(text, facts=SHEET):
    return failures(check(text, facts))


def test_a_holding_in_the_other_currency_at_the_sheets_rate_is_derived():
    assert failed("The sterling money is a small part of the whole, CHF 448k of CHF 3.448M.") == []


def test_a_holding_converted_the_wrong_way_at_the_sheets_rate_is_not_derived():
    # not derived, and with no cue presenting it as a result, unverified: never counted as checked
    text = "The sterling money is a small part of the whole, CHF 357k of CHF 3.357M."
    found = [f for f in check(text, SHEET) if f.text == "CHF 357k"]
    assert found and not any(f.verified and f.ok for f in found)


def test_a_rate_written_with_a_decimal_comma_is_read():
    sheet = SHEET[:2]
    assert failed("Zu GBP/CHF 1,12 ist das Londoner Konto about CHF 448k wert.", sheet) == []
    found = failed("At GBP/CHF 1,12 the London account is worth about CHF 357k.", sheet)
    assert found and "wrong way round" in found[0].detail


def test_a_gain_is_a_holding_less_its_cost_basis():
    sheet = [
        Fact("equities", "amount", 1_250_000, "EUR", role="holding"),
        Fact("equities cost basis", "amount", 830_000, "EUR"),
    ]
    assert failed("The equities now carry EUR 420k of appreciation, a third of their value.", sheet) == []
    assert failed("The equities now carry EUR 520k of appreciation, a third of their value.", sheet) != []


def test_the_other_part_of_a_whole_is_its_remainder_once_the_part_was_named():
    facts = [Fact("portfolio", "amount", 3_100_000, "EUR", role="holding"), Fact("bonds", "amount", 900_000, "EUR", role="holding")]
    assert failed("The bonds are about 29 % of the portfolio; the other €2.2M is in funds.", facts) == []
    assert failures(check("The bonds are about 29 % of the portfolio; the other €2.6M is in funds.", facts, final=True))
