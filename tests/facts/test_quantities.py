"""Amounts, percents, ages and years as people write them; what is not a quantity; matching and writing them."""

import pytest

from reasoning.facts.quantities import (
    Quantity,
    currency_tables,
    find_quantities,
    format_amount,
    format_percent,
    matches,
    parse_amount,
    parse_number,
)


def only(text):
    found = find_quantities(text)
    assert len(found) == 1, found
    q = found[0]
    assert q.text == text[q.start : q.end]
    return q


@pytest.mark.parametrize(
    "text, value, unit, span, precision, scaled",
    [
        ("$3.2M", 3_200_000, "USD", "$3.2M", 50_000, True),
        ("USD 2.4 million", 2_400_000, "USD", "USD 2.4 million", 50_000, True),
        ("CHF 1'800'000", 1_800_000, "CHF", "CHF 1'800'000", 0.5, False),
        ("CHF 1’800’000", 1_800_000, "CHF", "CHF 1’800’000", 0.5, False),
        ("€650k", 650_000, "EUR", "€650k", 500, True),
        ("1.8 Mio. CHF", 1_800_000, "CHF", "1.8 Mio. CHF", 50_000, True),
        ("2,5 Mio. EUR", 2_500_000, "EUR", "2,5 Mio. EUR", 50_000, True),
        ("$400k basis", 400_000, "USD", "$400k", 500, True),
        ("US$ 1.2m", 1_200_000, "USD", "US$ 1.2m", 50_000, True),
        ("Fr. 900'000", 900_000, "CHF", "Fr. 900'000", 0.5, False),
        ("SFr. 2.5 Mio.", 2_500_000, "CHF", "SFr. 2.5 Mio.", 50_000, True),
        ("£750,000", 750_000, "GBP", "£750,000", 0.5, False),
        ("GBP 2m", 2_000_000, "GBP", "GBP 2m", 500_000, True),
        ("EUR 1.2bn", 1_200_000_000, "EUR", "EUR 1.2bn", 50_000_000, True),
        ("1.2 billion euros", 1_200_000_000, "EUR", "1.2 billion euros", 50_000_000, True),
        ("3 million dollars", 3_000_000, "USD", "3 million dollars", 500_000, True),
        ("two million dollars", 2_000_000, "USD", "two million dollars", 500_000, True),
        ("half a million euros", 500_000, "EUR", "half a million euros", 500_000, True),
        ("500 Swiss francs", 500, "CHF", "500 Swiss francs", 0.5, False),
        ("1.800.000 EUR", 1_800_000, "EUR", "1.800.000 EUR", 0.5, False),
        ("EUR 1.250", 1250, "EUR", "EUR 1.250", 0.5, False),
        ("CHF 1 800 000", 1_800_000, "CHF", "CHF 1 800 000", 0.5, False),
        ("USD 1,234.56", 1234.56, "USD", "USD 1,234.56", 0.005, False),
        ("650 €", 650, "EUR", "650 €", 0.5, False),
        ("CA$ 2M", 2_000_000, "CAD", "CA$ 2M", 500_000, True),
    ],
)
def test_it_reads_amounts_as_people_write_them(text, value, unit, span, precision, scaled):
    q = only(text)
    assert (q.kind, q.value, q.unit, q.text, q.scaled) == ("amount", value, unit, span, scaled)
    assert q.precision == pytest.approx(precision)


@pytest.mark.parametrize(
    "text, value, span, precision",
    [
        ("70%", 70, "70%", 0.5),
        ("70 %", 70, "70 %", 0.5),
        ("12.5 percent", 12.5, "12.5 percent", 0.05),
        ("seventy percent", 70, "seventy percent", 0.5),
        ("70 per cent", 70, "70 per cent", 0.5),
        ("12,5 %", 12.5, "12,5 %", 0.05),
    ],
)
def test_it_reads_percents(text, value, span, precision):
    q = only(text)
    assert (q.kind, q.value, q.unit, q.text) == ("percent", value, "%", span)
    assert q.precision == pytest.approx(precision)


@pytest.mark.parametrize(
    "text, value, span",
    [
        ("aged 58", 58, "58"),
        ("a 58-year-old engineer", 58, "58"),
        ("she is 58 years old", 58, "58"),
        ("retires at age 62", 62, "62"),
        ("she is 61.", 61, "61"),
        ("A Californian, 58, holds", 58, "58"),
        ("New client, Californian, 58.", 58, "58"),
        ("Anna (58) owns", 58, "58"),
        ("a sixty-eight-year-old", 68, "sixty-eight"),
        ("he is seventy-four, she", 74, "seventy-four"),
        ("NY client, seventy, widower", 70, "seventy"),
        ("she plans to retire at 62", 62, "62"),
        ("Couple in Surrey, both 68, British", 68, "68"),
        ("Cliente, 63 ans, veuve", 63, "63"),
        ("RMDs start at 70½.", 70.5, "70½"),
    ],
)
def test_it_reads_ages(text, value, span):
    q = only(text)
    assert (q.kind, q.value, q.unit, q.text) == ("age", value, "years", span)


def test_two_ages_of_a_couple():
    assert [q.value for q in find_quantities("Singapore-based couple, 50 and 48. Portfolio")] == [50, 48]
    assert [q.value for q in find_quantities("A couple, 62 and 60, hold")] == [62, 60]


@pytest.mark.parametrize("text", ["by 2031", "in 2029", "2031", "from 1995"])
def test_it_reads_years_from_1990_to_2100(text):
    q = only(text)
    assert (q.kind, q.unit, q.text) == ("year", "", text.split()[-1])


@pytest.mark.parametrize(
    "text",
    [
        "4 9 10 13",
        "Use 4, 9, 10 and 13 to make 24.",
        "two children",
        "for 10 years",
        "a 10-year horizon",
        "a 401(k)",
        "her pillar 3a",
        "the S&P 500",
        "2,000 shares and 2000 options",
        "Form 1040 and section 2035",
        "a 60/40 mix",
        "TOP 10 holdings",
        "he is 45 minutes away",
        "in 1850",
        "she has 3 kids, 12, 14.",
        "prices at 5.",
    ],
)
def test_a_bare_number_or_a_code_is_not_a_quantity(text):
    assert find_quantities(text) == []


def test_a_problem_reads_in_order_without_overlaps():
    text = (
        "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock, cost basis $400k, "
        "salary $450k. By 2031 she wants to retire."
    )
    found = find_quantities(text)
    assert [(q.kind, q.value, q.text) for q in found] == [
        ("age", 58, "58"),
        ("percent", 70, "70%"),
        ("amount", 3_200_000, "$3.2M"),
        ("amount", 400_000, "$400k"),
        ("amount", 450_000, "$450k"),
        ("year", 2031, "2031"),
    ]
    assert all(text[q.start : q.end] == q.text for q in found)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))


def test_a_currency_written_before_the_figure_wins_over_one_after():
    found = find_quantities("in 2029 CHF 500k")
    assert [(q.kind, q.text) for q in found] == [("year", "2029"), ("amount", "CHF 500k")]


def test_a_year_before_a_currency_name_is_a_year():
    assert [(q.kind, q.value) for q in find_quantities("$1M in 2024 dollars")] == [
        ("amount", 1_000_000),
        ("year", 2024),
    ]


def test_ranges_give_both_ends():
    assert [(q.value, q.unit, q.text) for q in find_quantities("$1-2M")] == [
        (1_000_000, "USD", "$1"),
        (2_000_000, "USD", "2M"),
    ]
    assert [(q.value, q.text) for q in find_quantities("3-4% a year")] == [(3, "3"), (4, "4%")]


def test_currency_tables_come_from_cldr():
    codes, symbols, names = currency_tables()
    assert {"USD", "EUR", "CHF", "GBP", "JPY"} <= codes
    assert "TOP" not in codes  # an English word in capitals
    assert symbols["€"] == "EUR" and symbols["£"] == "GBP" and symbols["US$"] == "USD"
    assert symbols["$"] == "USD" and symbols["Fr."] == "CHF"  # the documented overrides
    assert names["swiss francs"] == "CHF" and names["euros"] == "EUR" and names["schweizer franken"] == "CHF"


def test_parse_amount_reads_one_amount_alone():
    assert parse_amount("CHF 1'800'000") == (1_800_000, "CHF")
    assert parse_amount(" $3.2M ") == (3_200_000, "USD")
    assert parse_amount("2,5 Mio. EUR") == (2_500_000, "EUR")
    assert parse_amount("3.2M") is None  # no currency
    assert parse_amount("$3.2M and $400k") is None
    assert parse_amount("salary $450k") is None


def test_parse_number_reads_a_figure_with_its_scale():
    assert parse_number("3.2M") == 3_200_000
    assert parse_number("1'800'000") == 1_800_000
    assert parse_number("70") == 70
    assert parse_number("2,5 Mio.") == 2_500_000
    assert parse_number("$3.2M") is None
    assert parse_number("many") is None


def test_matches_within_the_precision_written():
    q = only("$3.2M")
    assert matches(q, 3_200_000, "USD")
    assert matches(q, 3_240_000, "USD")  # "$3.2M" may stand for 3.24M
    assert not matches(q, 3_260_000, "USD")
    assert not matches(q, 3_200_000, "EUR")
    exact = only("CHF 1'800'000")
    assert matches(exact, 1_800_000.0000001, "CHF") and not matches(exact, 1_800_001, "CHF")
    assert matches(only("70%"), 70.4, "%") and not matches(only("70%"), 71, "%")


@pytest.mark.parametrize(
    "value, unit, written",
    [
        (3_200_000, "USD", "USD 3.2M"),
        (2_240_000, "USD", "USD 2.24M"),
        (650_000, "CHF", "CHF 650k"),
        (1_250_000, "EUR", "EUR 1.25M"),
        (746_666.67, "USD", "USD 746,667"),
        (1_200_000_000, "EUR", "EUR 1.2bn"),
        (1_234_000, "USD", "USD 1.234M"),
        (1_500, "USD", "USD 1,500"),
        (99.5, "USD", "USD 99.5"),
        (-50_000, "USD", "USD -50k"),
    ],
)
def test_format_amount_is_canonical_and_reads_back(value, unit, written):
    assert format_amount(value, unit) == written
    q = only(written)
    assert (q.kind, q.unit, q.text) == ("amount", unit, written)
    assert q.value == pytest.approx(round(value) if abs(value) >= 1000 else value, abs=0.01)


@pytest.mark.parametrize("value, written", [(70, "70%"), (44.444, "44.4%"), (0.25, "0.25%"), (12.5, "12.5%")])
def test_format_percent_reads_back(value, written):
    assert format_percent(value) == written
    q = only(written)
    assert (q.kind, q.text) == ("percent", written)


def test_quantity_is_frozen():
    q = only("70%")
    assert isinstance(q, Quantity)
    with pytest.raises(AttributeError):
        q.value = 1


def test_a_percent_with_three_decimals_after_a_comma_and_a_space_is_a_decimal_comma():
    from reasoning.facts.quantities import find_quantities

    (q,) = [x for x in find_quantities("Abgeltungsteuer: 26,375 % on the gain.") if x.kind == "percent"]
    assert q.value == 26.375
    (q,) = [x for x in find_quantities("The stock rose 1,200% since the listing.") if x.kind == "percent"]
    assert q.value == 1200


def test_a_figure_grouped_with_spaces_after_its_currency_is_read_whole_at_a_sentence_end():
    found = [(q.text, q.value) for q in find_quantities("430 000 €, soit environ CHF 404 000.") if q.kind == "amount"]
    assert found == [("430 000 €", 430000.0), ("CHF 404 000", 404000.0)]
