"""ReAct with tools, through the engine: on the offline model, and on scripted replies where a test needs a bad step.

A hooked gateway lets a test act before the n-th model call, the way an advisor would from the page.
"""

import json

import pytest
from asgiref.sync import sync_to_async
from pydantic import BaseModel

from reasoning import services, tools
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.models import LLMCall, OverseerAction, ReasoningEdge, ReasoningNode
from reasoning.schemas import SessionIn
from reasoning.strategies.react import ReAct
from reasoning.strategies.replies import PLACEHOLDER
from tests.conftest import SEEDED_KINDS
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

PROBLEM = "Plan the sequence for realising CHF 1.2m of gains across three tax years for Zurich client C-1001."
BY_KIND = {
    "general": "Game of 24: use the numbers 4 9 10 13 with + - * / to make 24.",
    "investment-thesis": "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a "
    "CHF 18m portfolio for a client aged 58.",
    "allocation-rebalance": "Rebalance a portfolio that drifted to 72% equities against a 60/40 target.",
    "tax-optim-sequence": PROBLEM,
    "wealth-transfer": "A Geneva-based entrepreneur aged 67 wants to pass a CHF 40m operating company and a CHF 6m "
    "property portfolio to two children while keeping an income of CHF 400,000 a year.",
    "data-driven-research": "Client C-1003 asks whether to trim her NVDA and MSFT positions and hedge the dollar.",
}


async def start(party, **fields):
    data = SessionIn(problem_text=fields.pop("problem", PROBLEM), mode="react", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def edges_by_target(session):
    return {e.to_node_id: e async for e in ReasoningEdge.objects.filter(session_id=session.id)}


async def purposes(session):
    return [c.purpose async for c in LLMCall.objects.filter(session_id=session.id)]


def assert_one_trajectory(nodes):
    """One root, then a chain: every step the only child of the step before, numbered by its depth."""
    assert len([n for n in nodes if n.depth == 0]) == 1
    for before, after in zip(nodes, nodes[1:]):
        assert after.parent_id == before.id and after.depth == before.depth + 1
        assert after.state["step"] == after.depth


async def actions_of(session):
    edges = await edges_by_target(session)
    return [edges[n.id].action for n in await rows(session) if n.depth > 0]


def step(tool, args, thought="Next."):
    return {"thought": thought, "action": {"tool": tool, "args": args}}


# ---- a run on the offline model ---------------------------------------------------------


async def test_a_run_is_a_chain_of_tool_steps_ending_with_the_final_answer(alice):
    session = await start(alice, problem_kind="tax-optim-sequence")
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes, edges = await rows(session), await edges_by_target(session)
    steps = nodes[1:]
    assert session.status == "solved", session.error
    assert_one_trajectory(nodes)
    tools_used = [n.state["tool"] for n in steps]
    assert tools_used == ["portfolio", "search_documents", "prices", "swiss_tax", "calculate", "final_answer"]
    assert set(edges) == {n.id for n in steps}  # every step has its edge, the root none
    final = steps[-1]
    assert final.is_terminal and session.final_node_id == final.id
    assert session.final_answer == final.state["answer"] == edges[final.id].observation
    # The tools' findings by their source; their figures stay on the steps (a tool's figure is no client fact).
    assert "C-1001 (Anna Keller" in session.final_answer and "illustrative, not tax advice" in session.final_answer
    assert "CHF 1.2M / 3 = CHF 400k" in session.final_answer  # the client's own figure, with its arithmetic
    # The answer came with the final step: no synthesis call; one step call per step.
    assert await purposes(session) == ["react.step"] * len(steps)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_edges_carry_the_tools_real_output(alice):
    session = await start(alice)
    await run_session(session.id)
    edges = await edges_by_target(session)
    for node in (await rows(session))[1:-1]:
        edge = edges[node.id]
        assert edge.from_node_id == node.parent_id
        assert edge.action == f"{node.state['tool']}({json.dumps(node.state['args'], separators=(',', ':'))})"
        assert edge.observation == await tools.call(node.state["tool"], node.state["args"])
        assert not edge.observation.startswith("error")
    observations = " ".join(e.observation for e in edges.values())
    assert (
        '"client_id":"C-1001","name":"Anna Keller"' in observations and "illustrative, not tax advice" in observations
    )


async def test_every_seeded_kind_ends_solved_on_the_offline_model(alice):
    assert set(BY_KIND) == SEEDED_KINDS
    for kind, problem in BY_KIND.items():
        session = await start(alice, problem=problem, problem_kind=kind)
        await run_session(session.id)
        await session.arefresh_from_db()
        nodes = await rows(session)
        assert session.status == "solved", (kind, session.error)
        assert_one_trajectory(nodes)
        assert nodes[-1].state["tool"] == "final_answer" and len(nodes) - 1 <= 6
        assert session.final_answer == nodes[-1].state["answer"]
        assert not any(n.parse_error for n in nodes)
        edges = await edges_by_target(session)
        assert not any(e.observation.startswith("error") for e in edges.values())
        if kind == "general":  # the Game of 24: checked with the calculator, then answered
            assert [n.state["tool"] for n in nodes[1:]] == ["calculate", "final_answer"]
            assert session.final_answer.startswith("Answer: ") and "= 24" in session.final_answer


async def test_the_step_limit_ends_the_run_with_an_answer_within_it(alice):
    session = await start(alice, params={"max_steps": 2})
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await rows(session)
    assert session.status == "solved" and len(nodes) == 3
    assert [n.state["tool"] for n in nodes[1:]] == ["portfolio", "final_answer"]


def test_params_are_bounded_and_unknown_keys_refused():
    assert services.validate_params("react", {}) == {"max_steps": 6, "check_facts": True}
    for params in ({"max_steps": 0}, {"max_steps": 13}, {"steps": 3}):
        with pytest.raises(services.InvalidInput):
            services.validate_params("react", params)


# ---- budget -------------------------------------------------------------------------------


async def test_a_budget_that_runs_out_midway_keeps_the_best_answer_so_far(alice):
    session = await start(alice, budget_usd=0.006)
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await rows(session)
    assert session.status == "exhausted"
    assert 1 < len(nodes) < 7 and nodes[-1].state["tool"] != "final_answer"
    assert session.budget_used_usd <= session.budget_usd
    assert session.final_node_id == nodes[-1].id and session.answer_partial
    assert "Best line of reasoning so far" in session.final_answer and nodes[1].thought in session.final_answer
    assert await LLMCall.objects.filter(session=session, outcome="budget").aexists()


# ---- scripted replies: bad steps, the step limit, parse failures ---------------------------


async def test_bad_tool_calls_become_observations_and_the_run_goes_on(alice):
    def explode(reason):
        raise RuntimeError(f"the {reason} feed is down")

    tools.register("exploding_feed", "A feed that is down.", ExplodeArgs, explode)
    try:
        session = await start(alice, model_primary="openai/gpt-4o-mini")
        await run_scripted(
            session,
            [
                step("crystal_ball", {"question": "will it rise?"}),
                step("calculate", {"expression": "__import__('os').system('ls')"}),
                step("portfolio", {"client": "C-1001"}),
                step("exploding_feed", {"reason": "price"}),
                step("final_answer", {}),
                step("final_answer", {"answer": "Realise a third of the CHF 1.2m of gains each year."}),
            ],
        )
    finally:
        tools.unregister("exploding_feed")
    nodes, edges = await rows(session), await edges_by_target(session)
    observations = [edges[n.id].observation for n in nodes[1:]]
    assert session.status == "solved" and session.final_answer == "Realise a third of the CHF 1.2m of gains each year."
    assert observations[0].startswith("error: unknown tool 'crystal_ball'; available: portfolio, prices")
    assert observations[1].startswith("error: calculate: function calls are not allowed")
    assert observations[2].startswith("error: bad arguments for 'portfolio': client_id: Field required")
    assert observations[3] == "error: tool 'exploding_feed' failed: RuntimeError: the price feed is down"
    assert observations[4] == "error: the final_answer action came with no answer text, so the run goes on"
    assert not nodes[5].is_terminal
    # Nothing a model could copy as its answer: a placeholder here reached the synthesis prompt 6-7 times (issue 24).
    assert not any(PLACEHOLDER.search(o) for o in observations)
    assert_one_trajectory(nodes)


class ExplodeArgs(BaseModel):
    reason: str


async def test_the_step_limit_without_a_final_answer_has_the_answer_written_from_the_trajectory(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini", params={"max_steps": 2})
    await run_scripted(
        session,
        [
            step("calculate", {"expression": "1200000 / 3"}, "A third a year."),
            step("calculate", {"expression": "400000 * 0.2"}, "Tax on a third, roughly."),
            {"answer": "Realise CHF 400,000 a year over three years."},
        ],
    )
    nodes = await rows(session)
    assert session.status == "solved" and session.final_answer == "Realise CHF 400,000 a year over three years."
    assert len(nodes) == 3 and session.final_node_id == nodes[-1].id and nodes[-1].is_terminal
    assert await purposes(session) == ["react.step", "react.step", "react.synthesize"]
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


HOLD = "Hold: realise none of the CHF 1.2m of gains this tax year."


async def test_an_unparseable_step_is_recorded_on_the_step_it_concerns(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    await run_scripted(
        session,
        [step("portfolio", {"client_id": "C-1001"}), "no idea", "still no idea", {"answer": HOLD}],
    )
    nodes = await rows(session)
    assert session.status == "solved" and session.final_answer == HOLD
    assert len(nodes) == 2 and "step unparseable" in nodes[1].parse_error
    assert nodes[1].eval_score is None  # recorded as a failure, never scored
    assert await LLMCall.objects.filter(session=session, parse_ok=False).acount() == 2
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and costs > 0


async def test_a_model_that_keeps_failing_is_recorded_and_the_session_fails(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    gateway = await sync_to_async(ModelGateway)(
        session, retries=0, deployment_params={"primary": {"mock_response": Exception("provider exploded")}}
    )
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    [root] = await rows(session)
    assert session.status == "failed" and "model failed" in root.parse_error and "provider exploded" in root.parse_error


# ---- pause, cut, resume ---------------------------------------------------------------------


async def test_pause_and_resume_continue_the_same_trajectory(alice, runner):
    reference = await start(alice)
    await run_session(reference.id)
    session = await start(alice)
    gateway, paused = await pause_at_call(alice, session, 3)
    assert session.status == "paused" and gateway.after_stop == 0 and len(paused) == 4  # the call in flight landed

    nodes = await resume(alice, session, runner)
    assert session.status == "solved" and {n.id for n in paused} <= {n.id for n in nodes}
    assert_one_trajectory(nodes)
    assert await actions_of(session) == await actions_of(reference)  # nothing repeated, nothing skipped
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_a_run_cut_off_midway_resumes_after_its_last_stored_step(alice):
    reference = await start(alice)
    await run_session(reference.id)
    session = await start(alice)

    before = await cut_at_call(session, 3)
    assert session.status == "interrupted" and len(before) == 3

    nodes = await take_over_and_run(session)
    assert session.status == "solved" and {n.id for n in before} <= {n.id for n in nodes}
    assert_one_trajectory(nodes)
    assert await actions_of(session) == await actions_of(reference)
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


# ---- steering: expand, prune, edit ----------------------------------------------------------


async def test_expand_adds_k_alternative_steps_each_running_its_own_action(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    await session.arefresh_from_db()
    first, second = (await rows(session))[1:3]
    final_before = session.final_node_id

    action = await act(services.expand_node, alice.tenant, first.id, "user:tester", 2)
    await runner.drain()
    await action.arefresh_from_db()
    await session.arefresh_from_db()
    added = [n for n in await rows(session) if str(n.id) in action.after["children"]]
    edges = await edges_by_target(session)
    assert action.state == "applied" and len(added) == 2
    assert all(n.parent_id == first.id and n.depth == 2 for n in added)
    tried = [edges[n.id].action for n in [second, *added]]
    assert len(set(tried)) == 3  # each alternative takes another action than the ones tried from there
    for node in added:
        assert edges[node.id].observation == await tools.call(node.state["tool"], node.state["args"])
    assert session.status == "solved" and session.final_node_id == final_before
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_a_pruned_step_leaves_the_trajectory_and_the_search_goes_on_from_the_last_live_step(alice):
    session = await start(alice)
    pruned = {}

    async def prune_step_two(n, contract):
        if n == 3:  # steps 1 and 2 are stored; the third call, from step 2, is about to start
            second = next(r for r in await rows(session) if r.depth == 2)
            await act(services.set_pruned, alice.tenant, second.id, "user:tester", pruned=True)
            pruned["node"] = second

    gateway = await run_hooked(session, prune_step_two)
    await session.arefresh_from_db()
    nodes, edges = await rows(session), await edges_by_target(session)
    gone = pruned["node"]
    # The next step is asked from step 1 again, told what was tried there and to rank another action first.
    assert f"### TRIED FROM HERE\n- {edges[gone.id].action}\n" in gateway.prompts[3][1]
    assert "### STEP NUMBER\n2 of 6\n### K\n2\n" in gateway.prompts[3][1]
    under = [n for n in nodes if n.parent_id == gone.id]
    assert session.status == "solved"
    # The call already in flight may land under it (kept, out of the search); nothing is built on it.
    assert len(under) <= 1 and not any(n.parent_id in {u.id for u in under} for n in nodes)
    branch = [n for n in nodes if n.parent_id == gone.parent_id and n.id != gone.id]
    assert len(branch) == 1 and edges[branch[0].id].action != edges[gone.id].action
    final = next(n for n in nodes if n.id == session.final_node_id)
    assert final.state["tool"] == "final_answer"
    path_ids, current = set(), final
    while current.parent_id:
        path_ids.add(current.id)
        current = next(n for n in nodes if n.id == current.parent_id)
    assert gone.id not in path_ids and not path_ids & {u.id for u in under}


async def test_pruning_the_final_step_writes_the_answer_again_from_the_last_live_step(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    await session.arefresh_from_db()
    final = await ReasoningNode.objects.aget(pk=session.final_node_id)

    await act(services.set_pruned, alice.tenant, final.id, "user:tester", pruned=True)
    await runner.drain()
    await session.arefresh_from_db()
    assert session.status == "solved" and session.final_node_id == final.parent_id
    # Written by the model from the trajectory that is left (the offline model words it as the final step did).
    assert session.final_answer and (await purposes(session)).count("react.synthesize") == 1
    assert (await OverseerAction.objects.aget(session=session, action="resynthesize")).state == "applied"


async def test_an_edit_on_the_answers_line_is_taken_as_written_and_the_answer_rewritten(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    second = (await rows(session))[2]
    await act(services.edit_node, alice.tenant, second.id, "user:tester", "Only the house notes matter here.")
    await runner.drain()
    await session.arefresh_from_db()
    edited = await ReasoningNode.objects.aget(pk=second.id)
    assert edited.thought == "Only the house notes matter here." and not edited.stale
    assert session.status == "solved" and (await purposes(session)).count("react.synthesize") == 1
    action = await OverseerAction.objects.aget(session=session, action="edit")
    assert action.state == "applied"


# ---- pure parts: prompts, best node ---------------------------------------------------------


def test_the_prompts_name_their_contract_and_fill_every_placeholder():
    from reasoning.prompts import render
    from reasoning.strategies.react import STEP, SYNTHESIZE

    fields = dict(
        problem="P", kind="general", rubric="R", trajectory="(none yet)",
        tools=tools.catalogue(), facts="-", findings="-",
    )
    step_prompt = render(STEP, **fields, step=1, max_steps=6, k=1, tried="(none)")
    assert step_prompt.startswith("### CONTRACT\nreact.step\n") and "$" not in step_prompt
    assert "- swiss_tax: " in step_prompt and "- final_answer: " in step_prompt
    synthesis = render(SYNTHESIZE, **fields)
    assert synthesis.startswith("### CONTRACT\nreact.synthesize\n") and "$" not in synthesis


def test_the_answer_comes_from_the_live_final_step_else_the_deepest_live_step():
    from reasoning.strategies.base import Node

    class Tree:
        def __init__(self, nodes):
            self.by_id = {n.id: n for n in nodes}

        def nodes(self):
            return list(self.by_id.values())

        def is_pruned(self, node):
            while node is not None:
                if node.pruned:
                    return True
                node = self.by_id.get(node.parent_id)
            return False

    root = Node("r", None, 0, "problem")
    a = Node("a", "r", 1, "look up", state={"tool": "portfolio"})
    done = Node("f", "a", 2, "answer", state={"tool": "final_answer", "answer": "Hold."})
    b = Node("b", "a", 2, "search", state={"tool": "search_documents"})
    c = Node("c", "b", 3, "compute", state={"tool": "calculate"})
    assert ReAct.best_node(Tree([root, a, done, b, c])).id == "f"
    done.pruned = True
    assert ReAct.best_node(Tree([root, a, done, b, c])).id == "c"
    b.pruned = True
    assert ReAct.best_node(Tree([root, a, done, b, c])).id == "a"
    assert ReAct.best_node(Tree([root])) is None


async def test_a_step_the_model_failed_is_written_on_its_parent_as_every_strategy_writes_it():
    from reasoning.llm.contracts import ModelError
    from tests.fakes import FakeStore, ScriptedGateway, context

    def down(prompt):
        raise ModelError("every model failed (2 attempts); last: offline/sim: 503")

    store = FakeStore()
    strategy = ReAct(context(ReAct, ScriptedGateway({"react.step": down}), store))
    await strategy.run()
    root = store.nodes()[0]
    assert store.get(root.id).parse_error.startswith("model failed on the step: every model failed")
    assert isinstance(strategy.model_failure, ModelError)  # so a run without a single step fails saying why
