"""One person, one name (issue 33): the "By" filter listed the same advisor as `web:advisor` (the form) and
`user:advisor` (forks). A session's starter is "user:<login>" whatever the door; a service key keeps its own name;
migration 0016 renames the old rows."""

import importlib

import pytest
from django.apps import apps
from django.db import connection

from reasoning import selectors
from reasoning.models import ApiKey, ReasoningNode, ReasoningSession
from tests.explorer.test_views import valid_form

pytestmark = pytest.mark.django_db

BODY = {"problem_text": "Rebalance the Meier family's CHF 2m portfolio to 50/50.", "mode": "tot",
        "params": {"branching": 2, "depth": 1, "keep": 1}}


def test_the_form_a_fork_a_member_s_key_and_the_api_name_one_person_once(client, alice):
    client.force_login(alice.user)
    page = client.post("/sessions/new/", valid_form(mode="tot"))
    assert page.status_code == 302, page.content.decode()[:2000]
    from_form = ReasoningSession.objects.get()
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=from_form, thought="root", depth=0)
    fork = client.post(f"/api/sessions/{from_form.id}/fork", {"node_id": str(root.id)}, content_type="application/json")
    assert fork.status_code == 201, fork.content
    _, member_key = ApiKey.issue(alice.tenant, name="ana's", user=alice.user)
    by_key = client.post("/api/sessions", BODY, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {member_key}")
    service = client.post("/api/sessions", BODY, content_type="application/json", **alice.auth)
    assert by_key.status_code == service.status_code == 201

    person = f"user:{alice.user.username}"
    names = [from_form.triggered_by, fork.json()["triggered_by"], by_key.json()["triggered_by"]]
    assert names == [person] * 3
    service_name = service.json()["triggered_by"]
    assert service_name.startswith("key:") and service_name != person  # a service key is nobody's
    assert selectors.session_starters(alice.tenant) == [person, service_name]
    listed = client.get("/api/sessions", {"by": person}).json()["items"]
    assert len(listed) == 3


def test_migration_0016_renames_each_door_s_name_to_the_person_s(alice):
    made = {}
    for name in ("web:ana", "user:ana", "user:ana/key:rk_AbCdEfG", "cli:user:ana", "key:rk_Zz", "cli", "seed_demo"):
        made[name] = ReasoningSession.objects.create(
            tenant=alice.tenant, problem_text="x", model_primary="offline/sim", triggered_by=name
        ).pk
    migration = importlib.import_module("reasoning.migrations.0016_one_name_per_person")

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    migration.one_name(apps, editor)
    after = dict(ReasoningSession.objects.values_list("pk", "triggered_by"))
    assert {name: after[pk] for name, pk in made.items()} == {
        "web:ana": "user:ana", "user:ana": "user:ana", "user:ana/key:rk_AbCdEfG": "user:ana", "cli:user:ana": "user:ana",
        "key:rk_Zz": "key:rk_Zz", "cli": "cli", "seed_demo": "seed_demo",
    }
    assert all(migration.person(n) == selectors.person(n) for n in made)  # the migration applies today's rule
