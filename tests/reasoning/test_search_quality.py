"""Search quality, reduced from bench/search_quality.py: Game of 24 through the whole engine on the offline models.

On the exact model every strategy solves every puzzle; on the imperfect one (offline/noisy at 0.3) a search must
clear a floor that a correct search clears easily, and the single chain (one thought a step) must not. The runs are
deterministic (the model's replies depend on the prompt and the seed only), so a drop is a real regression.
"""

import csv
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm import game24
from reasoning.models import ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "game24.csv"
CHAIN = {"branching": 1, "keep": 1, "value_samples": 1}


def puzzles(first, count):
    with FIXTURE.open() as handle:
        rows = [row["Puzzles"] for row in csv.DictReader(handle) if int(row["Rank"]) >= first]
    return rows[:count]


async def solved(party, mode, params, rows, noise):
    """How many of the puzzles the session's one final answer solves, on offline/noisy at this noise."""
    count = 0
    with override_settings(REASONING={**settings.REASONING, "OFFLINE_NOISE": noise}):
        for cards in rows:
            problem = f"Game of 24: use each of the numbers {cards} exactly once with + - * / to make 24."
            data = SessionIn(problem_text=problem, mode=mode, params=params, model_primary="offline/noisy")
            session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
            await run_session(session.id)
            session = await ReasoningSession.objects.aget(pk=session.id)
            count += game24.solves(session.final_answer, [int(n) for n in cards.split()])
    return count


@pytest.mark.parametrize("mode, params", [("tot", {}), ("lats", {}), ("reflexion", {"steps": 4}), ("trm", {})])
async def test_on_the_exact_model_every_search_solves_every_puzzle(alice, mode, params):
    rows = puzzles(901, 4)
    assert await solved(alice, mode, params, rows, 0.0) == len(rows)


async def test_on_an_imperfect_model_the_searches_clear_a_floor_the_single_chain_does_not(alice):
    rows = puzzles(901, 12)
    tot = await solved(alice, "tot", {}, rows, 0.3)
    lats = await solved(alice, "lats", {}, rows, 0.3)
    chain = await solved(alice, "tot", CHAIN, rows, 0.3)
    # Measured on these 12 (bench/search_quality.py gives the whole picture): ToT 6, LATS 9 (5 before issue 31), the
    # chain 0.
    assert tot >= 4 and lats >= 3 and chain <= 1, (tot, lats, chain)


@pytest.mark.parametrize("mode", ["tot", "lats", "reflexion", "react", "trm"])
async def test_every_strategy_ends_with_an_answer_on_a_wealth_problem_when_the_model_errs(alice, mode):
    from tests.runs import ledger_and_node_costs

    problem = "Rebalance a CHF 12m portfolio that drifted to 72% equities against a 60/40 target for a Geneva family."
    with override_settings(REASONING={**settings.REASONING, "OFFLINE_NOISE": 0.5}):
        data = SessionIn(
            problem_text=problem, problem_kind="allocation-rebalance", mode=mode, model_primary="offline/noisy"
        )
        session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
        await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    # LATS answers only from a line that succeeded (issue 30); at noise 0.5 none may, and it says so with the best line
    # as a partial answer rather than calling it solved.
    honest = mode == "lats" and session.termination_reason == "no_success" and session.answer_partial
    assert (session.status == "solved" or honest) and session.final_answer, (session.status, session.error)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)
