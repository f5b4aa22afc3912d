"""GET /api/sessions/{id}/tree: cheap to read again (ETag, 304), a fixed number of queries whatever the tree's size."""

import json
import os
import subprocess
import sys

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from ninja.responses import NinjaJSONEncoder

from reasoning import events, selectors, services
from reasoning.models import ApiKey, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn, TreeOut


def grown_session(party, nodes):
    """A session with a root and `nodes - 1` children, each written with its event (the seq moves)."""
    data = SessionIn(problem_text="Should the family sell the CHF 5m stake?", mode="tot")
    session = services.create_session(party.tenant, data, triggered_by="tests", submit=False)
    with transaction.atomic():
        root = ReasoningNode.objects.create(tenant=party.tenant, session=session, depth=0, thought="root")
        rows = [
            ReasoningNode.objects.create(tenant=party.tenant, session=session, parent=root, depth=1, thought=f"t{i}")
            for i in range(nodes - 1)
        ]
        events.publish(session.id, [events.node_event("node.created", row) for row in [root, *rows]])
    return session


def tree_url(session):
    return f"/api/sessions/{session.id}/tree"


def test_it_answers_304_to_the_etag_it_gave(client, alice):
    session = grown_session(alice, 3)
    first = client.get(tree_url(session), **alice.auth)
    assert first.status_code == 200 and len(first.json()["nodes"]) == 3
    etag = first.headers["ETag"]
    again = client.get(tree_url(session), HTTP_IF_NONE_MATCH=etag, **alice.auth)
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag


def test_a_new_event_changes_the_etag(client, alice):
    session = grown_session(alice, 3)
    etag = client.get(tree_url(session), **alice.auth).headers["ETag"]
    with transaction.atomic():
        node = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=1, thought="late")
        events.publish(session.id, [events.node_event("node.created", node)])
    fresh = client.get(tree_url(session), HTTP_IF_NONE_MATCH=etag, **alice.auth)
    assert fresh.status_code == 200 and len(fresh.json()["nodes"]) == 4
    assert fresh.headers["ETag"] != etag


def test_a_change_to_the_session_row_without_an_event_changes_the_etag(client, alice):
    """Some writes (the budget's settlement, a fork) move no seq; the reader must still see them."""
    session = grown_session(alice, 2)
    etag = client.get(tree_url(session), **alice.auth).headers["ETag"]
    ReasoningSession.objects.filter(pk=session.pk).update(budget_used_usd=0.125)
    fresh = client.get(tree_url(session), HTTP_IF_NONE_MATCH=etag, **alice.auth)
    assert fresh.status_code == 200 and fresh.json()["session"]["budget_used_usd"] == 0.125


def test_another_tenant_gets_404_whatever_etag_it_sends(client, alice, bob):
    session = grown_session(alice, 2)
    etag = client.get(tree_url(session), **alice.auth).headers["ETag"]
    assert client.get(tree_url(session), HTTP_IF_NONE_MATCH=etag, **bob.auth).status_code == 404


def test_the_tree_is_read_in_the_same_queries_whatever_its_size(client, alice):
    small, large = grown_session(alice, 2), grown_session(alice, 40)
    client.get("/api/sessions", **alice.auth)  # the key's use is stamped once; later reads do not write it again
    counts = []
    for session in (small, large):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(tree_url(session), **alice.auth).status_code == 200
        counts.append(len(queries))
        node_reads = [q for q in queries if 'FROM "reasoning_reasoningnode"' in q["sql"]]
        assert len(node_reads) == 1  # every node in one query
    assert counts[0] == counts[1]


def test_a_304_does_not_read_the_nodes(client, alice):
    session = grown_session(alice, 5)
    etag = client.get(tree_url(session), **alice.auth).headers["ETag"]
    with CaptureQueriesContext(connection) as queries:
        assert client.get(tree_url(session), HTTP_IF_NONE_MATCH=etag, **alice.auth).status_code == 304
    assert not [q for q in queries if "reasoning_reasoningnode" in q["sql"]]
    assert not [q for q in queries if q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT"))]


def test_readers_of_one_version_share_its_rendering(client, alice):
    """200 readers of a live tree: the first read of a version reads its rows, the others only check the version."""
    session = grown_session(alice, 5)
    first = client.get(tree_url(session), **alice.auth)
    with CaptureQueriesContext(connection) as queries:
        second = client.get(tree_url(session), **alice.auth)  # no If-None-Match: a reader that just arrived
    assert second.status_code == 200 and second.content == first.content
    assert second.headers["ETag"] == first.headers["ETag"]
    assert not [q for q in queries if "reasoning_reasoningnode" in q["sql"]]


def test_the_body_is_the_documented_schema(client, alice):
    session = grown_session(alice, 3)
    body = client.get(tree_url(session), **alice.auth).json()
    session.refresh_from_db()
    expected = TreeOut.model_validate(selectors.tree(session)).model_dump()
    assert body == json.loads(json.dumps(expected, cls=NinjaJSONEncoder))
    assert set(body) == {"session", "nodes", "edges", "critiques", "actions"}


def test_reading_with_a_key_writes_its_last_use_once_a_minute(client, alice):
    """A write per read serialised 200 readers behind one row lock; the stamp is kept, a minute coarse."""
    session = grown_session(alice, 2)
    client.get(tree_url(session), **alice.auth)
    stamped = ApiKey.objects.get(tenant=alice.tenant).last_used_at
    assert stamped is not None
    with CaptureQueriesContext(connection) as queries:
        client.get(tree_url(session), **alice.auth)
    assert not [q for q in queries if "reasoning_apikey" in q["sql"] and "UPDATE" in q["sql"].upper()]
    assert ApiKey.objects.get(tenant=alice.tenant).last_used_at == stamped


def test_a_revoked_key_is_refused_at_once(client, alice):
    session = grown_session(alice, 2)
    assert client.get(tree_url(session), **alice.auth).status_code == 200
    ApiKey.objects.filter(tenant=alice.tenant).update(revoked_at="2026-01-01T00:00:00Z")
    assert client.get(tree_url(session), **alice.auth).status_code == 401


def settings_in_a_fresh_process(**env):
    code = (
        "import json; from django.conf import settings; print(json.dumps(settings.DATABASES['default'], default=str))"
    )
    out = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("url", ["postgres://u:p@db.example:5432/app", "postgresql://u:p@db.example/app"])
def test_postgresql_connections_come_from_a_bounded_pool(url):
    db = settings_in_a_fresh_process(DATABASE_URL=url, DB_POOL_MAX_SIZE="12", DB_CONN_MAX_AGE="60")
    pool = db["OPTIONS"]["pool"]
    assert pool["max_size"] == 12 and 1 <= pool["min_size"] <= 12 and pool["timeout"] > 0
    assert db["CONN_MAX_AGE"] == 0  # Django's pool hands connections back at the end of each request


def test_the_pool_has_a_default_bound_and_can_be_turned_off():
    assert settings_in_a_fresh_process(DATABASE_URL="postgres://u:p@db/app")["OPTIONS"]["pool"]["max_size"] >= 1
    off = settings_in_a_fresh_process(DATABASE_URL="postgres://u:p@db/app", DB_POOL_MAX_SIZE="0", DB_CONN_MAX_AGE="60")
    assert "pool" not in off.get("OPTIONS", {}) and off["CONN_MAX_AGE"] == 60


def test_sqlite_has_no_pool(tmp_path):
    db = settings_in_a_fresh_process(DATABASE_URL=f"sqlite:///{tmp_path}/x.sqlite3")
    assert "pool" not in db["OPTIONS"]
