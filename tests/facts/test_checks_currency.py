"""checks/currency.py: two currencies combined with no rate, or one to one where the rate is known."""

from reasoning.facts.check import check, failures
from reasoning.facts.sheet import Fact

# A Milan client with a dollar account; the sheet holds EUR/USD 1.10 as the reader writes it.
SHEET = [
    Fact("deposit account", "amount", 600_000, "EUR", role="holding"),
    Fact("New York account", "amount", 440_000, "USD", role="holding"),
    Fact("EUR/USD exchange rate", "amount", 1.10, "USD", text="EUR/USD 1.10"),
]


def currency(text):
    return [f for f in failures(check(text, SHEET)) if f.kind == "currency"]


def test_a_difference_taken_one_to_one_where_a_rate_is_known_is_flagged():
    found = currency("The USD 440,000 falls short of the EUR 600,000 deposit by EUR 160,000.")
    assert [f.text for f in found] == ["EUR 160,000"]
    assert "one to one" in found[0].detail and "EUR 200k" in found[0].detail


def test_a_sum_taken_one_to_one_is_flagged_and_a_converted_one_passes():
    assert currency("Her two accounts, EUR 600,000 and USD 440,000, hold EUR 1,040,000 in all.")
    assert currency("Her two accounts, EUR 600,000 and USD 440,000, hold EUR 1,000,000 in all.") == []


def test_one_figure_written_and_on_the_sheet_is_not_added_twice_across_currencies():
    from reasoning.facts.check import check, failures
    from reasoning.facts.sheet import Fact

    sheet = [
        Fact("gift per child", "amount", 250_000, "EUR", role="goal"),
        Fact("US depot", "amount", 300_000, "USD", role="holding"),
        Fact("EUR/USD exchange rate", "amount", 1.12, "USD", text="EUR/USD 1.12"),
    ]
    # 800k is 2 × 400k, not 250k + 250k + USD 300k: the gift written and the gift on the sheet are one figure
    text = "Per child, the 250.000 EUR is well inside the 800.000 EUR that both parents together may give."
    assert [f for f in failures(check(text, sheet)) if f.kind == "currency"] == []
