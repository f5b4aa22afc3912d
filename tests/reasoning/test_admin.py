"""The admin: rubrics editable, sessions read-only with their nodes; a tenant admin sees its own tenant only."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from reasoning import access
from reasoning.models import (
    ApiKey,
    LLMCall,
    Membership,
    OverseerAction,
    ReasoningNode,
    ReasoningSession,
    Role,
    Rubric,
    RubricCriterion,
    Tenant,
)
from tests.conftest import make_party

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


# The demo login is what a firm's advisor is: staff, admin of its tenant, never a superuser.


@pytest.fixture
def rival(rubrics):
    """Another firm with a session, its ledger and audit rows, a key and a rubric of its own."""
    party = make_party("rival")
    session = ReasoningSession.objects.create(
        tenant=party.tenant, problem_text="Rival's secret family trust question", model_primary="offline/sim"
    )
    LLMCall.objects.create(
        tenant=party.tenant, session=session, purpose="propose", model_requested="rival/model", outcome="ok"
    )
    OverseerAction.objects.create(tenant=party.tenant, session=session, actor="user:rival-advisor", action="prune")
    party.session = session
    party.rubric = Rubric.objects.create(tenant=party.tenant, problem_kind="rival-kind", name="Rival house rubric")
    party.api_key = ApiKey.objects.get(tenant=party.tenant)
    return party


def seed_demo():
    """seed_demo over a demo tenant that already has a session, so seeding runs no search."""
    tenant = Tenant.objects.create(slug="demo", name="Demo Family Office")
    session = ReasoningSession.objects.create(
        tenant=tenant, problem_text="Demo's own pension question", model_primary="offline/sim"
    )
    ReasoningNode.objects.create(tenant=tenant, session=session, depth=0, thought="A demo root thought")
    call_command("seed_demo", stdout=io.StringIO())
    tenant.session = session
    return tenant


@pytest.fixture
def demo(client, rubrics):
    """The demo tenant, logged in as advisor/advisor after seed_demo."""
    tenant = seed_demo()
    assert client.login(username="advisor", password="advisor")
    return tenant


def test_seed_demo_makes_the_advisor_a_tenant_admin_and_demotes_an_old_superuser(rubrics):
    get_user_model().objects.create_superuser("advisor", "advisor@example.com", "advisor")
    seed_demo()
    user = get_user_model().objects.get(username="advisor")
    assert user.is_staff and not user.is_superuser and user.check_password("advisor")
    assert user.membership.tenant.slug == "demo" and user.membership.role == Role.ADMIN


CHANGELISTS = ["reasoningsession", "llmcall", "overseeraction", "apikey", "rubric", "membership", "tenant"]


@pytest.mark.parametrize("model", CHANGELISTS)
def test_a_tenant_admin_sees_nothing_of_another_tenant_in_a_changelist(client, demo, rival, model):
    page = client.get(f"/admin/reasoning/{model}/")
    assert page.status_code == 200
    assert b"rival" not in page.content.lower()  # neither its rows nor its name in a filter


def test_a_tenant_admin_sees_its_own_tenants_rows(client, demo, rival):
    assert str(demo.session.pk).encode() in client.get("/admin/reasoning/reasoningsession/").content
    page = client.get(f"/admin/reasoning/reasoningsession/{demo.session.pk}/change/")
    assert page.status_code == 200 and b"A demo root thought" in page.content and b'name="_save"' not in page.content
    assert b"advisor" in client.get("/admin/reasoning/membership/").content
    assert client.get(f"/admin/reasoning/tenant/{demo.pk}/change/").status_code == 200
    index = client.get("/admin/").content
    assert b"/admin/reasoning/rubric/" in index and b"/admin/auth/user/" not in index


def test_another_tenants_change_pages_are_not_found(client, demo, rival):
    urls = [
        f"/admin/reasoning/reasoningsession/{rival.session.pk}/change/",
        f"/admin/reasoning/apikey/{rival.api_key.pk}/change/",
        f"/admin/reasoning/rubric/{rival.rubric.pk}/change/",
        f"/admin/reasoning/rubric/{rival.rubric.pk}/delete/",
        f"/admin/reasoning/membership/{rival.user.membership.pk}/change/",
        f"/admin/reasoning/tenant/{rival.tenant.pk}/change/",
    ]
    for url in urls:
        response = client.get(url)
        assert (response.status_code, response["Location"]) == (302, "/admin/"), url  # Django's "doesn't exist"
    client.post(f"/admin/reasoning/rubric/{rival.rubric.pk}/change/", rubric_form(name="Taken over"))
    assert Rubric.objects.get(pk=rival.rubric.pk).name == "Rival house rubric"


def test_a_tenant_admin_sees_no_users_at_all(client, demo, rival):
    assert client.get("/admin/auth/user/").status_code == 403
    assert client.get(f"/admin/auth/user/{rival.user.pk}/change/").status_code == 403


def test_a_tenant_admin_sets_its_members_roles_but_not_their_user_or_tenant(client, demo, rival):
    junior = get_user_model().objects.create_user("junior", password="pw")
    membership = Membership.objects.create(user=junior, tenant=demo, role=Role.VIEWER)
    url = f"/admin/reasoning/membership/{membership.pk}/change/"
    response = client.post(url, {"role": "advisor", "user": rival.user.pk, "tenant": rival.tenant.pk})
    assert response.status_code == 302
    membership.refresh_from_db()
    assert (membership.user, membership.tenant, membership.role) == (junior, demo, Role.ADVISOR)


def rubric_form(problem_kind="pension-gap", name="Pension gap", criteria=(), initial=0, **fields):
    data = {
        "problem_kind": problem_kind,
        "name": name,
        "description": "",
        "is_active": "on",
        "criteria-TOTAL_FORMS": str(len(criteria)),
        "criteria-INITIAL_FORMS": str(initial),
        "criteria-MIN_NUM_FORMS": "0",
        "criteria-MAX_NUM_FORMS": "1000",
        **fields,
    }
    for i, criterion in enumerate(criteria):
        data.update({f"criteria-{i}-{k}": v for k, v in criterion.items()})
    return data


def test_a_tenant_admin_edits_its_own_rubric_and_its_criteria(client, demo):
    rubric = Rubric.objects.create(tenant=demo, problem_kind="pension-gap", name="Pension gap")
    criterion = RubricCriterion.objects.create(rubric=rubric, name="Coverage", weight=1.0)
    page = client.get(f"/admin/reasoning/rubric/{rubric.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' in page.content and b"Coverage" in page.content
    existing = {"id": criterion.pk, "rubric": rubric.pk, "position": 0, "name": "Coverage", "weight": 2}
    added = {"rubric": rubric.pk, "position": 1, "name": "Longevity risk", "weight": 1}
    response = client.post(
        f"/admin/reasoning/rubric/{rubric.pk}/change/",
        rubric_form(name="Pension gap, revised", criteria=[existing, added], initial=1),
    )
    assert response.status_code == 302
    rubric.refresh_from_db()
    assert rubric.name == "Pension gap, revised" and rubric.tenant == demo
    assert [(c.name, c.weight) for c in rubric.criteria.all()] == [("Coverage", 2.0), ("Longevity risk", 1.0)]


def test_a_new_rubric_lands_in_the_admins_tenant(client, demo, rival):
    criteria = [{"position": 0, "name": "Soundness", "weight": 3}]
    # "general" has a shared rubric: the tenant's own one overrides it, whatever tenant the post names.
    response = client.post(
        "/admin/reasoning/rubric/add/", rubric_form("general", criteria=criteria, tenant=rival.tenant.pk)
    )
    assert response.status_code == 302
    rubric = Rubric.objects.get(problem_kind="general", tenant=demo)
    assert rubric.criteria.count() == 1
    again = client.post("/admin/reasoning/rubric/add/", rubric_form("general"))
    assert again.status_code == 200 and again.context["adminform"].form.errors  # a form error, not a 500
    assert Rubric.objects.filter(problem_kind="general", tenant=demo).count() == 1


def test_shared_rubrics_are_visible_but_read_only(client, demo):
    shared = Rubric.objects.get(tenant=None, problem_kind="general")
    assert b"General" in client.get("/admin/reasoning/rubric/").content
    page = client.get(f"/admin/reasoning/rubric/{shared.pk}/change/")
    assert page.status_code == 200 and b"Soundness" in page.content and b'name="_save"' not in page.content
    response = client.post(f"/admin/reasoning/rubric/{shared.pk}/change/", rubric_form("general", name="Mine now"))
    assert response.status_code == 403
    assert client.post(f"/admin/reasoning/rubric/{shared.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Rubric.objects.get(pk=shared.pk).name != "Mine now"


def test_a_tenant_admin_issues_a_key_shown_once_and_revokes_it(client, demo, rival):
    page = client.post(
        "/admin/reasoning/apikey/add/", {"name": "crm", "tenant": rival.tenant.pk, "scopes": ["read", "run", "oversee"]}
    )
    assert page.status_code == 200
    plaintext = re.search(rb'data-testid="api-key"[^>]*>(rk_[\w-]+)<', page.content).group(1).decode()
    key = ApiKey.find(plaintext)
    assert key.tenant == demo and key.name == "crm" and not key.is_admin
    for html in (
        page.content,
        client.get("/admin/reasoning/apikey/").content,
        client.get(f"/admin/reasoning/apikey/{key.pk}/change/").content,
    ):
        assert key.key_hash.encode() not in html
    assert plaintext.encode() not in client.get(f"/admin/reasoning/apikey/{key.pk}/change/").content
    client.post("/admin/reasoning/apikey/", {"action": "revoke", "_selected_action": [key.pk, rival.api_key.pk]})
    assert access.for_key(plaintext) is None
    assert ApiKey.objects.get(pk=rival.api_key.pk).revoked_at is None


def test_a_staff_user_without_an_admin_membership_sees_nothing_of_reasoning(client, demo, rival):
    advisor = get_user_model().objects.create_user("plain-advisor", password="pw", is_staff=True)
    Membership.objects.create(user=advisor, tenant=demo, role=Role.ADVISOR)
    client.force_login(advisor)
    assert client.get("/admin/").status_code == 200
    assert b"/admin/reasoning/" not in client.get("/admin/").content
    assert client.get("/admin/reasoning/").status_code == 404
    assert client.get("/admin/reasoning/rubric/").status_code == 403
    assert client.get(f"/admin/reasoning/reasoningsession/{demo.session.pk}/change/").status_code == 403


def test_a_superuser_sees_every_tenant(demo, rival):
    admin_client = Client()
    admin_client.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "pw"))
    sessions = admin_client.get("/admin/reasoning/reasoningsession/").content
    assert str(demo.session.pk).encode() in sessions and str(rival.session.pk).encode() in sessions
    rubrics = admin_client.get("/admin/reasoning/rubric/").content
    assert b"Rival house rubric" in rubrics
    assert admin_client.get(f"/admin/reasoning/rubric/{rival.rubric.pk}/change/").status_code == 200


def test_money_is_shown_with_its_currency_and_a_sensible_precision(admin_client, alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", budget_used_usd=0.026518999999999997
    )
    LLMCall.objects.create(
        tenant=alice.tenant,
        session=session,
        purpose="tot.propose",
        model_requested="offline/sim",
        cost_usd=0.000123456789,
        outcome="ok",
    )
    sessions = admin_client.get("/admin/reasoning/reasoningsession/").content.decode()
    assert "0.0265 USD" in sessions and "0.026518999999999997" not in sessions
    calls = admin_client.get("/admin/reasoning/llmcall/").content.decode()
    assert "0.0001 USD" in calls and "0.000123456789" not in calls
    change = admin_client.get(f"/admin/reasoning/reasoningsession/{session.pk}/change/").content.decode()
    assert "0.0265 USD" in change and "0.5000 USD" in change


def test_the_ledger_lists_newest_first_in_columns_that_fit(admin_client, alice):
    from datetime import timedelta

    from django.utils import timezone

    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="A long problem " * 20, model_primary="offline/sim"
    )
    now = timezone.now()
    for i, purpose in enumerate(["tot.propose", "tot.evaluate", "tot.synthesize"]):
        LLMCall.objects.create(
            tenant=alice.tenant,
            session=session,
            purpose=purpose,
            model_requested="offline/sim",
            model_used="offline/sim",
            tokens_in=1200 + i,
            tokens_out=300,
            cost_usd=0.00622,
            outcome="ok",
            created_at=now + timedelta(seconds=i),
        )
    page = admin_client.get("/admin/reasoning/llmcall/").content.decode()
    assert page.index("tot.synthesize") < page.index("tot.evaluate") < page.index("tot.propose")  # newest first
    assert "A long problem" not in page  # the session by its short id, not its problem's text
    assert str(session.id)[:8] in page
    assert "1,202 → 300" in page and "0.0062 USD" in page
    assert "admin/reasoning/ledger.css" in page  # the columns keep to one line each


def test_sessions_and_the_ledger_are_searchable(admin_client, alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="A question about a family trust", model_primary="offline/sim"
    )
    ReasoningSession.objects.create(tenant=alice.tenant, problem_text="Something else", model_primary="offline/sim")
    LLMCall.objects.create(
        tenant=alice.tenant, session=session, purpose="tot.evaluate", model_requested="offline/sim", outcome="ok"
    )
    found = admin_client.get("/admin/reasoning/reasoningsession/", {"q": "family trust"}).content.decode()
    assert "family trust" in found and "Something else" not in found
    assert "tot.evaluate" in admin_client.get("/admin/reasoning/llmcall/", {"q": "evaluate"}).content.decode()


def test_the_criteria_inline_carries_its_layout_css(admin_client, rubrics):
    rubric = Rubric.objects.get(tenant=None, problem_kind="general")
    page = admin_client.get(f"/admin/reasoning/rubric/{rubric.pk}/change/").content.decode()
    assert "admin/reasoning/criteria.css" in page


def test_active_time_is_rounded_with_its_unit(admin_client, alice):
    """Issue 26, item 4: "Active seconds: 18.93339902599996" read like the rest of the admin."""
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", active_seconds=18.93339902599996
    )
    change = admin_client.get(f"/admin/reasoning/reasoningsession/{session.pk}/change/").content.decode()
    assert "18.9 s" in change and "18.93339902599996" not in change
    listing = admin_client.get("/admin/reasoning/reasoningsession/").content.decode()
    assert "18.9 s" in listing
    ReasoningSession.objects.filter(pk=session.pk).update(active_seconds=125.4)
    assert "2 min 05 s" in admin_client.get(f"/admin/reasoning/reasoningsession/{session.pk}/change/").content.decode()


def test_a_call_page_says_which_call_it_is(admin_client, alice):
    session = ReasoningSession.objects.create(tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim")
    call = LLMCall.objects.create(
        tenant=alice.tenant, session=session, purpose="tot.evaluate", attempt=2, model_requested="offline/sim",
        model_used="offline/sim", outcome="ok",
    )
    page = admin_client.get(f"/admin/reasoning/llmcall/{call.pk}/change/").content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "LLMCall object" not in page
    assert f"Call {call.pk}: tot.evaluate (try 2) · offline/sim · ok · session {str(session.id)[:8]}" in title


def test_the_tenant_time_zone_is_a_choice_of_iana_zones(client, demo):
    tenant = demo
    page = client.get(f"/admin/reasoning/tenant/{tenant.pk}/change/").content.decode()
    assert '<select name="time_zone"' in page
    assert '<option value="Europe/Zurich"' in page and '<option value="America/Los_Angeles"' in page
    for bad in ("Mars/Olympus", "europe/zurich", "<b>UTC</b>"):
        response = client.post(
            f"/admin/reasoning/tenant/{tenant.pk}/change/", {"name": tenant.name, "time_zone": bad}
        )
        assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    response = client.post(f"/admin/reasoning/tenant/{tenant.pk}/change/", {"name": "x", "time_zone": "Asia/Tokyo"})
    assert response.status_code == 302
    tenant.refresh_from_db()
    assert tenant.time_zone == "Asia/Tokyo"
