"""Stale marks: an edit's marks are the overseer's, a judgement clears only the marks it saw, and a node left stale at
the end says why."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from tests.runs import HookedGateway, act, rows

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Plan the sequence for realising CHF 1.2m of gains across three tax years for a Zurich couple."
EDITED = "Defer the larger sale to January, after the new tax year begins."


async def start(party, params):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params=params)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def test_an_edit_while_evaluations_are_in_flight_keeps_its_marks_until_they_are_rescored(alice):
    # Calls: 1 proposes under the root, 2-3 score depth 1, 4 proposes under the kept depth-1 node, 5-6 score its two
    # children: the edit lands as they are asked, so both judge the path as it was before it.
    session = await start(alice, {"branching": 2, "depth": 3, "keep": 1})
    edited = {}

    async def edit_the_parent_as_its_children_are_scored(n, contract):
        if n == 5:
            nodes = await rows(session)  # the parent the search went on from: the depth-1 node with children
            parent = next(r for r in nodes if r.depth == 1 and any(c.parent_id == r.id for c in nodes))
            edited["node"] = await act(services.edit_node, alice.tenant, parent.id, "user:tester", EDITED)

    gateway = await sync_to_async(HookedGateway)(session, edit_the_parent_as_its_children_are_scored)
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    nodes = await rows(session)
    children = [n for n in nodes if n.depth == 2]
    assert edited and session.status == "solved" and len(children) == 2
    # The child the search went on from was judged again on the edited path: the in-flight judgement did not clear
    # the edit's mark. The beam's drop is out of the search, left stale, and says why.
    judged = gateway.prompts_for("tot.evaluate")
    kept, dropped = [c for c in children if not c.pruned], [c for c in children if c.pruned]
    assert len(kept) == 1 and any(EDITED in p and f"### LAST STEP\n{kept[0].thought}" in p for p in judged)
    assert not kept[0].stale and dropped[0].stale and "edited by user:tester" in dropped[0].stale_reason
    assert not [n for n in nodes if n.stale and not n.pruned]
    assert all(n.stale_reason for n in nodes if n.stale)


async def test_stale_nodes_a_finished_session_leaves_say_why(alice, runner, client):
    session = await start(alice, {"branching": 2, "depth": 3, "keep": 1})
    await run_session(session.id)
    final = await ReasoningNode.objects.aget(pk=(await ReasoningSession.objects.aget(pk=session.id)).final_node_id)
    target = await ReasoningNode.objects.aget(pk=final.parent_id)

    await act(services.edit_node, alice.tenant, target.id, "user:tester", EDITED)
    await runner.drain()
    edited, final = await ReasoningNode.objects.aget(pk=target.id), await ReasoningNode.objects.aget(pk=final.id)
    assert not edited.stale and edited.stale_reason == ""  # rescored: its mark is cleared with its reason
    assert (
        final.stale
        and final.stale_reason == f"step {target.depth} above it was edited by user:tester after it was scored"
    )
    tree = await sync_to_async(client.get)(f"/api/sessions/{session.id}/tree", **alice.auth)
    payload = {n["id"]: n for n in tree.json()["nodes"]}
    assert payload[str(final.id)]["stale"] and payload[str(final.id)]["stale_reason"] == final.stale_reason
    assert payload[str(edited.id)]["stale_reason"] is None
