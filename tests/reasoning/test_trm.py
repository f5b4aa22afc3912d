"""TRM recursive refinement: the line parser, the stop rules, and sessions through the engine on the offline model."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.contracts import ParseError
from reasoning.llm.gateway import ModelGateway
from reasoning.models import LLMCall, OverseerAction, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Node
from reasoning.strategies.trm import REASON, RecursiveRefinement, TRMParams, parse_reasoning, stop_reason
from tests.conftest import SEEDED_KINDS
from tests.runs import (
    act,
    cut_at_call,
    ledger_and_node_costs,
    pause_at_call,
    resume,
    rows,
    run_hooked,
    scripted_gateway,
    take_over_and_run,
)

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "Review and refine the plan for realising CHF 1.2m of gains across three tax years for a Zurich couple aged 61."
)
STATE_KEYS = {"iteration", "insights", "issues", "suggestions", "confidence", "latent"}


# ---- the parser -----------------------------------------------------------------------------


def test_a_well_formed_reply_is_read_line_by_line():
    reply = (
        "INSIGHT: The tranche sizes match the CHF 1.2m to realise.\n"
        "ISSUE: The Zurich wealth tax is ignored.\n"
        "MISSING: A liquidity reserve.\n"
        "SUGGESTION: Fix the missing reserve before the first sale.\n"
        "SUGGESTION: Add review dates.\n"
        "CONFIDENCE: 0.72"
    )
    parsed, how = REASON.parse(reply)
    assert how == "lines" and parsed.confidence == 0.72 and parsed.confidence_from == "explicit"
    assert parsed.insights == ["The tranche sizes match the CHF 1.2m to realise."]
    assert parsed.issues == ["The Zurich wealth tax is ignored."]
    # MISSING counts as a suggestion, listed first.
    assert parsed.suggestions == [
        "A liquidity reserve.",
        "Fix the missing reserve before the first sale.",
        "Add review dates.",
    ]
    importance = {f.text: f.importance for f in parsed.findings}
    assert importance["The Zurich wealth tax is ignored."] == "high"
    assert importance["A liquidity reserve."] == "high"
    assert importance["Fix the missing reserve before the first sale."] == "high"  # names a problem
    assert importance["Add review dates."] == "low"
    assert importance["The tranche sizes match the CHF 1.2m to realise."] == "low"
    assert [f.importance for f in parsed.key_points()][:3] == ["high"] * 3


def test_a_long_insight_is_of_medium_importance():
    parsed = parse_reasoning("INSIGHT: " + "the staging keeps every sale inside a low tax bracket " * 3)
    assert parsed.findings[0].importance == "medium"


def test_only_insight_lines_give_the_heuristic_confidence():
    parsed = parse_reasoning("INSIGHT: The sequence is sound.\nINSIGHT: The amounts add up.")
    # 0.5, +0.2 for insights without issues, -0.05 for a single kind of marker.
    assert parsed.confidence_from == "heuristic" and parsed.confidence == pytest.approx(0.65)
    assert parsed.issues == [] and parsed.suggestions == []


def test_unsure_language_and_issues_lower_the_heuristic_confidence():
    parsed = parse_reasoning("ISSUE: It might be wrong, perhaps unclear.\nISSUE: It seems incomplete.")
    assert parsed.confidence == pytest.approx(0.5 - 0.1 - 0.15 - 0.05)


def test_a_stated_confidence_is_read_on_the_0_to_1_scale():
    stated = {"CONFIDENCE: 0.7": 0.7, "CONFIDENCE: 85%": 0.85, "confidence:1": 1.0, "CONFIDENCE: 0": 0.0}
    for line, expected in stated.items():
        assert parse_reasoning(f"INSIGHT: fine\n{line}").confidence == expected, line


@pytest.mark.parametrize("line", ["CONFIDENCE: 7", "CONFIDENCE: -0.4", "CONFIDENCE: 140%"])
def test_a_confidence_off_the_scale_breaks_the_contract_rather_than_being_clamped(line):
    with pytest.raises(ParseError, match="off the scale"):
        parse_reasoning(f"INSIGHT: fine\n{line}")


def test_markers_in_any_case_with_bullets_bold_and_continuation_lines():
    reply = (
        "Here is my analysis.\n"
        "  insight :   The order of sales is right.  \n"
        "- **Issue:** The 2026 sale\n   exceeds the bracket.\n"
        "\n"
        "Some closing prose that belongs to no finding.\n"
        "2. Suggestion: split it.\n"
        "**CONFIDENCE**: 0.6"
    )
    parsed = parse_reasoning(reply)
    assert parsed.insights == ["The order of sales is right."]
    assert parsed.issues == ["The 2026 sale exceeds the bracket."]
    assert parsed.suggestions == ["split it."] and parsed.confidence == 0.6


def test_a_reply_wrapped_in_json_is_unwrapped():
    parsed = parse_reasoning('{"analysis": "INSIGHT: kept\\nISSUE: open\\nCONFIDENCE: 0.4"}')
    assert parsed.insights == ["kept"] and parsed.issues == ["open"] and parsed.confidence == 0.4


def test_garbage_raises_a_parse_error():
    for reply in ["", "I think the plan is fine.", '{"answer": "fine"}', "Insights are good", "0.9"]:
        with pytest.raises(ParseError):
            REASON.parse(reply)


def test_confidence_is_always_within_0_and_1():
    replies = [
        "ISSUE: wrong\n" * 8,
        "INSIGHT: clearly definitely certainly correct verified accurate proven",
        "ISSUE: maybe\nMISSING: perhaps\nCONFIDENCE: abc",
        "INSIGHT: a\nCONFIDENCE: 1e9",
    ]
    for reply in replies:
        assert 0.0 <= parse_reasoning(reply).confidence <= 1.0, reply


# ---- the stop rules and the best node (pure) ---------------------------------------------------


def test_the_stop_rules():
    params = TRMParams(max_steps=4, confidence_threshold=0.9, convergence=0.05)
    assert stop_reason([], params) is None
    assert stop_reason([0.5, 0.7], params) is None
    assert stop_reason([0.5, 0.92], params) == "confidence"
    # Converged: the last three confidences lie within `convergence`; a dip alone does not stop the refinement.
    assert stop_reason([0.5, 0.53], params) is None
    assert stop_reason([0.5, 0.53, 0.51], params) == "converged"
    assert stop_reason([0.5, 0.4], params) is None and stop_reason([0.5, 0.4, 0.6], params) is None
    assert stop_reason([0.2, 0.4, 0.6, 0.8], params) == "steps"


def test_params_are_bounded():
    with pytest.raises(ValueError):
        TRMParams(max_steps=11)
    with pytest.raises(ValueError):
        TRMParams(convergence=0.6)
    with pytest.raises(ValueError):
        TRMParams(depth=3)


class TreeStub:
    def __init__(self, nodes, pruned=()):
        self.all, self.pruned = nodes, set(pruned)

    def nodes(self):
        return list(self.all)

    def is_pruned(self, node):
        return node.id in self.pruned


def test_the_best_node_is_the_highest_confidence_live_iteration_the_later_on_a_tie():
    root = Node("r", None, 0, "problem")
    one, two, three = (Node(str(i), "r", i, f"answer {i}", eval_score=s) for i, s in ((1, 0.7), (2, 0.8), (3, 0.8)))
    assert RecursiveRefinement.best_node(TreeStub([root, one, two, three])).id == "3"
    assert RecursiveRefinement.best_node(TreeStub([root, one, two, three], pruned={"3"})).id == "2"
    assert RecursiveRefinement.best_node(TreeStub([root])) is None


# ---- sessions through the engine ----------------------------------------------------------------


async def start(party, **fields):
    data = SessionIn(problem_text=fields.pop("problem", PROBLEM), mode="trm", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def purposes(session):
    return [c.purpose async for c in LLMCall.objects.filter(session_id=session.id).order_by("created_at")]


def assert_one_chain(nodes):
    """One root, and each node the parent of at most one iteration."""
    assert len([n for n in nodes if n.depth == 0]) == 1
    parents = [n.parent_id for n in nodes if n.depth > 0]
    assert len(parents) == len(set(parents))


async def test_a_session_refines_one_answer_in_a_chain_until_confident(alice):
    session = await start(alice, problem_kind="tax-optim-sequence")
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await rows(session)
    root, iterations = nodes[0], nodes[1:]
    assert session.status == "solved", session.error
    assert_one_chain(nodes)
    # Iteration i is the child of iteration i-1, and the confidence rises until it passes the threshold.
    assert [n.depth for n in iterations] == list(range(1, len(iterations) + 1)) and 2 <= len(iterations) <= 5
    assert all(n.parent_id == (iterations[i - 1].id if i else root.id) for i, n in enumerate(iterations))
    for i, node in enumerate(iterations, 1):
        # Each answer's score is its own analysis's confidence (not the analysis of the answer before it).
        assert STATE_KEYS <= set(node.state) and node.state["iteration"] == i
        assert node.eval_score == node.state["confidence"] and 0 <= node.eval_score <= 1
        assert node.state["assessment"]["confidence"] == pytest.approx(node.eval_score, abs=0.02)
        assert all({"kind", "text", "importance"} <= set(f) for f in node.state["insights"])
        assert len(node.state["latent"]["trace"]) == i
    scores = [n.eval_score for n in iterations]
    assert scores == sorted(scores) and scores[-1] >= 0.9
    assert iterations[-1].state["stopped"] == "confidence"
    assert all("stopped" not in n.state for n in iterations[:-1])
    # Issues raised by one iteration and fixed by the next are carried as resolved.
    assert iterations[-1].state["latent"]["resolved_issues"]
    assert "Zurich" in iterations[-1].thought and iterations[-1].thought != iterations[-2].thought
    # The answer is the best iteration's, taken as it stands: no synthesis call.
    assert session.final_node_id == iterations[-1].id and session.final_answer == iterations[-1].thought
    # The question's analysis, then per answer its improvement and its analysis; the confident one is verified.
    assert await purposes(session) == ["trm.reason"] + ["trm.improve", "trm.reason"] * len(iterations) + ["trm.reason"]
    assert iterations[-1].state["verified"] == 3
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_every_seeded_kind_ends_solved_on_the_offline_model(alice):
    for kind in sorted(SEEDED_KINDS):
        session = await start(alice, problem_kind=kind)
        await run_session(session.id)
        await session.arefresh_from_db()
        last = (await rows(session))[-1]
        assert session.status == "solved" and session.final_answer, (kind, session.error)
        assert last.state["stopped"] == "confidence" and last.depth <= 5, kind


def draft(i):
    """An answer that says something about the problem (the contract refuses one that does not)."""
    return f"Draft {i}: realise the CHF 1.2m of gains over {i + 1} tax years."


def answer(text):
    return '{"answer": "%s"}' % text


async def run_confident(party, confidences, **fields):
    """Answer i is judged confidences[i-1]; a confident one is judged again the same (its verification)."""
    session = await start(party, model_primary="openai/gpt-4o-mini", **fields)
    replies = ["INSIGHT: the question is clear\nCONFIDENCE: 0.1", answer(draft(1))]
    for i, confidence in enumerate(confidences, 1):
        analysis = f"INSIGHT: step {i} holds\nISSUE: gap {i}\nCONFIDENCE: {confidence}"
        replies += [analysis] * (2 if confidence >= 0.9 else 1) + [answer(draft(i + 1))]
    await run_session(session.id, gateway=await scripted_gateway(session, replies))
    await session.arefresh_from_db()
    return session, await rows(session)


async def test_it_stops_when_the_confidence_threshold_is_reached(alice):
    session, nodes = await run_confident(alice, [0.5, 0.95, 0.99])
    assert session.status == "solved" and len(nodes) == 3
    assert nodes[-1].state["stopped"] == "confidence" and session.final_answer == draft(2)


async def test_it_stops_at_the_step_limit(alice):
    session, nodes = await run_confident(alice, [0.3, 0.5, 0.7, 0.8], params={"max_steps": 3})
    assert session.status == "solved" and len(nodes) == 4
    assert nodes[-1].state["stopped"] == "steps" and session.final_answer == draft(3)


async def test_it_stops_when_the_confidence_stops_improving(alice):
    session, nodes = await run_confident(alice, [0.5, 0.6, 0.61, 0.605, 0.9])
    assert session.status == "solved" and len(nodes) == 5
    assert nodes[-1].state["stopped"] == "converged" and session.final_answer == draft(3)
    assert nodes[-1].state["latent"]["resolved_issues"] == ["gap 1", "gap 2"]


async def test_a_dip_in_confidence_does_not_stop_the_refinement(alice):
    session, nodes = await run_confident(alice, [0.5, 0.45, 0.95])
    assert session.status == "solved" and len(nodes) == 4
    assert nodes[-1].state["stopped"] == "confidence" and session.final_answer == draft(3)


async def test_an_unparseable_analysis_is_recorded_on_the_answer_it_judged_not_scored_zero(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    replies = ["INSIGHT: sound\nCONFIDENCE: 0.6", answer(draft(1)), "I cannot say.", "Still no markers."]
    await run_session(session.id, gateway=await scripted_gateway(session, replies))
    await session.arefresh_from_db()
    nodes = await rows(session)
    first = nodes[1]
    # The question's analysis (0.6) is no judgement of the answer: the answer stays unjudged, not scored 0.6.
    assert len(nodes) == 2 and "reasoning unparseable" in first.parse_error and first.eval_score is None
    assert session.status == "solved" and session.final_answer == draft(1)
    failed = [c async for c in LLMCall.objects.filter(session=session, parse_ok=False)]
    assert len(failed) == 2 and all(c.node_id == first.id for c in failed)  # the retry, then the failure
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_a_model_that_keeps_failing_fails_the_session_with_the_error_kept(alice):
    session = await start(alice, model_primary="openai/gpt-4o-mini")
    gateway = await sync_to_async(ModelGateway)(
        session, retries=0, deployment_params={"primary": {"mock_response": Exception("provider exploded")}}
    )
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    root = (await rows(session))[0]
    assert session.status == "failed" and "provider exploded" in session.error
    assert "model failed on the reasoning" in root.parse_error


async def test_a_budget_that_runs_out_midway_keeps_the_best_answer_so_far(alice):
    session = await start(alice, budget_usd=0.009)
    await run_session(session.id)
    await session.arefresh_from_db()
    nodes = await rows(session)
    assert session.status == "exhausted" and session.budget_used_usd <= session.budget_usd
    assert 2 <= len(nodes) < 4 and "stopped" not in nodes[-1].state
    judged = [n for n in nodes[1:] if n.eval_score is not None]
    best = max(judged, key=lambda n: n.eval_score) if judged else nodes[-1]
    assert session.final_node_id == best.id and session.final_answer == best.thought
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


# ---- re-entry, steering -----------------------------------------------------------------------


async def reference_thoughts(party):
    """What an uninterrupted session on the same problem writes."""
    session = await start(party)
    await run_session(session.id)
    return [n.thought for n in await rows(session)]


async def test_pause_and_resume_continue_the_chain_as_if_nothing_happened(alice, runner):
    session = await start(alice)

    _, paused = await pause_at_call(alice, session, 3)  # at the second analysis
    assert session.status == "paused"

    nodes = await resume(alice, session, runner)
    assert session.status == "solved" and {n.id for n in paused} <= {n.id for n in nodes}
    assert_one_chain(nodes)
    assert [n.thought for n in nodes] == await reference_thoughts(alice)
    calls = await purposes(session)
    assert calls.count("trm.improve") == len(nodes) - 1 and calls.count("trm.reason") == len(nodes) + 1
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_a_run_cut_between_analysis_and_improvement_reuses_the_stored_analysis(alice, runner):
    session = await start(alice)

    before = await cut_at_call(session, 4)  # before the second improvement
    assert session.status == "interrupted" and len(before) == 2 and before[1].state.get("assessment")

    nodes = await take_over_and_run(session)
    assert session.status == "solved" and {n.id for n in before} <= {n.id for n in nodes}
    assert_one_chain(nodes)
    assert [n.thought for n in nodes] == await reference_thoughts(alice)
    calls = await purposes(session)
    # The analysis stored before the cut is not asked for again.
    assert calls.count("trm.improve") == len(nodes) - 1 and calls.count("trm.reason") == len(nodes) + 1
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)


async def test_expand_adds_k_scored_alternative_refinements(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    first = (await rows(session))[1]
    before = len(await rows(session))

    action = await act(services.expand_node, alice.tenant, first.id, "user:tester", 2)
    await runner.drain()
    await action.arefresh_from_db()
    children = [n for n in await rows(session) if str(n.id) in action.after["children"]]
    assert action.state == "applied" and len(children) == 2 and len(await rows(session)) == before + 2
    for child in children:
        assert child.parent_id == first.id and child.eval_score is not None
        assert child.state["iteration"] == 2 and "Alternative" in child.state["alternative"]
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "solved"
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_a_pruned_iteration_leaves_the_chain_and_the_next_continues_from_the_last_live_one(alice):
    session = await start(alice)
    pruned = {}

    async def prune_the_second_iteration(n, contract):
        if n == 5 and not pruned:  # iteration 3 is about to be analysed
            second = next(r for r in await rows(session) if r.depth == 2)
            await act(services.set_pruned, alice.tenant, second.id, "user:tester", pruned=True)
            pruned["node"] = second

    await run_hooked(session, prune_the_second_iteration)
    await session.arefresh_from_db()
    nodes = await rows(session)
    second = pruned["node"]
    under = [n for n in nodes if n.parent_id == second.id]
    first = next(n for n in nodes if n.id == second.parent_id)
    assert session.status == "solved"
    # The iteration already in flight lands (kept, out of the search); nothing grows below it.
    assert len(under) <= 1 and not [n for n in nodes if n.parent_id in {u.id for u in under}]
    replacement = next(n for n in nodes if n.parent_id == first.id and n.id != second.id)
    assert replacement.state["iteration"] == 2 and not replacement.pruned
    final = next(n for n in nodes if n.id == session.final_node_id)
    assert final.id not in {second.id, *(u.id for u in under)} and final.depth >= replacement.depth
    ledger, costs = await ledger_and_node_costs(session)
    assert ledger == pytest.approx(costs)


async def test_an_edited_answer_is_reassessed(alice, runner):
    session = await start(alice)
    await run_session(session.id)
    await session.arefresh_from_db()
    first = (await rows(session))[1]
    # The advisor replaces the first draft by the finished answer: its analysis must now judge it far better.
    await act(services.edit_node, alice.tenant, first.id, "user:tester", session.final_answer)
    await runner.drain()
    edited = await ReasoningNode.objects.aget(pk=first.id)
    action = await OverseerAction.objects.aget(session_id=session.id, action="edit")
    assert action.state == "applied" and not edited.stale
    assert edited.eval_score == edited.state["confidence"] > first.eval_score
    # Judged again (and, being the best answer now, verified with several samples before it is chosen).
    assert edited.state["assessment"]["findings"]
    assert "reassessed" in edited.eval_reason or "mean of 3 analyses" in edited.eval_reason


async def test_each_answer_is_scored_by_its_own_analysis_so_the_answer_returned_was_judged():
    from tests.fakes import FakeStore, ScriptedGateway, context

    one, two = "Rebalance the CHF 3m portfolio in one trade.", "Rebalance the CHF 3m portfolio over three months."
    judged = {"(none yet: this is the first iteration)": 0.1, one: 0.3, two: 0.95}
    drafts = iter([one, two, "Rebalance the CHF 3m portfolio never."])

    def analysis(prompt):
        answer = prompt.split("### LAST STEP\n", 1)[1].split("\n###", 1)[0].strip()
        return f"INSIGHT: read {answer}\nCONFIDENCE: {judged[answer]}"

    gateway, store = (
        ScriptedGateway({"trm.reason": analysis, "trm.improve": lambda p: {"answer": next(drafts)}}),
        FakeStore(),
    )
    outcome = await RecursiveRefinement(context(RecursiveRefinement, gateway, store)).run()
    scores = {n.thought: n.eval_score for n in store.nodes() if n.depth}
    assert scores == {one: 0.3, two: 0.95}  # before: the second draft carried the first one's 0.3
    assert outcome.final_answer == two and outcome.final_node.state["verified"] == 3


# ---- an answer refused by the client's fact checks ---------------------------------------------------------------


async def test_a_refused_answer_is_rewritten_with_its_own_findings_at_each_try():
    """TRM's other lines are its earlier versions, holding the same slip: each try rewrites the last refused answer,
    shown as it was, with that answer's findings, until one passes (FACT_TRIES in all)."""
    from reasoning.facts.case import CaseCheck
    from reasoning.facts.sheet import Fact
    from reasoning.strategies.base import FACT_TRIES
    from tests.fakes import FakeStore, ScriptedGateway, context

    facts = [Fact("portfolio", "amount", 3_200_000, "USD", text="$3.2M")]
    answers = iter(
        [
            "Recommendation: rebalance the portfolio (USD 3.1M) in stages.",  # refused: USD 3.1M is no fact
            "Recommendation: rebalance the portfolio (USD 3.3M) in stages.",  # refused again
            "Recommendation: rebalance the portfolio (USD 3.2M) in stages.",  # passes
        ]
    )
    gateway = ScriptedGateway(
        {
            "trm.reason": {"analysis": "INSIGHT: sound.\nCONFIDENCE: 0.95"},
            "trm.improve": lambda prompt: {"answer": next(answers)},
        }
    )
    store = FakeStore()
    ctx = context(RecursiveRefinement, gateway, store, params={"max_steps": 1})
    ctx.case = CaseCheck(facts)
    strategy = RecursiveRefinement(ctx)
    root = await store.add_root("problem", {})
    [node] = await store.add_children(root, [{"thought": "Recommendation: rebalance the portfolio (USD 3.1M)."}], None)
    outcome = await strategy._true_to_facts(strategy._checked(await strategy._synthesized(node)))

    improves = [prompt for name, _, prompt in gateway.calls if name == "trm.improve"]
    assert len(improves) == 3 <= FACT_TRIES - 1 and outcome.reason == "solved" and "USD 3.2M" in outcome.final_answer
    # The iteration's answer as it stands, refused; then each rewrite, shown as it was, with its own findings.
    assert 'your answer says "USD 3.1M"' in improves[0] and "portfolio (USD 3.1M)." in improves[0]
    assert 'your answer says "USD 3.1M"' in improves[1] and "portfolio (USD 3.1M) in stages" in improves[1]
    assert 'your answer says "USD 3.3M"' in improves[2] and "portfolio (USD 3.3M) in stages" in improves[2]
