"""The one way money is written for people: "0.001 USD", "0.0265 USD", "12.50 USD"."""

from decimal import ROUND_HALF_UP, Decimal


def usd(value):
    """An amount in USD with the precision it needs: cents from 1 USD up, else three significant digits.

    Never scientific notation; 0 (or None) is "0.00 USD".
    """
    amount = Decimal(repr(float(value or 0)))
    if amount == 0:
        return "0.00 USD"
    places = 2 if abs(amount) >= 1 else max(2, 2 - amount.adjusted())  # 0.0265 has 4 places: 3 significant
    text = f"{amount.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP):,f}"
    whole, decimals = text.split(".")
    return f"{whole}.{decimals.rstrip('0').ljust(2, '0')} USD"
