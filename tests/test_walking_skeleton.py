"""The issue's end-to-end promise, over the real ASGI app: a session created through the API grows live on a websocket."""

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient

from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "A client aged 62 holds CHF 9m, 70% in a single Swiss bank stock; plan a diversification that limits "
    "tax and market risk over three years."
)


async def test_an_api_session_ends_solved_while_a_websocket_client_watches(alice, runner):
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {alice.key}"}
    response = await client.post(
        "/api/sessions", {"problem_text": PROBLEM, "mode": "tot"}, content_type="application/json", headers=auth
    )
    assert response.status_code == 201
    session_id = response.json()["id"]

    ws = WebsocketCommunicator(
        application, f"/ws/sessions/{session_id}/?token={alice.key}", headers=[(b"origin", b"http://testserver")]
    )
    assert (await ws.connect(timeout=10))[0]
    snapshot = await ws.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    seen = {n["id"] for n in snapshot["nodes"]}
    last_seq, status = snapshot["seq"], snapshot["session"]["status"]
    while status not in {"solved", "failed", "exhausted"}:
        event = await ws.receive_json_from(timeout=10)
        assert event["seq"] == last_seq + 1
        last_seq = event["seq"]
        if event["type"] == "node.created":
            seen.add(event["node"]["id"])
        if event["type"] == "session.updated":
            status = event["session"]["status"]
    await ws.disconnect()

    assert status == "solved" and len(seen) == 22
    tree = (await client.get(f"/api/sessions/{session_id}/tree", headers=auth)).json()
    assert len(tree["nodes"]) == 22 and tree["session"]["final_answer"]
    assert {n["id"] for n in tree["nodes"]} == seen


async def test_a_tiny_budget_ends_exhausted_without_passing_it(alice, runner):
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {alice.key}"}
    response = await client.post(
        "/api/sessions", {"problem_text": PROBLEM, "budget_usd": 0.0001}, content_type="application/json", headers=auth
    )
    await runner.drain()
    session = (await client.get(f"/api/sessions/{response.json()['id']}", headers=auth)).json()
    assert session["status"] == "exhausted"
    assert session["budget_used_usd"] <= 0.0001


def structure_of(mode, tree):
    """What each strategy's own structure looks like in the one tree format the API, socket and page share."""
    nodes = tree["nodes"]
    return {
        "tot": lambda: any(n["pruned_by"] == "strategy" for n in nodes),
        "lats": lambda: nodes[0]["visit_count"] > 0 and any(n["visit_count"] for n in nodes[1:]),
        "reflexion": lambda: any("attempt" in n["state"] for n in nodes),
        "react": lambda: bool(tree["edges"]) and all(e["action"] and e["observation"] for e in tree["edges"]),
        "trm": lambda: any("confidence" in n["state"] and "insights" in n["state"] for n in nodes),
    }[mode]()


@pytest.mark.parametrize("mode", ["tot", "lats", "reflexion", "react", "trm"])
async def test_every_strategy_ends_solved_through_the_api_with_its_own_structure(alice, runner, mode):
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {alice.key}"}
    response = await client.post(
        "/api/sessions", {"problem_text": PROBLEM, "mode": mode}, content_type="application/json", headers=auth
    )
    assert response.status_code == 201, response.content
    await runner.drain()
    tree = (await client.get(f"/api/sessions/{response.json()['id']}/tree", headers=auth)).json()
    assert tree["session"]["status"] == "solved", tree["session"]["error"]
    assert tree["session"]["final_answer"] and tree["session"]["mode"] == mode
    assert structure_of(mode, tree)
