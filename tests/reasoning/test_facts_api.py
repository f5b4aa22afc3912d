"""The client's fact sheet at the API: read from the problem at creation, corrected by advisors (audited, the steps
it touches marked stale, a running search told), refused to viewers and other tenants, bad input a 422 naming the
field; every node and the answer checked against it."""

import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import CaseFact, Membership, OverseerAction, ReasoningNode, ReasoningSession, Role
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

CALIFORNIAN = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock (cost basis $400k). Her salary is "
    "$450k. She is considering an exchange fund, a charitable remainder trust, a donor-advised fund and a collar."
)


def create(client, party, text=CALIFORNIAN, **extra):
    body = {"problem_text": text, "mode": "tot", "params": {"depth": 2, "branching": 2, "keep": 1}, **extra}
    response = client.post("/api/sessions", data=json.dumps(body), content_type="application/json", **party.auth)
    assert response.status_code == 201, response.content
    return response.json()


def send(client, method, path, party, body=None):
    kwargs = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
    return getattr(client, method)(path, **kwargs, **party.auth)


def by_label(facts):
    return {f["label"]: f for f in facts}


def test_a_new_session_carries_the_facts_read_from_its_problem(client, alice):
    session = create(client, alice)
    facts = session["facts"]
    values = {(f["kind"], f["value"], f["unit"]) for f in facts}
    assert {("amount", 3_200_000, "USD"), ("amount", 450_000, "USD"), ("amount", 400_000, "USD")} <= values
    assert ("percent", 70, "%") in values and ("place", "US-CA", "ISO 3166") in values
    for fact in facts:
        assert set(fact) >= {"id", "label", "kind", "value", "unit", "text", "source"}
        assert fact["source"] == "extracted"
        if fact["start"] is not None:
            assert CALIFORNIAN[fact["start"] : fact["end"]] == fact["text"]
    assert send(client, "get", f"/api/sessions/{session['id']}/facts", alice).json() == facts


def test_an_advisor_corrects_adds_and_removes_facts_each_audited(client, alice):
    session = create(client, alice)
    path = f"/api/sessions/{session['id']}/facts"
    salary = next(f for f in session["facts"] if f["kind"] == "amount" and f["value"] == 450_000)

    edited = send(client, "patch", f"{path}/{salary['id']}", alice, {"value": "$480k"})
    assert edited.status_code == 200, edited.content
    assert edited.json()["value"] == 480_000 and edited.json()["source"] == "advisor"
    added = send(client, "post", path, alice, {"label": "bonus", "kind": "amount", "value": 90_000, "unit": "USD"})
    assert added.status_code == 201, added.content
    assert send(client, "delete", f"{path}/{added.json()['id']}", alice).status_code == 204

    actions = [a.action for a in OverseerAction.objects.filter(session_id=session["id"]).order_by("id")]
    assert actions[-3:] == ["fact.edit", "fact.add", "fact.remove"]
    edit = OverseerAction.objects.filter(session_id=session["id"], action="fact.edit").first()
    assert edit.before["value"] == 450_000 and edit.actor


@pytest.mark.parametrize(
    "body, field",
    [
        ({"kind": "amount", "value": 1}, "label"),
        ({"label": "x", "kind": "salary", "value": 1}, "kind"),
        ({"label": "x", "kind": "amount", "value": "lots", "unit": "USD"}, "value"),
        ({"label": "x", "kind": "amount", "value": 10, "unit": "dollars"}, "unit"),
        ({"label": "x", "kind": "place", "value": "Atlantis"}, "value"),
        ({"label": "x", "kind": "percent", "value": True}, "value"),
        ({"label": "x", "kind": "amount", "value": 1, "unit": "USD", "colour": "red"}, "colour"),
        ({"label": "x", "kind": "amount", "value": 5, "unit": "ZZZ"}, "unit"),  # three letters, but no currency
        ({"label": "x", "kind": "amount", "value": 1e300, "unit": "USD"}, "value"),
        ({"label": "x", "kind": "goal", "value": "x" * 301}, "value"),
        ({"label": "x", "kind": "percent", "value": 60, "role": "favourite"}, "role"),
        ({"label": "cash floor", "kind": "limit", "value": 18, "unit": "fortnights", "role": "floor"}, "unit"),
        ({"label": "cash floor", "kind": "limit", "value": "plenty", "role": "floor"}, "value"),
        ({"label": "x", "kind": "person", "value": 2, "role": "boss"}, "role"),
        ({"label": "x", "kind": "amount", "value": 1, "unit": "USD", "role": "x" * 17}, "role"),
    ],
)
def test_a_bad_fact_is_a_422_naming_the_field(client, alice, body, field):
    session = create(client, alice)
    response = send(client, "post", f"/api/sessions/{session['id']}/facts", alice, body)
    assert response.status_code == 422, response.content
    [error] = response.json()["detail"]  # one error, saying what is wanted, not one per branch of a type
    assert error["field"] == field and "constrained" not in error["message"] and "function-" not in error["field"]


def test_an_amount_in_lower_case_currency_is_stored_as_its_iso_code(client, alice):
    session = create(client, alice)
    body = {"label": "bonus", "kind": "amount", "value": 50_000, "unit": "chf"}
    response = send(client, "post", f"/api/sessions/{session['id']}/facts", alice, body)
    assert response.status_code == 201 and response.json()["unit"] == "CHF"
    body = {"label": "gift", "kind": "amount", "value": "lots", "unit": "USD"}
    response = send(client, "post", f"/api/sessions/{session['id']}/facts", alice, body)
    assert response.json()["detail"][0]["message"].startswith("an amount as a number")


def test_the_currency_typed_with_the_figure_wins_over_the_unit_field(client, alice):
    """Issue 33: the page's form once started its currency at USD, and "EUR 1.8M" was saved as USD 1.8M."""
    session = create(client, alice)
    path = f"/api/sessions/{session['id']}/facts"
    for body in ({"value": "EUR 1.8M", "unit": "USD"}, {"value": "EUR 1.8M"}):
        response = send(client, "post", path, alice, {"label": "holiday flat", "kind": "amount", **body})
        assert response.status_code == 201, response.content
        assert (response.json()["value"], response.json()["unit"]) == (1_800_000, "EUR")


@pytest.mark.parametrize(
    "body, stored",
    [
        ({"label": "cash floor", "kind": "limit", "value": "18 months", "role": "floor", "base": "expenses"},
         (18, "months", "floor", "expenses")),
        ({"label": "cash minimum", "kind": "limit", "value": "CHF 200k", "role": "minimum", "base": "cash"},
         (200_000, "CHF", "minimum", "cash")),
        ({"label": "issuer cap", "kind": "limit", "value": 10, "unit": "%", "role": "cap", "base": "one issuer"},
         (10, "%", "cap", "one issuer")),
        ({"label": "rebalancing horizon", "kind": "horizon", "value": 4, "unit": "years", "role": "over"},
         (4, "years", "over", None)),
        ({"label": "children", "kind": "person", "value": 3, "role": "child"}, (3, "people", "child", None)),
        ({"label": "equities target", "kind": "percent", "value": 60, "role": "target", "base": "portfolio"},
         (60, "%", "target", "portfolio")),
        ({"label": "uncalled commitments", "kind": "amount", "value": "CHF 3M", "role": "commitment"},
         (3_000_000, "CHF", "commitment", None)),
    ],
)
def test_limits_horizons_people_and_roles_are_facts_an_advisor_adds(client, alice, body, stored):
    session = create(client, alice)
    response = send(client, "post", f"/api/sessions/{session['id']}/facts", alice, body)
    assert response.status_code == 201, response.content
    fact = response.json()
    assert (fact["value"], fact["unit"], fact["role"], fact["base"]) == stored
    sheet = send(client, "get", f"/api/sessions/{session['id']}/facts", alice).json()
    assert any(f["id"] == fact["id"] and f["role"] == stored[2] for f in sheet)


def test_a_viewer_reads_the_sheet_but_cannot_change_it(client, alice):
    session = create(client, alice)
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    client.force_login(alice.user)
    path = f"/api/sessions/{session['id']}/facts"
    assert client.get(path).status_code == 200
    fact = session["facts"][0]
    assert client.delete(f"{path}/{fact['id']}").status_code == 403
    assert CaseFact.objects.filter(pk=fact["id"]).exists()


def test_another_tenant_s_sheet_is_not_found(client, alice, bob):
    session = create(client, alice)
    fact = session["facts"][0]
    assert send(client, "get", f"/api/sessions/{session['id']}/facts", bob).status_code == 404
    assert send(client, "patch", f"/api/sessions/{session['id']}/facts/{fact['id']}", bob, {"label": "x"}).status_code == 404
    other = create(client, bob)
    path = f"/api/sessions/{other['id']}/facts/{fact['id']}"  # bob's session, alice's fact
    assert send(client, "delete", path, bob).status_code == 404
    assert send(client, "delete", f"/api/sessions/{other['id']}/facts/nonsense", bob).status_code == 404


async def test_every_node_and_the_answer_are_checked_and_a_correction_marks_the_steps_it_touches(alice, client):
    data = SessionIn(problem_text=CALIFORNIAN, mode="tot", params={"depth": 2, "branching": 2, "keep": 1})
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    await run_session(session.id)
    done = await ReasoningSession.objects.aget(pk=session.id)
    assert done.status == "solved", done.error
    assert done.answer_checks and all(c["ok"] for c in done.answer_checks)  # the exact offline model: no slip
    nodes = [n async for n in ReasoningNode.objects.filter(session=done, depth__gt=0)]
    assert nodes and all(isinstance(n.checks, list) for n in nodes)

    salary = await CaseFact.objects.aget(session=done, kind="amount", number=450_000)
    await sync_to_async(services.update_fact)(alice.tenant, done.id, salary.pk, "advisor", {"value": 480_000})
    stale = [n async for n in ReasoningNode.objects.filter(session=done, stale=True)]
    mentions = [n for n in nodes if "450" in n.thought]
    assert {n.pk for n in mentions} <= {n.pk for n in stale}
    assert all("salary" in n.stale_reason and "480,000" in n.stale_reason for n in stale)


async def test_a_running_search_gets_the_corrected_sheet_as_a_command(alice):
    data = SessionIn(problem_text=CALIFORNIAN, mode="tot", params={"depth": 1, "branching": 2, "keep": 1})
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    await ReasoningSession.objects.filter(pk=session.id).aupdate(status="running")
    fact = await CaseFact.objects.filter(session=session).afirst()
    await sync_to_async(services.update_fact)(alice.tenant, session.id, fact.pk, "advisor", {"label": "net worth"})
    command = await OverseerAction.objects.aget(session=session, action="fact.edit")
    assert command.state == "pending" and any(f["label"] == "net worth" for f in command.payload["facts"])


def test_a_fork_keeps_the_sheet_as_the_advisors_left_it(client, alice):
    session = create(client, alice)
    fact = session["facts"][0]
    send(client, "patch", f"/api/sessions/{session['id']}/facts/{fact['id']}", alice, {"label": "total wealth"})
    root = ReasoningSession.objects.get(pk=session["id"])
    node = ReasoningNode.objects.create(
        tenant=root.tenant, session=root, depth=0, thought=root.problem_text, state={}
    )
    fork = services.fork_session(alice.tenant, root.id, "advisor", str(node.pk))
    labels = [f.label for f in CaseFact.objects.filter(session=fork).order_by("position")]
    assert labels[0] == "total wealth" and len(labels) == len(session["facts"])


def test_check_facts_is_a_param_every_mode_takes(client, alice):
    for mode in ("tot", "lats", "reflexion", "react", "trm"):
        body = {"problem_text": CALIFORNIAN, "mode": mode, "params": {"check_facts": False}}
        response = client.post("/api/sessions", data=json.dumps(body), content_type="application/json", **alice.auth)
        assert response.status_code == 201, (mode, response.content)
        assert response.json()["params"]["check_facts"] is False
    bad = {"problem_text": CALIFORNIAN, "mode": "tot", "params": {"check_facts": "no"}}
    response = client.post("/api/sessions", data=json.dumps(bad), content_type="application/json", **alice.auth)
    assert response.status_code == 422 and "params.check_facts" in response.content.decode()
