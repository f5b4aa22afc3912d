"""The live tree socket, over the real ASGI app and channel layer: snapshot first, then events in seq order."""

import json
import os

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from reasoning import services
from reasoning.models import ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://testserver")]
IDLE_S = 15 if os.environ.get("REDIS_URL") else 1  # the Redis layer dropped idle sockets after about 5 s


async def new_session(party, submit=False, **fields):
    data = SessionIn(problem_text="Plan a CHF 4m wealth transfer to two heirs in Vaud.", mode="tot", **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=submit)


def connect(session_id, token=None, headers=ORIGIN):
    path = f"/ws/sessions/{session_id}/" + (f"?token={token}" if token else "")
    return WebsocketCommunicator(application, path, headers=headers)


async def refused_or_not(ws):
    """Connect, then always disconnect: a consumer that closed a refused socket still runs until the client goes,
    and on the Redis layer a consumer left running when the test's loop closes never finishes cancelling."""
    connected, _ = await ws.connect()
    await ws.disconnect()
    return connected


async def receive_until_finished(ws, limit=500):
    messages = []
    for _ in range(limit):
        message = await ws.receive_json_from(timeout=10)
        messages.append(message)
        if message["type"] == "session.updated" and message["session"]["status"] in {"solved", "failed", "exhausted"}:
            return messages
    raise AssertionError("the session did not finish")


async def test_it_sends_the_snapshot_then_node_events_in_seq_order(alice, runner):
    session = await new_session(alice)
    ws = connect(session.id, token=alice.key)
    connected, _ = await ws.connect()
    assert connected
    snapshot = await ws.receive_json_from()
    assert snapshot["type"] == "snapshot" and snapshot["nodes"] == [] and snapshot["session"]["status"] == "queued"
    await sync_to_async(services.submit_to_runner)(session.id)
    messages = await receive_until_finished(ws)
    seqs = [m["seq"] for m in messages]
    assert seqs == list(range(snapshot["seq"] + 1, snapshot["seq"] + 1 + len(messages)))
    created = [m["node"] for m in messages if m["type"] == "node.created"]
    assert len(created) == 22 and created[0]["depth"] == 0
    assert {"node.created", "node.updated", "session.updated"} <= {m["type"] for m in messages}
    assert messages[-1]["session"]["final_answer"]
    await ws.disconnect()


async def test_a_late_client_gets_the_whole_tree_in_its_snapshot(alice, runner):
    session = await new_session(alice, submit=True)
    await runner.drain()
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    snapshot = await ws.receive_json_from()
    assert len(snapshot["nodes"]) == 22 and snapshot["session"]["status"] == "solved"
    assert snapshot["seq"] == (await ReasoningSession.objects.aget(pk=session.id)).seq
    assert await ws.receive_nothing()
    await ws.disconnect()


async def test_the_browser_session_authorises(alice, client):
    session = await new_session(alice)
    await sync_to_async(client.force_login)(alice.user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = connect(session.id, headers=[*ORIGIN, (b"cookie", cookie)])
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


@pytest.mark.parametrize("who", ["nobody", "bad-token", "other-tenant"])
async def test_it_refuses_strangers(alice, bob, who):
    session = await new_session(alice)
    token = {"nobody": None, "bad-token": "rk_nope", "other-tenant": bob.key}[who]
    connected = await refused_or_not(connect(session.id, token=token))
    assert not connected


async def test_it_refuses_a_foreign_origin(alice):
    session = await new_session(alice)
    ws = connect(session.id, token=alice.key, headers=[(b"origin", b"http://evil.example")])
    assert not await refused_or_not(ws)


@pytest.mark.parametrize(
    "message, detail",
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "'action' must be one of"),
        (json.dumps({"action": "explode"}), "'action' must be one of"),
        (json.dumps({"action": "prune"}), "needs a node_id"),
        (json.dumps({"action": "prune", "node_id": "nope"}), "no such node"),
        (json.dumps({"action": "expand", "node_id": "x"}), "no such node"),
        (json.dumps({"action": "expand", "node_id": "x", "k": 99}), "k: Input should be less than or equal to 8"),
        (json.dumps({"action": "edit", "node_id": "x", "thought": "  "}), "thought: write the new thought"),
        (json.dumps({"action": "edit", "node_id": "x", "color": "red", "thought": "a"}), "color: Extra inputs"),
        (json.dumps({"action": "resume"}), "cannot be resumed"),
    ],
)
async def test_bad_messages_get_an_error_and_the_socket_stays_open(alice, message, detail):
    session = await new_session(alice)
    ws = connect(session.id, token=alice.key)
    await ws.connect()
    await ws.receive_json_from()
    await ws.send_to(text_data=message)
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and detail in reply["detail"]
    await ws.send_json_to({"action": "snapshot"})
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


async def test_cancel_and_prune_from_the_socket_are_applied_and_published(alice):
    session = await new_session(alice)
    ws = connect(session.id, token=alice.key)
    await ws.connect()
    await ws.receive_json_from()
    await ws.send_json_to({"action": "cancel"})
    update, audit = await ws.receive_json_from(), await ws.receive_json_from()
    assert update["type"] == "session.updated" and update["session"]["status"] == "cancelled"
    assert audit["type"] == "action.created" and audit["action"]["action"] == "cancel"
    assert audit["action"]["actor"] == f"key:{alice.key[:10]}" and audit["seq"] == update["seq"] + 1
    await ws.send_json_to({"action": "cancel"})
    assert "cannot be cancelled" in (await ws.receive_json_from())["detail"]
    await ws.disconnect()


async def test_a_345_node_burst_reaches_a_watcher_with_no_gap_in_seq(alice, runner):
    session = await new_session(alice, params={"branching": 8, "depth": 8, "keep": 6}, budget_usd=5.0)
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    snapshot = await ws.receive_json_from()
    await sync_to_async(services.submit_to_runner)(session.id)
    messages = await receive_until_finished(ws, limit=5000)
    seqs = [m["seq"] for m in messages]
    assert seqs == list(range(snapshot["seq"] + 1, snapshot["seq"] + 1 + len(messages)))
    assert len([m for m in messages if m["type"] == "node.created"]) == 345
    await ws.disconnect()


async def test_a_viewer_watches_but_its_actions_are_refused(alice):
    from reasoning.models import Membership, Role

    session = await new_session(alice)
    await Membership.objects.filter(user=alice.user).aupdate(role=Role.VIEWER)
    from django.test import Client

    client = Client()
    await sync_to_async(client.force_login)(alice.user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = connect(session.id, headers=[*ORIGIN, (b"cookie", cookie)])
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.send_json_to({"action": "cancel"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and "not act" in reply["detail"]
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    await ws.disconnect()


async def test_a_token_client_with_no_origin_header_is_let_in_on_its_key(alice):
    session = await new_session(alice)
    ws = connect(session.id, token=alice.key, headers=[])
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


async def test_a_client_with_no_origin_cannot_ride_on_a_browser_cookie(alice, client):
    session = await new_session(alice)
    await sync_to_async(client.force_login)(alice.user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = connect(session.id, headers=[(b"cookie", cookie)])  # no Origin, no token
    assert not await refused_or_not(ws)


async def test_an_idle_socket_stays_open_and_still_gets_events(alice, settings):
    """On the Redis layer, a watcher of a session that no worker has started yet waits quietly, then gets its events."""
    import asyncio

    session = await new_session(alice)
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    await ws.receive_json_from()
    await asyncio.sleep(IDLE_S)
    assert await ws.receive_nothing(timeout=0.1)  # no close (1011), no error
    await sync_to_async(services.pause_session)(alice.tenant, session.id, "user:tester")
    update = await ws.receive_json_from(timeout=5)
    assert update["type"] == "session.updated" and update["session"]["status"] == "paused"
    await ws.disconnect()


async def test_a_key_opening_a_socket_is_marked_used(alice):
    from reasoning.models import ApiKey

    session = await new_session(alice)
    assert (await ApiKey.objects.aget(tenant=alice.tenant)).last_used_at is None
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    await ws.receive_json_from()
    assert (await ApiKey.objects.aget(tenant=alice.tenant)).last_used_at is not None
    await ws.disconnect()


# ---- rights checked at each action (issue 14, item 7) ---------------------------------------


async def browser_socket(party, session, client):
    await sync_to_async(client.force_login)(party.user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = connect(session.id, headers=[*ORIGIN, (b"cookie", cookie)])
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    return ws


async def test_a_key_revoked_while_its_socket_is_open_can_no_longer_act(alice):
    from django.utils import timezone

    from reasoning.models import ApiKey

    session = await new_session(alice)
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    await ws.receive_json_from()
    await ApiKey.objects.filter(tenant=alice.tenant).aupdate(revoked_at=timezone.now())
    await ws.send_json_to({"action": "cancel"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and "no longer valid" in reply["detail"]
    assert (await ws.receive_output())["code"] == 4401
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    await ws.disconnect()


async def test_a_member_demoted_to_viewer_while_watching_can_no_longer_act(alice, client):
    from reasoning.models import Membership, Role

    session = await new_session(alice)
    ws = await browser_socket(alice, session, client)
    await Membership.objects.filter(user=alice.user).aupdate(role=Role.VIEWER)
    await ws.send_json_to({"action": "pause"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and "not act" in reply["detail"]
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    await ws.send_json_to({"action": "snapshot"})  # a viewer still watches
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


async def test_a_user_logged_out_or_deactivated_while_watching_is_closed_at_the_next_action(alice, client):
    session = await new_session(alice)
    ws = await browser_socket(alice, session, client)
    await sync_to_async(client.logout)()
    await ws.send_json_to({"action": "cancel"})
    assert "no longer valid" in (await ws.receive_json_from())["detail"]
    assert (await ws.receive_output())["code"] == 4401
    await ws.disconnect()
    ws = await browser_socket(alice, session, client)
    alice.user.is_active = False
    await alice.user.asave()
    await ws.send_json_to({"action": "cancel"})
    assert "no longer valid" in (await ws.receive_json_from())["detail"]
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    await ws.disconnect()


# ---- floods and malformed messages (issue 14, items 8 and 9) ---------------------------------


async def open_socket(party, session):
    ws = connect(session.id, token=party.key)
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    return ws


async def test_a_snapshot_flood_closes_the_socket_with_4429(alice, settings):
    settings.REASONING = {**settings.REASONING, "SOCKET_SNAPSHOT_RATE": (3, 60)}
    session = await new_session(alice)
    ws = await open_socket(alice, session)
    for _ in range(3):
        await ws.send_json_to({"action": "snapshot"})
        assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.send_json_to({"action": "snapshot"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and "too many snapshots" in reply["detail"]
    assert (await ws.receive_output())["code"] == 4429
    await ws.disconnect()


async def test_an_action_flood_closes_the_socket_before_it_writes_the_audit_log_full(alice, settings):
    from reasoning.models import OverseerAction

    settings.REASONING = {**settings.REASONING, "SOCKET_RATE": (5, 60)}
    session = await new_session(alice)
    ws = await open_socket(alice, session)
    for _ in range(5):
        await ws.send_json_to({"action": "resume"})  # refused (queued): each still counts
        assert (await ws.receive_json_from())["type"] == "error"
    await ws.send_json_to({"action": "cancel"})
    assert "too many messages" in (await ws.receive_json_from())["detail"]
    assert (await ws.receive_output())["code"] == 4429
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    assert await OverseerAction.objects.filter(session_id=session.id).acount() == 0
    await ws.disconnect()


@pytest.mark.parametrize(
    "message",
    [
        json.dumps({"action": ["pause"]}),
        json.dumps({"action": {"a": 1}}),
        json.dumps({"action": None}),
        json.dumps({"action": 3}),
        '{"action": "snapshot", "x": ' + "[" * 20_000 + "]" * 20_000 + "}",
        "[" * 5_000 + "]" * 5_000,
        '{"action": "prune", "node_id": ' + "[" * 20 + "]" * 20 + "}",
    ],
    ids=["list", "object", "null", "number", "deep-20k", "deep-array", "deep-node-id"],
)
async def test_a_malformed_message_gets_an_error_and_the_socket_stays_open(alice, message):
    session = await new_session(alice)
    ws = await open_socket(alice, session)
    await ws.send_to(text_data=message)
    reply = await ws.receive_json_from()
    assert reply["type"] == "error"
    await ws.send_json_to({"action": "snapshot"})
    assert (await ws.receive_json_from())["type"] == "snapshot"
    await ws.disconnect()


async def test_a_watcher_whose_key_is_revoked_stops_receiving_events(alice, monkeypatch):
    from django.utils import timezone

    from explorer import consumers
    from reasoning.models import ApiKey

    monkeypatch.setattr(consumers, "RIGHTS_RECHECK_S", 0)  # checked at every event, not every 30 s
    session = await new_session(alice)
    ws = await open_socket(alice, session)
    await ApiKey.objects.filter(tenant=alice.tenant).aupdate(revoked_at=timezone.now())
    await sync_to_async(services.pause_session)(alice.tenant, session.id, "user:tester")
    reply = await ws.receive_json_from(timeout=5)
    assert reply["type"] == "error" and "no longer valid" in reply["detail"]
    assert (await ws.receive_output(timeout=5))["code"] == 4401
    await ws.disconnect()


# ---- keys with scopes (issue 25) ---------------------------------------------------------------------------


async def key_socket(session, plaintext):
    ws = connect(session.id, token=plaintext, headers=[])
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from())["type"] == "snapshot"
    return ws


@pytest.mark.parametrize("action", ["cancel", "pause", "prune", "expand", "edit", "promote"])
async def test_a_read_key_watches_but_cannot_steer_by_socket(alice, action):
    from reasoning.models import ApiKey, OverseerAction, Scope

    session = await new_session(alice)
    _, plaintext = await sync_to_async(ApiKey.issue)(alice.tenant, scopes=[Scope.READ])
    ws = await key_socket(session, plaintext)
    await ws.send_json_to({"action": action, "node_id": "00000000-0000-0000-0000-000000000000", "thought": "x"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and reply["scope"] == "oversee" and "'oversee' scope" in reply["detail"]
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    assert not await OverseerAction.objects.filter(session_id=session.id).aexists()
    await ws.disconnect()


async def test_a_members_key_demoted_while_its_socket_is_open_can_no_longer_act(alice):
    from reasoning.models import ApiKey, Membership, Role, Scope

    session = await new_session(alice)
    _, plaintext = await sync_to_async(ApiKey.issue)(
        alice.tenant, scopes=[Scope.READ, Scope.OVERSEE], user=alice.user
    )
    ws = await key_socket(session, plaintext)
    await Membership.objects.filter(user=alice.user).aupdate(role=Role.VIEWER)
    await ws.send_json_to({"action": "pause"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and reply["scope"] == "oversee"
    assert (await ReasoningSession.objects.aget(pk=session.id)).status == "queued"
    await Membership.objects.filter(user=alice.user).adelete()  # removed from the tenant: the key is gone with them
    await ws.send_json_to({"action": "pause"})
    assert "no longer valid" in (await ws.receive_json_from())["detail"]
    assert (await ws.receive_output())["code"] == 4401
    await ws.disconnect()


async def test_a_key_without_read_cannot_open_a_socket(alice):
    from reasoning.models import ApiKey, Scope

    session = await new_session(alice)
    _, plaintext = await sync_to_async(ApiKey.issue)(alice.tenant, scopes=[Scope.RUN])
    assert not await refused_or_not(connect(session.id, token=plaintext, headers=[]))
