"""`{{ amount|usd }}`: money on the pages written the one way reasoning/money.py writes it."""

from django import template

from reasoning.money import usd as _usd

register = template.Library()


@register.filter
def usd(value):
    return _usd(value)
