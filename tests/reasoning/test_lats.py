"""LATS on the offline model, through the engine: the MCTS statistics in the stored tree, reflections, Game of 24,
budgets, parse failures, and steering (pause, a cut run, hand expand, prune) with nothing counted twice."""

import csv
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm import game24
from reasoning.llm.gateway import ModelGateway
from reasoning.models import LLMCall, OverseerAction, ReasoningCritique, ReasoningSession
from reasoning.schemas import SessionIn
from tests.runs import (
    act,
    cut_at_call,
    ledger_and_node_costs,
    pause_at_call,
    resume,
    rows,
    run_hooked,
    run_scripted,
    take_over_and_run,
)

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Rebalance a CHF 12m portfolio that drifted to 72% equities against a 60/40 target for a Geneva family."
SMALL = {"iterations": 4, "children": 2, "rollout_depth": 1, "max_depth": 4, "threshold": 1.0}
# SMALL runs all its iterations: no terminal reaches a threshold of 1.0, so the search ends saying so (issue 30).
RAN_OUT = ("failed", "no_success")
GAME24 = Path(__file__).resolve().parents[2] / "fixtures" / "game24.csv"


async def start(party, **fields):
    data = SessionIn(
        problem_text=fields.pop("problem", PROBLEM),
        mode="lats",
        problem_kind=fields.pop("problem_kind", "allocation-rebalance"),
        **fields,
    )
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


def lineage(nodes, node):
    by_id = {n.id: n for n in nodes}
    path = [node]
    while path[-1].parent_id:
        path.append(by_id[path[-1].parent_id])
    return path


def assert_statistics(nodes, threshold=0.8, final_id=None):
    """Visits are conserved (a node's visits are its children's plus the simulations that ended on it), the root
    holds one visit per iteration, and a failed terminal end holds -1 per visit while its parent gained nothing
    from it (the reference code's rule)."""
    iterations = {n.state["iteration"] for n in nodes if n.state.get("iteration") and n.visit_count}
    root = next(n for n in nodes if n.depth == 0)
    assert root.visit_count == len(iterations)
    for n in nodes:
        kids = [c for c in nodes if c.parent_id == n.id]
        ends = n.visit_count - sum(c.visit_count for c in kids)
        assert ends >= 0, n.thought
        # The answer's node is marked terminal when the answer is written, after its last backpropagation.
        failed = n.is_terminal and n.eval_score is not None and n.eval_score < threshold and n.id != final_id
        if failed and n.visit_count:
            assert n.total_reward == pytest.approx(-n.visit_count), n.thought


def assert_one_search(nodes, children, samples=2):
    """One root; no node expanded twice (at most `children` expansion children, or `samples` rollout ones, each, each
    kind made in one iteration: a node a rollout passed through may be expanded in a later one)."""
    assert len([n for n in nodes if n.depth == 0]) == 1
    for parent in nodes:
        kids = [n for n in nodes if n.parent_id == parent.id]
        assert len([k for k in kids if k.state.get("kind") == "expand"]) <= children
        assert len([k for k in kids if k.state.get("rollout")]) <= samples
        for kind in ("expand", "rollout"):
            assert len({k.state.get("iteration") for k in kids if k.state.get("kind") == kind}) <= 1


# ---- a whole search on the offline model ------------------------------------------------


async def test_a_search_grows_an_mcts_tree_and_writes_an_answer(alice):
    session = await start(alice, params={"threshold": 1.0})  # never reached offline: all 8 iterations run
    gateway = await run_hooked(session)
    await session.arefresh_from_db()
    nodes = await rows(session)
    root = nodes[0]
    # No terminal reached the threshold: the answer is the best line so far, and the session says so (issue 30).
    assert session.status == "failed" and session.termination_reason == "no_success", session.error
    assert session.answer_partial and "no terminal line succeeded" in session.error
    assert session.final_answer and root.visit_count == 8
    assert_statistics(nodes, threshold=1.0)
    assert_one_search(nodes, children=3, samples=2)
    for iteration in range(1, 9):
        made = [n for n in nodes if n.state.get("iteration") == iteration]
        expanded = [n for n in made if n.state.get("kind") == "expand"]
        assert len(expanded) == 3 and len({n.parent_id for n in expanded}) == 1
    # Selection goes deeper on valued lines: after the first iteration, expansions start below the root's children.
    assert all(next(n for n in nodes if n.state.get("iteration") == i).depth >= 2 for i in range(2, 9))
    assert max(n.depth for n in nodes) <= 5
    # A node a rollout passed through is no leaf frozen at the rollout's width: selection expands it to its own.
    def made_under(parent, kind):
        return [n for n in nodes if n.parent_id == parent.id and n.state.get("kind") == kind]

    widened = [p for p in nodes if made_under(p, "rollout") and made_under(p, "expand")]
    assert widened and all(len(made_under(p, "expand")) == 3 for p in widened)
    # One expand call per expansion and rollout step, one value per new node (its 3 samples in one request, so a
    # terminal node needs no verification call of its own).
    calls = [name for name, _ in gateway.prompts]
    steps = {(n.parent_id, n.state["kind"], n.state["iteration"]) for n in nodes if n.depth}
    assert calls.count("lats.expand") == len(steps)
    assert calls.count("lats.evaluate") == len(nodes) - 1
    final = next(n for n in nodes if n.id == session.final_node_id)
    assert not final.pruned and final.state.get("success") is not False  # never a line the tree draws as failed
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_failed_terminal_lines_are_reflected_on_and_the_reflections_reach_later_expansions(alice):
    params = {"iterations": 3, "children": 2, "max_depth": 2, "rollout_depth": 1, "threshold": 1.0}
    session = await start(alice, params=params)
    gateway = await run_hooked(session)
    nodes = await rows(session)
    critiques = [c async for c in ReasoningCritique.objects.filter(session_id=session.id).order_by("attempt_num")]
    failed = [n for n in nodes if n.is_terminal and n.depth == 2 and n.visit_count]  # the lines simulated to the end
    # one reflection a distinct failed answer, as the reference writes them (two lines ending alike share one)
    reflected = [n for n in failed if n.id in {c.node_id for c in critiques}]
    assert failed and len(reflected) == len(critiques) == len({n.thought for n in failed})
    assert {n.thought for n in reflected} == {n.thought for n in failed}
    for critique in critiques:
        node = next(n for n in failed if n.id == critique.node_id)
        assert critique.attempt_num == node.state["iteration"] and node.total_reward == -node.visit_count
        assert critique.critique.endswith(".") and "fell short" in critique.critique
    expands = [prompt for name, prompt in gateway.prompts if name == "lats.expand"]
    assert "(none yet)" in expands[0]
    assert critiques[0].critique in expands[-1]
    assert any(c.applied_to_next for c in critiques)
    assert len([name for name, _ in gateway.prompts if name == "lats.reflect"]) == len(critiques)


def puzzles(first, last):
    with GAME24.open() as handle:
        return [row["Puzzles"] for row in csv.DictReader(handle) if first <= int(row["Rank"]) <= last]


async def test_it_solves_game_of_24_puzzles(alice):
    for cards in puzzles(901, 905):
        session = await start(alice, problem=f"Game of 24: use {cards} to make 24.", problem_kind="general")
        await run_session(session.id)
        await session.arefresh_from_db()
        nodes = await rows(session)
        numbers = [int(c) for c in cards.split()]
        assert session.status == "solved", session.error
        ok, expression = game24.check_answer(session.final_answer, numbers)
        assert ok, session.final_answer
        assert game24.evaluate_expression(expression)[0] == 24
        final = next(n for n in nodes if n.id == session.final_node_id)
        # The answer line's success is the task's checker's (its arithmetic), as the reference's environment reward.
        assert final.is_terminal and final.state["success"] and final.state["decided_by"] == "checker"
        assert final.eval_score == 1.0 and game24.is_answer(final.thought)
        assert nodes[0].visit_count < 8  # a solution stops the search early
        assert_statistics(nodes)


# ---- budgets and model failures ---------------------------------------------------------


async def test_a_budget_that_runs_out_midway_keeps_the_best_answer_so_far(alice):
    session = await start(alice, budget_usd=0.02)
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await rows(session)
    assert session.status == "exhausted"
    assert session.budget_used_usd <= session.budget_usd
    assert 1 < len(nodes) and nodes[0].visit_count < 8
    assert session.final_answer and session.final_node_id
    assert_statistics(nodes, final_id=session.final_node_id)


async def test_unparseable_values_are_recorded_not_scored_zero(alice):
    params = {"iterations": 1, "children": 2, "rollout_depth": 0}
    session = await start(alice, params=params, model_primary="openai/gpt-4o-mini")
    await run_scripted(session, ['{"thoughts": [{"thought": "Sell bonds"}, {"thought": "Hold"}]}'] + ["no idea"] * 4)
    nodes = await rows(session)
    children = [n for n in nodes if n.depth == 1]
    assert len(children) == 2
    assert all(n.eval_score is None and "evaluation unparseable" in n.parse_error for n in children)
    assert all(n.visit_count == 0 for n in nodes)  # nothing to simulate, nothing backpropagated
    assert session.status == "failed" and "no_thoughts" in session.error
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_params_are_bounded_and_unknown_keys_refused(alice):
    for bad in ({"iterations": 41}, {"children": 0}, {"exploration": 5}, {"threshold": 1.5}, {"branching": 3}):
        with pytest.raises(services.InvalidInput):
            await start(alice, params=bad)


# ---- steering and re-entry --------------------------------------------------------------


async def test_pause_and_resume_grow_the_tree_an_uninterrupted_run_grows(alice, runner):
    reference = await start(alice, params=SMALL)
    await run_session(reference.id)
    expected = len(await rows(reference))

    session = await start(alice, params=SMALL)

    _, paused_rows = await pause_at_call(alice, session, 8)  # in iteration two
    paused = {n.id for n in paused_rows}
    assert session.status == "paused"

    nodes = await resume(alice, session, runner)
    assert (session.status, session.termination_reason) == RAN_OUT and paused <= {n.id for n in nodes}
    assert len(nodes) == expected and nodes[0].visit_count == 4
    assert_one_search(nodes, children=2)
    assert_statistics(nodes)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


@pytest.mark.parametrize("cut_at", [3, 5, 9])  # a value, a rollout step, the next expansion's values
async def test_a_run_cut_off_mid_iteration_resumes_without_counting_twice(alice, cut_at):
    session = await start(alice, params=SMALL)

    before = {n.id for n in await cut_at_call(session, cut_at)}
    assert session.status == "interrupted"

    nodes = await take_over_and_run(session)
    assert (session.status, session.termination_reason) == RAN_OUT and before <= {n.id for n in nodes}
    assert nodes[0].visit_count == 4
    assert_one_search(nodes, children=2)
    assert_statistics(nodes)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_a_hand_expand_adds_k_valued_children_without_touching_the_statistics(alice, runner):
    session = await start(alice, params=SMALL)
    await run_session(session.id)
    before = await rows(session)
    leaves = [n for n in before if n.depth >= 1 and not any(c.parent_id == n.id for c in before)]
    target = min(leaves, key=lambda n: (n.is_terminal, n.depth))  # the shallowest leaf the search left open

    action = await act(services.expand_node, alice.tenant, target.id, "user:tester", 2)
    await runner.drain()
    await action.arefresh_from_db()
    nodes = await rows(session)
    added = [n for n in nodes if str(n.id) in action.after["children"]]
    assert action.state == "applied" and len(nodes) == len(before) + 2 and len(added) == 2
    assert all(n.parent_id == target.id and n.eval_score is not None for n in added)
    assert all(n.state["kind"] == "hand" and n.visit_count == 0 for n in added)
    assert [(n.visit_count, n.total_reward) for n in nodes[: len(before)]] == [
        (n.visit_count, n.total_reward) for n in before
    ]
    ended = await ReasoningSession.objects.aget(pk=session.id)
    assert (ended.status, ended.termination_reason) == RAN_OUT and ended.answer_partial


async def test_a_pruned_branch_leaves_the_search(alice):
    session = await start(alice, params=SMALL)
    pruned = {}

    async def prune_the_simulated_child(n, contract):
        # As soon as iteration 1 has been backpropagated, the overseer prunes the child it simulated.
        if not pruned:
            nodes = await rows(session)
            target = next((r for r in nodes if r.depth == 1 and r.visit_count), None)
            if target:
                await act(services.set_pruned, alice.tenant, target.id, "user:tester", pruned=True)
                pruned["node"], pruned["iteration"] = target, nodes[0].visit_count + 1

    await run_hooked(session, prune_the_simulated_child)
    await session.arefresh_from_db()
    nodes = await rows(session)
    target = next(n for n in nodes if n.id == pruned["node"].id)
    subtree = {target.id}
    for n in sorted(nodes, key=lambda n: n.depth):
        if n.parent_id in subtree:
            subtree.add(n.id)
    assert (session.status, session.termination_reason) == RAN_OUT and nodes[0].visit_count == 4
    # Nothing was proposed under it after the prune, but what the iteration in flight brought back (kept, marked).
    assert all(n.state.get("iteration", 0) <= pruned["iteration"] for n in nodes if n.id in subtree)
    assert target.visit_count == 1 and target.pruned_by == "overseer"
    assert session.final_node_id not in subtree
    assert not await OverseerAction.objects.filter(session_id=session.id, state="pending").aexists()


async def test_a_failing_model_is_recorded_on_the_node_it_concerns(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    gateway = await sync_to_async(ModelGateway)(
        session, retries=0, deployment_params={"primary": {"mock_response": Exception("provider exploded")}}
    )
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    [root] = await rows(session)
    assert "model failed" in root.parse_error and "provider exploded" in root.parse_error
    assert session.status == "failed" and session.finished_at
    assert await LLMCall.objects.filter(session=session, outcome="error").acount() == 1
