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


SCRIPT = {
    "tot.propose": propose,
    "tot.evaluate": evaluate,
    "tot.synthesize": {"answer": "Sell equities, then sell again."},
}


async def test_the_beam_keeps_the_best_and_the_answer_follows_it():
    gateway, store = ScriptedGateway(SCRIPT), FakeStore()
    outcome = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 2, "keep": 1})).run()
    assert outcome.final_answer == "Sell equities, then sell again." and outcome.final_node.thought == "Sell"
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


# ---- the rules the review found missing (each failed on the code before) ---------------------------------------


async def test_a_reply_with_fewer_thoughts_than_asked_gives_fewer_children():
    script = dict(SCRIPT, **{"tot.propose": {"thoughts": [{"thought": "Sell"}, {"thought": "Hold"}]}})
    store = FakeStore()
    await TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway(script), store, params={"depth": 1})).run()
    root = next(n for n in store.nodes() if n.depth == 0)
    assert [c.thought for c in store.children(root)] == ["Sell", "Hold"] and not root.parse_error


async def test_identical_proposals_are_one_child_scored_once():
    twice = {"thoughts": [{"thought": "Sell"}, {"thought": "sell."}, {"thought": "Hold"}]}
    gateway, store = ScriptedGateway(dict(SCRIPT, **{"tot.propose": twice})), FakeStore()
    await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 1})).run()
    children = [n for n in store.nodes() if n.depth == 1]
    assert [c.thought for c in children] == ["Sell", "Hold"] and children[0].state["proposed"] == 2
    assert gateway.count("tot.evaluate") == 2


async def test_several_judgements_outvote_a_wild_one():
    # Each thought's first judgement is a wild guess (Sell 0.2, Hold 0.8): one sample alone would keep Hold.
    samples = {"Sell": iter([0.2, 0.9, 0.9]), "Hold": iter([0.8, 0.5, 0.5]), "Buy": iter([0.1, 0.1, 0.1])}

    def sample(prompt):
        last = prompt.split("### LAST STEP\n", 1)[1].split("\n", 1)[0]
        return {"score": next(samples[last]), "reason": f"{last} judged"}

    gateway, store = ScriptedGateway(dict(SCRIPT, **{"tot.evaluate": sample})), FakeStore()
    params = {"depth": 1, "keep": 1, "value_samples": 3}
    outcome = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params=params)).run()
    assert outcome.final_node.thought == "Sell" and gateway.samples_asked.count(3) == 3
    assert "mean of 3 judgements" in outcome.final_node.eval_reason


async def test_the_categorical_mode_asks_for_verdicts():
    verdicts = {"Sell": "sure", "Hold": "likely", "Buy": "impossible"}

    def verdict(prompt):
        return {"verdict": verdicts[prompt.split("### LAST STEP\n", 1)[1].split("\n", 1)[0]], "reason": "seen"}

    gateway, store = ScriptedGateway(dict(SCRIPT, **{"tot.value": verdict})), FakeStore()
    params = {"depth": 1, "value_mode": "categorical", "value_samples": 1}
    outcome = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params=params)).run()
    scores = {n.thought: n.eval_score for n in store.nodes() if n.depth == 1}
    # The paper's weights over the most a sample can be: sure 20/20, likely 1/20, impossible 0.001/20.
    assert scores == {"Sell": 1.0, "Hold": 0.05, "Buy": 0.0001} and gateway.count("tot.evaluate") == 0
    assert outcome.final_node.thought == "Sell"


async def test_a_node_pruned_by_hand_during_a_level_frees_its_beam_slot():
    store, control = FakeStore(), FakeControl()
    strategy = TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway(SCRIPT), store, control, params={"depth": 2}))
    checkpoint = control.checkpoint

    async def prune_the_best_as_level_one_ends():
        if control.boundaries == 1:  # level one has been scored: the overseer prunes its best node
            store.prune_by_hand(next(n.id for n in store.nodes() if n.depth == 1 and n.thought == "Sell"))
        return await checkpoint()

    control.checkpoint = prune_the_best_as_level_one_ends
    await strategy.run()
    parents = {n.parent_id for n in store.nodes() if n.depth == 2}
    assert {store.get(p).thought for p in parents} == {"Hold", "Buy"}  # the next best took the freed slot


async def test_stale_nodes_of_a_passed_level_are_scored_again():
    store, control = FakeStore(), FakeControl()
    gateway = ScriptedGateway(SCRIPT)
    strategy = TreeOfThoughts(context(TreeOfThoughts, gateway, store, control, params={"depth": 3}))
    checkpoint = control.checkpoint

    async def mark_level_one_stale_during_level_three():
        if control.boundaries == 3:
            for node in store.nodes():
                if node.depth == 1 and not node.pruned:
                    store.rows[node.id].stale = True
        return await checkpoint()

    control.checkpoint = mark_level_one_stale_during_level_three
    await strategy.run()
    assert not [n for n in store.nodes() if n.stale and not store.is_pruned(n)]


def test_the_beam_keeps_the_best_scored_and_drops_the_unscored():
    from reasoning.strategies.base import Node
    from reasoning.strategies.tot import beam_losers

    level = [Node(f"n{i}", "r", 1, t, eval_score=s) for i, (t, s) in enumerate([("a", 0.2), ("b", 0.9), ("c", None)])]
    assert [n.thought for n in beam_losers(level, 1, keep=1)] == ["a", "c"]
    assert beam_losers(level, 0, keep=1) == [] and beam_losers([level[2]], 1, keep=1) == []


def test_merging_counts_each_wording_of_one_thought():
    from reasoning.strategies.thoughts import merge_duplicates

    items = [{"thought": "Sell 5%."}, {"thought": "sell  5%"}, {"thought": "Hold"}, {"thought": "Buy"}]
    merged = merge_duplicates(items, taken={"buy"})
    assert [(m["thought"], m["state"].get("proposed", 1)) for m in merged] == [("Sell 5%.", 2), ("Hold", 1)]


async def test_an_expand_applied_again_after_a_crash_adds_its_children_once():
    store, control = FakeStore(), FakeControl()
    root = await store.add_root("the problem", {})
    done = control.done

    async def crash_before_the_outcome_is_recorded(command, applied, detail="", after=None):
        raise RuntimeError("the worker died here")

    control.done = crash_before_the_outcome_is_recorded
    control.command("expand", root.id, k=2)
    [command] = control.commands
    strategy = TreeOfThoughts(context(TreeOfThoughts, ScriptedGateway(SCRIPT), store, control, params={"depth": 1}))
    with pytest.raises(RuntimeError):
        await strategy.run()

    # The next run is handed the same command (its outcome was never recorded) and finds what it added.
    control.done, control.commands, gateway = done, [command], ScriptedGateway(SCRIPT)
    await TreeOfThoughts(context(TreeOfThoughts, gateway, store, control, params={"depth": 1})).run()
    children = store.children(root)
    assert len(children) == 2 and all(c.state["command"] == command.id for c in children)
    assert control.outcomes[0][:2] == ("expand", True) and control.outcomes[0][3]["children"] == [
        c.id for c in children
    ]
    assert gateway.count("tot.propose") == 0


async def test_a_parent_pruned_by_hand_while_its_level_runs_gives_its_slot_to_the_next_best():
    store, gateway = FakeStore(), None

    def propose_and_prune_sell_as_it_is_asked(prompt):
        node_id = gateway.calls[-1][1]  # the parent this proposal is asked under
        if store.get(node_id).thought == "Sell" and not store.get(node_id).pruned:
            store.prune_by_hand(node_id)  # an overseer's prune lands while Sell's proposals are in flight
        return propose(prompt)

    gateway = ScriptedGateway(dict(SCRIPT, **{"tot.propose": propose_and_prune_sell_as_it_is_asked}))
    outcome = await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 2, "keep": 2})).run()
    level_one = {n.thought: n for n in store.nodes() if n.depth == 1}
    live_parents = {store.get(n.parent_id).thought for n in store.nodes() if n.depth == 2 and not store.is_pruned(n)}
    assert live_parents == {"Hold", "Buy"}  # two parents, as the beam says: Buy took Sell's slot
    assert not level_one["Buy"].pruned and level_one["Sell"].pruned_by == "overseer"
    assert store.path(outcome.final_node)[1].thought == "Hold" and gateway.count("tot.propose") == 4


def test_a_level_proposes_under_the_beam_above_as_it_stands():
    from reasoning.strategies.base import Node
    from reasoning.strategies.tot import level_work

    above = [Node(t, "r", 1, t, eval_score=s) for t, s in [("sell", 0.9), ("hold", 0.5), ("buy", 0.1)]]
    below = [Node("s1", "sell", 2, "s1", eval_score=0.7), Node("s2", "sell", 2, "s2")]
    proposed = {"sell"}.__contains__
    parents, unscored, dropped = level_work(above + below, 2, 2, lambda n: proposed(n.id))
    assert (
        [n.id for n in parents] == ["hold"]
        and [n.id for n in unscored] == ["s2"]
        and [n.id for n in dropped] == ["buy"]
    )
    # Sell pruned by hand (no longer live): Buy is in the beam again, and both it and Hold are proposed under.
    parents, _, dropped = level_work(above[1:], 2, 2, lambda n: proposed(n.id))
    assert [n.id for n in parents] == ["hold", "buy"] and dropped == []
    stale = Node("h1", "hold", 2, "h1", eval_score=0.4, stale=True)
    assert [n.id for n in level_work(above + [stale], 3, 2, lambda n: True)[1]] == [
        "h1"
    ]  # stale: scored wherever it is


async def test_an_edit_during_an_evaluation_keeps_its_stale_mark_and_the_node_is_scored_again():
    store, gateway, marked = FakeStore(), None, []

    def evaluate_while_an_edit_lands(prompt):
        node = store.get(gateway.calls[-1][1])
        if node.depth == 2 and not marked:
            marked.append(node.id)
            store.edit_by_hand(node.id)  # an edit above marks it stale while its judgement is in flight
        return evaluate(prompt)

    gateway = ScriptedGateway(dict(SCRIPT, **{"tot.evaluate": evaluate_while_an_edit_lands}))
    await TreeOfThoughts(context(TreeOfThoughts, gateway, store, params={"depth": 3, "keep": 3})).run()
    judged = [node_id for name, node_id, _ in gateway.calls if name == "tot.evaluate"]
    assert judged.count(marked[0]) == 2 and not store.get(marked[0]).stale  # judged again after the edit's mark


def test_categorical_values_rank_as_the_paper_sums_them():
    """The paper sums its samples weighted sure 20, likely 1, impossible 0.001 (tasks/game24.py): one sure and two
    impossibles (20.002) outrank three likelies (3), which a mean of 1, 0.5 and 0 would rank the other way."""
    from reasoning.strategies.tot import VerdictOut, sampled_value

    def verdicts(*names):
        return [VerdictOut(verdict=name, reason="r") for name in names]

    one_sure, _ = sampled_value(verdicts("sure", "impossible", "impossible"))
    all_likely, _ = sampled_value(verdicts("likely", "likely", "likely"))
    assert one_sure > all_likely and 0 <= all_likely <= one_sure <= 1


def test_a_verdict_that_never_came_counts_zero_as_in_the_paper():
    from reasoning.strategies.tot import VerdictOut, sampled_value

    full, _ = sampled_value([VerdictOut(verdict="likely", reason="r")] * 3, asked=3)
    short, reason = sampled_value([VerdictOut(verdict="likely", reason="r")] * 2, asked=3)
    assert short < full and "unread" in reason


# ---- issue 31: lines kept whole, and a broken synthesis gives way to the next-best line -----------------------

CARDS = [4, 9, 10, 13]
PUZZLE = "Game of 24: use each of the numbers 4 9 10 13 exactly once with + - * / to make 24."
# Two lines to one board ("left: 4 6") and on to 24; each writes its own answer from its own steps. Line A's answer
# is wrong (a changed number), line B's right; the judge guesses A's board-equal steps first.
A1, A2, A3 = "13 - 9 = 4 (left: 4 4 10)", "10 - 4 = 6 (left: 4 6)", "4 * 6 = 24 (left: 24)"
B1, B2, B3 = "10 - 4 = 6 (left: 6 9 13)", "13 - 9 = 4 (left: 4 6)", "6 * 4 = 24 (left: 24)"
C2, C3 = "4 + 4 = 8 (left: 8 10)", "10 - 8 = 2 (left: 2)"
LINES = {
    (): [A1, B1],
    (A1,): [A2, C2],
    (B1,): [B2, "9 + 6 = 15 (left: 13 15)"],
    (A1, A2): [A3],
    (B1, B2): [B3],
    (A1, C2): [C3],
    (A1, A2, A3): ["Answer: (13 - 9) * (10 - 3) = 24"],
    (B1, B2, B3): ["Answer: (10 - 4) * (13 - 9) = 24"],
    (A1, C2, C3): ["Answer: 13 - 9 + 4 + 10 = 24"],
}
VALUES = {"left: 4 4 10": 0.8, "left: 6 9 13": 0.8, "left: 4 6": 0.9, "left: 24": 0.95, "left: 8 10": 0.5}
VALUES |= {"left: 2": 0.05, "left: 13 15": 0.3}
ANSWER_VALUES = {"(13-9)*(10-3)=24": 0.6, "(10-4)*(13-9)=24": 0.9, "13-9+4+10=24": 0.4}


def steps_of(prompt, section):
    body = prompt.split(f"### {section}\n", 1)[1].split("\n###", 1)[0]
    return tuple(line.split(". ", 1)[1] for line in body.splitlines() if ". " in line)


def puzzle_script(synthesis=None):
    def propose(prompt):
        return {"thoughts": [{"thought": t} for t in LINES[steps_of(prompt, "STEPS SO FAR")]]}

    def value(prompt):
        position = prompt.split("### POSITION\n", 1)[1].split("\n", 1)[0]
        score = ANSWER_VALUES[position.removeprefix("Answer: ")] if position.startswith("Answer:") else VALUES[position]
        return {"score": score, "reason": f"{position} judged"}

    def synthesize(prompt):
        return {"answer": steps_of(prompt, "CHOSEN STEPS")[-1]}

    return {"tot.propose": propose, "tot.state_evaluate": value, "tot.synthesize": synthesis or synthesize}


def puzzle_context(gateway, store, depth=4):
    from reasoning.facts.case import CaseCheck

    params = {"branching": 2, "depth": depth, "keep": 2, "value_samples": 1}
    return context(TreeOfThoughts, gateway, store, params=params, problem=PUZZLE, case=CaseCheck(puzzle=CARDS))


async def test_two_lines_to_one_board_are_both_kept_and_each_writes_its_own_answer():
    # One line per board would drop line B at level 2 (its board equals A's): A's wrong answer would be the only one.
    gateway, store = ScriptedGateway(puzzle_script()), FakeStore()
    outcome = await TreeOfThoughts(puzzle_context(gateway, store)).run()
    assert outcome.final_answer == "Answer: (10 - 4) * (13 - 9) = 24" and outcome.reason == "solved"
    to_24 = [n for n in store.nodes() if n.depth == 3 and "left: 24" in n.thought]
    assert len(to_24) == 2 and not any(store.is_pruned(n) for n in to_24)
    # Their boards were judged once: the judgement is shared by state, the line is not.
    positions = [p.split("### POSITION\n", 1)[1].split("\n", 1)[0] for n, _, p in gateway.calls if "state" in n]
    assert positions.count("left: 4 6") == 1 and positions.count("left: 24") == 1


async def test_an_answer_line_is_the_answer_as_written_for_no_synthesis_call():
    # The reference takes its line's answer as it stands; a restatement costs a call and could only garble it.
    gateway, store = ScriptedGateway(puzzle_script()), FakeStore()
    outcome = await TreeOfThoughts(puzzle_context(gateway, store)).run()
    assert outcome.final_answer == outcome.final_node.thought == "Answer: (10 - 4) * (13 - 9) = 24"
    assert gateway.count("tot.synthesize") == 0 and outcome.model == ""


async def test_nothing_is_proposed_under_a_board_whose_last_number_is_not_24():
    gateway, store = ScriptedGateway(puzzle_script()), FakeStore()
    ctx = puzzle_context(gateway, store)
    ctx.params = ctx.params.model_copy(update={"keep": 3})  # line C ("left: 2") stays in the beam to the last level
    outcome = await TreeOfThoughts(ctx).run()
    dead = next(n for n in store.nodes() if n.thought == C3)
    assert not store.is_pruned(dead) and store.children(dead) == []
    assert [n for n in store.nodes() if n.depth == 4 and "Answer" in n.thought] and outcome.reason == "solved"
    proposed_under = [steps_of(p, "STEPS SO FAR") for name, _, p in gateway.calls if name == "tot.propose"]
    assert (A1, C2, C3) not in proposed_under and (B1, B2, B3) in proposed_under
    assert ctx.case.dead_end([A1, C2, C3]) and not ctx.case.dead_end([B1, B2, B3])
    assert not ctx.case.dead_end([A1, C2])  # two numbers left: a step may still follow


# Searched to depth 3, a line ends at "left: 24" and its answer's expression is written by the synthesis.
WRITTEN = {A3: LINES[(A1, A2, A3)][0], B3: LINES[(B1, B2, B3)][0]}


async def test_a_synthesis_that_breaks_its_contract_gives_way_to_the_next_best_line():
    written = []

    def synthesize(prompt):  # the best line's synthesis is junk; the next one's is its answer
        written.append(steps_of(prompt, "CHOSEN STEPS")[-1])
        return {"answer": "ok"} if len(written) == 1 else {"answer": WRITTEN[written[-1]]}

    gateway, store = ScriptedGateway(puzzle_script(synthesize)), FakeStore()
    outcome = await TreeOfThoughts(puzzle_context(gateway, store, depth=3)).run()
    assert outcome.reason != "synthesis_failed" and not outcome.partial and len(written) == 2
    assert outcome.final_answer == WRITTEN[written[1]] and written[1] != written[0]
    assert outcome.final_node.thought == written[1]
    assert not store.get(next(n.id for n in store.nodes() if n.thought == written[0])).is_terminal  # given up


async def test_a_synthesis_broken_on_every_line_ends_failed_with_the_best_line():
    gateway, store = ScriptedGateway(puzzle_script({"answer": "ok"})), FakeStore()
    outcome = await TreeOfThoughts(puzzle_context(gateway, store, depth=3)).run()
    assert outcome.reason == "synthesis_failed" and outcome.partial and "(left: 24)" in outcome.final_answer
    assert gateway.count("tot.synthesize") == 3  # SYNTHESIS_TRIES lines, then the best one's line stands


async def test_with_the_task_checker_an_answer_is_scored_by_its_arithmetic_for_no_call():
    # The checker, as LATS's environment reward, scores the answers; the model's judge is never asked about one.
    script = puzzle_script()
    judge = script["tot.state_evaluate"]

    def value(prompt):
        position = prompt.split("### POSITION\n", 1)[1].split("\n", 1)[0]
        assert not position.startswith("Answer:")  # answers never reach the model's judge
        return judge(prompt)

    gateway, store = ScriptedGateway(dict(script, **{"tot.state_evaluate": value})), FakeStore()
    ctx = puzzle_context(gateway, store)
    ctx.params = ctx.params.model_copy(update={"answer_checker": True})
    outcome = await TreeOfThoughts(ctx).run()
    answers = {n.thought: n for n in store.nodes() if n.thought.startswith("Answer")}
    assert outcome.final_answer == "Answer: (10 - 4) * (13 - 9) = 24"
    assert answers["Answer: (10 - 4) * (13 - 9) = 24"].eval_score == 1.0
    assert answers["Answer: (13 - 9) * (10 - 3) = 24"].eval_score == 0.0
    assert answers["Answer: (13 - 9) * (10 - 3) = 24"].state["decided_by"] == "checker"


async def test_the_answer_step_proposes_answer_width_answers_a_line():
    def asked(prompt):
        return int(prompt.split("### K\n", 1)[1].split()[0])

    for width, expected in [(0, 2), (1, 1)]:  # 0: as many as `branching`; the paper writes one answer a line
        gateway, store = ScriptedGateway(puzzle_script()), FakeStore()
        ctx = puzzle_context(gateway, store)
        ctx.params = ctx.params.model_copy(update={"answer_width": width})
        await TreeOfThoughts(ctx).run()
        proposals = [(steps_of(p, "STEPS SO FAR"), asked(p)) for name, _, p in gateway.calls if name == "tot.propose"]
        assert {k for steps, k in proposals if steps and steps[-1].endswith("(left: 24)")} == {expected}
        assert {k for steps, k in proposals if not steps or not steps[-1].endswith("(left: 24)")} == {2}
