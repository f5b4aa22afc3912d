"""A fact change marks stale the steps it touches (reasoning/factsheet.py): those stating the changed figure, and
(issue 33) those stating a figure derived from it (a share, a percent of it, a sum, a difference), and no other."""

import pytest

from reasoning import services
from reasoning.factsheet import _states, case_of
from reasoning.models import CaseFact, ReasoningNode, ReasoningSession

PROBLEM = (
    "Rebalance the Meier family's CHF 12m portfolio drifted to 72% equities against a 60% target; "
    "they also hold CHF 2.4M in cash."
)
PORTFOLIO = {"id": "1", "label": "portfolio", "kind": "amount", "value": 12_000_000.0, "unit": "CHF"}
SHEET = [
    {"id": "2", "label": "equities share", "kind": "percent", "value": 72.0, "unit": "%"},
    {"id": "3", "label": "cash", "kind": "amount", "value": 2_400_000.0, "unit": "CHF"},
]

DERIVED = [
    "A share of the portfolio = CHF 8.64M in equities today.",  # 72% of 12m, the percent from the sheet
    "Target equities: 60% of the portfolio, CHF 7.2M.",  # the percent in the text
    "Portfolio and cash together: CHF 14.4M.",  # a sum with the sheet's cash
    "The portfolio without the cash reserve leaves CHF 9.6M to invest.",  # a difference
    "Cash is 20% of the portfolio.",  # a percent of it
]
UNRELATED = [
    "Keep CHF 2.4M in cash for the next two years.",  # another fact's own figure
    "Sell CHF 1.44M of equities in three tranches over the tax year.",  # 12% of 12m, but the portfolio not named
    "The portfolio keeps the CHF 2.4M cash apart from the bonds.",  # named, but no figure derived from it
    "Review the portfolio with the client in March.",
]


@pytest.mark.parametrize("text", DERIVED)
def test_a_step_stating_a_figure_derived_from_the_fact_states_it(text):
    assert _states(text, PORTFOLIO, SHEET)


@pytest.mark.parametrize("text", UNRELATED)
def test_a_step_with_no_figure_derived_from_the_fact_does_not(text):
    assert not _states(text, PORTFOLIO, SHEET)


def test_changing_the_portfolio_marks_the_steps_deriving_figures_from_it(db, alice):
    from reasoning.schemas import SessionIn

    data = SessionIn(problem_text=PROBLEM, mode="tot", params={"depth": 1, "branching": 2, "keep": 1})
    session = services.create_session(alice.tenant, data, submit=False)
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, thought=PROBLEM, depth=0)
    case = case_of(session)
    for text in DERIVED + UNRELATED:  # each checked as the store checks it, so only the change can move a check
        checks = [f.to_dict() for f in case(text)]
        ReasoningNode.objects.create(
            tenant=alice.tenant, session=session, parent=root, thought=text, depth=1, checks=checks
        )
    portfolio = CaseFact.objects.get(session=session, kind="amount", number=12_000_000)

    services.update_fact(alice.tenant, session.id, portfolio.pk, "user:advisor", {"value": 15_000_000})

    stale = set(ReasoningNode.objects.filter(session=session, stale=True).values_list("thought", flat=True))
    # The sheet read from the problem holds the equities' 60% target beside their 72% today, so the sale of 12 points
    # of the portfolio is the trade to the target, derived from it (SHEET above, with no target, leaves it unrelated).
    sale = "Sell CHF 1.44M of equities in three tranches over the tax year."
    assert any(f.label == "equities target" for f in [c.as_fact() for c in CaseFact.objects.filter(session=session)])
    assert stale == set(DERIVED) | {sale}
    assert ReasoningSession.objects.get(pk=session.pk).status == "queued"
