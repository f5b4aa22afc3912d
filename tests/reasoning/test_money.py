"""Money written for people one way everywhere (issue 16, item 10): four decimals, never scientific notation."""

import pytest

from reasoning.money import usd


@pytest.mark.parametrize(
    "value, text",
    [
        (0, "0.0000 USD"),
        (None, "0.0000 USD"),
        (0.00622, "0.0062 USD"),
        (0.2, "0.2000 USD"),
        (0.432, "0.4320 USD"),
        (0.026518999999999997, "0.0265 USD"),
        (0.00005, "0.0001 USD"),
        (0.00001, "< 0.0001 USD"),
        (1e-12, "< 0.0001 USD"),
        (0.5, "0.5000 USD"),
        (0.99996, "1.0000 USD"),
        (12.345, "12.3450 USD"),
        (1234.5, "1,234.5000 USD"),
        (-0.0265, "-0.0265 USD"),
        ("0.001", "0.0010 USD"),
    ],
)
def test_usd(value, text):
    assert usd(value) == text


def test_usd_never_uses_scientific_notation_and_always_four_places():
    for exponent in range(-15, 7):
        text = usd(1.5 * 10**exponent)
        assert "e" not in text.lower()
        assert text.startswith("<") or len(text.split(" ")[0].split(".")[1]) == 4
