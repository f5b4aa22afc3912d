"""LATS on fakes: UCB1, selection, rewards and values as pure rules, and a scripted search, with no database.

Each rule below was found wrong against the LATS reference code (andyz245/LanguageAgentTreeSearch) and failed on the
code before it was fixed: an unvisited child counted at infinity, a failed terminal backpropagated its positive value,
the rollout took one sample two steps deep, reflections never reached the value prompt, the value had no
self-consistency term, and a resumed run lost the evaluator's reason.
"""

import math

import pytest

from reasoning.strategies.base import NO_SUCCESS, Node
from reasoning.strategies.lats import (
    FAILED_TERMINAL,
    SUCCESS,
    LanguageAgentTreeSearch,
    LATSParams,
    MAX_REFLECTIONS,
    mixed_value,
    path_rewards,
    reflection_due,
    rollout_reward,
    select_leaf,
    ucb,
)
from tests.fakes import FakeStore, ScriptedGateway, context


def node(name, parent=None, depth=1, score=0.5, visits=0, reward=0.0, **fields):
    return Node(name, parent, depth, name, eval_score=score, visit_count=visits, total_reward=reward, **fields)


def tree(*nodes):
    store = FakeStore()
    for n in nodes:
        store.rows[n.id] = n
        store.kids.setdefault(n.parent_id, []).append(n.id)
    return store


def select(store, **params):
    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, ScriptedGateway({}), store, params=params))
    root = store.get("root")
    leaf = select_leaf(root, strategy._selectable, strategy._proposed, strategy._expandable, strategy.ctx.params)
    return leaf.id if leaf else None


ROOT = node("root", depth=0, score=None, visits=10)


def test_an_unvisited_child_counts_at_its_value_not_at_infinity():
    assert ucb(node("new", score=0.3), parent_visits=10, exploration=1.0) == 0.3
    assert ucb(node("seen", visits=2, reward=1.0), 10, 1.0) == pytest.approx(0.5 + math.sqrt(math.log(10) / 2))


def test_selection_goes_deeper_on_the_best_line_before_widening_a_weak_sibling():
    store = tree(
        ROOT,
        node("best", "root", score=0.9, visits=1, reward=0.9),
        node("weak", "root", score=0.1),
        node("deeper", "best", depth=2, score=0.8),
    )
    assert select(store) == "deeper"  # the old rule (unvisited first, at infinity) widened "weak"


def test_ucb1_balances_the_mean_against_exploration():
    store = tree(ROOT, node("often", "root", visits=8, reward=6.4), node("rarely", "root", visits=2, reward=1.0))
    assert select(store, exploration=0.0) == "often"
    assert select(store, exploration=1.0) == "rarely"  # 0.8 + sqrt(ln 10 / 8) < 0.5 + sqrt(ln 10 / 2)


def test_selection_skips_pruned_terminal_and_unvalued_children_and_backtracks():
    store = tree(
        ROOT,
        node("pruned", "root", score=0.99, pruned=True),
        node("done", "root", score=0.99, is_terminal=True),
        node("broken", "root", score=None, parse_error="evaluation unparseable"),
        node("live", "root", score=0.2),
    )
    assert select(store) == "live"
    assert select(tree(ROOT, node("pruned", "root", pruned=True))) is None  # never proposed under the root twice
    dead_end = tree(
        ROOT, node("a", "root", score=0.9, visits=1), node("end", "a", 2, is_terminal=True), node("b", "root")
    )
    assert select(dead_end) == "b"  # "a" holds only a finished line: the search backtracks to its sibling


def test_a_failed_terminal_backpropagates_minus_one_not_its_value():
    params = LATSParams(threshold=0.8, max_depth=5)
    path = [ROOT, node("a"), node("end", depth=2, score=0.6, is_terminal=True)]
    assert path_rewards(path, path[-1], [0.7, 0.6], params, False) == [0.0, 0.0, FAILED_TERMINAL]
    won = [ROOT, node("a"), node("end", depth=2, score=0.7, is_terminal=True)]
    assert path_rewards(won, won[-1], [0.7, 0.7], params, True) == [SUCCESS] * 3  # the success, not its value
    deep = [ROOT, node("a"), node("deep", depth=5, score=0.7)]
    assert path_rewards(deep, deep[-1], [0.5, 0.7], params, False) == [FAILED_TERMINAL] * 3  # out of depth, no end
    short = [ROOT, node("a"), node("mid", depth=2, score=0.7)]
    # The reference's mean over the rollout: its rewards start at 0 in the start's place, then 0.7: (0 + 0.7) / 2.
    assert path_rewards(short, short[-1], [0.5, 0.7], params, False) == [pytest.approx(0.35)] * 3


def test_the_value_mixes_the_judgement_with_self_consistency():
    assert mixed_value(0.9, 1 / 3, 0.0) == 0.9
    assert mixed_value(0.9, 1.0, 0.2) == pytest.approx(0.92)
    assert mixed_value(0.9, 1 / 3, 0.2) == pytest.approx(0.7867, abs=1e-4)


# ---- a scripted search ------------------------------------------------------------------------------------------


def last_step(prompt):
    return prompt.split("### LAST STEP\n", 1)[1].split("\n", 1)[0]


def scripted(values, proposals, reflect="Start from the other branch."):
    """Replies by the last step's text: values[text] = (score, is_terminal); proposals by the step number."""

    def propose(prompt):
        step = int(prompt.split("### STEP NUMBER\n", 1)[1].split()[0])
        return {"thoughts": [{"thought": t} for t in proposals[step]]}

    def value(prompt):
        score, terminal = values[last_step(prompt)]
        return {"score": score, "reason": f"judged {last_step(prompt)}", "is_terminal": terminal}

    return ScriptedGateway(
        {
            "lats.expand": propose,
            "lats.evaluate": value,
            "lats.reflect": {"reflection": reflect},
            "lats.synthesize": {"answer": "The answer, written in full."},
        }
    )


async def test_the_rollout_keeps_the_best_of_n_per_step_down_to_a_terminal():
    values = {
        "A": (0.6, False),
        "B": (0.4, False),
        "A1": (0.7, False),
        "A2": (0.5, False),
        "A1x": (0.95, True),
        "A1y": (0.3, True),
    }
    proposals = {1: ["A", "B"], 2: ["A1", "A2"], 3: ["A1x", "A1y"]}
    gateway, store = scripted(values, proposals), FakeStore()
    params = {"iterations": 1, "children": 2, "rollout_samples": 2, "rollout_depth": 4, "consistency": 0}
    outcome = await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    assert [n.thought for n in store.path(outcome.final_node)][1:] == ["A", "A1", "A1x"]
    assert outcome.final_node.state["verified"] == 3  # a terminal at the threshold is judged again before it wins
    assert store.get(store.path(outcome.final_node)[0].id).visit_count == 1


async def test_reflections_reach_the_value_prompt_and_survive_a_resume():
    values = {"A": (0.6, False), "A1": (0.3, True), "A2": (0.2, True), "B": (0.5, False)}
    proposals = {1: ["A", "B"], 2: ["A1", "A2"]}
    store = FakeStore()
    params = {"iterations": 1, "children": 2, "rollout_samples": 2, "consistency": 0}
    await LanguageAgentTreeSearch(
        context(LanguageAgentTreeSearch, scripted(values, proposals), store, params=params)
    ).run()
    [critique] = store.critiques()
    failed = store.get(critique.node_id)
    assert failed.thought == "A1" and store.get(failed.id).total_reward == FAILED_TERMINAL
    # A new run (a resume) reflects with the reason stored on the node, and values with the reflections in view.
    gateway = scripted(values | {"B1": (0.2, True), "B2": (0.1, True)}, proposals | {2: ["B1", "B2"]})
    params = params | {"iterations": 2}
    await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    reflect_prompts = [p for name, _, p in gateway.calls if name == "lats.reflect"]
    assert reflect_prompts and "judged B" in reflect_prompts[0] and "not recorded" not in reflect_prompts[0]
    value_prompts = [p for name, _, p in gateway.calls if name == "lats.evaluate"]
    assert all("Start from the other branch." in p for p in value_prompts)


async def test_a_thought_proposed_twice_is_one_child_valued_higher_by_self_consistency():
    values = {"A": (0.6, False), "B": (0.6, False)}
    gateway, store = scripted(values, {1: ["A", "A", "B"]}), FakeStore()
    params = {"iterations": 1, "children": 3, "rollout_depth": 0, "consistency": 0.5}
    await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    kids = {n.thought: n for n in store.nodes() if n.depth == 1}
    assert set(kids) == {"A", "B"} and gateway.count("lats.evaluate") == 2
    assert kids["A"].eval_score == pytest.approx(0.5 * 0.6 + 0.5 * 2 / 3, abs=1e-3)
    assert kids["B"].eval_score == pytest.approx(0.5 * 0.6 + 0.5 * 1 / 3, abs=1e-3)


async def test_a_terminal_judged_high_once_but_low_on_verification_does_not_end_the_search():
    calls = {"W": 0}

    def value(prompt):
        last = last_step(prompt)
        if last == "W":  # a wrong answer one lucky judgement calls right; the verification's samples do not
            calls["W"] += 1
            return {"score": 0.9 if calls["W"] == 1 else 0.1, "reason": "w", "is_terminal": True}
        return {"score": {"R": 0.9, "X": 0.5}[last], "reason": last, "is_terminal": last == "R"}

    proposals = {1: ["W", "X"], 2: ["R"]}
    gateway = ScriptedGateway(
        {
            "lats.expand": lambda p: {
                "thoughts": [{"thought": t} for t in proposals[int(p.split("### STEP NUMBER\n")[1].split()[0])]]
            },
            "lats.evaluate": value,
            "lats.reflect": {"reflection": "W was wrong."},
            "lats.synthesize": {"answer": "The answer, written in full."},
        }
    )
    store = FakeStore()
    params = {"iterations": 3, "children": 2, "rollout_samples": 1, "consistency": 0}
    outcome = await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    assert outcome.final_node.thought == "R"
    w = next(n for n in store.nodes() if n.thought == "W")
    assert w.state["verified"] == 3 and w.eval_score < 0.8


# ---- success as the reference decides it (issue 22, item 1) ------------------------------------------------------


def by_step(proposals):
    def propose(prompt):
        step = int(prompt.split("### STEP NUMBER\n", 1)[1].split()[0])
        return {"thoughts": [{"thought": t} for t in proposals[step]]}

    return propose


async def test_a_terminal_judged_right_succeeds_whatever_self_consistency_makes_of_its_value():
    # T is unique among three proposals (SC 1/3): judged 0.95, 0.95 and one guessed 0.6, its mixed value is 0.73.
    samples = {"T": [0.95, 0.95, 0.6], "X": [0.2], "Y": [0.1]}
    counts = {}

    def value(prompt):
        last = last_step(prompt)
        counts[last] = counts.get(last, 0) + 1
        scores = samples[last]
        return {"score": scores[(counts[last] - 1) % len(scores)], "reason": last, "is_terminal": last == "T"}

    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: ["T", "X", "Y"]}),
            "lats.evaluate": value,
            "lats.reflect": {"reflection": "T led nowhere."},
            "lats.synthesize": {"answer": "The answer, written in full."},
        }
    )
    store = FakeStore()
    params = {"iterations": 4, "children": 3, "rollout_depth": 0, "consistency": 0.2}  # the weight, set by hand
    outcome = await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    t = next(n for n in store.nodes() if n.thought == "T")
    assert t.eval_score < 0.8 and t.state["judged"] >= 0.8  # the old rule called this line a failure
    assert t.state["success"] and t.state["decided_by"] == "judgement" and t.total_reward == SUCCESS
    assert outcome.final_node.id == t.id and store.get(store.path(t)[0].id).visit_count == 1  # it ended the search
    assert store.critiques() == []  # never reflected on as a line that "led nowhere"


def puzzle_context(gateway, store, params):
    from reasoning.facts.case import CaseCheck

    problem = "Game of 24: use each of the numbers 4 4 6 8 exactly once with + - * / to make 24."
    return context(LanguageAgentTreeSearch, gateway, store, params=params, problem=problem,
                   case=CaseCheck(puzzle=[4, 4, 6, 8]))


async def test_on_a_task_with_a_checker_the_checker_decides_success_and_the_evaluator_never_does():
    wrong, right = "Answer: (8 - 4) * 6 + 4 = 24", "Answer: (4 + 8) * (6 - 4) = 24"
    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: ["8 - 4 = 4 (left: 4 4 6)"], 2: [wrong, right]}),
            # The evaluator loves the wrong answer and scorns the right one: it is never asked about either.
            "lats.evaluate": lambda p: {"score": 0.99 if last_step(p) == wrong else 0.6, "reason": "r"},
            "lats.state_evaluate": {"score": 0.6, "reason": "a position"},
            "lats.reflect": {"reflection": "Check the arithmetic."},
            "lats.synthesize": lambda p: {"answer": right if right in p else wrong},
        }
    )
    store = FakeStore()
    params = {"iterations": 3, "children": 1, "rollout_samples": 2}
    outcome = await LanguageAgentTreeSearch(puzzle_context(gateway, store, params)).run()
    answers = {n.thought: n for n in store.nodes() if n.thought.startswith("Answer")}
    assert answers[wrong].state["success"] is False and answers[wrong].eval_score == 0.0
    assert answers[right].state["success"] is True and answers[right].state["decided_by"] == "checker"
    assert outcome.final_node.thought == right and outcome.final_answer == right
    valued = [p for name, _, p in gateway.calls if name in ("lats.evaluate", "lats.state_evaluate")]
    assert valued and not any("Answer" in p.split("### POSITION", 1)[-1].split("###")[0] for p in valued)
    assert gateway.count("lats.evaluate") == 0  # the checker costs no call, and a step is judged on its position


async def test_where_the_client_facts_are_checked_a_terminal_failing_them_is_no_success():
    from reasoning.facts.case import CaseCheck
    from reasoning.facts.sheet import Fact

    sheet = [Fact("portfolio", "amount", 3_000_000, "CHF", "CHF 3m")]
    wrong = "Sell CHF 700,000 of the CHF 3.5M portfolio."
    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: [wrong]}),
            "lats.evaluate": {"score": 0.95, "reason": "r", "is_terminal": True},
            "lats.reflect": {"reflection": "The portfolio is CHF 3m."},
            "lats.synthesize": {"answer": "Sell CHF 300,000 of the CHF 3m portfolio, in two tranches."},
        }
    )
    store = FakeStore()
    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store,
                                               params={"iterations": 2, "children": 1}, case=CaseCheck(sheet)))
    outcome = await strategy.run()
    node = next(n for n in store.nodes() if n.thought == wrong)
    assert node.state["judged"] >= 0.8 and node.state["success"] is False and node.state["decided_by"] == "checker"
    assert [c.node_id for c in store.critiques()] == [node.id]  # reflected on as the failure it is
    # No terminal succeeded: the search says so, and its answer is marked the best line so far.
    assert outcome.reason == NO_SUCCESS and outcome.partial and "no terminal line reached" in outcome.detail


def success(name, parent="root", depth=1, score=0.7, verified=3, **fields):
    state = {"success": True, "decided_by": "judgement", "verified": verified}
    return node(name, parent, depth, score, is_terminal=True, state=state, **fields)


def failure(name, parent="root", depth=1, score=0.9, **fields):
    state = {"success": False, "decided_by": "judgement", "judged": 0.75}
    return node(name, parent, depth, score, is_terminal=True, state=state, **fields)


def test_the_answer_comes_from_a_terminal_that_succeeded_whatever_a_failed_one_is_valued():
    store = tree(ROOT, failure("failed", visits=3, reward=-3.0), success("won", score=0.6, visits=1, reward=1.0))
    assert LanguageAgentTreeSearch.best_node(store).id == "won"


def test_with_no_success_the_answer_never_comes_from_a_line_the_tree_draws_as_failed():
    # The failed terminal is valued and visited most; the answer comes from the live line that did not fail.
    store = tree(
        ROOT,
        failure("failed", visits=5, reward=-5.0),
        node("open", "root", score=0.6, visits=2, reward=1.0),
        node("deeper", "open", depth=2, score=0.5, visits=1, reward=0.5),
    )
    assert LanguageAgentTreeSearch.best_node(store).id == "deeper"
    # Nothing backpropagated: the best valued node that is no failed terminal.
    fresh = tree(ROOT, failure("failed", score=0.95), node("plain", "root", score=0.4))
    assert LanguageAgentTreeSearch.best_node(fresh).id == "plain"
    # Only failed terminals: the best of them (the session's ending then says no line succeeded).
    assert LanguageAgentTreeSearch.best_node(tree(ROOT, failure("only"))).id == "only"


async def test_an_answer_from_a_terminal_that_succeeded_is_solved():
    step = "Sell CHF 300,000 of equities to rebalance the portfolio to its 60/40 target."
    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: [step]}),
            "lats.evaluate": {"score": 0.95, "reason": "r", "is_terminal": True},
            "lats.synthesize": {"answer": step},
        }
    )
    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, FakeStore(), params={"children": 1}))
    outcome = await strategy.run()
    assert outcome.reason == "solved" and not outcome.partial, outcome.detail
    assert outcome.final_node.state["success"] is True


def test_a_node_a_rollout_passed_through_is_still_a_leaf_to_expand():
    store = tree(
        ROOT,
        node("a", "root", score=0.7, visits=1, reward=0.5),
        node("sim", "a", depth=2, score=0.9, visits=1, reward=0.5, state={"kind": "rollout", "rollout": True}),
    )
    assert select(store) == "a"  # not "sim": a simulated node is outside the tree, and "a" was never expanded


# ---- against the reference's numbers (issue 31, section 2) -------------------------------------------------------


def test_the_rollout_reward_is_the_references_mean_over_the_rollout():
    # hotpot/lats.py's rollout: rewards = [0], then the value of each step followed; the reward is their mean. Values
    # 0.7, 0.7, 0.7 from the start give (0 + 0.7 + 0.7) / 3 = 0.47, not the start's 0.70.
    assert rollout_reward([0.7, 0.7, 0.7]) == pytest.approx(1.4 / 3)
    assert round(rollout_reward([0.7, 0.7, 0.7]), 2) == 0.47
    assert rollout_reward([0.9]) == 0.0  # no step followed: the reference's [0]
    assert rollout_reward([0.5, 0.6, None, 0.9]) == pytest.approx(1.5 / 3)  # a step left unvalued counts no place
    path = [ROOT, node("a"), node("b", depth=2), node("c", depth=3, score=0.7)]
    assert path_rewards(path, path[-1], [0.7, 0.7, 0.7], LATSParams(max_depth=5), False) == [pytest.approx(1.4 / 3)] * 4


def test_the_value_is_the_judgement_alone_by_default():
    # Self-consistency is dropped (its weight 0): one call asks for distinct thoughts, so the share of repeats is a
    # constant among siblings, not agreement among independent samples as in the paper.
    assert LATSParams().consistency == 0.0
    for judged, share in [(0.9, 1 / 3), (0.9, 1 / 2), (0.47, 1.0)]:
        assert mixed_value(judged, share, LATSParams().consistency) == judged


async def test_a_value_is_the_mean_of_its_samples_whatever_its_siblings():
    samples = iter([0.9, 0.6, 0.9, 0.3, 0.3, 0.3])
    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: ["A", "A", "B"]}),
            "lats.evaluate": lambda p: {"score": next(samples), "reason": last_step(p)},
            "lats.reflect": {"reflection": "r"},
            "lats.synthesize": {"answer": "The answer, written in full."},
        }
    )
    store = FakeStore()
    params = {"iterations": 1, "children": 3, "rollout_depth": 0}
    await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    kids = {n.thought: n.eval_score for n in store.nodes() if n.depth == 1}
    assert kids == {"A": pytest.approx(0.8), "B": pytest.approx(0.3)}  # A proposed twice gains nothing from it


def test_reflections_are_capped_as_the_reference_caps_them_and_one_a_distinct_answer():
    failed = [node(f"n{i}", thought) for i, thought in enumerate(["x = 1", "X = 1.", "y = 2", "z = 3", "w = 4"])]
    for n, text in zip(failed, ["x = 1", "X = 1.", "y = 2", "z = 3", "w = 4"], strict=True):
        n.thought = text
    assert MAX_REFLECTIONS == 3
    assert [n.thought for n in reflection_due(failed, set(), 0)] == ["x = 1", "y = 2", "z = 3"]
    assert [n.thought for n in reflection_due(failed, {"y = 2"}, 2)] == ["x = 1"]  # one left of the cap
    assert reflection_due(failed, set(), 3) == []


async def test_a_search_writes_at_most_three_reflections_and_counts_them():
    # Every expansion ends on a failed terminal with an answer of its own: without the cap each would be reflected on.
    step, judged_wrong = {"n": 0}, set()

    def propose(prompt):
        step["n"] += 1
        # words a step filter keeps ("Step 1" and "Answer 1" are a reply's field names and a number: no prose)
        return {"thoughts": [{"thought": f"Route {step['n']}"}, {"thought": f"Result {step['n']}"}]}

    def value(prompt):
        answer = last_step(prompt).startswith("Result")
        if answer:
            judged_wrong.add(last_step(prompt))
        return {"score": 0.4 if answer else 0.3, "reason": "wrong" if answer else "go on", "is_terminal": answer}

    gateway = ScriptedGateway(
        {
            "lats.expand": propose,
            "lats.evaluate": value,
            "lats.reflect": {"reflection": "That answer was wrong; try another."},
            "lats.synthesize": {"answer": "The answer, written in full."},
        }
    )
    store = FakeStore()
    params = {"iterations": 6, "children": 2, "rollout_depth": 0, "max_depth": 10}
    await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params)).run()
    # Failed endings: the distinct answers judged wrong (each one a reflection without the cap).
    assert len(judged_wrong) >= 5 and len(store.critiques()) == MAX_REFLECTIONS == gateway.count("lats.reflect")


async def test_a_line_failing_a_check_above_its_terminal_is_a_failure_reflected_on_with_the_findings():
    # Issue 31 §3: the terminal itself is clean and judged 0.95, but the step above it misstates the portfolio. The
    # line is no success (the checks decide with the judge, never the judge alone): -1 for its end, and a reflection
    # whose evidence is the finding.
    from reasoning.facts.case import CaseCheck
    from reasoning.facts.sheet import Fact

    sheet = [Fact("portfolio", "amount", 3_000_000, "CHF", "CHF 3m")]
    wrong, end = "Sell CHF 700,000 of the CHF 3.5M portfolio.", "Review the plan with the client every quarter."

    def value(prompt):
        terminal = last_step(prompt) == end
        return {"score": 0.95 if terminal else 0.9, "reason": "Strong.", "is_terminal": terminal}

    gateway = ScriptedGateway(
        {
            "lats.expand": by_step({1: [wrong], 2: [end]}),
            "lats.evaluate": value,
            "lats.reflect": {"reflection": "The portfolio is CHF 3m."},
            "lats.synthesize": {"answer": "Rebalance the CHF 3m portfolio in two tranches, reviewed quarterly."},
        }
    )
    store = FakeStore()
    params = {"iterations": 1, "children": 1, "rollout_samples": 1, "rollout_depth": 2, "max_depth": 3}
    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params=params,
                                               case=CaseCheck(sheet)))
    outcome = await strategy.run()
    terminal = next(n for n in store.nodes() if n.thought == end)
    assert terminal.state["judged"] >= 0.8 and terminal.state["success"] is False
    assert terminal.state["decided_by"] == "checker" and terminal.total_reward == FAILED_TERMINAL
    [reflect] = [p for name, _, p in gateway.calls if name == "lats.reflect"]
    assert "CHF 3.5M" in reflect.split("### CHECK FINDINGS\n", 1)[1].split("###")[0]
    assert outcome.reason == NO_SUCCESS


async def test_a_puzzles_reflection_has_no_check_findings_section():
    from reasoning.facts.case import CaseCheck

    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, ScriptedGateway({}), FakeStore(),
                                               case=CaseCheck(puzzle=[4, 9, 10, 13])))
    assert strategy.line_evidence(Node("a", None, 1, "13 - 9 = 4 (left: 4 4 10)")) is None


async def test_a_budget_short_of_a_whole_iteration_still_runs_one_and_says_which_call_it_could_not_afford():
    """Issue 32: LATS asked for a whole iteration's calls up front (19 by default) and ended exhausted before its first
    iteration with most of its budget unspent. It now runs while the next call and the synthesis are covered, and ends
    on the call the gateway refused, naming it."""
    values = {"A": (0.6, False), "B": (0.4, False), "A1": (0.7, False), "A2": (0.5, False)}
    proposals = {1: ["A", "B"], 2: ["A1", "A2"], 3: ["A1x", "A1y"]}
    gateway, store = scripted(values, proposals), FakeStore()
    gateway.budget_calls = 6  # 6 calls' worth: a default iteration's 19 are not
    outcome = await LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, gateway, store, params={})).run()
    assert gateway.count("lats.expand") >= 2 and len(gateway.calls) == 6  # the budget was spent, not left
    assert outcome.exhausted and outcome.final_answer
    assert outcome.exhausted_by.startswith("lats.") and "scripted budget is spent" in outcome.exhausted_by


@pytest.mark.parametrize("puzzle, asked", [([4, 9, 10, 13], False), (None, True)], ids=["puzzle", "wealth"])
def test_only_a_client_s_prompts_ask_to_declare_figures(puzzle, asked):
    # A puzzle's numbers are no client's amounts: its proposals are not asked for a figures list (the offline model
    # draws as before either way; a real model is spared an instruction that does not apply).
    from reasoning.facts.case import CaseCheck
    from reasoning.prompts import DECLARE_FIGURES
    from reasoning.strategies.lats import EXPAND

    case = CaseCheck(puzzle=puzzle) if puzzle else CaseCheck([])
    strategy = LanguageAgentTreeSearch(context(LanguageAgentTreeSearch, ScriptedGateway({}), FakeStore(), case=case))
    prompt = strategy.render_on_path(EXPAND, [Node("root", None, 0, "the problem")], k=2, depth=1, reflections="(none)")
    assert (DECLARE_FIGURES in prompt) is asked
