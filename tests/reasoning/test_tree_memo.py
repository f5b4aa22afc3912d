"""reasoning/tree_memo.py: a poller's unchanged tree answered 304 on the event loop, with no query and no thread; and
never a 304 for a changed tree, another tenant's session, a revoked key or a stale entry."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import HttpCommunicator
from django.db import connections, transaction
from django.utils import timezone

from reasoning import events, selectors, services, tree_memo
from reasoning.models import ApiKey, ReasoningNode
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_memo():
    tree_memo.trees.forget()
    tree_memo.keys.forget()
    yield
    tree_memo.trees.forget()
    tree_memo.keys.forget()


@pytest.fixture
async def watched(monkeypatch):
    """What each request reached: the request threads (a thread hop) and the session's lookup (a query)."""
    import config.asgi

    reached = {"threads": 0, "lookups": 0}
    borrow, lookup = config.asgi.request_threads, selectors.get_session

    async def counted_threads(*args):
        reached["threads"] += 1
        return await borrow(*args)

    def counted_lookup(*args):
        reached["lookups"] += 1
        return lookup(*args)

    monkeypatch.setattr(config.asgi, "request_threads", counted_threads)
    monkeypatch.setattr(selectors, "get_session", counted_lookup)
    yield reached
    for executor in borrow.idle.get(asyncio.get_running_loop(), asyncio.Queue())._queue:
        await asyncio.wrap_future(executor.submit(connections.close_all))


async def new_session(party):
    data = SessionIn(problem_text="Should the family sell the CHF 5m stake?", mode="tot")
    return await sync_to_async(services.create_session)(party.tenant, data, triggered_by="tests", submit=False)


async def get_tree(session_id, key, etag=None):
    from config.asgi import application

    headers = [(b"host", b"testserver"), (b"authorization", f"Bearer {key}".encode())]
    if etag:
        headers.append((b"if-none-match", etag.encode()))
    communicator = HttpCommunicator(application, "GET", f"/api/sessions/{session_id}/tree", headers=headers)
    response = await communicator.get_response(timeout=30)
    await communicator.wait(timeout=30)
    return response["status"], {name.lower(): value for name, value in response["headers"]}


@sync_to_async
def add_node(session):
    with transaction.atomic():
        node = ReasoningNode.objects.create(tenant=session.tenant, session=session, depth=0, thought="a new thought")
        events.publish(session.id, [events.node_event("node.created", node)])


async def test_an_unchanged_tree_is_answered_304_with_no_thread_and_no_query(alice, watched):
    session = await new_session(alice)
    status, headers = await get_tree(session.id, alice.key)
    assert status == 200 and watched == {"threads": 1, "lookups": 1}
    etag = headers[b"etag"].decode()
    for _ in range(3):
        again, again_headers = await get_tree(session.id, alice.key, etag)
        assert again == 304 and again_headers[b"etag"].decode() == etag
    assert watched == {"threads": 1, "lookups": 1}  # the three 304s never left the event loop


async def test_the_304_from_memory_carries_the_cache_headers_of_the_full_one(alice, settings, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    settings.REASONING = {**settings.REASONING, "READ_MEMO_S": 0}
    _, full = await get_tree(session.id, alice.key, etag)
    settings.REASONING = {**settings.REASONING, "READ_MEMO_S": 1.0}
    await get_tree(session.id, alice.key)
    status, memo = await get_tree(session.id, alice.key, etag)
    assert status == 304 and watched["threads"] == 3  # the full 304 went to a thread; this one did not
    cache_headers = {b"etag", b"cache-control", b"vary"}
    assert {k: v for k, v in memo.items() if k in cache_headers} == {
        k: v for k, v in full.items() if k in cache_headers
    }


async def test_a_new_node_is_never_answered_304(alice, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    await add_node(session)
    status, headers = await get_tree(session.id, alice.key, etag)
    assert status == 200 and headers[b"etag"].decode() != etag and watched["lookups"] == 2


async def test_a_change_to_the_session_row_is_never_answered_304(alice, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    session.budget_usd = 0.75
    await session.asave(update_fields=["budget_usd"])
    status, headers = await get_tree(session.id, alice.key, etag)
    assert status == 200 and headers[b"etag"].decode() != etag


async def test_a_revoked_key_is_refused_at_once(alice, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    key = await ApiKey.objects.aget(tenant=alice.tenant)
    key.revoked_at = timezone.now()
    await key.asave()
    assert (await get_tree(session.id, alice.key, etag))[0] == 401


async def test_another_tenants_key_with_the_right_etag_gets_404_not_304(alice, bob, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    await get_tree((await new_session(bob)).id, bob.key)  # bob's key is known to the memo too
    assert (await get_tree(session.id, bob.key, etag))[0] == 404


async def test_the_id_written_another_way_is_the_same_tree(alice, watched):
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    assert (await get_tree(str(session.id).upper(), alice.key, etag))[0] == 304
    assert watched["lookups"] == 1


async def test_an_entry_older_than_read_memo_s_is_asked_of_the_database(alice, settings, watched):
    settings.REASONING = {**settings.REASONING, "READ_MEMO_S": 0.05}
    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    await asyncio.sleep(0.1)
    assert (await get_tree(session.id, alice.key, etag))[0] == 304
    assert watched["lookups"] == 2


def test_a_full_answer_begun_before_a_change_does_not_store_its_older_etag():
    seen = tree_memo.generation("0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11")
    tree_memo.changed("0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11")
    tree_memo.remember("0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11", 1, 'W/"3-old"', seen)
    assert tree_memo.trees.get("0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11") is None


@pytest.mark.parametrize(
    "scope",
    [
        {"type": "http", "method": "POST", "path": "/api/sessions/0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11/tree"},
        {"type": "http", "method": "GET", "path": "/api/sessions/0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11"},
        {
            "type": "http",
            "method": "GET",
            "path": "/api/sessions/0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11/tree",
            "headers": [(b"if-none-match", b"*"), (b"authorization", b"Basic eDp5")],
        },
        {
            "type": "http",
            "method": "GET",
            "path": "/api/sessions/0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11/tree",
            "headers": [(b"if-none-match", b"*"), (b"authorization", b"Bearer \xff\xfe")],
        },
        {"type": "websocket", "path": "/ws/sessions/0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11/"},
    ],
)
def test_what_is_not_a_known_pollers_read_goes_the_full_way(scope):
    assert tree_memo.not_modified_headers(scope) is None


async def test_a_bare_update_of_the_session_row_is_never_answered_304(alice, watched):
    """The budget's settlement, a heartbeat's status, the answer's checks: written with .update(), no event, no save."""
    from reasoning.models import ReasoningSession

    session = await new_session(alice)
    etag = (await get_tree(session.id, alice.key))[1][b"etag"].decode()
    await ReasoningSession.objects.filter(pk=session.pk).aupdate(budget_used_usd=0.01)
    status, headers = await get_tree(session.id, alice.key, etag)
    assert status == 200 and headers[b"etag"].decode() != etag


def test_an_expired_key_is_never_answered_from_memory():
    import time

    session_id = "0b6cbb57-8f80-4a1c-9a8a-2f6f1c3c9d11"
    scope = {
        "type": "http",
        "method": "GET",
        "path": f"/api/sessions/{session_id}/tree",
        "headers": [(b"if-none-match", b'W/"3-abc"'), (b"authorization", b"Bearer rk_x")],
    }
    tree_memo.remember(session_id, 1, 'W/"3-abc"', tree_memo.generation(session_id), "rk_x", time.time() + 60)
    assert tree_memo.not_modified_headers(scope) is not None
    tree_memo.remember(session_id, 1, 'W/"3-abc"', tree_memo.generation(session_id), "rk_x", time.time() - 1)
    assert tree_memo.not_modified_headers(scope) is None
