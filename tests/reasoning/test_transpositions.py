"""One judgement per state (issue 22, item 3): a thought that reaches a state already judged in the session takes that
judgement, for no call and nothing in the ledger, and says so; a judge that needs only the state is shown only the
state. On Game of 24 the task declares the state (the numbers a step leaves); on a wealth problem no state is shared
(issue 31: a step's worth is its line's, and a model's own summary of it is no key)."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.facts.case import CaseCheck
from reasoning.models import LLMCall, ReasoningSession
from reasoning.schemas import SessionIn
from reasoning.strategies.tot import TreeOfThoughts
from tests.fakes import FakeStore, ScriptedGateway, context
from tests.runs import rows

CARDS = [4, 9, 10, 13]
PUZZLE = "Game of 24: use each of the numbers 4 9 10 13 exactly once with + - * / to make 24."
# Two first steps to different states, and under each a next step to one same state ("4 6") and one of its own.
FIRST = ["13 - 9 = 4 (left: 4 4 10)", "13 - 10 = 3 (left: 3 4 9)"]
SECOND = {
    FIRST[0]: ["10 - 4 = 6 (left: 4 6)", "4 + 4 = 8 (left: 8 10)"],
    FIRST[1]: ["9 - 3 = 6 (left: 4 6)", "9 + 3 = 12 (left: 4 12)"],
}


def step_of(prompt):
    return int(prompt.split("### STEP NUMBER\n", 1)[1].split()[0])


def position(prompt):
    return prompt.split("### POSITION\n", 1)[1].split("\n", 1)[0]


def puzzle_gateway():
    def propose(prompt):
        if step_of(prompt) == 1:
            return {"thoughts": [{"thought": t} for t in FIRST]}
        parent = prompt.split("### STEPS SO FAR\n1. ", 1)[1].split("\n", 1)[0]
        return {"thoughts": [{"thought": t} for t in SECOND[parent]]}

    def value(prompt):
        assert "### STEPS SO FAR" not in prompt and "### LAST STEP" not in prompt  # the state, and only the state
        return {"score": 0.9 if "4 6" in position(prompt) else 0.5, "reason": "r"}

    return ScriptedGateway(
        {"tot.propose": propose, "tot.state_evaluate": value, "tot.synthesize": {"answer": "Answer: (10 - 4) * 4 = 24"}}
    )


async def test_equal_states_share_one_judgement_across_parents_at_no_cost():
    gateway, store = puzzle_gateway(), FakeStore()
    params = {"branching": 2, "depth": 2, "keep": 2, "value_samples": 1}
    strategy = TreeOfThoughts(
        context(TreeOfThoughts, gateway, store, params=params, problem=PUZZLE, case=CaseCheck(puzzle=CARDS))
    )
    await strategy.run()
    second = [n for n in store.nodes() if n.depth == 2]
    assert len(second) == 4 and {n.state["state_key"] for n in second} == {"left: 4 6", "left: 8 10", "left: 4 12"}
    positions = [position(p) for name, _, p in gateway.calls if name == "tot.state_evaluate"]
    assert sorted(positions) == ["left: 3 4 9", "left: 4 12", "left: 4 4 10", "left: 4 6", "left: 8 10"]
    reused = [n for n in store.nodes() if n.state.get("reused")]
    assert len(reused) == 1 and reused[0].state["state_key"] == "left: 4 6"  # one call for two parents' "4 6"
    for node in reused:
        source = store.get(node.state["reused"])
        assert source.state["state_key"] == node.state["state_key"] and not source.state.get("reused")
        assert (node.eval_score, node.eval_reason) == (source.eval_score, source.eval_reason)


async def test_the_beam_keeps_lines_to_one_state_and_dedupes_only_identical_lines():
    from reasoning.strategies.base import Node
    from reasoning.strategies.tot import beam_losers

    def node(name, score, state):
        return Node(name, "r", 1, name, state={"state_key": state}, eval_score=score)

    level = [node("a", 0.9, "left: 4 6"), node("b", 0.9, "left: 4 6"), node("c", 0.5, "left: 3 8")]
    # Two lines to one board are two tries at its answer (issue 31): the state decides the judgement, not the line.
    assert [n.id for n in beam_losers(level, 1, keep=2)] == ["c"]
    same_line = {"a": "13 - 9 = 4", "b": "13 - 9 = 4", "c": "10 - 4 = 6"}
    assert [n.id for n in beam_losers(level, 1, keep=2, line_of=lambda n: same_line[n.id])] == ["b"]


async def test_a_resumed_run_takes_the_stored_judgement_of_a_state():
    gateway, store = puzzle_gateway(), FakeStore()
    params = {"branching": 2, "depth": 1, "keep": 2, "value_samples": 1}
    ctx = dict(params=params, problem=PUZZLE, case=CaseCheck(puzzle=CARDS))
    await TreeOfThoughts(context(TreeOfThoughts, gateway, store, **ctx)).run()
    again = puzzle_gateway()
    strategy = TreeOfThoughts(context(TreeOfThoughts, again, store, **ctx))
    node = next(n for n in store.nodes() if n.depth == 1)
    fields = await strategy.judge_shared(node, 1)  # e.g. a new node of the same state, after a resume
    assert again.count("tot.state_evaluate") == 0 and fields["state"]["reused"]


async def test_a_thought_without_a_state_and_an_edited_line_are_judged_on_their_whole_line():
    strategy = TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway({}), FakeStore(), case=CaseCheck(puzzle=CARDS)))
    from reasoning.strategies.base import Node

    assert strategy.state_key(Node("a", "r", 1, "13 - 9 = 4 (left: 10 4 4)")) == "left: 4 4 10"
    # A step with a number the board does not hold reaches no state by the rules: its whole line is judged, where
    # the made-up number shows (a judge shown only "left: 3 4 10" could not see it).
    assert strategy.state_key(Node("a", "r", 1, "12 - 9 = 3 (left: 3 4 10)")) is None
    assert strategy.state_key(Node("a", "r", 1, "13 - 9 = 4 (left: 4 4 10)", stale_mark=1)) is None  # edited
    assert strategy.state_key(Node("a", "r", 1, "Work out the remaining pair.")) is None
    wealth = TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway({}), FakeStore()))
    declared = Node("b", "r", 1, "Sell CHF 300k of equities.", state={"canonical": "Equities 60%, bonds 40%."})
    assert wealth.state_key(declared) is None  # a state a model declares shares nothing: the line is judged whole
    assert wealth.state_key(Node("c", "r", 1, "Sell CHF 300k of equities.")) is None


def test_judged_by_its_claim_a_step_with_a_made_up_number_takes_the_board_it_says_is_left():
    from reasoning.strategies.base import Node

    params = {"value_by": "claim"}
    strategy = TreeOfThoughts(
        context(TreeOfThoughts, ScriptedGateway({}), FakeStore(), params=params, case=CaseCheck(puzzle=CARDS))
    )
    # As the reference's value prompt sees it: the numbers the step says are left, whatever number it made up.
    assert strategy.state_key(Node("a", "r", 1, "12 - 9 = 3 (left: 10 3 4)")) == "left: 3 4 10"
    assert strategy.state_key(Node("a", "r", 1, "12 - 9 = 3")) is None  # it claims no board: its line is judged
    assert strategy.state_key(Node("a", "r", 1, "13 - 9 = 4 (left: 4 4 10)")) == "left: 4 4 10"  # a lawful step
    # The line below a made-up step goes on from the board it claimed.
    case, made_up = CaseCheck(puzzle=CARDS), ["12 - 9 = 3 (left: 3 4 10)"]
    assert case.state_of("10 - 4 = 6 (left: 3 6)", made_up, claimed=True) == "left: 3 6"
    assert case.state_of("10 - 4 = 6 (left: 3 6)", made_up) is None


@pytest.mark.django_db(transaction=True)
async def test_a_reused_judgement_costs_nothing_in_the_ledger(alice):
    data = SessionIn(
        problem_text=PUZZLE, mode="tot", model_primary="offline/sim", params={"branching": 8, "keep": 5}
    )
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    nodes = await rows(session)
    keyed = [n for n in nodes if n.state.get("state_key")]
    reused = [n for n in keyed if n.state.get("reused")]
    assert reused, "no state reached twice in a b=8, keep 5 search"
    judged = [c async for c in LLMCall.objects.filter(session=session, purpose="tot.state_evaluate")]
    assert len(judged) == len({n.state["state_key"] for n in keyed})  # one call per state, none per reuse
    assert not {c.node_id for c in judged} & {n.id for n in reused}
    proposals = {c.node_id: c.cost_usd async for c in LLMCall.objects.filter(session=session, purpose="tot.propose")}
    for node in reused:  # a reused node's cost is its share of its proposal, nothing more
        siblings = [n for n in nodes if n.parent_id == node.parent_id]
        assert node.cost_usd == pytest.approx(proposals[node.parent_id] / len(siblings))
