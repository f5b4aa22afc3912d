"""A viewer watches and never spends (issue 16, item 3): read-only at the page, the API and the CLI (the socket's
refusal is tests/explorer/test_consumers.py's); a tenant admin adds a person and chooses their role in the admin."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from reasoning.models import Membership, ReasoningSession, Role
from tests.conftest import make_party

pytestmark = pytest.mark.django_db

BODY = {"problem_text": "Rebalance a CHF 2m portfolio back to 60/40.", "mode": "tot"}


@pytest.fixture
def viewer(alice):
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    return alice


def test_a_viewer_cannot_start_a_session_through_the_api(client, viewer):
    client.force_login(viewer.user)
    response = client.post("/api/sessions", BODY, content_type="application/json")
    assert response.status_code == 403, response.content
    assert "watch" in response.json()["detail"]
    assert not ReasoningSession.objects.exists()


def test_a_viewer_gets_a_view_only_page_instead_of_the_new_session_form(client, viewer):
    client.force_login(viewer.user)
    page = client.get("/sessions/new/")
    assert page.status_code == 403 and b"You are view-only" in page.content and b"problem_text" not in page.content
    posted = client.post("/sessions/new/", {"problem_text": "x", "problem_kind": "general", "mode": "tot"})
    assert posted.status_code == 403 and not ReasoningSession.objects.exists()
    listing = client.get("/").content.decode()
    assert 'data-testid="view-only"' in listing and 'href="/sessions/new/"' not in listing


def test_an_advisor_sees_no_view_only_mark(client, alice):
    client.force_login(alice.user)
    listing = client.get("/").content.decode()
    assert 'data-testid="view-only"' not in listing and 'href="/sessions/new/"' in listing


@pytest.mark.django_db(transaction=True)
def test_the_cli_refuses_a_viewer_and_runs_as_an_advisor(viewer, bob):
    with pytest.raises(CommandError, match="viewer"):
        call_command("solve", BODY["problem_text"], "--mode", "tot", "--user", viewer.user.username)
    with pytest.raises(CommandError, match="not an active member"):
        call_command("solve", BODY["problem_text"], "--user", "nobody")
    assert not ReasoningSession.objects.exists()
    call_command(
        "solve", BODY["problem_text"], "--mode", "tot", "--user", bob.user.username, stdout=open("/dev/null", "w")
    )
    session = ReasoningSession.objects.get()
    assert session.tenant == bob.tenant and session.triggered_by == f"user:{bob.user.username}"
    assert session.created_by == bob.user  # the usage report counts it as theirs


def test_a_tenant_admin_adds_a_viewer_with_a_login_in_the_admin(client):
    demo = make_party("demo", admin=True)
    demo.user.is_staff = True
    demo.user.save()
    client.force_login(demo.user)
    form = client.get("/admin/reasoning/membership/add/")
    assert form.status_code == 200 and b'name="username"' in form.content and b'name="role"' in form.content
    assert b'name="tenant"' not in form.content  # a tenant admin adds people to its own tenant only
    response = client.post(
        "/admin/reasoning/membership/add/",
        {"username": "junior", "password1": "a-long-pass", "password2": "a-long-pass", "role": "viewer"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    junior = get_user_model().objects.get(username="junior")
    assert junior.check_password("a-long-pass") and not junior.is_staff
    assert (junior.membership.tenant, junior.membership.role) == (demo.tenant, Role.VIEWER)
    assert Client().login(username="junior", password="a-long-pass")


def test_the_new_member_form_refuses_a_taken_name_and_differing_passwords(client):
    demo = make_party("demo", admin=True)
    demo.user.is_staff = True
    demo.user.save()
    client.force_login(demo.user)
    taken = client.post(
        "/admin/reasoning/membership/add/",
        {"username": demo.user.username, "password1": "a-long-pass", "password2": "other-pass", "role": "advisor"},
    )
    assert taken.status_code == 200 and b"This login name is taken" in taken.content
    assert b"The two passwords differ" in taken.content
