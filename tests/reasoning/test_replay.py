"""A session replayed from its ledger (issue 34, part 2): every mode on the offline model comes out the same node for
node, with and without an advisor's actions; a reply altered by hand diverges at the node it produced; and a replay
adds no ledger row and charges nothing."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm.gateway import SAMPLE_BREAK
from reasoning.models import LLMCall, OverseerAction, ReasoningNode, ReasoningSession
from reasoning.replay import replay
from reasoning.schemas import SessionIn
from tests.runs import act, cut_at_call, pause_at_call, rows, take_over_and_run

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "Rebalance a CHF 3m portfolio for a Zurich client drifted to 70% equities against a 60/40 target, "
    "without realising more than CHF 50k of gains this year."
)
# Small searches of every mode: a replay is only as quick as the strategy's own work.
MODES = {
    "tot": {"branching": 2, "depth": 2, "keep": 2},
    "lats": {"iterations": 3, "children": 2, "max_depth": 3},
    "reflexion": {"max_attempts": 2, "steps": 2, "threshold": 0.99},
    "react": {"max_steps": 3},
    "trm": {"max_steps": 3},
    "auto": {},
}


async def solved(party, mode, params, kind="allocation-rebalance"):
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=params, problem_kind=kind)
    session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
    await run_session(session.id)
    await session.arefresh_from_db()
    return session


async def again(session, runner):
    """The turns an advisor's command reopened the session for, as the runner gives them."""
    await runner.drain()
    await session.arefresh_from_db()


@pytest.mark.parametrize("mode", MODES)
async def test_every_mode_replays_the_same_tree(alice, mode):
    session = await solved(alice, mode, MODES[mode])
    calls = await LLMCall.objects.filter(session=session).acount()
    report = await replay(session)
    assert report["first_divergence"] is None, json.dumps(report, indent=1)[:3000]
    assert report["identical"] is True
    assert report["nodes"] == await ReasoningNode.objects.filter(session=session).acount() > 1
    assert await LLMCall.objects.filter(session=session).acount() == calls


@pytest.mark.parametrize("mode", ["tot", "lats"])
async def test_a_session_taken_over_after_its_run_was_lost_replays_the_same_tree(alice, mode):
    # A server killed mid-run: its turn's ledger ends where the run did, and the next turn took the session over
    # from the tree as it stood. The replay stops the lost turn at the first call its ledger lacks, as the kill did
    # (before, the lost turn asked on, 6 calls missing, and a LATS session of 61 nodes diverged at its root).
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=MODES[mode], problem_kind="allocation-rebalance")
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    await cut_at_call(session, 4)
    await take_over_and_run(session)
    assert session.turns == 2 and session.status == "solved"
    report = await replay(session)
    assert report["identical"] is True, json.dumps(report, indent=1)[:3000]
    assert report["calls_missing"] == 0 and report["calls_unused"] == 0


async def test_a_reply_altered_by_hand_diverges_at_the_node_it_produced(alice):
    session = await solved(alice, "tot", MODES["tot"])
    judged = [r for r in await rows(session) if r.depth == 2 and r.eval_score is not None][0]
    call = await LLMCall.objects.filter(node=judged, purpose="tot.evaluate", outcome="ok").afirst()
    altered = 0.01 if judged.eval_score > 0.5 else 0.99
    samples = [{**json.loads(text), "score": altered} for text in call.reply.split(SAMPLE_BREAK)]
    await LLMCall.objects.filter(pk=call.pk).aupdate(reply=SAMPLE_BREAK.join(json.dumps(s) for s in samples))
    report = await replay(session)
    assert report["identical"] is False
    first = report["first_divergence"]
    assert first["node"] == str(judged.id), json.dumps(report, indent=1)
    assert first["recorded"]["eval_score"] == pytest.approx(judged.eval_score)
    assert first["replayed"]["eval_score"] != first["recorded"]["eval_score"]
    assert first["recorded"]["thought"] == first["replayed"]["thought"] == judged.thought


async def acted(party, session, runner):
    """An advisor prunes the answer's node (the answer is written again from another line) and asks for more steps
    under its parent: two more turns, as the runner gives them."""
    final = await ReasoningNode.objects.aget(pk=session.final_node_id)
    await act(services.set_pruned, party.tenant, final.id, "user:tester", True)
    await again(session, runner)
    await act(services.expand_node, party.tenant, final.parent_id, "user:tester", 2)
    await again(session, runner)


@pytest.mark.parametrize("mode", MODES)
async def test_every_mode_replays_the_same_tree_after_a_prune_and_a_re_expand(alice, runner, mode):
    session = await solved(alice, mode, MODES[mode])
    await acted(alice, session, runner)
    actions = [a async for a in OverseerAction.objects.filter(session=session).order_by("id")]
    assert [(a.action, a.state, a.turn, a.step) for a in actions] == [
        ("prune", "applied", 2, 0),
        ("resynthesize", "applied", 2, 1),
        ("expand", "applied", 3, 1),
    ]
    assert session.turns == 3
    report = await replay(session)
    assert report["first_divergence"] is None, json.dumps(report, indent=1)[:3000]
    assert report["nodes"] == await ReasoningNode.objects.filter(session=session).acount()


@pytest.mark.parametrize("mode", ["tot", "lats"])
async def test_a_pause_mid_step_a_prune_while_paused_and_the_resume_replay_the_same_tree(alice, runner, mode):
    session = await solved_later(alice, mode)
    gateway, nodes = await pause_at_call(alice, session, 4)  # during the search's second step
    assert session.status == "paused" and gateway.after_stop == 0
    pruned = next(n for n in nodes if n.depth == 1)
    await act(services.set_pruned, alice.tenant, pruned.id, "user:tester", True)
    await act(services.resume_session, alice.tenant, session.id, "user:tester")
    await again(session, runner)
    marks = {a.action: (a.turn, a.step) async for a in OverseerAction.objects.filter(session=session)}
    assert marks["pause"][0] == 1 and marks["prune"] == marks["resume"] == (2, 0)
    report = await replay(session)
    assert report["first_divergence"] is None, json.dumps(report, indent=1)[:3000]
    assert report["nodes"] == await ReasoningNode.objects.filter(session=session).acount()
    assert report["calls_unused"] == report["calls_missing"] == 0


async def solved_later(party, mode):
    """A session created, not run: the test runs it."""
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=MODES[mode], problem_kind="allocation-rebalance")
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)
