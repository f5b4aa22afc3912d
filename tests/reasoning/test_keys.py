"""Keys with an owner and scopes (issue 25, part 1): what each scope lets a key do at the API, a member's key never
above their role (at each use), /api/keys, the last use and its address, expiry, the audit trail, the command and
the admin. The socket's side is tests/explorer/test_consumers.py's."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from reasoning import access, services
from reasoning.models import ApiKey, Membership, OverseerAction, ReasoningSession, Role, Rubric, Scope, sha256
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db

BODY = {"problem_text": "Rebalance a CHF 2m portfolio back to 60/40.", "mode": "tot"}
RUBRIC = {
    "problem_kind": "estate-memo",
    "name": "Estate memo",
    "criteria": [{"name": "Clear", "weight": 1.0, "description": "Reads plainly."}],
}


def bearer(key):
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


@pytest.fixture
def session(alice):
    data = SessionIn(problem_text=BODY["problem_text"], mode="tot")
    return services.create_session(alice.tenant, data, submit=False)


@pytest.fixture
def root(session):
    from reasoning.models import ReasoningNode

    node = ReasoningNode.objects.create(tenant=session.tenant, session=session, depth=0, thought="The problem.")
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=node)
    return node


def key_with(party, *scopes, user=None):
    return ApiKey.issue(party.tenant, name="scoped", scopes=list(scopes), user=user)[1]


def test_a_read_key_reads_but_cannot_create_fork_steer_spend_or_write_rubrics(client, alice, session, root):
    read = bearer(key_with(alice, Scope.READ))
    assert client.get("/api/sessions", **read).status_code == 200
    assert client.get(f"/api/sessions/{session.id}/tree", **read).status_code == 200
    assert client.get("/api/usage", **read).status_code == 200
    refused = {
        ("post", "/api/sessions", "run"): BODY,
        ("post", f"/api/sessions/{session.id}/fork", "run"): {"node_id": str(root.id)},
        ("post", f"/api/sessions/{session.id}/pause", "oversee"): None,
        ("post", f"/api/sessions/{session.id}/cancel", "oversee"): None,
        ("post", f"/api/nodes/{root.id}/prune", "oversee"): None,
        ("post", f"/api/nodes/{root.id}/expand", "oversee"): {"k": 2},
        ("post", f"/api/sessions/{session.id}/facts", "oversee"): {"kind": "age", "value": 61},
        ("post", "/api/rubrics", "admin"): RUBRIC,
        ("post", "/api/keys", "admin"): {"scopes": ["read"]},
        ("get", "/api/keys", "admin"): None,
    }
    for (method, path, scope), body in refused.items():
        kwargs = {"data": body or {}, "content_type": "application/json"} if method == "post" else {}
        response = getattr(client, method)(path, **kwargs, **read)
        assert response.status_code == 403, (path, response.content)
        assert response.json()["scope"] == scope and f"'{scope}' scope" in response.json()["detail"], path
    assert ReasoningSession.objects.count() == 1 and not OverseerAction.objects.exists()
    assert not Rubric.objects.filter(problem_kind="estate-memo").exists()
    assert ReasoningSession.objects.get().status == "queued"


def test_each_scope_opens_its_own_doors(client, alice, session, root):
    run, oversee, admin = (bearer(key_with(alice, s)) for s in (Scope.RUN, Scope.OVERSEE, Scope.ADMIN))
    assert client.post("/api/sessions", BODY, content_type="application/json", **run).status_code == 201
    pause = f"/api/sessions/{session.id}/pause"
    assert client.post(pause, {}, content_type="application/json", **run).status_code == 403
    assert client.post(pause, {}, content_type="application/json", **oversee).status_code == 200
    assert client.post("/api/sessions", BODY, content_type="application/json", **oversee).status_code == 403
    assert client.post("/api/rubrics", RUBRIC, content_type="application/json", **admin).status_code == 201
    assert client.get("/api/sessions", **run).status_code == 403


def test_a_members_key_never_holds_more_than_their_role_now(client, alice, session):
    plaintext = key_with(alice, Scope.READ, Scope.RUN, Scope.OVERSEE, user=alice.user)
    principal = access.for_key(plaintext)
    assert principal.scopes == {"read", "run", "oversee"} and principal.user_id == alice.user.pk
    assert principal.actor == f"user:{alice.user.username}/key:{plaintext[:10]}"
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    assert access.for_key(plaintext).scopes == {"read"}
    response = client.post("/api/sessions", BODY, content_type="application/json", **bearer(plaintext))
    assert response.status_code == 403 and response.json()["scope"] == "run"
    Membership.objects.filter(user=alice.user).delete()
    assert access.for_key(plaintext) is None
    assert client.get("/api/sessions", **bearer(plaintext)).status_code == 401


def test_a_deactivated_members_key_is_refused(alice):
    plaintext = key_with(alice, Scope.READ, user=alice.user)
    get_user_model().objects.filter(pk=alice.user.pk).update(is_active=False)
    assert access.for_key(plaintext) is None


def test_an_expired_key_is_refused(client, alice):
    key, plaintext = ApiKey.issue(alice.tenant, scopes=[Scope.READ], expires_at=timezone.now() + timedelta(hours=1))
    assert client.get("/api/sessions", **bearer(plaintext)).status_code == 200
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get("/api/sessions", **bearer(plaintext)).status_code == 401


def test_a_key_records_when_and_from_where_it_was_last_used(client, alice):
    client.get("/api/sessions", REMOTE_ADDR="203.0.113.7", **alice.auth)
    key = ApiKey.objects.get(tenant=alice.tenant)
    assert key.last_used_at is not None and key.last_used_ip == "203.0.113.7"
    client.get("/api/sessions", REMOTE_ADDR="198.51.100.2", **alice.auth)  # within the minute, another address
    assert ApiKey.objects.get(pk=key.pk).last_used_ip == "198.51.100.2"


def test_the_audit_trail_names_the_key_and_the_person(client, alice, session):
    plaintext = key_with(alice, Scope.READ, Scope.OVERSEE, user=alice.user)
    pause = f"/api/sessions/{session.id}/pause"
    assert client.post(pause, {}, content_type="application/json", **bearer(plaintext)).status_code == 200
    action = OverseerAction.objects.get(session=session)
    assert action.actor == f"user:{alice.user.username}/key:{plaintext[:10]}"
    assert client.get(f"/api/sessions/{session.id}/actions", **alice.auth).json()[0]["actor"] == action.actor


def test_a_session_records_the_person_and_the_key_that_started_it(client, alice):
    key, plaintext = ApiKey.issue(alice.tenant, scopes=[Scope.READ, Scope.RUN], user=alice.user)
    made = client.post("/api/sessions", BODY, content_type="application/json", **bearer(plaintext)).json()
    session = ReasoningSession.objects.get(pk=made["id"])
    assert session.created_by == alice.user and session.api_key == key


# ---- /api/keys -------------------------------------------------------------------------------------------


@pytest.fixture
def admin_key(alice):
    Membership.objects.filter(user=alice.user).update(role=Role.ADMIN)
    return bearer(key_with(alice, *Scope.values))


def test_keys_are_issued_once_listed_without_their_secret_and_revoked(client, alice, admin_key):
    made = client.post(
        "/api/keys", {"name": "reports", "scopes": ["read"]}, content_type="application/json", **admin_key
    )
    assert made.status_code == 201, made.content
    body = made.json()
    secret = body["secret"]
    assert body["scopes"] == ["read"] and body["user"] is None and secret.startswith("rk_")
    stored = ApiKey.objects.get(pk=body["id"])
    assert stored.key_hash == sha256(secret) and secret not in str(stored.__dict__)
    listing = client.get("/api/keys", **admin_key)
    assert listing.status_code == 200 and secret not in listing.content.decode()
    assert {k["name"] for k in listing.json()} >= {"reports"} and "secret" not in listing.json()[0]
    assert client.get("/api/sessions", **bearer(secret)).status_code == 200
    assert client.delete(f"/api/keys/{body['id']}", **admin_key).status_code == 204
    assert client.get("/api/sessions", **bearer(secret)).status_code == 401
    assert client.delete(f"/api/keys/{body['id']}", **admin_key).status_code == 204  # again: still revoked


def test_a_key_for_a_member_is_checked_against_their_role(client, alice, admin_key):
    viewer = get_user_model().objects.create_user(username="vera", password="pw-for-tests")
    Membership.objects.create(user=viewer, tenant=alice.tenant, role=Role.VIEWER)
    too_much = {"scopes": ["read", "run"], "user": "vera"}
    refused = client.post("/api/keys", too_much, content_type="application/json", **admin_key)
    assert refused.status_code == 422 and refused.json()["detail"][0]["field"] == "scopes"
    assert "run" in refused.json()["detail"][0]["message"]
    made = client.post("/api/keys", {"scopes": ["read"], "user": "vera"}, content_type="application/json", **admin_key)
    assert made.status_code == 201 and made.json()["user"] == "vera"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"scopes": []}, "scopes"),
        ({"scopes": ["write"]}, "scopes.0"),
        ({}, "scopes"),
        ({"scopes": ["read"], "user": "nobody-here"}, "user"),
        ({"scopes": ["read"], "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
        ({"scopes": ["read"], "expires_at": "2999-01-01T00:00:00"}, "expires_at"),  # no offset: ambiguous
        ({"scopes": ["read"], "extra": 1}, "extra"),
        ({"scopes": ["read"], "name": "x" * 101}, "name"),
    ],
)
def test_bad_key_requests_are_422_naming_the_field(client, alice, admin_key, body, field):
    response = client.post("/api/keys", body, content_type="application/json", **admin_key)
    assert response.status_code == 422, response.content
    assert field in [error["field"] for error in response.json()["detail"]]


def test_another_tenants_member_or_key_is_not_there(client, alice, bob, admin_key):
    refused = client.post(
        "/api/keys", {"scopes": ["read"], "user": bob.user.username}, content_type="application/json", **admin_key
    )
    assert refused.status_code == 422 and refused.json()["detail"][0]["field"] == "user"
    bobs = ApiKey.objects.get(tenant=bob.tenant)
    assert client.delete(f"/api/keys/{bobs.pk}", **admin_key).status_code == 404
    assert ApiKey.objects.get(pk=bobs.pk).revoked_at is None
    assert bobs.hint not in client.get("/api/keys", **admin_key).content.decode()


def test_the_openapi_document_states_each_operations_scope(client):
    paths = client.get("/api/openapi.json").json()["paths"]
    scopes = {(method, path): op["x-scope"] for path, ops in paths.items() for method, op in ops.items()}
    assert scopes[("post", "/api/sessions")] == "run" and scopes[("post", "/api/sessions/{session_id}/fork")] == "run"
    assert scopes[("post", "/api/nodes/{node_id}/prune")] == "oversee" and scopes[("get", "/api/usage")] == "read"
    assert scopes[("post", "/api/rubrics")] == "admin" and scopes[("delete", "/api/keys/{key_id}")] == "admin"
    assert set(scopes.values()) <= set(Scope.values)
    assert "Scope: `run`" in paths["/api/sessions"]["post"]["description"]


# ---- the command and the admin ----------------------------------------------------------------------------


def test_create_api_key_takes_a_user_and_scopes(alice, capsys):
    call_command("create_api_key", alice.tenant.slug, "--user", alice.user.username, "--scopes", "read,oversee")
    plaintext = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.find(plaintext)
    assert key.user == alice.user and key.scopes == ["read", "oversee"]
    with pytest.raises(CommandError, match="scopes"):
        call_command("create_api_key", alice.tenant.slug, "--scopes", "read,everything")
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    with pytest.raises(CommandError, match="cannot hold run"):
        call_command("create_api_key", alice.tenant.slug, "--user", alice.user.username, "--scopes", "read,run")
    with pytest.raises(CommandError, match="not an active member"):
        call_command("create_api_key", alice.tenant.slug, "--user", "nobody", "--scopes", "read")


def test_the_admin_issues_a_members_key_shown_once_within_their_role(alice_admin, alice):
    viewer = get_user_model().objects.create_user(username="vera", password="pw-for-tests")
    Membership.objects.create(user=viewer, tenant=alice.tenant, role=Role.VIEWER)
    refused = alice_admin.post("/admin/reasoning/apikey/add/", {"user": viewer.pk, "scopes": ["read", "run"]})
    assert refused.status_code == 200 and "cannot hold run" in refused.content.decode()
    page = alice_admin.post("/admin/reasoning/apikey/add/", {"user": viewer.pk, "name": "vera's", "scopes": ["read"]})
    plaintext = re.search(rb'data-testid="api-key"[^>]*>(rk_[\w-]+)<', page.content).group(1).decode()
    key = ApiKey.find(plaintext)
    assert key.user == viewer and key.scopes == ["read"] and key.tenant == alice.tenant
    assert "(scopes: read)" in page.content.decode() and "vera" in page.content.decode()
    listing = alice_admin.get("/admin/reasoning/apikey/").content.decode()
    assert "vera" in listing and plaintext not in listing


@pytest.mark.parametrize("key_id", ["0", "-3", str(2**64), "abc"])
def test_an_impossible_key_id_is_422_naming_it(client, alice, admin_key, key_id):
    response = client.delete(f"/api/keys/{key_id}", **admin_key)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "key_id"
