"""A NUL character in a page's address is a 400, never a 500: PostgreSQL text cannot hold one, so a filter that handed
it to the database failed there (issue 14, item 11). Run on PostgreSQL by `make test-scale`."""

import pytest
from django.contrib.auth import get_user_model

from reasoning.models import ReasoningSession

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(client, alice):
    ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan a CHF 2m gift.", model_primary="offline/sim"
    )
    client.force_login(alice.user)
    return client


@pytest.fixture
def superuser(client, alice):
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.mark.parametrize("query", ["q=%00", "problem_kind=%00", "status=%00", "q=a%00b", "page=%00", "%00=1"])
def test_the_session_list_answers_400_to_a_nul(member, query):
    response = member.get(f"/?{query}")
    assert response.status_code == 400 and b"NUL" in response.content


@pytest.mark.parametrize(
    "path",
    [
        "/admin/reasoning/reasoningsession/?q=%00",
        "/admin/reasoning/reasoningsession/?problem_kind=%00",
        "/admin/reasoning/reasoningsession/?status__exact=%00",
        "/admin/reasoning/llmcall/?model_used__exact=%00",
        "/admin/reasoning/rubric/?q=%00",
        "/admin/reasoning/tenant/?q=%00",
    ],
)
def test_admin_lists_and_their_filters_answer_400_to_a_nul(superuser, path):
    assert superuser.get(path).status_code == 400


@pytest.mark.parametrize(
    "path",
    ["/api/sessions?problem_kind=%00", "/api/sessions/%00", "/api/sessions?status=%00", "/api/sessions/%00/tree"],
)
def test_the_api_answers_a_nul_with_a_json_4xx(client, alice, path):
    response = client.get(path, **alice.auth)
    assert response.status_code in (404, 422) and response.json()["detail"]


def test_a_clean_address_still_works(member):
    assert member.get("/?q=gift&problem_kind=general").status_code == 200
