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
    response = client.post(f"/api/sessions/{session.id}/cancel", **alice.auth)
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert response.json()["finished_at"]
    assert OverseerAction.objects.get(session=session).action == "cancel"
    again = client.post(f"/api/sessions/{session.id}/cancel", **alice.auth)
    assert again.status_code == 409 and "cannot be cancelled" in again.json()["detail"]


def test_prune_and_unprune_are_applied_and_audited(client, alice, tree):
    _, child = tree
    pruned = client.post(f"/api/nodes/{child.id}/prune", **alice.auth).json()
    assert pruned["pruned"] is True and pruned["pruned_by"] == "overseer"
    restored = client.post(f"/api/nodes/{child.id}/unprune", **alice.auth).json()
    assert restored["pruned"] is False and restored["pruned_by"] is None
    actions = list(OverseerAction.objects.filter(node=child).values_list("action", "actor"))
    assert actions == [("prune", f"key:{alice.key[:10]}"), ("unprune", f"key:{alice.key[:10]}")]


def test_another_tenant_cannot_act(client, bob, tree):
    session, child = tree
    assert client.post(f"/api/sessions/{session.id}/cancel", **bob.auth).status_code == 404
    assert client.post(f"/api/nodes/{child.id}/prune", **bob.auth).status_code == 404
    assert client.post("/api/nodes/not-a-uuid/prune", **bob.auth).status_code == 404
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
