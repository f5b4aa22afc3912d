"""A fork continues from the forked path in every mode (issue 16, item 6): the path's edges (ReAct's actions and
observations) and critiques (Reflexion's and LATS's memory) come with it, and a strategy of another mode takes the
copied path as its own start."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import ReasoningCritique, ReasoningEdge, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from reasoning.store import DjangoStore
from reasoning.strategies.reflexion import copied_attempt
from tests.runs import act, rows

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Which of a client's CHF 3m holdings to sell first to fund a CHF 400k gift to her daughter in Zurich?"


async def solved(party, mode, params):
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=params)
    session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
    await run_session(session.id)
    await session.arefresh_from_db()
    return session


async def fork_at(party, session, node, mode, runner):
    fork = await act(services.fork_session, party.tenant, session.id, "user:tester", str(node.id), mode=mode)
    await runner.drain()
    return await ReasoningSession.objects.aget(pk=fork.id)


async def test_a_react_fork_keeps_the_actions_and_observations_of_its_path(alice, runner):
    session = await solved(alice, "react", {"max_steps": 4})
    steps = [r for r in await rows(session) if r.depth == 3]
    node = steps[0]
    fork = await fork_at(alice, session, node, "react", runner)
    copied = [r for r in await rows(fork) if r.source_node_id]
    assert len(copied) == 4
    edges = [e async for e in ReasoningEdge.objects.filter(session=fork).select_related("to_node")]
    by_copy = {e.to_node.source_node_id: e for e in edges}
    originals = {e.to_node_id: e async for e in ReasoningEdge.objects.filter(session=session)}
    for row in copied[1:]:
        assert by_copy[row.source_node_id].action == originals[row.source_node_id].action
        assert by_copy[row.source_node_id].observation == originals[row.source_node_id].observation
    # The fork's next step reads the copied steps' actions, not "(none)".
    prompts = [c.prompt async for c in fork.llm_calls.filter(purpose="react.step")]
    assert prompts and "Action: (none)" not in prompts[0]
    assert originals[copied[1].source_node_id].action in prompts[0]


async def test_a_reflexion_fork_keeps_the_critiques_of_its_path(alice, runner):
    session = await solved(alice, "reflexion", {"max_attempts": 2, "steps": 2, "threshold": 0.99})
    critique = await ReasoningCritique.objects.select_related("node").aget(session=session, attempt_num=1)
    fork = await fork_at(alice, session, critique.node, "reflexion", runner)
    copies = [c async for c in ReasoningCritique.objects.filter(session=fork).select_related("node")]
    assert [(c.attempt_num, c.critique) for c in copies][:1] == [(1, critique.critique)]
    assert copies[0].node.source_node_id == critique.node_id
    # Attempt 2 of the fork was written with attempt 1's critique in its memory.
    prompts = [c.prompt async for c in fork.llm_calls.filter(purpose="reflexion.attempt")]
    assert prompts and critique.critique.split()[0] in prompts[0]


async def test_a_tree_of_thoughts_path_forked_into_reflexion_is_its_attempt_one(alice, runner):
    session = await solved(alice, "tot", {"branching": 2, "depth": 3, "keep": 1})
    node = next(r for r in await rows(session) if r.depth == 2 and not r.pruned)
    fork = await ReasoningSession.objects.aget(
        pk=(
            await act(services.fork_session, alice.tenant, session.id, "user:tester", str(node.id), mode="reflexion")
        ).id
    )
    store = await sync_to_async(DjangoStore)(fork)
    attempt = copied_attempt(store, next(n for n in store.nodes() if n.depth == 0))
    assert attempt is not None and attempt.num == 1 and [n.depth for n in attempt.chain] == [1, 2]
    assert attempt.last.state["copied"] == str(node.id)
    await runner.drain()
    fork = await ReasoningSession.objects.aget(pk=fork.id)
    written = [r for r in await rows(fork) if not r.source_node_id and r.depth > 0]
    # No new attempt 1 from the problem: what the fork wrote is numbered after the copied path.
    assert all(r.state.get("attempt", 2) >= 2 for r in written)
    # The copied path is scored as one line, on its end: the answer comes from a line's end, never from inside it.
    copied = [r for r in await rows(fork) if r.source_node_id and r.depth > 0]
    assert [r.eval_score is not None for r in copied] == [False] * (len(copied) - 1) + [True]
    final = await ReasoningNode.objects.aget(pk=fork.final_node_id)
    assert final.id == copied[-1].id or final.state.get("attempt", 0) >= 2


def test_react_reads_a_copied_reasoning_step_as_a_prior_step_without_a_tool():
    from reasoning.strategies.base import Node
    from reasoning.strategies.react import no_action

    copied = Node(id="a", parent_id="r", depth=1, thought="Sell the bonds first.", state={"copied": "x"})
    assert no_action(copied)[0].startswith("(no tool: a reasoning step copied")
    assert no_action(Node(id="b", parent_id="r", depth=1, thought="t")) == ("(none)", "(none)")


# ---- every mode continues under the fork's node (issue 22, item 5; the whole matrix: test_fork_matrix.py) --------


async def settled_fork(party, session, node, mode, runner):
    fork = await act(services.fork_session, party.tenant, session.id, "user:tester", str(node.id), mode=mode)
    for _ in range(600):
        await runner.drain()
        fork = await ReasoningSession.objects.aget(pk=fork.id)
        if fork.status not in ("queued", "running"):
            return fork
        await asyncio.sleep(0.05)
    raise AssertionError(f"the fork is still {fork.status}")


async def test_reflexions_attempts_in_a_fork_continue_from_the_forked_path(alice, runner):
    session = await solved(alice, "tot", {"branching": 2, "depth": 3, "keep": 1})
    node = next(r for r in await rows(session) if r.depth == 2 and not r.pruned)
    fork = await settled_fork(alice, session, node, "reflexion", runner)
    nodes = await rows(fork)
    copy = next(r for r in nodes if r.source_node_id == node.id)
    firsts = [r for r in nodes if not r.source_node_id and r.state.get("step") == 1]
    assert firsts and all(r.parent_id == copy.id for r in firsts)  # attempt 2 on starts under the fork's node
    prompts = [c.prompt async for c in fork.llm_calls.filter(purpose="reflexion.attempt")]
    copied = [r.thought for r in nodes if r.source_node_id and r.depth]
    assert prompts and all(thought in prompts[0].split("### STEPS SO FAR", 1)[1] for thought in copied)


async def test_a_fork_into_lats_values_the_copied_path_first_and_recomputes_what_it_does_not_copy(alice, runner):
    session = await solved(alice, "lats", {"iterations": 3})
    nodes = await rows(session)
    node = next(r for r in nodes if r.depth == 2 and r.visit_count and any(c.parent_id == r.id for c in nodes))
    fork = await act(services.fork_session, alice.tenant, session.id, "user:tester", str(node.id), mode="react")
    copied = [r for r in await rows(fork) if r.source_node_id]
    # Nothing of how the source's search ended, or of its statistics, is copied; another mode's scores neither.
    assert not any(r.is_terminal or r.visit_count or r.total_reward or r.eval_score is not None for r in copied)
    react = await ReasoningSession.objects.aget(pk=fork.id)
    for _ in range(600):
        await runner.drain()
        await react.arefresh_from_db()
        if react.status not in ("queued", "running"):
            break
        await asyncio.sleep(0.05)
    step = next(r for r in await rows(react) if r.depth == 3)
    lats = await settled_fork(alice, react, step, "lats", runner)
    calls = [c async for c in lats.llm_calls.order_by("id")]
    copies = {r.id for r in await rows(lats) if r.source_node_id and r.depth}
    first = calls[: len(copies)]
    assert [c.purpose for c in first] == ["lats.evaluate"] * len(copies)  # the copied path is valued first
    assert {c.node_id for c in first} == copies
    # It ran to an honest end: solved from a line that succeeded, or failed saying none did (issue 30).
    assert lats.status == "solved" or lats.termination_reason == "no_success"
    assert len(await rows(lats)) > len(copies) + 1
