"""The firm's memory of judgements (reasoning/memory.py): a board judged in one session is not paid for again in the
tenant's next session on the same models and rubric, as the reference's value cache lives for its whole run; another
tenant, another model or the switch off judge afresh; and a session that recalled judgements replays the same tree."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import rls, services
from reasoning.engine import run_session
from reasoning.facts.case import CaseCheck
from reasoning.memory import FirmMemory
from reasoning.models import LLMCall, ReasoningNode, RememberedJudgement
from reasoning.replay import replay
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Node

pytestmark = pytest.mark.django_db(transaction=True)

PUZZLE = "Game of 24: use each of the numbers 4 9 10 13 exactly once with + - * / to make 24."
OTHER = "Game of 24: use each of the numbers 1 4 6 8 exactly once with + - * / to make 24."
PARAMS = {"branching": 3, "depth": 4, "keep": 2}


async def solved(party, problem=PUZZLE, model="offline/sim", mode="tot", params=PARAMS):
    data = SessionIn(problem_text=problem, mode=mode, params=params, model_primary=model)
    with rls.tenant(party.tenant.pk):  # as a request and a run work: for their tenant alone, on PostgreSQL too
        session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
        await run_session(session.id)
        await session.arefresh_from_db()
    return session


async def judged(session):
    """The session's paid judgements of a state (the ledger's answered state evaluations)."""
    return await LLMCall.objects.filter(
        session=session, purpose__endswith="state_evaluate", outcome__in=["ok", "fallback"]
    ).acount()


async def remembered(session):
    return [n async for n in ReasoningNode.objects.filter(session=session) if n.state.get("remembered")]


async def test_a_second_session_on_the_puzzle_pays_for_no_board_the_first_judged(alice):
    first = await solved(alice)
    second = await solved(alice)
    assert await judged(first) > 0 and await judged(second) == 0
    assert second.status == first.status == "solved" and second.final_answer == first.final_answer
    taken = await remembered(second)
    assert taken and all(n.state["remembered"]["session"] == str(first.id) for n in taken)
    # The judgement is the first session's, score and reason; the second paid for its proposals alone.
    source = await ReasoningNode.objects.aget(pk=taken[0].state["remembered"]["node"])
    assert (taken[0].eval_score, taken[0].eval_reason) == (source.eval_score, source.eval_reason)
    paid = {c.purpose async for c in LLMCall.objects.filter(session=second)}
    assert paid == {"tot.propose"}


async def test_boards_carry_over_to_another_puzzle_and_answers_do_not(alice):
    first = await solved(alice)
    other = await solved(alice, OTHER)
    shared = {n.state["state_key"] for n in await remembered(other)}
    kept = {n.state.get("state_key") async for n in ReasoningNode.objects.filter(session=first)}
    assert shared and shared <= kept and not any(key.startswith("Answer") for key in shared)


async def test_another_tenant_another_model_or_the_switch_off_judge_afresh(alice, bob, settings):
    await solved(alice)
    assert await judged(await solved(bob)) > 0
    assert await judged(await solved(alice, model="offline/noisy")) > 0
    settings.REASONING = {**settings.REASONING, "SHARED_JUDGEMENTS": False}
    assert await judged(await solved(alice)) > 0


async def test_a_session_that_recalled_judgements_replays_the_same_tree(alice):
    await solved(alice)
    second = await solved(alice)
    await RememberedJudgement.objects.all().adelete()  # what the memory holds now does not change the replay
    report = await replay(second)
    assert report["identical"] is True, report["first_divergence"]


async def test_two_sessions_keeping_one_state_keep_the_first(alice):
    first = await solved(alice)
    memory = FirmMemory(first, "rubric")
    node = Node(id="n1", parent_id=None, depth=1, thought="t")
    await memory.keep("tot · score · 3 asked · left: 4 6", node, {"eval_score": 0.9, "eval_reason": "a", "state": {}})
    await memory.keep("tot · score · 3 asked · left: 4 6", node, {"eval_score": 0.1, "eval_reason": "b", "state": {}})
    where, fields = await memory.recall("tot · score · 3 asked · left: 4 6")
    assert fields["eval_score"] == 0.9 and where == f"{first.id}/n1"
    assert await FirmMemory(first, "another rubric").recall("tot · score · 3 asked · left: 4 6") is None


def test_a_board_stands_whatever_the_cards_an_answer_only_on_its_own():
    one, other = CaseCheck(puzzle=[4, 9, 10, 13]), CaseCheck(puzzle=[1, 4, 6, 8])
    assert one.standalone("left: 4 6") == other.standalone("left: 4 6") == "left: 4 6"
    answer = "Answer: (10-4)*(13-9)=24"
    assert one.standalone(answer) != other.standalone(answer) and "4 9 10 13" in one.standalone(answer)
    assert CaseCheck(facts=[]).standalone("left: 4 6") is None  # a wealth step's state is never shared
