"""The socket's snapshot in parts (explorer/snapshot.py): the same tree as the API, cut into messages under 1 MB,
and the page that embeds only a small tree."""

import json
import re
import uuid
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.urls import reverse
from django.utils import timezone

from config.asgi import application
from explorer import views
from explorer.snapshot import PART_BYTES, snapshot_parts
from reasoning import selectors
from reasoning.models import OverseerAction, ReasoningCritique, ReasoningEdge, ReasoningNode, ReasoningSession

DAPHNE_DEFAULT_MAX = 1024 * 1024  # Daphne's websocket message limit: `make run` no longer raises it


def big_tree(party, nodes, thought_chars=900):
    """A stored tree of `nodes` rows (three children each, level by level), long thoughts, an edge, a critique and
    an audit row: over 1 MB of JSON once it has more than about a thousand nodes."""
    session = ReasoningSession.objects.create(
        tenant=party.tenant, problem_text="Plan a CHF 9m estate.", mode="tot", model_primary="offline/sim"
    )
    clock = timezone.now() - timedelta(hours=1)
    root = ReasoningNode.objects.create(
        tenant=party.tenant, session=session, depth=0, thought=session.problem_text, created_at=clock
    )
    rows, level = [root], [root]
    while len(rows) < nodes:
        children = []
        for parent in level:
            for i in range(3):
                if len(rows) + len(children) >= nodes:
                    break
                clock += timedelta(milliseconds=3)
                text = f"Step {parent.depth + 1}.{len(children)} <b>&</b> \u00e9 " + "x" * thought_chars
                children.append(
                    ReasoningNode(
                        id=uuid.uuid4(),
                        tenant=party.tenant,
                        session=session,
                        parent=parent,
                        depth=parent.depth + 1,
                        thought=text,
                        eval_score=(i + 1) / 4,
                        pruned=i == 2,
                        pruned_by="strategy" if i == 2 else "",
                        created_at=clock,
                    )
                )
        ReasoningNode.objects.bulk_create(children, batch_size=500)
        rows += children
        level = [c for c in children if not c.pruned]
    ReasoningEdge.objects.create(
        tenant=party.tenant, session=session, from_node=root, to_node=rows[1], action="calculate(1+1)", observation="2"
    )
    ReasoningCritique.objects.create(
        tenant=party.tenant, session=session, node=rows[1], attempt_num=1, outcome_score=0.4, critique="Too vague."
    )
    OverseerAction.objects.create(tenant=party.tenant, session=session, action="prune", actor="user:x", node=rows[2])
    session.root_node = root
    session.seq = 41
    session.save()
    return session


def parts_of(party, session, part_bytes=PART_BYTES):
    texts = []
    seq = snapshot_parts(party.tenant, session.id, texts.append, part_bytes=part_bytes)
    return seq, texts, [json.loads(t) for t in texts]


def joined(parts):
    whole = {k: v for k, v in parts[0].items() if k not in ("type", "last", "node_count")}
    for kind in ("nodes", "edges", "critiques", "actions"):
        whole[kind] = [row for part in parts for row in part[kind]]
    return whole


@pytest.mark.django_db
def test_the_parts_together_are_the_apis_tree_and_each_stays_under_its_size(alice):
    session = big_tree(alice, 60)
    seq, texts, parts = parts_of(alice, session, part_bytes=8 * 1024)
    assert seq == 41 and len(parts) > 4
    assert joined(parts) == selectors.tree_snapshot(alice.tenant, session.id)
    assert parts[0]["type"] == "snapshot" and parts[0]["node_count"] == 60 and parts[0]["seq"] == 41
    assert all(p["type"] == "snapshot.part" and p["seq"] == 41 and "session" not in p for p in parts[1:])
    assert [p["last"] for p in parts] == [False] * (len(parts) - 1) + [True]
    assert all(len(t) <= 8 * 1024 for t in texts)  # each row here is far smaller than a part
    assert all(t.isascii() for t in texts)  # what send_json would send: the byte count is the length


@pytest.mark.django_db
def test_a_small_tree_is_one_snapshot_message_as_before(alice):
    session = big_tree(alice, 12, thought_chars=20)
    _, _, parts = parts_of(alice, session)
    assert len(parts) == 1 and parts[0]["type"] == "snapshot" and parts[0]["last"] is True
    assert joined(parts) == selectors.tree_snapshot(alice.tenant, session.id)


@pytest.mark.django_db
def test_another_tenants_session_has_no_snapshot(alice, bob):
    session = big_tree(alice, 5)
    with pytest.raises(ReasoningSession.DoesNotExist):
        snapshot_parts(bob.tenant, session.id, lambda text: None)


@pytest.mark.django_db(transaction=True)
async def test_a_tree_over_1_mb_reaches_a_socket_in_parts_under_daphnes_default_limit(alice):
    session = await sync_to_async(big_tree)(alice, 1500)
    expected = await sync_to_async(selectors.tree_snapshot)(alice.tenant, session.id)
    assert len(json.dumps(expected)) > 1.2 * DAPHNE_DEFAULT_MAX  # one message would have been refused
    ws = WebsocketCommunicator(application, f"/ws/sessions/{session.id}/?token={alice.key}")
    assert (await ws.connect())[0]
    texts = [await ws.receive_from(timeout=10)]
    while json.loads(texts[-1])["last"] is False:
        texts.append(await ws.receive_from(timeout=10))
    parts = [json.loads(t) for t in texts]
    assert len(parts) >= 5
    assert max(len(t.encode()) for t in texts) <= PART_BYTES < DAPHNE_DEFAULT_MAX
    assert joined(parts) == expected
    assert await ws.receive_nothing()
    await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_events_after_a_parted_snapshot_follow_its_seq(alice):
    from reasoning import services

    session = await sync_to_async(big_tree)(alice, 400)
    ws = WebsocketCommunicator(application, f"/ws/sessions/{session.id}/?token={alice.key}")
    assert (await ws.connect())[0]
    parts = [await ws.receive_json_from(timeout=10)]
    while parts[-1]["last"] is False:
        parts.append(await ws.receive_json_from(timeout=10))
    node = await ReasoningNode.objects.filter(session=session, depth=1).afirst()
    await sync_to_async(services.set_pruned)(alice.tenant, node.id, "user:test", pruned=True)
    event = await ws.receive_json_from(timeout=10)
    assert event["seq"] == parts[0]["seq"] + 1
    await ws.disconnect()


@pytest.mark.django_db
def test_the_page_embeds_a_small_tree_whole_and_of_a_large_one_only_its_session(alice, client):
    client.force_login(alice.user)
    small = big_tree(alice, 30, thought_chars=10)
    large = big_tree(alice, views.EMBED_MAX_NODES + 1, thought_chars=10)

    def embedded(session):
        html = client.get(reverse("explorer:session_detail", kwargs={"session_id": session.id})).content.decode()
        return json.loads(
            re.search(r'<script id="tree-data" type="application/json">(.*?)</script>', html, re.DOTALL)[1]
        )

    assert embedded(small) == selectors.tree(small)
    page = embedded(large)
    assert page["session"] == large.to_dict(with_forks=True)
    assert page["node_count"] == views.EMBED_MAX_NODES + 1
    assert page["nodes"] == [] and page["edges"] == [] and page["critiques"] == []
    assert page["actions"] == selectors.tree(large)["actions"]  # the audit trail shows at once


@pytest.mark.django_db(transaction=True)
async def test_a_snapshot_asked_for_again_comes_in_parts_again(alice):
    """What the page does on a gap in seq: the same socket answers with a whole parted snapshot."""
    session = await sync_to_async(big_tree)(alice, 900)
    ws = WebsocketCommunicator(application, f"/ws/sessions/{session.id}/?token={alice.key}")
    assert (await ws.connect())[0]

    async def whole():
        parts = [await ws.receive_json_from(timeout=10)]
        while parts[-1]["last"] is False:
            parts.append(await ws.receive_json_from(timeout=10))
        return parts

    first = await whole()
    await ws.send_json_to({"action": "snapshot"})
    again = await whole()
    assert len(again) == len(first) > 1 and again[0]["type"] == "snapshot"
    assert joined(again) == joined(first)
    await ws.disconnect()
