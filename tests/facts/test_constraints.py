"""The client's constraints checked: sentences an advisor or a model writes, that break a limit, horizon or
commitment of the sheet, and sentences that keep them (no false alarm on those is the bar)."""

import pytest

from reasoning.facts.constraints import addressed, coverage_findings, durations, findings
from reasoning.facts.sheet import CHECK_KINDS, Fact

# A Zurich couple: Anna, 58, wants the pension buy-ins made before retiring at 61, and CHF 200k kept in cash.
SWISS = [
    Fact("Anna", "person", 1, "people", role="client"),
    Fact("Anna's age", "age", 58, "years", role="client"),
    Fact("residence", "place", "CH-ZH", "ISO 3166", role="residence"),
    Fact("portfolio", "amount", 2_400_000, "CHF", role="holding"),
    Fact("Lisbon flat", "amount", 600_000, "EUR", role="holding"),
    Fact("pension buy-in capacity", "amount", 310_000, "CHF"),
    Fact("retirement", "horizon", 61, "age", text="before retiring at 61", role="before"),
    Fact("cash minimum", "limit", 200_000, "CHF", text="keep at least CHF 200k in cash", base="cash", role="minimum"),
    Fact("pillar 3a", "instrument", "pillar 3a"),
]
# A Florida widower: gifts done by 2031, no more than 10% in one issuer, a USD 1.2M mortgage.
ESTATE = [
    Fact("residence", "place", "US-FL", "ISO 3166", role="residence"),
    Fact("estate", "amount", 18_000_000, "USD", role="holding"),
    Fact("mortgage", "amount", 1_200_000, "USD", text="a USD 1.2M mortgage on the Naples house", role="liability"),
    Fact("gifting deadline", "horizon", 2031, "year", text="complete the gifts by 2031", role="by"),
    Fact("issuer cap", "limit", 10, "%", text="no more than 10% in one issuer", base="one issuer", role="cap"),
    Fact("GRAT", "instrument", "grantor retained annuity trust", text="a GRAT"),
    Fact("ILIT", "instrument", "irrevocable life insurance trust", text="an ILIT"),
]
# A foundation: CHF 12M endowment, target 60/25/15, today 71/19/10, staged over 4 years; CHF 3M of commitments uncalled.
FOUNDATION = [
    Fact("endowment", "amount", 12_000_000, "CHF", role="holding"),
    Fact("equities target", "percent", 60, "%", base="endowment", role="target"),
    Fact("bonds target", "percent", 25, "%", base="endowment", role="target"),
    Fact("alternatives target", "percent", 15, "%", base="endowment", role="target"),
    Fact("equities", "percent", 71, "%", base="endowment", role="share"),
    Fact("bonds", "percent", 19, "%", base="endowment", role="share"),
    Fact("alternatives", "percent", 10, "%", base="endowment", role="share"),
    Fact("uncalled infrastructure commitments", "amount", 3_000_000, "CHF",
         text="CHF 3M of infrastructure commitments not yet called", role="commitment"),
    Fact("rebalancing horizon", "horizon", 4, "years", text="stage the trades over 4 years", role="over"),
    Fact("issuer cap", "limit", 10, "%", base="one issuer", role="cap"),
]
# A family with an 18-month cash floor, CHF 15k of expenses a month and a CHF 800k mortgage.
FAMILY = [
    Fact("portfolio", "amount", 4_000_000, "CHF", role="holding"),
    Fact("monthly expenses", "amount", 15_000, "CHF", text="CHF 15k a month", role="expense"),
    Fact("cash floor", "limit", 18, "months", text="a cash floor of 18 months of expenses", base="expenses",
         role="floor"),
    Fact("mortgage", "amount", 800_000, "CHF", role="liability"),
]
# A founder selling a villa within 9 months and diversifying her stock over 3 years, both before 2030.
SALE = [
    Fact("villa", "amount", 3_500_000, "CHF", role="holding"),
    Fact("company stock", "amount", 6_000_000, "USD", role="holding"),
    Fact("sale deadline", "horizon", 9, "months", text="sell the villa within 9 months", base="villa", role="within"),
    Fact("diversification horizon", "horizon", 3, "years", text="diversify the stock over 3 years", role="over"),
    Fact("exit deadline", "horizon", 2030, "year", text="fully out of the company stock by 2030", role="by"),
]
SHEETS = {"swiss": SWISS, "estate": ESTATE, "foundation": FOUNDATION, "family": FAMILY, "sale": SALE}

BREAKING = [
    # cash floors and minimums
    ("family", "Keep 6 months of expenses in cash and invest the rest."),
    ("family", "A cash reserve of twelve months is plenty for this family."),
    ("family", "Hold a 9-month cash buffer; the rest goes into the bond ladder."),
    ("family", "Hold CHF 120k in cash as the family's reserve."),
    ("family", "Keep one year of spending in cash, topped up from the coupons."),
    ("swiss", "Hold CHF 120k in cash and put the rest into the buy-in."),
    ("swiss", "After the buy-in, the cash reserve falls to CHF 150k."),
    ("swiss", "Keep only CHF 90,000 in cash: the pension covers the rest."),
    # caps
    ("estate", "Letting the Apple position run at 12% of the portfolio is acceptable for now."),
    ("estate", "Cap each issuer at 15% to keep some upside."),
    ("foundation", "A 14% position in Nestlé is fine given its quality."),
    ("foundation", "Hold up to 12% in one issuer while the equities are sold down."),
    # horizons: spans
    ("foundation", "Execute the rebalancing in three steps over six weeks."),
    ("foundation", "Sell the excess equities immediately and buy bonds with the proceeds."),
    ("foundation", "Complete the rebalancing trades within the next two months."),
    ("foundation", "Stage the trades over ten years to limit market impact."),
    ("sale", "List the villa and close the sale within 18 months."),
    ("sale", "Sell the villa over the next year and a half to find the right buyer."),
    ("sale", "Diversify the company stock in two tranches over the next six weeks."),
    # horizons: deadlines and ages
    ("estate", "Complete the remaining gifts by 2035, once the GRAT has paid out."),
    ("estate", "Make the last gift to the dynasty trust in Q3 2033."),
    ("sale", "Sell the last tranche of company stock by 2032."),
    ("swiss", "Make the second pension buy-in after she retires, when her income is lower."),
    ("swiss", "Spread the buy-ins over the years 62 to 64: make the last buy-in at 63."),
]
KEEPING = [
    ("family", "Keep 18 months of expenses in cash and invest the rest."),
    ("family", "A cash reserve of two years of spending covers the floor with room to spare."),
    ("family", "Hold CHF 300k in cash, i.e. 20 months of expenses."),
    ("family", "Rebalance every 6 months and review the plan each year."),
    ("family", "Move CHF 50k into cash from the bond coupons."),
    ("swiss", "Keep CHF 250k in cash and fund the buy-in from the portfolio."),
    ("swiss", "Make both pension buy-ins before she retires, in 2026 and 2027."),
    ("swiss", "Make the first buy-in at 59 and the second at 60."),
    ("swiss", "In retirement, draw the pension as an annuity and the 3a as capital."),
    ("estate", "Trim the Apple position to 8% of the portfolio and cap every issuer at 10%."),
    ("estate", "Complete the remaining gifts by 2030, well before the deadline."),
    ("estate", "Fund a 2-year GRAT with USD 1.5M of the shares in Q1."),
    ("estate", "Equities at 60%, bonds 30% and cash 10% after the sale."),
    ("foundation", "Stage the rebalancing trades over four years, one tranche each spring."),
    ("foundation", "Spread the trades across 48 months so the drift closes gradually."),
    ("foundation", "Equities are 71% today against a 60% target: sell 11% of the endowment over the horizon."),
    ("foundation", "No single issuer above 10%: Nestlé at 9% stays."),
    ("sale", "Sell the villa within six months, before the market cools."),
    ("sale", "Diversify the company stock over three years in six half-yearly sales."),
    ("sale", "Be fully out of the company stock by the end of 2029."),
    ("sale", "The 10-year Treasury yields 4.2% and a 2-year note 4.5%."),
    ("sale", "Sell the villa in Q2 and place the proceeds in a 3-month money market fund."),
]


def _failed(found):
    return [f for f in found if not f.ok]


@pytest.mark.parametrize("sheet, sentence", BREAKING, ids=[s[:40] for _, s in BREAKING])
def test_a_sentence_that_breaks_a_constraint_is_flagged(sheet, sentence):
    found = findings(sentence, SHEETS[sheet], final=False)
    failed = _failed(found)
    assert failed, f"nothing flagged in: {sentence}"
    assert all(f.kind == "constraint" and sentence[f.start : f.end] == f.text for f in failed)


@pytest.mark.parametrize("sheet, sentence", KEEPING, ids=[s[:40] for _, s in KEEPING])
def test_a_sentence_that_keeps_the_constraints_raises_no_alarm(sheet, sentence):
    assert _failed(findings(sentence, SHEETS[sheet], final=False)) == []


def test_the_tables_are_as_large_as_promised():
    assert len(BREAKING) >= 20 and len(KEEPING) >= 20
    assert {s for s, _ in BREAKING} == {s for s, _ in KEEPING} == set(SHEETS)


@pytest.mark.parametrize(
    "sheet, sentence, kept",
    [
        ("family", "Keep 18 months of expenses in cash.", "cash floor (18 months of expenses)"),
        ("swiss", "Keep CHF 250k in cash.", "cash minimum (CHF 200,000 of cash)"),
        ("foundation", "Stage the trades over four years.", "rebalancing horizon (4 years)"),
        ("estate", "Complete the gifts by 2030.", "gifting deadline (2031)"),
        ("estate", "Cap each issuer at 8%.", "issuer cap (10% of one issuer)"),
    ],
)
def test_a_kept_constraint_is_a_passed_finding_that_names_it(sheet, sentence, kept):
    found = findings(sentence, SHEETS[sheet], final=False)
    assert found and all(f.ok and f.kind == "constraint" for f in found)
    assert any(kept in f.detail for f in found)


def test_a_broken_floor_says_what_the_floor_is():
    (found,) = findings("Keep 6 months of expenses in cash.", FAMILY, final=False)
    assert found.text == "6 months"
    assert found.detail == "6 months is below the client's cash floor (18 months of expenses)"


def test_a_cash_amount_is_checked_against_a_floor_in_months_when_the_expenses_are_known():
    (found,) = findings("Hold CHF 120k in cash.", FAMILY, final=False)
    assert not found.ok and found.text == "CHF 120k"
    assert "CHF 270k" in found.detail


# ---- durations as people write them ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, months",
    [
        ("eighteen months", 18),
        ("1.5 years", 18),
        ("a year and a half", 18),
        ("one and a half years", 18),
        ("an 18-month window", 18),
        ("six weeks", 12 / 52 * 6),
        ("two quarters", 6),
        ("twenty-four months", 24),
        ("half a year", 6),
    ],
)
def test_durations_are_read_in_words_and_numbers(text, months):
    (d,) = durations(text)
    assert d.low == pytest.approx(months)


# ---- final answers: commitments and the amount to be moved ---------------------------------------------------------

FOUNDATION_ANSWER = (
    "Sell CHF 1.32M of equities and buy bonds with CHF 720k and alternatives with CHF 600k, staged over four years. "
    "Keep CHF 3M in short-dated bonds to meet the infrastructure capital calls as they come."
)


def test_an_answer_that_provides_for_the_commitments_keeps_them():
    found = [f for f in findings(FOUNDATION_ANSWER, FOUNDATION, final=True) if "commitments" in f.detail]
    assert [f.ok for f in found] == [True]


def test_an_answer_that_never_mentions_the_commitments_fails():
    answer = "Sell CHF 1.32M of equities and buy bonds and alternatives with it, staged over four years."
    found = [f for f in _failed(findings(answer, FOUNDATION, final=True))]
    assert [f.detail for f in found] == [
        "the answer never provides for the uncalled infrastructure commitments (CHF 3,000,000)"
    ]


def test_an_answer_that_names_the_commitments_in_a_filler_line_fails():
    answer = "Rebalance over four years. Capital calls: keep them in mind."
    found = _failed(findings(answer, FOUNDATION, final=True))
    assert [f.text for f in found] == ["Capital calls"]


def test_commitments_are_checked_on_final_answers_only():
    assert _failed(findings("Rebalance over four years.", FOUNDATION, final=False)) == []


@pytest.mark.parametrize(
    "answer, provided",
    [
        ("Pay down USD 400k of the mortgage from the sale proceeds.", True),
        ("Refinance the mortgage at a fixed rate before the reset.", True),
        ("Keep the USD 1.2M loan on the Naples house: its 3% rate is below the portfolio's return.", True),
        ("The mortgage is worth a look later.", False),
        ("Fund the GRAT and the ILIT this year.", False),
    ],
)
def test_a_liability_is_provided_for_by_a_sentence_that_acts_on_it(answer, provided):
    found = [f for f in findings(answer, ESTATE, final=True) if "mortgage" in f.detail]
    assert [f.ok for f in found] == [provided]


@pytest.mark.parametrize(
    "answer",
    [
        "Split the CHF 12M endowment into three tranches and invest one a year.",
        "Deploy the endowment in thirds over the next three years.",
        "Move the whole endowment in four equal tranches, one each year.",
    ],
)
def test_splitting_the_whole_endowment_where_only_the_trades_move_fails(answer):
    found = [f for f in _failed(findings(answer, FOUNDATION, final=True)) if "splits" in f.detail]
    assert len(found) == 1
    assert "the amount to be moved is the rebalancing trades (11% of the endowment) (CHF 1.32M)" in found[0].detail


@pytest.mark.parametrize(
    "answer",
    [
        "Split the CHF 1.32M of rebalancing trades into four tranches, one a year.",
        "Stage the trades in four equal tranches over four years.",
    ],
)
def test_splitting_the_trades_keeps_the_plan(answer):
    found = [f for f in findings(answer, FOUNDATION, final=True) if "stage" in f.detail or "split" in f.detail]
    assert found and all(f.ok for f in found)


def test_a_named_trade_amount_is_the_amount_to_be_moved():
    facts = FOUNDATION + [Fact("rebalancing trades", "amount", 2_100_000, "CHF", text="trades of CHF 2.1M")]
    answer = "Split the CHF 12M endowment into three tranches."
    (found,) = [f for f in findings(answer, facts, final=True) if "splits" in f.detail]
    assert "rebalancing trades (CHF 2.1M)" in found.detail


# ---- coverage that means something --------------------------------------------------------------------------------

ADDRESSED = [
    ("Fund a 2-year GRAT with USD 1.5M of the shares in Q1.", "GRAT", True),
    ("Set up an ILIT to hold the second-to-die policy.", "ILIT", True),
    ("Gift appreciated shares to the DAF each December.", "DAF", True),
    ("Open a pillar 3a account for Anna and contribute the maximum.", "pillar 3a", True),
    ("Convert the traditional IRA to a Roth over four years.", "Roth", True),
    ("Skip the CRT: the client needs the income now.", "CRT", True),
    ("The exchange fund: contribute USD 2M of the stock in the next window.", "exchange fund", True),
    ("GRAT: weigh it against the plan above.", "GRAT", False),
    ("A CRT could also be considered.", "CRT", False),
    ("Consider the ILIT as well.", "ILIT", False),
    ("The DAF remains an option.", "DAF", False),
    ("Exchange fund: see above.", "Exchange fund", False),
    ("Review the GRAT next year.", "GRAT", False),
]


@pytest.mark.parametrize("text, mention, expected", ADDRESSED, ids=[t[:40] for t, _, _ in ADDRESSED])
def test_a_mention_is_addressed_only_by_a_sentence_that_acts_on_it(text, mention, expected):
    start = text.index(mention)
    assert addressed(text, start, start + len(mention)) is expected


def test_addressed_reads_only_the_sentence_around_the_mention():
    text = "Fund the GRAT with USD 1.5M in Q1. ILIT: weigh it against the plan above."
    start = text.index("ILIT")
    assert addressed(text, start, start + 4) is False
    assert addressed(text, text.index("GRAT"), text.index("GRAT") + 4) is True


def test_coverage_requires_each_instrument_to_be_acted_on():
    answer = "Fund a 2-year GRAT with USD 1.5M of the shares in Q1. ILIT: weigh it against the plan above."
    found = {f.detail: f.ok for f in coverage_findings(answer, ESTATE)}
    assert found == {
        "the answer addresses the grantor retained annuity trust the client listed": True,
        "the answer names the irrevocable life insurance trust the client listed but never acts on it": False,
    }


def test_coverage_fails_an_instrument_never_named():
    found = coverage_findings("Sell the shares over four years.", ESTATE)
    assert [(f.ok, f.start) for f in found] == [(False, -1), (False, -1)]
    assert found[0].detail == "the answer never addresses the grantor retained annuity trust the client listed"


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Transfer the GmbH stake to the daughter in three gifts from 2026.", True),
        ("Passing the business to their daughter: weigh it against the plan above.", False),
        ("Rebalance yearly.", False),
    ],
)
def test_a_goal_is_addressed_by_the_sentences_that_act(answer, expected):
    (found,) = coverage_findings(answer, [Fact("goal", "goal", "pass the business to their daughter")])
    assert found.kind == "coverage" and found.ok is expected


def test_constraint_is_a_check_kind():
    assert "constraint" in CHECK_KINDS
