"""Four eyes on every answer (issue 34, section 3) at the API: who may approve or request changes, with which key,
on which session; and how a decision is withdrawn, with its reason, when the answer changes."""

import json

import pytest
from django.contrib.auth import get_user_model

from reasoning import review, services
from reasoning.engine import finish
from reasoning.models import ApiKey, Membership, OverseerAction, ReasoningNode, ReasoningSession, Role, Scope, Status
from reasoning.strategies.base import Node, Outcome

pytestmark = pytest.mark.django_db

ANSWER = "Sell the concentrated position in three tranches and hedge the rest with a collar."


def member(party, login, role):
    user = get_user_model().objects.create_user(username=login, password="pw-for-tests")
    Membership.objects.create(user=user, tenant=party.tenant, role=role)
    return user


def key_of(party, user, scopes):
    return {"HTTP_AUTHORIZATION": f"Bearer {ApiKey.issue(party.tenant, scopes=scopes, user=user)[1]}"}


@pytest.fixture
def four_eyes(alice):
    """alice's tenant requires review; rita reviews, ada administers, vic watches, alice-advisor ran the session."""
    alice.tenant.require_review = True
    alice.tenant.save()
    alice.rita = member(alice, "rita", Role.REVIEWER)
    alice.ada = member(alice, "ada", Role.ADMIN)
    alice.vic = member(alice, "vic", Role.VIEWER)
    return alice


def answered(party, status=Status.SOLVED, state="awaiting", answer=ANSWER):
    """A session at rest with an answer on its line root -> step -> leaf, and a side branch off the step."""
    session = ReasoningSession.objects.create(
        tenant=party.tenant,
        problem_text="Plan the CHF 4m stake.",
        model_primary="offline/sim",
        status=status,
        mode="tot",
        triggered_by=f"user:{party.user.username}",
        created_by=party.user,
        review_state=state,
    )
    root = ReasoningNode.objects.create(tenant=party.tenant, session=session, depth=0, thought="root")
    step = ReasoningNode.objects.create(tenant=party.tenant, session=session, parent=root, depth=1, thought="a step")
    leaf = ReasoningNode.objects.create(tenant=party.tenant, session=session, parent=step, depth=2, thought=answer)
    side = ReasoningNode.objects.create(tenant=party.tenant, session=session, parent=root, depth=1, thought="aside")
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=root, final_node=leaf, final_answer=answer)
    session.refresh_from_db()
    session.step, session.leaf, session.side = step, leaf, side
    return session


def post(client, session, body, auth=None, user=None):
    if user is not None:
        client.force_login(user)
    response = client.post(
        f"/api/sessions/{session.id}/review", json.dumps(body), content_type="application/json", **(auth or {})
    )
    client.logout()
    return response


def approve(client, session, user, comment=""):
    response = post(client, session, {"decision": "approve", "comment": comment}, user=user)
    assert response.status_code == 200, response.content
    return response.json()["review"]


def state_of(session):
    session.refresh_from_db()
    return session.review


# ---- who may decide -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["rita", "ada"])
@pytest.mark.parametrize("decision, comment", [("approve", ""), ("approve", "Fine."), ("request_changes", "Why 3?")])
def test_a_reviewer_or_an_admin_decides_and_it_is_audited(client, four_eyes, who, decision, comment):
    session = answered(four_eyes)
    user = getattr(four_eyes, who)
    response = post(client, session, {"decision": decision, "comment": comment}, user=user)
    assert response.status_code == 200, response.content
    got = response.json()["review"]
    state = "approved" if decision == "approve" else "changes_requested"
    assert got["state"] == state and got["by"] == f"user:{who}" and got["at"] and got["comment"] == (comment or None)
    assert got["reason"] is None
    row = OverseerAction.objects.get(session=session)
    assert (row.action, row.actor, row.detail) == (f"review.{decision}", f"user:{who}", comment)
    assert row.before["state"] == "awaiting" and row.after["state"] == state and row.node_id == session.leaf.pk
    assert client.get(f"/api/sessions/{session.id}", **four_eyes.auth).json()["review"] == got


@pytest.mark.parametrize("role", [Role.VIEWER, Role.ADVISOR])
@pytest.mark.parametrize("decision", ["approve", "request_changes"])
def test_a_viewer_or_an_advisor_sees_the_review_and_cannot_act(client, four_eyes, role, decision):
    session = answered(four_eyes)
    user = member(four_eyes, f"someone-{role}", role)
    client.force_login(user)
    assert client.get(f"/api/sessions/{session.id}").json()["review"]["state"] == "awaiting"
    response = post(client, session, {"decision": decision, "comment": "no"}, user=user)
    assert response.status_code == 403 and response.json()["scope"] == "review"
    assert "review" in response.json()["detail"]
    assert state_of(session)["state"] == "awaiting" and not OverseerAction.objects.exists()


def test_the_person_who_ran_the_session_cannot_approve_it_unless_the_tenant_allows(client, four_eyes):
    session = answered(four_eyes)
    Membership.objects.filter(user=four_eyes.user).update(role=Role.ADMIN)  # an admin, and its author
    response = post(client, session, {"decision": "approve"}, user=four_eyes.user)
    assert response.status_code == 403
    detail = response.json()["detail"]
    assert "user:alice-advisor ran this session" in detail and "second person" in detail
    assert state_of(session)["state"] == "awaiting"
    # Asking for changes to one's own answer is no sign-off: it stands.
    asked = post(client, session, {"decision": "request_changes", "comment": "Redo it."}, user=four_eyes.user)
    assert asked.status_code == 200
    four_eyes.tenant.allow_self_approval = True
    four_eyes.tenant.save()
    assert approve(client, session, four_eyes.user)["by"] == "user:alice-advisor"


def test_who_chose_the_answer_by_hand_cannot_approve_it_either(client, four_eyes):
    session = answered(four_eyes)
    ReasoningSession.objects.filter(pk=session.pk).update(answer_chosen_by="user:rita/key:rk_abc")
    response = post(client, session, {"decision": "approve"}, user=four_eyes.rita)
    assert response.status_code == 403 and "user:rita ran this session or chose its answer" in response.json()["detail"]
    assert approve(client, session, four_eyes.ada)["state"] == "approved"


def test_a_key_needs_the_review_scope_and_a_person(client, four_eyes):
    session = answered(four_eyes)
    read_only = post(client, session, {"decision": "approve"}, key_of(four_eyes, four_eyes.rita, [Scope.READ]))
    assert read_only.status_code == 403 and read_only.json()["scope"] == "review"
    # A member's key never holds more than the role: an advisor's key is refused the scope when it is issued.
    refused = client.post(
        "/api/keys",
        json.dumps({"scopes": ["read", "review"], "user": four_eyes.user.username}),
        content_type="application/json",
        **key_of(four_eyes, four_eyes.ada, Scope.values),
    )
    assert refused.status_code == 422 and refused.json()["detail"][0]["field"] == "scopes"
    service = client.post(
        "/api/keys",
        json.dumps({"scopes": ["read", "review"]}),
        content_type="application/json",
        **key_of(four_eyes, four_eyes.ada, Scope.values),
    )
    assert service.status_code == 422 and "a person's" in service.json()["detail"][0]["message"]
    # A service key that holds it anyway (made before this rule) is no person: refused.
    anyone = post(client, session, {"decision": "approve"}, four_eyes.auth)
    _, plaintext = ApiKey.issue(four_eyes.tenant, scopes=[Scope.READ, Scope.REVIEW])
    service_key = post(client, session, {"decision": "approve"}, {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"})
    assert anyone.status_code == 403 and service_key.status_code == 403
    assert "service key" in service_key.json()["detail"]
    rita_key = key_of(four_eyes, four_eyes.rita, [Scope.READ, Scope.REVIEW])
    granted = post(client, session, {"decision": "approve"}, rita_key)
    assert granted.status_code == 200 and granted.json()["review"]["by"] == "user:rita"
    assert OverseerAction.objects.get(session=session).actor.startswith("user:rita/key:")


def test_another_tenants_reviewer_gets_404(client, four_eyes, bob):
    session = answered(four_eyes)
    stranger = member(bob, "bob-reviewer", Role.REVIEWER)
    assert post(client, session, {"decision": "approve"}, user=stranger).status_code == 404
    assert post(client, session, {"decision": "approve"}, bob.auth).status_code in (403, 404)
    assert state_of(session)["state"] == "awaiting"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"decision": "request_changes"}, "comment"),
        ({"decision": "request_changes", "comment": "   "}, "comment"),
        ({"decision": "reject", "comment": "x"}, "decision"),
        ({"comment": "x"}, "decision"),
        ({"decision": "approve", "comment": "x" * 2001}, "comment"),
        ({"decision": "approve", "because": "x"}, "because"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client, four_eyes, body, field):
    session = answered(four_eyes)
    response = post(client, session, body, user=four_eyes.rita)
    assert response.status_code == 422, response.content
    assert [e["field"] for e in response.json()["detail"]] == [field]


def test_a_session_with_no_answer_or_still_running_cannot_be_reviewed(client, four_eyes):
    empty = answered(four_eyes, status=Status.FAILED, answer="")
    ReasoningSession.objects.filter(pk=empty.pk).update(final_answer="", final_node=None)
    response = post(client, empty, {"decision": "approve"}, user=four_eyes.rita)
    assert response.status_code == 409 and "no answer" in response.json()["detail"]
    running = answered(four_eyes, status=Status.RUNNING)
    response = post(client, running, {"decision": "approve"}, user=four_eyes.rita)
    assert response.status_code == 409 and "running" in response.json()["detail"]


def test_without_review_required_the_session_carries_null_and_may_still_be_signed_off(client, alice):
    session = answered(alice, state="")
    assert client.get(f"/api/sessions/{session.id}", **alice.auth).json()["review"] is None
    rita = member(alice, "rita", Role.REVIEWER)
    assert approve(client, session, rita)["state"] == "approved"


# ---- an answer that changes loses its decision ----------------------------------------------------------------------


def withdrawn(session):
    review_now = state_of(session)
    row = OverseerAction.objects.filter(session=session, action="review.withdrawn").get()
    assert row.before["state"] in ("approved", "changes_requested") and row.after == review_now
    assert review_now["state"] == "awaiting" and review_now["by"] is None and row.detail == review_now["reason"]
    return review_now["reason"]


def test_an_edit_on_the_answers_line_withdraws_the_approval_and_one_elsewhere_does_not(client, four_eyes):
    session = answered(four_eyes)
    approve(client, session, four_eyes.rita)
    services.edit_node(four_eyes.tenant, session.side.id, "user:alice-advisor", "another aside")
    assert state_of(session)["state"] == "approved"
    services.edit_node(four_eyes.tenant, session.step.id, "user:alice-advisor", "a better step")
    reason = withdrawn(session)
    assert reason == "approval by user:rita withdrawn: user:alice-advisor edited step 1 of the answer's line"


def test_a_fact_change_withdraws_a_request_for_changes_too(client, four_eyes):
    session = answered(four_eyes)
    post(client, session, {"decision": "request_changes", "comment": "The stake is CHF 5m."}, user=four_eyes.rita)
    fact = {"label": "stake", "kind": "amount", "value": 5e6, "unit": "CHF"}
    services.add_fact(four_eyes.tenant, session.id, "user:alice-advisor", fact)
    reason = withdrawn(session)
    assert reason.startswith("changes requested by user:rita withdrawn: the client's fact 'stake' was added")


def test_a_promote_withdraws_the_approval(client, four_eyes):
    session = answered(four_eyes)
    approve(client, session, four_eyes.rita)
    services.promote_node(four_eyes.tenant, session.side.id, "user:alice-advisor", "shorter")
    assert "user:alice-advisor promoted step 1 as the answer" in withdrawn(session)


def test_a_prune_of_the_answers_branch_withdraws_the_approval(client, four_eyes):
    session = answered(four_eyes)
    approve(client, session, four_eyes.rita)
    services.set_pruned(four_eyes.tenant, session.step.id, "user:alice-advisor", pruned=True)
    assert "pruned a branch holding the answer" in withdrawn(session)


def test_a_forks_promotion_withdraws_the_forks_approval_and_leaves_its_parents(client, four_eyes):
    parent = answered(four_eyes)
    approve(client, parent, four_eyes.rita)
    fork = services.fork_session(four_eyes.tenant, parent.id, "user:alice-advisor", parent.leaf.id)
    assert fork.review is None  # a fork's answer is its own: it awaits its own review once written
    copied = ReasoningNode.objects.filter(session=fork).order_by("depth")
    ReasoningSession.objects.filter(pk=fork.pk).update(
        status=Status.SOLVED, final_answer="The fork's answer.", final_node=copied.last(), review_state="awaiting"
    )
    fork.refresh_from_db()
    approve(client, fork, four_eyes.rita)
    services.promote_node(four_eyes.tenant, copied[1].id, "user:alice-advisor", "")
    assert "promoted step 1 as the answer" in withdrawn(fork)
    assert state_of(parent)["state"] == "approved"


def finish_with(session, answer, node):
    ReasoningSession.objects.filter(pk=session.pk).update(status=Status.RUNNING)
    final = Node(id=str(node.pk), parent_id=None, depth=node.depth, thought=answer)
    finish(session.id, Outcome(answer, final, "solved"))


def test_a_run_that_writes_the_same_answer_keeps_the_approval_and_another_withdraws_it(client, four_eyes):
    session = answered(four_eyes)
    approve(client, session, four_eyes.rita)
    finish_with(session, ANSWER, session.leaf)
    assert state_of(session)["state"] == "approved"
    finish_with(session, "Hold everything.", session.side)
    assert withdrawn(session) == "approval by user:rita withdrawn: the answer was written again"
    assert OverseerAction.objects.get(action="review.withdrawn").actor == review.ENGINE


def test_a_run_that_ends_with_an_answer_awaits_review_where_the_tenant_requires_it(four_eyes, bob):
    session = answered(four_eyes, status=Status.RUNNING, state="")
    finish_with(session, ANSWER, session.leaf)
    assert state_of(session) == {**state_of(session), "state": "awaiting", "by": None, "reason": None}
    row = OverseerAction.objects.get(session=session)
    assert (row.action, row.actor, row.detail) == ("review.awaiting", "engine", review.REQUIRED)
    free = answered(bob, status=Status.RUNNING, state="")
    finish_with(free, ANSWER, free.leaf)
    assert state_of(free) is None and not OverseerAction.objects.filter(session=free).exists()


# ---- the list --------------------------------------------------------------------------------------------------------


def test_the_list_filters_by_review(client, four_eyes):
    states = {"awaiting": "awaiting", "approved": "approved", "changes_requested": "changes_requested", "none": ""}
    sessions = {value: answered(four_eyes, state=state) for value, state in states.items()}
    for value, expected in sessions.items():
        items = client.get(f"/api/sessions?review={value}", **four_eyes.auth).json()["items"]
        assert [i["id"] for i in items] == [str(expected.id)], value
    bad = client.get("/api/sessions?review=maybe", **four_eyes.auth)
    assert bad.status_code == 422 and bad.json()["detail"][0]["field"] == "review"


# ---- the tenant's settings, in the admin ------------------------------------------------------------------------------


def test_a_tenant_admin_turns_four_eyes_on_and_cannot_give_a_service_key_the_review_scope(alice_admin, alice):
    page = alice_admin.get(f"/admin/reasoning/tenant/{alice.tenant.pk}/change/").content.decode()
    assert 'name="require_review"' in page and 'name="allow_self_approval"' in page
    response = alice_admin.post(
        f"/admin/reasoning/tenant/{alice.tenant.pk}/change/",
        {"name": alice.tenant.name, "time_zone": "UTC", "require_review": "on"},
    )
    assert response.status_code == 302
    alice.tenant.refresh_from_db()
    assert alice.tenant.require_review and not alice.tenant.allow_self_approval
    refused = alice_admin.post("/admin/reasoning/apikey/add/", {"name": "bot", "scopes": ["read", "review"]})
    assert refused.status_code == 200 and "a sign-off is a person&#x27;s" in refused.content.decode()
    assert not ApiKey.objects.filter(name="bot").exists()
    rita = member(alice, "rita", Role.REVIEWER)
    given = alice_admin.post("/admin/reasoning/apikey/add/", {"name": "rita's", "user": rita.pk, "scopes": ["review"]})
    assert given.status_code == 200 and ApiKey.objects.get(name="rita's").scopes == ["review"]
