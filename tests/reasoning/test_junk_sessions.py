"""Junk never ends `solved` (issue 24): every mode on a Game of 24 puzzle and on a rebalancing problem, 12 sessions
(and on a question with no figure to check, 6 more),
against the scripted loopback server answering each prompt with what a lost small model writes (a beach trip, an art
museum: well-formed, confident, sharing a word such as "make" with the problem), its own judgements sure of them.
A task that can be checked is checked: the puzzle's answer by its arithmetic, the wealth answer by the client's facts;
each session ends failed (or exhausted) with its best partial answer, never solved."""

import json
import re

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import ReasoningSession
from reasoning.schemas import SessionIn
from reasoning.strategies import modes
from tests.fake_openai import FakeOpenAI, reply
from tests.reasoning.test_real_models import PRICES, dummy_key  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

PUZZLE = "Game of 24: use the numbers 4 9 10 13 and + - * / to make 24."
REBALANCE = (
    "Rebalance a CHF 3m portfolio that drifted to 70% equities back to a 60/40 target within a year, tax-aware, "
    "and make the plan clear for the client."
)
# A question with no figure to check: only its words tell an answer about it from one about anything else.
HOLIDAY_HOME = "How should a widowed client make a clear plan to pass the family's holiday home to her three children?"
PROBLEMS = {
    "game24": (PUZZLE, "general"),
    "rebalance": (REBALANCE, "allocation-rebalance"),
    "no-figures": (HOLIDAY_HOME, "wealth-transfer"),
}
# With the fact checks turned off (`check_facts: false`, to measure what they buy) only the contract's own relevance
# check stands between junk and an answer: it passed an answer sharing "make" alone with its problem.
UNCHECKED = {"no-figures"}
MODES = list(modes())  # auto too: it picks ToT for the puzzle and the transfer, LATS for the rebalancing
# Plain words on a topic of their own, sharing "make", "plan" and "clear" with the problems: the first-pass lexical
# relevance check let exactly such answers through.
BEACH = "Make a plan for a clear day at the beach: pack sunscreen, towels, a parasol and cold drinks for everyone."
MUSEUM = "Make time for the art museum first, then plan a long lunch in the old town and a walk by the river."
CONTRACT = re.compile(r"^### CONTRACT\n(\S+)", re.M)
STEPS = re.compile(r"^### STEPS\n(\d+)", re.M)


def junk(name, prompt):
    """The reply a lost model gives to this prompt's contract, always sure of itself."""
    if name.endswith((".propose", ".expand")):
        return {"thoughts": [{"thought": BEACH}, {"thought": MUSEUM}, {"thought": BEACH + " Bring hats."}]}
    if name.endswith(("evaluate",)):
        return {"score": 0.97, "reason": "Clear and complete.", "is_terminal": True}
    if name.endswith("value"):
        return {"verdict": "sure", "reason": "Clear and complete."}
    if name.endswith(("synthesize", "improve")):
        return {"answer": BEACH + " " + MUSEUM}
    if name.endswith("reflect"):
        return {"reflection": "Keep the beach plan.", "critique": "Keep the beach plan."}
    if name == "reflexion.attempt":
        count = int(STEPS.search(prompt)[1]) if STEPS.search(prompt) else 3
        return {"steps": [{"thought": (BEACH, MUSEUM)[i % 2]} for i in range(count)]}
    if name == "react.step":
        return {"thought": BEACH, "action": {"tool": "final_answer", "args": {"answer": BEACH + " " + MUSEUM}}}
    if name == "trm.reason":
        return {"insight": BEACH, "issue": "none", "missing": "none", "suggestion": "none", "confidence": 0.97}
    raise AssertionError(f"no junk for {name}")


def lost_model(body):
    prompt = body["messages"][-1]["content"]
    return reply(json.dumps(junk(CONTRACT.search(prompt)[1], prompt)), prompt_tokens=len(prompt) // 4)


@pytest.mark.parametrize("kind", PROBLEMS)
@pytest.mark.parametrize("mode", MODES)
async def test_junk_is_never_solved(alice, settings, mode, kind):
    settings.REASONING = {**settings.REASONING, "MODELS": {"openai/lost": PRICES}, "LLM_RETRIES": 0}
    problem, problem_kind = PROBLEMS[kind]
    with FakeOpenAI(default=lost_model) as server:
        settings.REASONING["MODELS"]["openai/lost"]["api_base"] = server.base_url
        params = {"check_facts": False} if kind in UNCHECKED else {}
        data = SessionIn(
            problem_text=problem, problem_kind=problem_kind, mode=mode, model_primary="openai/lost", params=params
        )
        session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
        await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    assert session.status != "solved", (session.termination_reason, session.final_answer)
    # Failed, keeping the best line as a partial answer where one was accepted (TRM's refined answers never are).
    assert session.status in {"failed", "exhausted"}, session.error
    assert session.answer_partial or session.termination_reason != "solved" or not session.final_answer
