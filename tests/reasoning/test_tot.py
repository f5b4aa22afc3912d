"""Tree of Thoughts on the offline model, through the engine: the shape of the tree and how a session ends."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from tests.runs import run_scripted

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m portfolio "
    "for a client aged 58."
)


async def start(party, **fields):
    data = SessionIn(problem_text=fields.pop("problem", PROBLEM), mode=fields.pop("mode", "tot"), **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def nodes_of(session):
    return [n async for n in ReasoningNode.objects.filter(session=session).order_by("created_at")]


async def test_the_defaults_grow_22_nodes_and_a_final_answer(alice):
    session = await start(alice, problem_kind="investment-thesis")
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await nodes_of(session)
    by_depth = {d: [n for n in nodes if n.depth == d] for d in range(5)}
    assert session.status == "solved", session.error
    assert len(nodes) == 22
    assert [len(by_depth[d]) for d in range(5)] == [1, 3, 6, 6, 6]
    for depth in range(1, 5):
        kept = [n for n in by_depth[depth] if not n.pruned]
        assert len(kept) == 2
        assert all(n.pruned_by == "strategy" for n in by_depth[depth] if n.pruned)
        # the beam keeps the best-scored nodes of each level
        assert min(n.eval_score for n in kept) >= max(n.eval_score for n in by_depth[depth] if n.pruned)
    for depth in range(2, 5):
        parents = {n.parent_id for n in by_depth[depth]}
        assert parents == {n.id for n in by_depth[depth - 1] if not n.pruned}
    final = next(n for n in nodes if n.id == session.final_node_id)
    assert final.depth == 4 and final.is_terminal and not final.pruned
    assert final.eval_score == max(n.eval_score for n in by_depth[4])
    assert session.final_answer and session.root_node_id == by_depth[0][0].id
    assert all(n.model_used == "offline/sim" and n.cost_usd > 0 for n in nodes if n.depth > 0)


async def test_calls_are_one_propose_per_expanded_node_and_one_evaluation_per_child(alice):
    session = await start(alice)
    await run_session(session.id)
    purposes = [c.purpose async for c in LLMCall.objects.filter(session=session)]
    assert purposes.count("tot.propose") == 1 + 2 + 2 + 2
    assert purposes.count("tot.evaluate") == 21
    assert purposes.count("tot.synthesize") == 1
    await session.arefresh_from_db()
    total = sum([c.cost_usd async for c in LLMCall.objects.filter(session=session)])
    assert session.budget_used_usd == pytest.approx(total)


async def test_params_change_the_shape(alice):
    session = await start(alice, params={"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    nodes = await nodes_of(session)
    assert len(nodes) == 1 + 2 + 2


async def test_a_tiny_budget_ends_exhausted_without_passing_it(alice):
    session = await start(alice, budget_usd=0.0001)
    await run_session(session.id)
    await session.arefresh_from_db()
    assert session.status == "exhausted"
    assert session.budget_used_usd <= session.budget_usd
    assert await LLMCall.objects.filter(session=session, outcome="budget").aexists()


async def test_a_budget_that_runs_out_midway_keeps_the_best_answer_so_far(alice):
    session = await start(alice, budget_usd=0.012)
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await nodes_of(session)
    assert session.status == "exhausted"
    assert 1 < len(nodes) < 22
    assert session.budget_used_usd <= session.budget_usd
    assert session.final_answer and session.final_node_id


async def test_unparseable_evaluations_are_recorded_not_scored_zero(alice):
    session = await start(alice, params={"branching": 3, "depth": 1, "keep": 2}, model_primary="openai/gpt-4o-mini")
    replies = iter(
        ['{"thoughts": [{"thought": "Sell"}, {"thought": "Hold"}, {"thought": "Buy"}]}']
        + ["no idea"] * 6
        + ['{"answer": "unused"}'] * 3
    )
    await run_scripted(session, replies)
    children = [n for n in await nodes_of(session) if n.depth == 1]
    assert len(children) == 3
    assert all(n.eval_score is None and "evaluation unparseable" in n.parse_error for n in children)
    assert session.status == "failed" and "no_thoughts" in session.error


async def test_a_model_that_keeps_failing_marks_its_node_and_fails_the_session_saying_why(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    gateway = await sync_to_async(ModelGateway)(
        session, retries=0, deployment_params={"primary": {"mock_response": Exception("provider exploded")}}
    )
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    assert session.status == "failed" and "provider exploded" in session.error and session.finished_at
    root = await ReasoningNode.objects.aget(session=session)  # the root, then nothing
    assert root.parse_error.startswith("model failed on the proposals:") and "provider exploded" in root.parse_error
    assert await LLMCall.objects.filter(session=session, outcome="error").acount() == 1


async def test_a_cancelled_session_stops_at_the_next_level(alice):
    session = await start(alice)
    gateway = await sync_to_async(ModelGateway)(session)
    original = gateway.ask
    calls = 0

    async def cancel_after_first_call(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == 1:
            await sync_to_async(services.cancel_session)(alice.tenant, session.id, "tests")
        return await original(*args, **kwargs)

    gateway.ask = cancel_after_first_call
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    assert session.status == "cancelled"
    assert await ReasoningNode.objects.filter(session=session).acount() == 4  # root and the first level only


async def test_a_session_runs_once(alice):
    session = await start(alice, params={"branching": 1, "depth": 1, "keep": 1})
    await run_session(session.id)
    await run_session(session.id)
    assert await ReasoningNode.objects.filter(session=session).acount() == 2
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "solved"


async def test_one_failed_call_marks_its_node_and_the_search_goes_on(alice):
    session = await start(alice, params={"branching": 3, "depth": 2, "keep": 2}, model_primary="openai/gpt-4o-mini")
    gateway = await sync_to_async(ModelGateway)(session, retries=0, deployment_params={"primary": {}})
    original, calls = gateway.router.acompletion, 0

    async def third_call_fails(**kwargs):
        nonlocal calls
        calls += 1
        if calls == 3:  # the second child's evaluation
            return await original(**kwargs, mock_response=Exception("provider hiccup"))
        contract = kwargs["messages"][0]["content"].split("\n")[1]
        text = {
            "tot.propose": '{"thoughts": [{"thought": "Sell"}, {"thought": "Hold"}, {"thought": "Buy"}]}',
            "tot.evaluate": '{"score": 0.6, "reason": "fine"}',
            "tot.synthesize": '{"answer": "Add the CHF 2.4m of healthcare equities to the CHF 18m portfolio in stages, then hold."}',
        }[contract]
        return await original(**kwargs, mock_response=text)  # streamed (a real model's call is): litellm mocks a stream

    gateway.router.acompletion = third_call_fails
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    depth_one = [n for n in await nodes_of(session) if n.depth == 1]
    failed = [n for n in depth_one if n.parse_error]
    assert len(failed) == 1 and "provider hiccup" in failed[0].parse_error and failed[0].eval_score is None
    assert session.status == "solved" and session.final_answer == "Add the CHF 2.4m of healthcare equities to the CHF 18m portfolio in stages, then hold."
