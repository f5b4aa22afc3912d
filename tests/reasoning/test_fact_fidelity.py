"""Fact fidelity, reduced from bench/fact_fidelity.py: wealth cases through the whole engine on the offline models.

On the exact model no answer has a finding of any kind; on the imperfect one (offline/noisy at 0.3) the checks on
leave no slip the checker can see in the answer of a solved session (one they saw on every try may stand, flagged,
in a session that ended failed), at most 1.2x the calls with them off, while with them off the
slips show (so the test would notice a checker that had stopped looking). Deterministic: a drop is a regression.
"""

import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from reasoning import services
from reasoning.engine import run_session
from reasoning.facts.check import check, failures
from reasoning.models import CaseFact, LLMCall, ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "wealth_cases.json").read_text())["cases"]
ONE_OF_EACH_KIND = list({case["problem_kind"]: case for case in reversed(CASES)}.values())
CHAIN = {"branching": 1, "keep": 1, "value_samples": 1}


async def run(party, case, model, params, noise=0.0):
    with override_settings(REASONING={**settings.REASONING, "OFFLINE_NOISE": noise}):
        data = SessionIn(
            problem_text=case["problem_text"], problem_kind=case["problem_kind"], mode="tot", model_primary=model,
            params=params, budget_usd=5.0,
        )
        session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
        await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    sheet = [f.as_fact() async for f in CaseFact.objects.filter(session=session)]
    slips = failures(check(session.final_answer, sheet, final=True))
    return session, slips, await LLMCall.objects.filter(session=session).acount()


async def test_the_exact_model_s_answers_have_no_finding_on_any_case_kind(alice):
    for case in ONE_OF_EACH_KIND:
        session, slips, _ = await run(alice, case, "offline/sim", {"depth": 2})
        assert session.status == "solved", (case["id"], session.error)
        assert not slips, (case["id"], slips)
        assert session.answer_checks and all(c["ok"] for c in session.answer_checks)


@pytest.mark.parametrize("params", [CHAIN, {}], ids=["chain", "tot"])
async def test_on_the_imperfect_model_the_checks_leave_no_visible_slip_for_few_calls(alice, params):
    on_slips = off_slips = on_calls = off_calls = 0
    for case in ONE_OF_EACH_KIND:
        session, slips, calls = await run(alice, case, "offline/noisy", {**params, "check_facts": True}, noise=0.3)
        # A slip the checks saw on every try may stand, flagged, in a session that ended failed; none is solved.
        assert not (slips and session.status == "solved"), (case["id"], slips)
        on_slips, on_calls = on_slips + bool(slips and session.status == "solved"), on_calls + calls
        _, slips, calls = await run(alice, case, "offline/noisy", {**params, "check_facts": False}, noise=0.3)
        off_slips, off_calls = off_slips + bool(slips), off_calls + calls
    assert on_slips == 0 and off_slips >= 1
    assert on_calls <= 1.2 * off_calls
