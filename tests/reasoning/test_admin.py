"""The admin: rubrics are editable, sessions are read-only records with their nodes."""

import pytest
from django.contrib.auth import get_user_model

from reasoning.models import ReasoningNode, ReasoningSession, Rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, alice):
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    return client


def test_rubrics_can_be_edited_with_their_criteria(admin_client, rubrics):
    rubric = Rubric.objects.get(tenant=None, problem_kind="general")
    page = admin_client.get(f"/admin/reasoning/rubric/{rubric.pk}/change/")
    assert page.status_code == 200 and b"Soundness" in page.content and b'name="_save"' in page.content


def test_sessions_are_read_only_and_show_their_nodes(admin_client, alice):
    session = ReasoningSession.objects.create(tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim")
    ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought="A visible root thought")
    page = admin_client.get(f"/admin/reasoning/reasoningsession/{session.pk}/change/")
    assert page.status_code == 200 and b"A visible root thought" in page.content
    assert b'name="_save"' not in page.content
    assert admin_client.get("/admin/reasoning/reasoningsession/add/").status_code == 403
    response = admin_client.post(f"/admin/reasoning/reasoningsession/{session.pk}/change/", {"status": "solved"})
    assert response.status_code == 403
    assert ReasoningSession.objects.get(pk=session.pk).status == "queued"
