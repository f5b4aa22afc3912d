"""Tree of Thoughts on fakes: the beam, steering and re-entry as pure behaviour, no database, no model, no patch."""

import pytest

from reasoning.strategies.tot import TreeOfThoughts
from tests.fakes import FakeControl, FakeStore, ScriptedGateway, context

SCORES = {"Sell": 0.9, "Hold": 0.5, "Buy": 0.1}


def propose(prompt):
    return {"thoughts": [{"thought": t} for t in SCORES]}


def evaluate(prompt):
    last = prompt.split("### LAST STEP\n", 1)[1].split("\n", 1)[0]
    return {"score": SCORES[last], "reason": f"{last} scored"}


SCRIPT = {"tot.propose": propose, "tot.evaluate": evaluate, "tot.synthesize": {"answer": "Sell, then sell."}}


async def test_the_beam_keeps_the_best_and_the_answer_follows_it():
    gateway, store = ScriptedGateway(SCRIPT), FakeStore()
    outcome = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 2, "keep": 1})).run()
    assert outcome.final_answer == "Sell, then sell." and outcome.final_node.thought == "Sell"
    assert [n.thought for n in store.path(outcome.final_node)][1:] == ["Sell", "Sell"]
    assert gateway.count("tot.propose") == 2 and gateway.count("tot.evaluate") == 6
    dropped = [n for n in store.nodes() if n.pruned]
    assert {n.thought for n in dropped} == {"Hold", "Buy"} and all(n.pruned_by == "strategy" for n in dropped)


async def test_a_branch_pruned_by_hand_gets_no_descendants_and_no_answer():
    store, control = FakeStore(), FakeControl()
    gateway = ScriptedGateway(SCRIPT)
    strategy = TreeOfThoughts(context(TreeOfThoughts, gateway, store, control, params={"depth": 3, "keep": 2}))
    checkpoint = control.checkpoint

    async def prune_the_best_after_level_one():
        if control.boundaries == 1:
            sell = next(n for n in store.nodes() if n.depth == 1 and n.thought == "Sell")
            store.prune_by_hand(sell.id)
        return await checkpoint()

    control.checkpoint = prune_the_best_after_level_one
    outcome = await strategy.run()
    sell = next(n for n in store.nodes() if n.depth == 1 and n.thought == "Sell")
    assert store.children(sell) == [] and not store.is_pruned(outcome.final_node)
    assert store.path(outcome.final_node)[1].thought == "Hold"


async def test_a_run_re_entered_never_proposes_twice_under_a_node():
    store, gateway = FakeStore(), ScriptedGateway(SCRIPT, budget_calls=5)  # runs out during level two
    first = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 2, "keep": 2})).run()
    assert first.exhausted
    again = ScriptedGateway(SCRIPT)
    outcome = await TreeOfThoughts(context(TreeOfThoughts, again, store, params={"depth": 2, "keep": 2})).run()
    per_parent = [len(store.kids[p]) for p in store.kids if p is not None]
    assert len([n for n in store.nodes() if n.depth == 0]) == 1 and max(per_parent) == 3
    assert outcome.reason == "solved" and outcome.final_node.depth == 2


async def test_an_expand_command_adds_k_scored_children():
    store, control = FakeStore(), FakeControl()
    strategy = TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway(SCRIPT), store, control, params={"depth": 1}))
    root = await store.add_root("the problem", {})
    control.command("expand", root.id, k=2)
    await strategy.run()
    assert control.outcomes[0][:2] == ("expand", True) and len(control.outcomes[0][3]["children"]) == 2


@pytest.mark.parametrize("stop", ["paused", "cancelled"])
async def test_a_stop_at_a_boundary_ends_the_turn(stop):
    from reasoning.strategies.base import StopRequested

    control = FakeControl()
    control.stop_with = stop
    with pytest.raises(StopRequested):
        await TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway(SCRIPT), control=control)).run()
