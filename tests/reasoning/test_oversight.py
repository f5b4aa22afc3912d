"""Overseer actions through the API: each applied, audited and scoped to the caller's tenant."""

import pytest

from reasoning import services
from reasoning.models import OverseerAction, ReasoningNode, ReasoningSession, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def tree(alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", status=Status.RUNNING
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought="root")
    child = ReasoningNode.objects.create(tenant=alice.tenant, session=session, parent=root, depth=1, thought="a step")
    return session, child


def test_cancel_ends_a_running_session_and_is_audited(client, alice, tree):
    session, _ = tree
    response = client.post(f"/api/sessions/{session.id}/cancel", content_type="application/json", **alice.auth)
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert response.json()["finished_at"]
    assert OverseerAction.objects.get(session=session).action == "cancel"
    again = client.post(f"/api/sessions/{session.id}/cancel", content_type="application/json", **alice.auth)
    assert again.status_code == 409 and "cannot be cancelled" in again.json()["detail"]


def test_prune_and_unprune_are_applied_and_audited(client, alice, tree):
    _, child = tree
    pruned = client.post(f"/api/nodes/{child.id}/prune", content_type="application/json", **alice.auth).json()
    assert pruned["pruned"] is True and pruned["pruned_by"] == "overseer"
    restored = client.post(f"/api/nodes/{child.id}/unprune", content_type="application/json", **alice.auth).json()
    assert restored["pruned"] is False and restored["pruned_by"] is None
    actions = list(OverseerAction.objects.filter(node=child).values_list("action", "actor"))
    assert actions == [("prune", f"key:{alice.key[:10]}"), ("unprune", f"key:{alice.key[:10]}")]


def test_another_tenant_cannot_act(client, bob, tree):
    session, child = tree
    assert (
        client.post(f"/api/sessions/{session.id}/cancel", content_type="application/json", **bob.auth).status_code
        == 404
    )
    assert client.post(f"/api/nodes/{child.id}/prune", content_type="application/json", **bob.auth).status_code == 404
    assert client.post("/api/nodes/not-a-uuid/prune", content_type="application/json", **bob.auth).status_code == 404
    assert ReasoningSession.objects.get(pk=session.id).status == "running"
    assert not ReasoningNode.objects.get(pk=child.id).pruned


@pytest.mark.parametrize("status", ["solved", "failed", "exhausted", "cancelled"])
def test_a_final_status_is_left_only_to_reopen_for_a_command(alice, tree, status):
    session, _ = tree
    ReasoningSession.objects.filter(pk=session.id).update(status=status)
    for target in set(Status.values) - {Status.QUEUED}:
        assert services.transition(session.id, target) is False
    assert ReasoningSession.objects.get(pk=session.id).status == status
    assert services.transition(session.id, Status.QUEUED) is True


def test_a_transition_only_takes_sources_the_state_machine_allows(alice, tree):
    session, _ = tree
    assert services.transition(session.id, Status.QUEUED, [Status.RUNNING]) is False  # running -> queued is not a move
    assert services.transition(session.id, Status.PAUSED) is True
    assert services.transition(session.id, Status.QUEUED) is True


# ---- every action through the API: rules, bad input, the audit trail ----------------------


@pytest.fixture
def finished(alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", status=Status.SOLVED, mode="tot"
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought="root")
    child = ReasoningNode.objects.create(tenant=alice.tenant, session=session, parent=root, depth=1, thought="a step")
    grandchild = ReasoningNode.objects.create(
        tenant=alice.tenant, session=session, parent=child, depth=2, thought="next", eval_score=0.7
    )
    return session, root, child, grandchild


def post(client, party, url, body=None):
    return client.post(url, body or {}, content_type="application/json", **party.auth)


def test_a_viewer_may_watch_but_not_act(client, alice, finished):
    from reasoning.models import Membership, Role

    session, _, child, _ = finished
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    client.force_login(alice.user)
    assert client.get(f"/api/sessions/{session.id}/tree").status_code == 200
    for url, body in [
        (f"/api/nodes/{child.id}/prune", {}),
        (f"/api/nodes/{child.id}/expand", {"k": 2}),
        (f"/api/nodes/{child.id}/edit", {"thought": "Sell half."}),
        (f"/api/nodes/{child.id}/promote", {"note": "mine"}),
        (f"/api/sessions/{session.id}/pause", {}),
        (f"/api/sessions/{session.id}/cancel", {}),
        (f"/api/sessions/{session.id}/fork", {"node_id": str(child.id)}),
    ]:
        response = client.post(url, body, content_type="application/json", HTTP_X_CSRFTOKEN="x")
        assert response.status_code in (403,), (url, response.status_code, response.content)
    assert not OverseerAction.objects.exists()


@pytest.mark.parametrize(
    "url, body, status, says",
    [
        ("/api/nodes/{child}/expand", {"k": 0}, 422, "k"),
        ("/api/nodes/{child}/expand", {"k": "many"}, 422, "k"),
        ("/api/nodes/{child}/expand", {"k": 2, "deep": True}, 422, "deep"),
        ("/api/nodes/{child}/edit", {"thought": "   "}, 422, "thought"),
        ("/api/nodes/{child}/edit", {}, 422, "thought"),
        ("/api/nodes/{root}/edit", {"thought": "Another problem"}, 409, "root"),
        ("/api/nodes/{root}/prune", {}, 409, "root"),
        ("/api/nodes/{root}/promote", {}, 409, "root"),
        ("/api/nodes/00000000-0000-4000-8000-000000000000/expand", {}, 404, "Not found"),
        ("/api/nodes/not-a-node/edit", {"thought": "x"}, 404, "Not found"),
        ("/api/sessions/{session}/resume", {}, 409, "cannot be resumed"),
        ("/api/sessions/{session}/pause", {}, 409, "cannot be paused"),
        ("/api/sessions/{session}/fork", {}, 422, "node_id"),
        ("/api/sessions/{session}/fork", {"node_id": "{other}"}, 422, "no such node in this session"),
        ("/api/sessions/{session}/fork", {"node_id": "{child}", "mode": "magic"}, 422, "mode"),
        ("/api/sessions/{session}/fork", {"node_id": "{child}", "budget_usd": -1}, 422, "budget_usd"),
    ],
)
def test_bad_actions_get_a_4xx_naming_the_problem_and_change_nothing(client, alice, finished, url, body, status, says):
    session, root, child, _ = finished
    other = ReasoningNode.objects.create(
        tenant=alice.tenant,
        session=ReasoningSession.objects.create(
            tenant=alice.tenant, problem_text="Other.", model_primary="offline/sim"
        ),
        depth=0,
        thought="other root",
    )
    ids = {"child": child.id, "root": root.id, "session": session.id, "other": other.id}
    body = {k: (v.format(**ids) if isinstance(v, str) else v) for k, v in body.items()}
    response = post(client, alice, url.format(**ids), body)
    assert response.status_code == status, response.content
    assert says in str(response.json()["detail"])
    assert not OverseerAction.objects.exists()
    assert ReasoningSession.objects.get(pk=session.id).status == "solved"
    assert ReasoningSession.objects.filter(forked_from=session).count() == 0


def test_expand_of_a_node_in_a_pruned_branch_is_refused(client, alice, finished):
    _, _, child, grandchild = finished
    assert post(client, alice, f"/api/nodes/{child.id}/prune").status_code == 200
    response = post(client, alice, f"/api/nodes/{grandchild.id}/expand", {"k": 2})
    assert response.status_code == 409 and "pruned branch" in response.json()["detail"]
    assert post(client, alice, f"/api/nodes/{grandchild.id}/promote").status_code == 409


@pytest.mark.django_db(transaction=True)
def test_two_overseers_pruning_one_node_get_one_clear_outcome(alice, finished):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race is real on PostgreSQL")
    _, _, child, _ = finished

    def prune(actor):
        try:
            services.set_pruned(alice.tenant, child.id, actor, pruned=True)
            return "applied"
        except services.Conflict as conflict:
            return str(conflict)
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(prune, ["user:one", "user:two"]))
    assert outcomes == ["applied", "the branch is already pruned"]
    assert OverseerAction.objects.filter(action="prune").count() == 1


def test_a_second_prune_is_told_the_branch_is_already_pruned(client, alice, finished):
    _, _, child, _ = finished
    assert post(client, alice, f"/api/nodes/{child.id}/prune").status_code == 200
    again = post(client, alice, f"/api/nodes/{child.id}/prune")
    assert again.status_code == 409 and "already pruned" in again.json()["detail"]
    assert OverseerAction.objects.filter(action="prune").count() == 1


def test_node_commands_answer_202_with_the_pending_action_and_reopen_a_finished_session(
    client, alice, finished, monkeypatch, django_capture_on_commit_callbacks
):
    submitted = []
    monkeypatch.setattr(services, "submit_to_runner", submitted.append)
    session, _, child, grandchild = finished
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, alice, f"/api/nodes/{child.id}/expand", {"k": 2})
    assert response.status_code == 202
    action = response.json()
    assert action["action"] == "expand" and action["state"] == "pending" and action["payload"] == {"k": 2}
    assert ReasoningSession.objects.get(pk=session.id).status == "queued" and submitted == [session.id]
    edit = post(client, alice, f"/api/nodes/{child.id}/edit", {"thought": "  Sell half now.  "})
    assert edit.status_code == 202 and edit.json()["before"]["thought"] == "a step"
    child.refresh_from_db()
    grandchild.refresh_from_db()
    assert child.thought == "Sell half now." and child.original_thought == "a step" and child.edited_at
    assert child.stale and grandchild.stale
    assert post(client, alice, f"/api/nodes/{grandchild.id}/promote", {"note": "client prefers it"}).status_code == 202
    trail = client.get(f"/api/sessions/{session.id}/actions", **alice.auth).json()
    assert [a["action"] for a in trail] == ["expand", "edit", "promote"]
    assert all(a["actor"] == f"key:{alice.key[:10]}" for a in trail)
    tree = client.get(f"/api/sessions/{session.id}/tree", **alice.auth).json()
    assert [a["action"] for a in tree["actions"]] == ["expand", "edit", "promote"]


def test_pause_resume_and_cancel_move_the_session_and_are_audited(client, alice, tree, monkeypatch):
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    session, child = tree
    ReasoningNode.objects.filter(pk=child.id).update(eval_score=0.6)
    paused = post(client, alice, f"/api/sessions/{session.id}/pause")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert post(client, alice, f"/api/sessions/{session.id}/pause").status_code == 409
    resumed = post(client, alice, f"/api/sessions/{session.id}/resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    cancelled = post(client, alice, f"/api/sessions/{session.id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    trail = OverseerAction.objects.filter(session=session).order_by("id")
    assert [(a.action, a.before["status"], a.after["status"]) for a in trail] == [
        ("pause", "running", "paused"),
        ("resume", "paused", "queued"),
        ("cancel", "queued", "cancelled"),
    ]
    # The best line so far is the partial answer of a cancelled session.
    cancelled = ReasoningSession.objects.get(pk=session.id)
    assert cancelled.answer_partial and "partial: cancelled" in cancelled.final_answer


def test_another_tenant_cannot_see_or_act_on_the_new_doors(client, bob, finished):
    session, _, child, _ = finished
    for url, body in [
        (f"/api/nodes/{child.id}/expand", {"k": 1}),
        (f"/api/nodes/{child.id}/edit", {"thought": "mine now"}),
        (f"/api/nodes/{child.id}/promote", {}),
        (f"/api/sessions/{session.id}/pause", {}),
        (f"/api/sessions/{session.id}/resume", {}),
        (f"/api/sessions/{session.id}/fork", {"node_id": str(child.id)}),
    ]:
        assert post(client, bob, url, body).status_code == 404, url
    assert client.get(f"/api/sessions/{session.id}/actions", **bob.auth).status_code == 404
    assert not OverseerAction.objects.exists()
