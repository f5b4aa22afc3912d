"""The one way money is written for people, in the pages, the admin, the API's words and the terminal:
four decimal places, "0.0062 USD", "0.2000 USD", "1,234.5000 USD"; an amount too small for them "< 0.0001 USD". In the API, money is a
number rounded to a millionth of a dollar (`exact`): a sum of floats' noise (-2.8e-17) is 0, never sent."""

from decimal import ROUND_HALF_UP, Decimal

PLACES = 4
SMALLEST = Decimal(1).scaleb(-PLACES)
API_PLACES = 6
MILLIONTH = Decimal(1).scaleb(-API_PLACES)


def usd(value):
    """An amount in USD with four decimals, never scientific notation; 0 (or None) is "0.0000 USD"."""
    amount = Decimal(repr(float(value or 0)))
    rounded = amount.quantize(SMALLEST, ROUND_HALF_UP)
    if rounded == 0 and amount != 0:
        return f"{'-' if amount < 0 else ''}< {SMALLEST:f} USD"  # spent, but less than the last place shows
    return f"{abs(rounded) if rounded == 0 else rounded:,f} USD"


def exact(value):
    """An amount as the API sends it: rounded half up to a millionth of a dollar, -0 as 0; None stays None."""
    if value is None:
        return None
    rounded = Decimal(repr(float(value))).quantize(MILLIONTH, ROUND_HALF_UP)
    return float(rounded) + 0.0 if rounded != 0 else 0.0
