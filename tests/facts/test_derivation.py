"""Declared figures evaluated exactly: decimal arithmetic, units carried, a rate applied in its direction, a percent
on its own base; a bad derivation is a finding, never an exception. Then the `declared` check: every amount of the
text a declared figure or a fact."""

import pytest

from reasoning.facts.check import NOT_DECLARED, badge, check
from reasoning.facts.derivation import evaluate
from reasoning.facts.sheet import Fact

FACTS = [
    Fact("portfolio", "amount", 3_200_000, "USD", id="f-portfolio"),
    Fact("employer stock share", "percent", 70, "%", base="portfolio", id="f-share"),
    Fact("salary", "amount", 450_000, "USD", id="f-salary"),
    Fact("equity share", "percent", 58, "%", id="f-equity"),
    Fact("equity target", "percent", 50, "%", id="f-target"),
    Fact("London flat", "amount", 420_000, "GBP", id="f-flat"),
]


def one(value, unit, derivation, label="x", earlier=()):
    return evaluate([*earlier, {"label": label, "value": value, "unit": unit, "derivation": derivation}], FACTS)[-1]


def test_a_derivation_over_facts_is_computed_exactly_and_names_its_facts():
    figure = one(256_000, "USD", "portfolio × (equity share − equity target)")
    assert figure.ok and figure.computed == "256,000" and figure.facts == ["f-equity", "f-portfolio", "f-target"]


def test_a_fact_is_its_own_derivation_and_a_dropped_scale_fails():
    assert one(3_200_000, "USD", "portfolio").ok
    assert not one(3.2, "USD", "portfolio").ok


@pytest.mark.parametrize("value, ok", [(2_240_000, True), (2_420_000, False), (4_480_000, False)])
def test_a_slip_in_the_value_is_caught(value, ok):
    assert one(value, "USD", "employer stock share x portfolio").ok is ok


def test_a_rate_converts_in_its_direction_and_the_wrong_way_is_a_unit_error():
    assert one(470_400, "CHF", "GBP 420k × GBP/CHF 1.12").ok
    assert one(470_400, "CHF", "London flat × GBP/CHF 1.12").facts == ["f-flat"]
    wrong = one(375_000, "GBP", "London flat ÷ GBP/CHF 1.12")
    assert not wrong.ok and "the wrong way" in wrong.detail
    assert one(375_000, "GBP", "CHF 420k ÷ GBP/CHF 1.12").ok  # francs divided by it are pounds


def test_two_currencies_added_without_a_rate_fail():
    figure = one(3_620_000, "USD", "portfolio + London flat")
    assert not figure.ok and "adds USD to GBP" in figure.detail


def test_a_percent_applied_to_another_amount_than_its_base_fails():
    figure = one(315_000, "USD", "employer stock share × salary")
    assert not figure.ok and "a share of the portfolio" in figure.detail


def test_a_difference_of_shares_keeps_its_base_and_an_earlier_figure_is_no_base_of_it():
    facts = [*FACTS, Fact("equity target", "percent", 50, "%", base="portfolio", id="t"),
             Fact("equity share", "percent", 58, "%", base="portfolio", id="e")]  # fmt: skip
    total = {"label": "total wealth", "value": 3_650_000, "unit": "USD", "derivation": "portfolio + salary"}
    on_it = {"label": "sale", "value": 292_000, "unit": "USD", "derivation": "(equity share − equity target) × total wealth"}
    first, wrong = evaluate([total, on_it], facts[6:] + facts[:3])
    assert first.ok and not wrong.ok and "a share of the portfolio" in wrong.detail


def test_an_earlier_figure_is_a_name_and_rounding_follows_the_declared_digits():
    stock = {"label": "employer stock", "value": 2_240_000, "unit": "USD", "derivation": "70% of the portfolio"}
    assert one(746_667, "USD", "employer stock / 3", earlier=[stock]).ok
    assert one(14.1, "%", "salary / portfolio").ok  # 14.0625 written to one decimal


@pytest.mark.parametrize(
    "derivation",
    ["__import__('os').system('x')", "portfolio ** 2", "portfolio[0]", "unknown fact × 2", "portfolio / 0", "(",
     "x" * 400, "lambda: 1"],
)  # fmt: skip
def test_a_bad_derivation_is_a_finding_never_an_exception(derivation):
    figure = one(1, "USD", derivation)
    assert not figure.ok and figure.detail


def test_a_figure_without_derivation_is_the_model_s_own_and_unverified():
    figure = one(500_000, "USD", "")
    assert figure.ok and not figure.verified and figure.facts == []


def test_a_value_that_is_no_number_or_a_unit_that_is_none_fails():
    assert not one("lots", "USD", "portfolio").ok
    assert not one(3_200_000, "dollars", "portfolio").ok


# ---- the declared check ---------------------------------------------------------------------------------------------

TEXT = "Sell USD 256k of equities, bringing the USD 3.2M portfolio to its 50% target."
SALE = {"label": "equity to sell", "value": 256_000, "unit": "USD", "derivation": "portfolio × (equity share − equity target)"}


def test_declared_figures_are_checked_by_their_derivations_instead_of_the_prose():
    found = check(TEXT, FACTS, figures=[SALE])
    assert all(f.ok for f in found)
    assert any(f.kind == "arithmetic" and f.text == "USD 256k" for f in found)


def test_a_declared_slip_is_caught_on_its_span():
    slipped = check(TEXT.replace("256k", "320k"), FACTS, figures=[{**SALE, "value": 320_000}])
    failed = [f for f in slipped if not f.ok]
    assert [f.text for f in failed] == ["USD 320k"] and "256,000" in failed[0].detail


def test_an_amount_neither_declared_nor_a_fact_fails():
    found = check(TEXT + " Keep USD 90k in cash.", FACTS, figures=[SALE])
    assert [f.text for f in found if not f.ok] == ["USD 90k"]


def test_no_figures_declared_falls_back_to_the_prose_checker_and_the_badge_says_so():
    prose = check(TEXT, FACTS)
    assert prose == check(TEXT, FACTS, figures=[])
    assert badge(prose, declared=False).endswith(NOT_DECLARED)
    assert NOT_DECLARED not in badge(check(TEXT, FACTS, figures=[SALE]), declared=True)


def test_a_rate_written_as_an_amount_of_its_quote_is_the_sheets_rate():
    facts = FACTS + [Fact("GBP/USD exchange rate", "amount", 1.27, "USD", text="GBP/USD 1.27")]
    found = check(TEXT + " The pound converts at USD 1.27.", facts, figures=[SALE])
    assert [f.text for f in found if not f.ok] == []
    assert [f.text for f in check(TEXT + " The pound converts at USD 1.37.", facts, figures=[SALE]) if not f.ok]
