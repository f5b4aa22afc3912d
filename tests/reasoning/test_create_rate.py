"""Creating sessions is rate-limited per person (all their keys and their login) and per service key: a 429 with
Retry-After, and nothing stored."""

import json

import pytest

from reasoning import throttles
from reasoning.models import ApiKey, ReasoningSession

pytestmark = pytest.mark.django_db

GOOD = {"problem_text": "Should the family sell the CHF 5m stake in the family firm to a strategic buyer?"}
WINDOW_START = 1_000 * 60.0  # a whole minute, so the window's end is easy to read


@pytest.fixture
def now(monkeypatch, settings):
    """Two creations per minute, and a clock the test moves."""
    settings.REASONING = {**settings.REASONING, "CREATE_RATE": (2, 60)}
    clock = {"t": WINDOW_START + 10}
    monkeypatch.setattr(throttles, "clock", lambda: clock["t"])
    return clock


def create(client, auth):
    return client.post("/api/sessions", data=json.dumps(GOOD), content_type="application/json", **auth)


def test_the_creation_beyond_the_limit_gets_a_429_with_retry_after_and_stores_nothing(client, alice, now):
    assert [create(client, alice.auth).status_code for _ in range(2)] == [201, 201]
    refused = create(client, alice.auth)
    assert refused.status_code == 429
    # The two creations leave the sliding window 60 s after they were made, counted in tenths of a minute: 62 s.
    assert refused["Retry-After"] == "62"
    assert "retry in 62 s" in refused.json()["detail"]
    assert ReasoningSession.objects.count() == 2


def test_another_key_of_the_same_tenant_has_its_own_allowance(client, alice, now):
    for _ in range(2):
        create(client, alice.auth)
    assert create(client, alice.auth).status_code == 429
    _, other_key = ApiKey.issue(alice.tenant, name="second integration")
    assert create(client, {"HTTP_AUTHORIZATION": f"Bearer {other_key}"}).status_code == 201
    assert ReasoningSession.objects.filter(tenant=alice.tenant).count() == 3


def test_a_logged_in_user_is_limited_apart_from_the_tenants_keys(client, alice, now):
    for _ in range(2):
        create(client, alice.auth)
    client.force_login(alice.user)
    assert [create(client, {}).status_code for _ in range(3)] == [201, 201, 429]


def test_creations_are_let_through_again_once_the_earlier_ones_leave_the_window(client, alice, now):
    for _ in range(2):
        create(client, alice.auth)
    assert create(client, alice.auth).status_code == 429
    now["t"] += 61
    assert create(client, alice.auth).status_code == 429  # the first two were made 61 s ago, in the same tenth
    now["t"] += 1
    assert create(client, alice.auth).status_code == 201
    assert ReasoningSession.objects.count() == 3


def test_a_minute_boundary_does_not_double_the_limit(client, alice, now):
    """Issue 23, item 10: a fixed window let a burst at a minute's end and another at the next minute's start through."""
    now["t"] = WINDOW_START + 59
    assert [create(client, alice.auth).status_code for _ in range(2)] == [201, 201]
    now["t"] = WINDOW_START + 61  # the next fixed minute: 2 s later
    assert [create(client, alice.auth).status_code for _ in range(2)] == [429, 429]
    assert ReasoningSession.objects.count() == 2


def test_refused_calls_do_not_count(client, alice, now):
    for _ in range(2):
        create(client, alice.auth)
    for _ in range(20):
        now["t"] += 1
        assert create(client, alice.auth).status_code == 429
    now["t"] = WINDOW_START + 10 + 62  # 60 s (and the tenth they were counted in) after the two that passed
    assert create(client, alice.auth).status_code == 201


def test_reads_are_not_limited_and_off_means_no_limit(client, alice, now, settings):
    for _ in range(2):
        create(client, alice.auth)
    assert client.get("/api/sessions", **alice.auth).status_code == 200
    settings.REASONING = {**settings.REASONING, "CREATE_RATE": None}
    assert create(client, alice.auth).status_code == 201


def test_the_openapi_document_names_the_429(client):
    responses = client.get("/api/openapi.json").json()["paths"]["/api/sessions"]["post"]["responses"]
    assert "429" in responses


# ---- one limit for every way a session is made (issue 14, item 10) ---------------------------


def fork(client, auth, session):
    node = session.nodes.order_by("depth").first()
    body = json.dumps({"node_id": str(node.id)})
    return client.post(f"/api/sessions/{session.id}/fork", data=body, content_type="application/json", **auth)


def solved_session(alice):
    from reasoning import services
    from reasoning.models import ReasoningNode
    from reasoning.schemas import SessionIn

    session = services.create_session(alice.tenant, SessionIn(**GOOD), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=GOOD["problem_text"])
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=root, status="solved")
    return session


def test_forks_count_against_the_creation_limit(client, alice, now, monkeypatch):
    from reasoning import services

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    source = solved_session(alice)
    assert create(client, alice.auth).status_code == 201
    assert fork(client, alice.auth, source).status_code == 201
    refused = fork(client, alice.auth, source)
    assert refused.status_code == 429 and refused["Retry-After"] == "62"
    assert create(client, alice.auth).status_code == 429
    assert ReasoningSession.objects.count() == 3  # the source, one created, one forked


def test_the_page_form_shares_the_limit_with_the_api(client, alice, now, monkeypatch):
    from reasoning import services
    from tests.explorer.test_views import NEW, valid_form

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    client.force_login(alice.user)
    assert create(client, {}).status_code == 201  # the same user, by the API
    assert client.post(NEW, valid_form()).status_code == 302
    refused = client.post(NEW, valid_form())
    assert refused.status_code == 429 and b"Too many new sessions" in refused.content
    assert refused["Retry-After"] == "62"  # issue 23, item 10: the page's 429 says when, as the API's does
    assert create(client, {}).status_code == 429
    assert ReasoningSession.objects.count() == 2


def test_the_openapi_document_names_the_fork_429(client):
    responses = client.get("/api/openapi.json").json()["paths"]["/api/sessions/{session_id}/fork"]["post"]["responses"]
    assert "429" in responses


# ---- oversight actions: one allowance per caller, through the API and the socket (issue 14, item 8) ----


def child_of(session):
    from reasoning.models import ReasoningNode

    root = session.nodes.get(depth=0)
    return ReasoningNode.objects.create(
        session=session, tenant=session.tenant, parent=root, depth=1, thought="Sell the stake in two tranches."
    )


def test_a_prune_unprune_loop_is_stopped_before_it_fills_the_audit_log(client, alice, settings, monkeypatch):
    from reasoning import services
    from reasoning.models import OverseerAction

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    settings.REASONING = {**settings.REASONING, "ACTION_RATE": (6, 60)}
    node = child_of(solved_session(alice))
    codes = [
        client.post(
            f"/api/nodes/{node.id}/{'prune' if i % 2 == 0 else 'unprune'}",
            content_type="application/json",
            **alice.auth,
        ).status_code
        for i in range(10)
    ]
    assert codes == [200] * 6 + [429] * 4
    assert OverseerAction.objects.filter(node_id=node.id).count() == 6


@pytest.mark.django_db(transaction=True)
async def test_socket_actions_share_the_callers_allowance_with_the_api(alice, settings):
    from asgiref.sync import sync_to_async

    from tests.explorer.test_consumers import connect

    settings.REASONING = {**settings.REASONING, "ACTION_RATE": (2, 60)}
    session = await sync_to_async(solved_session)(alice)
    node = (await sync_to_async(child_of)(session)).id
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    await ws.receive_json_from()
    for action in ("prune", "unprune", "prune"):
        await ws.send_json_to({"action": action, "node_id": str(node)})
    messages = []
    while not any(m["type"] == "error" for m in messages):
        messages.append(await ws.receive_json_from(timeout=5))
    assert "too many actions" in messages[-1]["detail"]
    await ws.disconnect()
    from reasoning.models import OverseerAction

    assert await OverseerAction.objects.filter(node_id=node).acount() == 2


# ---- per person, not per key (issue 32, section 3: one member with two keys created 60 sessions in 11 s) --------


def members_key(alice, name):
    from reasoning.models import Scope

    _, plaintext = ApiKey.issue(alice.tenant, name=name, scopes=[Scope.READ, Scope.RUN], user=alice.user)
    return {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}


def test_a_members_two_keys_share_one_allowance(client, alice, now):
    first, second = members_key(alice, "laptop"), members_key(alice, "script")
    assert [create(client, first).status_code, create(client, second).status_code] == [201, 201]
    assert create(client, members_key(alice, "a third")).status_code == 429
    assert create(client, first).status_code == 429
    assert ReasoningSession.objects.count() == 2


def test_a_members_keys_and_their_login_share_one_allowance(client, alice, now, monkeypatch):
    from reasoning import services
    from tests.explorer.test_views import NEW, valid_form

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    assert create(client, members_key(alice, "laptop")).status_code == 201
    client.force_login(alice.user)
    assert create(client, {}).status_code == 201
    assert client.post(NEW, valid_form()).status_code == 429  # the page too
    assert ReasoningSession.objects.count() == 2


def test_a_members_allowance_is_not_a_service_keys(client, alice, now):
    for _ in range(2):
        create(client, members_key(alice, "laptop"))
    assert create(client, alice.auth).status_code == 201  # the tenant's service key counts on its own


def test_a_member_renamed_keeps_their_count(client, alice, now):
    from django.contrib.auth import get_user_model

    key = members_key(alice, "laptop")
    for _ in range(2):
        create(client, key)
    get_user_model().objects.filter(pk=alice.user.pk).update(username="alice-renamed")
    assert create(client, members_key(alice, "after the rename")).status_code == 429
