"""Steering a Tree of Thoughts while it runs and after it ends: every action through the engine, on the offline model.

A hooked gateway lets a test act at an exact point of the search (after the n-th model call) the way an
advisor would from the page; the model itself is the real offline one, through litellm.
"""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import OverseerAction, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from tests.runs import (
    HookedGateway,
    act,
    cut_at_call,
    ledger_and_node_costs,
    pause_at_call,
    resume,
    rows,
    run_hooked,
    take_over_and_run,
)

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Plan the sequence for realising CHF 1.2m of gains across three tax years for a Zurich couple."
PARAMS = {"branching": 3, "depth": 4, "keep": 2}


async def start(party, **fields):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params=fields.pop("params", PARAMS), **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


def descendants(nodes, node_id):
    found, frontier = [], {node_id}
    for n in sorted(nodes, key=lambda n: n.depth):
        if n.parent_id in frontier:
            found.append(n)
            frontier.add(n.id)
    return found


def assert_one_search(nodes, branching=3):
    """One root, and no node proposed under twice."""
    assert len([n for n in nodes if n.depth == 0]) == 1
    per_parent = {}
    for n in nodes:
        per_parent[n.parent_id] = per_parent.get(n.parent_id, 0) + 1
    assert max(v for k, v in per_parent.items() if k is not None) <= branching


# ---- prune ------------------------------------------------------------------------------


async def test_a_branch_pruned_during_expansion_gets_no_later_descendants(alice):
    session = await start(alice)
    pruned = {}

    async def prune_when_level_two_is_proposed(n, contract):
        # Calls 1-4: the root's proposals and their 3 scores; calls 5 and 6 propose under the two kept depth-1 nodes.
        if n == 6 and not pruned:
            kept = [r for r in await rows(session) if r.depth == 1 and not r.pruned]
            target = max(kept, key=lambda r: r.eval_score)
            await act(services.set_pruned, alice.tenant, target.id, "user:tester", pruned=True)
            pruned["node"], pruned["depth_then"] = target, max(r.depth for r in await rows(session))

    await run_hooked(session, prune_when_level_two_is_proposed)
    await session.arefresh_from_db()
    nodes = await rows(session)
    under = descendants(nodes, pruned["node"].id)
    assert session.status == "solved"
    # Proposals already in flight may land (kept, out of the search); nothing deeper is ever made under it.
    assert all(n.depth <= pruned["node"].depth + 1 for n in under)
    target = next(n for n in nodes if n.id == pruned["node"].id)
    # What landed after the prune is kept unscored; what landed just before it was live then, and may be scored.
    assert all(n.eval_score is None for n in under if n.created_at > target.pruned_at)
    assert session.final_node_id not in {n.id for n in under} | {pruned["node"].id}
    assert target.pruned_by == "overseer" and target.pruned_actor == "user:tester" and target.pruned_at
    assert_one_search(nodes)


async def test_pruning_the_answers_branch_writes_the_answer_again_from_the_best_live_line(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    await session.arefresh_from_db()
    old_final, old_answer = session.final_node_id, session.final_answer
    final = await ReasoningNode.objects.aget(pk=old_final)
    depth_one = await ReasoningNode.objects.aget(
        pk=(
            await ReasoningNode.objects.aget(pk=(await ReasoningNode.objects.aget(pk=final.parent_id)).parent_id)
        ).parent_id
    )

    await act(services.set_pruned, alice.tenant, depth_one.id, "user:tester", pruned=True)
    await runner.drain()
    await session.arefresh_from_db()
    nodes = await rows(session)
    out = {n.id for n in descendants(nodes, depth_one.id)} | {depth_one.id}
    assert session.status == "solved" and session.final_node_id not in out
    assert session.final_answer and session.final_answer != old_answer
    resynthesis = await OverseerAction.objects.aget(session=session, action="resynthesize")
    assert resynthesis.state == "applied"


# ---- expand, edit, promote ------------------------------------------------------------


async def test_expand_on_a_running_session_adds_k_scored_children(alice):
    session = await start(alice)
    asked = {}

    async def expand_the_root_early(n, contract):
        if n == 2 and not asked:  # the root: a depth-1 node may yet fall out of the beam, which refuses the expand
            first = next(r for r in await rows(session) if r.depth == 0)
            asked["node"] = first
            asked["action"] = await act(services.expand_node, alice.tenant, first.id, "user:tester", 2)

    await run_hooked(session, expand_the_root_early)
    action = await OverseerAction.objects.aget(pk=asked["action"].id)
    children = [n for n in await rows(session) if str(n.id) in action.after["children"]]
    assert action.state == "applied" and len(children) == 2
    assert all(c.parent_id == asked["node"].id and c.eval_score is not None for c in children)
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "solved"


async def test_expand_reopens_a_finished_session_and_spends_from_its_budget(alice, runner):
    session = await start(alice, params={"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    await session.arefresh_from_db()
    spent_before, nodes_before = session.budget_used_usd, len(await rows(session))
    leaf = await ReasoningNode.objects.aget(pk=session.final_node_id)

    action = await act(services.expand_node, alice.tenant, leaf.id, "user:tester", 3)
    assert (await ReasoningSession.objects.aget(pk=session.id)).status in {"queued", "running"}  # reopened
    await runner.drain()
    await session.arefresh_from_db()
    await action.arefresh_from_db()
    nodes = await rows(session)
    assert action.state == "applied" and len(nodes) == nodes_before + 3
    assert session.status == "solved" and session.budget_used_usd > spent_before
    # Deeper children make a new best line: the answer is written again from it.
    assert (await ReasoningNode.objects.aget(pk=session.final_node_id)).parent_id == leaf.id
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_edit_keeps_the_original_rescores_and_marks_descendants_stale(alice, runner):
    session = await start(alice, params={"branching": 2, "depth": 3, "keep": 1})
    await run_session(session.id)
    final = await ReasoningNode.objects.aget(pk=(await ReasoningSession.objects.aget(pk=session.id)).final_node_id)
    target = await ReasoningNode.objects.aget(pk=final.parent_id)  # depth 2, on the answer's line
    original = target.thought

    await act(services.edit_node, alice.tenant, target.id, "user:tester", "Defer the sale to January instead.")
    edited = await ReasoningNode.objects.aget(pk=target.id)
    assert edited.thought == "Defer the sale to January instead." and edited.original_thought == original
    assert (await ReasoningNode.objects.aget(pk=final.id)).stale is True
    await runner.drain()
    edited = await ReasoningNode.objects.aget(pk=target.id)
    action = await OverseerAction.objects.aget(session_id=session.id, action="edit")
    assert edited.stale is False and edited.eval_score is not None and action.state == "applied"
    assert action.before["thought"] == original
    assert (await ReasoningNode.objects.aget(pk=final.id)).stale is True  # until it is rescored or re-expanded
    session = await ReasoningSession.objects.aget(pk=session.id)
    assert session.status == "solved" and "Defer the sale to January" in (
        await sync_to_async(lambda: "\n".join(n.thought for n in ReasoningNode.objects.filter(session=session)))()
    )


async def test_promote_makes_a_chosen_node_the_answer(alice, runner):
    session = await start(alice, params={"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    final_id = (await ReasoningSession.objects.aget(pk=session.id)).final_node_id
    dropped = next(r for r in await rows(session) if r.depth == 2 and r.id != final_id)
    await act(services.set_pruned, alice.tenant, dropped.id, "user:tester", pruned=False)
    await act(services.promote_node, alice.tenant, dropped.id, "user:tester", "Lower tax drag for this client.")
    await runner.drain()
    session = await ReasoningSession.objects.aget(pk=session.id)
    assert session.status == "solved" and session.final_node_id == dropped.id
    assert session.answer_chosen_by == "user:tester" and session.answer_note == "Lower tax drag for this client."
    assert session.final_answer


# ---- pause, resume, cancel, and re-entry ----------------------------------------------


async def test_pause_stops_new_calls_and_resume_continues_from_the_stored_tree(alice, runner):
    session = await start(alice)
    gateway, paused_rows = await pause_at_call(alice, session, 8)  # midway
    paused_nodes = {n.id for n in paused_rows}
    assert session.status == "paused" and gateway.after_stop == 0  # calls in flight may finish; none start after
    assert session.run_owner == "" and session.budget_reserved_usd == pytest.approx(0, abs=1e-12)

    nodes = await resume(alice, session, runner)
    assert session.status == "solved" and paused_nodes <= {n.id for n in nodes}
    assert len(nodes) == 22  # the same tree a run without a pause grows
    assert_one_search(nodes)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_cancel_lands_within_one_model_call_and_keeps_a_partial_answer(alice):
    session = await start(alice)
    gateway = None

    async def cancel_on_call_seven(n, contract):
        if n == 7:
            await act(services.cancel_session, alice.tenant, session.id, "user:tester")
            gateway.stopped = True

    gateway = await sync_to_async(HookedGateway)(session, cancel_on_call_seven)
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    # Calls already on their way may finish (and are recorded); none starts after the cancel.
    assert gateway.after_stop == 0 and gateway.count < 22
    assert session.status == "cancelled" and session.answer_partial and session.final_answer
    assert "partial: cancelled" in session.final_answer
    assert await ReasoningNode.objects.filter(session_id=session.id).acount() > 1


async def test_a_run_cut_off_mid_level_is_resumed_with_nothing_duplicated(alice, runner):
    session = await start(alice)

    before = {n.id for n in await cut_at_call(session, 12)}  # mid-level
    assert session.status == "interrupted"

    nodes = await take_over_and_run(session)
    assert session.status == "solved" and before <= {n.id for n in nodes} and len(nodes) == 22
    assert_one_search(nodes)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


# ---- fork -------------------------------------------------------------------------------


async def test_fork_continues_from_a_copy_of_the_path(alice, runner):
    session = await start(alice, params={"branching": 2, "depth": 3, "keep": 1})
    await run_session(session.id)
    node = next(r for r in await rows(session) if r.depth == 1 and not r.pruned)
    fork = await act(services.fork_session, alice.tenant, session.id, "user:tester", str(node.id), budget_usd=0.2)
    await runner.drain()
    fork = await ReasoningSession.objects.aget(pk=fork.id)
    copied = await rows(fork)
    assert fork.status == "solved" and fork.forked_from_id == session.id and fork.forked_from_node_id == node.id
    assert fork.budget_usd == 0.2 and fork.mode == "tot"
    assert [c.thought for c in copied[:2]] == [
        r.thought for r in (await rows(session)) if r.id in (node.parent_id, node.id)
    ]
    assert copied[1].source_node_id == node.id and all(c.cost_usd == 0 for c in copied[:2])
    assert max(c.depth for c in copied) == 3
    assert all(d.depth > 1 for d in descendants(copied, copied[1].id))
    source = await sync_to_async(lambda: ReasoningSession.objects.get(pk=session.id).to_dict(with_forks=True))()
    assert source["forks"] == [str(fork.id)]


async def test_pruning_every_line_says_why_there_is_no_answer(alice, runner):
    session = await start(alice, params={"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    for node in [r for r in await rows(session) if r.depth == 1 and not r.pruned]:
        await act(services.set_pruned, alice.tenant, node.id, "user:tester", pruned=True)
    await runner.drain()
    session = await ReasoningSession.objects.aget(pk=session.id)
    # The strategy's own beam drop at depth 1 is out of the search too; nothing live is left to answer from.
    assert session.status == "failed" and "every line of reasoning is pruned" in session.error
    assert not session.final_answer and session.final_node_id is None
