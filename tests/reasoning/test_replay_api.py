"""POST /api/sessions/{id}/replay and `manage.py replay`: the report, who may ask for it, and what it leaves behind
(nothing: no ledger row, no charge)."""

import json

import pytest
from django.core.management import CommandError, call_command

from reasoning import services
from reasoning.models import ApiKey, LLMCall, ReasoningNode, ReasoningSession, Scope, Status, TenantSpend
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Rebalance a CHF 3m portfolio for a Zurich client drifted to 70% equities against a 60/40 target."


@pytest.fixture
def solved(alice):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params={"branching": 2, "depth": 2, "keep": 2})
    return services.solve(alice.tenant, data)


def post(client, session_id, party, body=None):
    data = json.dumps(body) if body is not None else ""
    return client.post(f"/api/sessions/{session_id}/replay", data, content_type="application/json", **party.auth)


def spend(session):
    session.refresh_from_db()
    tenant = TenantSpend.objects.filter(tenant_id=session.tenant_id).values_list("used_usd", "reserved_usd").first()
    return session.budget_used_usd, session.budget_reserved_usd, tenant


def test_it_answers_identical_and_charges_nothing(client, alice, solved):
    calls, before = LLMCall.objects.filter(session=solved).count(), spend(solved)
    response = post(client, solved.id, alice)
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["identical"] is True and report["first_divergence"] is None
    assert report["nodes"] == ReasoningNode.objects.filter(session=solved).count() == report["recorded_nodes"]
    assert report["calls_replayed"] == LLMCall.objects.filter(session=solved, outcome="ok").count()
    assert report["calls_missing"] == 0
    assert LLMCall.objects.filter(session=solved).count() == calls
    assert spend(solved) == before
    assert post(client, solved.id, alice, {}).status_code == 200  # an empty body is the same request


def test_it_reports_the_first_divergence_with_both_versions(client, alice, solved):
    node = ReasoningNode.objects.filter(session=solved, depth=1).order_by("created_at").first()
    call = LLMCall.objects.filter(session=solved, purpose="tot.propose", node__depth=0).first()
    LLMCall.objects.filter(pk=call.pk).update(reply=call.reply.replace(node.thought, "Sell everything at once."))
    report = post(client, solved.id, alice).json()
    assert report["identical"] is False
    first = report["first_divergence"]
    assert first["node"] == str(node.id)
    assert first["recorded"]["thought"] == node.thought
    assert first["replayed"]["thought"] == "Sell everything at once."
    assert report["calls_missing"] > 0  # the altered step's own judgement was never recorded


def test_another_tenant_gets_a_404(client, bob, solved):
    assert post(client, solved.id, bob).status_code == 404
    assert post(client, "not-a-uuid", bob).status_code == 404


def test_a_key_without_the_read_scope_gets_a_403_naming_it(client, alice, solved):
    _, key = ApiKey.issue(alice.tenant, name="runs only", scopes=[Scope.RUN])
    response = client.post(
        f"/api/sessions/{solved.id}/replay", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 403 and response.json()["scope"] == "read"


def test_an_unknown_option_is_a_422_naming_it(client, alice, solved):
    response = post(client, solved.id, alice, {"seed": 1})
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "seed"
    assert post(client, solved.id, alice, [1]).status_code == 422


def test_a_session_still_running_is_a_409(client, alice, solved):
    ReasoningSession.objects.filter(pk=solved.pk).update(status=Status.RUNNING)
    response = post(client, solved.id, alice)
    assert response.status_code == 409 and "replay it once it rests" in response.json()["detail"]


def test_the_command_prints_the_report_and_exits_3_on_a_divergence(alice, solved, capsys):
    call_command("replay", str(solved.id))
    assert capsys.readouterr().out.startswith("identical: ")
    call = LLMCall.objects.filter(session=solved, purpose="tot.propose").first()
    LLMCall.objects.filter(pk=call.pk).update(reply="{}")
    with pytest.raises(SystemExit) as exited:
        call_command("replay", str(solved.id), "--json")
    assert exited.value.code == 3
    assert json.loads(capsys.readouterr().out)["identical"] is False
    with pytest.raises(CommandError, match="no session"):
        call_command("replay", "00000000-0000-0000-0000-000000000000")
