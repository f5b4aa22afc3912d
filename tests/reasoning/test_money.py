"""Money written for people: the precision it needs, never scientific notation."""

import pytest

from reasoning.money import usd


@pytest.mark.parametrize(
    "value, text",
    [
        (0, "0.00 USD"),
        (None, "0.00 USD"),
        (0.001, "0.001 USD"),
        (0.0265, "0.0265 USD"),
        (0.026518999999999997, "0.0265 USD"),
        (0.000123456789, "0.000123 USD"),
        (0.00001, "0.00001 USD"),
        (1e-12, "0.000000000001 USD"),
        (0.5, "0.50 USD"),
        (0.25, "0.25 USD"),
        (0.123456, "0.123 USD"),
        (0.9996, "1.00 USD"),
        (1, "1.00 USD"),
        (12.5, "12.50 USD"),
        (12.345, "12.35 USD"),
        (1234.5, "1,234.50 USD"),
        (-0.0265, "-0.0265 USD"),
        ("0.001", "0.001 USD"),
    ],
)
def test_usd(value, text):
    assert usd(value) == text


def test_usd_never_uses_scientific_notation():
    for exponent in range(-15, 7):
        assert "e" not in usd(1.5 * 10**exponent).lower()
