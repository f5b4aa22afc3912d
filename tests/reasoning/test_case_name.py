"""Cases by name (issue 26, item 3): an optional case_name through the API (create, read, list), searchable, kept by
forks; the list filtered by model, mode, status, fork or original, and who started it."""

import pytest

from reasoning.models import ReasoningNode, ReasoningSession

pytestmark = pytest.mark.django_db

MEIER = "Meier family – succession"
PROBLEM = "Plan the succession of a CHF 40m family company to two children, minimising gift tax."


def create(client, party, **fields):
    body = {"problem_text": PROBLEM, "mode": "tot", **fields}
    response = client.post("/api/sessions", body, content_type="application/json", **party.auth)
    assert response.status_code == 201, response.content
    return response.json()


def listed(client, party, **query):
    response = client.get("/api/sessions", query, **party.auth)
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def test_a_case_name_is_created_read_and_listed(client, alice, django_capture_on_commit_callbacks):
    made = create(client, alice, case_name="  Meier family –\n succession ")
    assert made["case_name"] == MEIER  # one line, trimmed
    assert client.get(f"/api/sessions/{made['id']}", **alice.auth).json()["case_name"] == MEIER
    items = client.get("/api/sessions", **alice.auth).json()["items"]
    assert [item["case_name"] for item in items] == [MEIER]
    assert create(client, alice)["case_name"] == ""  # optional


def test_a_case_name_too_long_or_not_text_is_a_422_naming_the_field(client, alice):
    for bad in ("x" * 201, 42, "nul\x00"):
        body = {"problem_text": PROBLEM, "case_name": bad}
        response = client.post("/api/sessions", body, content_type="application/json", **alice.auth)
        assert response.status_code == 422, (bad, response.content)
        assert "case_name" in response.content.decode()


def test_the_list_searches_case_names_and_problems(client, alice, bob):
    meier = create(client, alice, case_name=MEIER)
    other = create(client, alice, problem_text="Rebalance a CHF 3m portfolio that drifted to 72% equities.")
    create(client, bob, case_name=MEIER)  # another tenant's: never listed
    assert listed(client, alice, q="meier") == [meier["id"]]
    assert listed(client, alice, q="drifted") == [other["id"]]
    assert listed(client, alice, q="nobody") == []


def test_a_fork_keeps_the_case_name(client, alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text=PROBLEM, model_primary="offline/sim", case_name=MEIER, mode="tot",
        status="solved",
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought=PROBLEM)
    step = ReasoningNode.objects.create(tenant=alice.tenant, session=session, parent=root, depth=1, thought="Gift.")
    response = client.post(
        f"/api/sessions/{session.id}/fork", {"node_id": str(step.id)}, content_type="application/json", **alice.auth
    )
    assert response.status_code == 201, response.content
    assert response.json()["case_name"] == MEIER


def test_the_list_filters_by_model_origin_and_who_started_it(client, alice):
    def row(**fields):
        return str(
            ReasoningSession.objects.create(
                tenant=alice.tenant, problem_text=PROBLEM, **{"model_primary": "offline/sim", **fields}
            ).id
        )

    sim = row(triggered_by="user:advisor")
    noisy = row(model_primary="offline/noisy", triggered_by="api:ci")
    real = row(model_primary="openai/gpt-4o-mini", mode="lats", status="solved")
    fork = row(forked_from_id=sim, triggered_by="user:advisor")
    assert set(listed(client, alice, model="offline")) == {sim, fork}
    assert listed(client, alice, model="noisy") == [noisy]
    assert listed(client, alice, model="real") == [real]
    assert listed(client, alice, origin="fork") == [fork]
    assert set(listed(client, alice, origin="original")) == {sim, noisy, real}
    assert set(listed(client, alice, by="user:advisor")) == {sim, fork}
    assert set(listed(client, alice, by="web:advisor")) == {sim, fork}  # the form's old name finds the person too
    assert listed(client, alice, mode="lats", status="solved") == [real]
    for bad in ({"model": "gpt"}, {"origin": "copy"}, {"by": "x" * 201}):
        response = client.get("/api/sessions", bad, **alice.auth)
        assert response.status_code == 422 and next(iter(bad)) in response.content.decode()


def test_the_sessions_page_filters_and_names_cases(client, alice):
    client.force_login(alice.user)
    ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text=PROBLEM, model_primary="offline/noisy", case_name=MEIER,
        triggered_by="web:alice-advisor",
    )
    ReasoningSession.objects.create(tenant=alice.tenant, problem_text="Rebalance the Keller portfolio.",
                                    model_primary="offline/sim", triggered_by="api:ci")
    page = client.get("/", {"q": "meier"}).content.decode()
    assert MEIER in page and "Keller" not in page
    page = client.get("/", {"model": "offline", "by": "api:ci"}).content.decode()
    assert "Keller" in page and MEIER not in page
    assert 'value="web:alice-advisor"' in page  # the By filter offers who started sessions
    page = client.get("/", {"origin": "fork"}).content.decode()
    assert "No sessions match these filters" in page
    assert client.get("/", {"model": "nonsense"}).status_code == 200  # an unknown choice is ignored
    assert client.get("/", {"q": "a\x00b"}).status_code == 400  # refused before the view, never a 500


def test_the_case_name_titles_the_page_and_the_report(client, alice):
    client.force_login(alice.user)
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text=PROBLEM, model_primary="offline/sim", case_name=MEIER
    )
    page = client.get(f"/sessions/{session.id}/").content.decode()
    assert f"<title>{MEIER} · " in page and 'data-testid="case-name"' in page
    report = client.get(f"/sessions/{session.id}/report/").content.decode()
    assert MEIER in report.split("</title>")[0] and 'data-testid="report-case"' in report


def test_the_form_takes_a_case_name(client, alice):
    client.force_login(alice.user)
    response = client.post(
        "/sessions/new/",
        {"case_name": MEIER, "problem_text": PROBLEM, "problem_kind": "general", "mode": "tot", "budget_usd": "0.5"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert ReasoningSession.objects.get(tenant=alice.tenant).case_name == MEIER
