"""The tenant's monthly cap (issue 25, part 2): reserved with each lease of a session's budget, in the same
transaction, so it is never passed, one session or many at once; a session that would pass it is refused with
the cap and what is left. With DATABASE_URL set these run on PostgreSQL, where the leases of concurrent threads
meet real row locks."""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connections

from reasoning import ledger, services, usage
from reasoning.engine import run_session
from reasoning.models import LLMCall, ReasoningSession, Status, Tenant, TenantSpend
from reasoning.schemas import SessionIn

PROBLEM = "Rebalance a CHF 2m portfolio back to 60/40."


def cap(party, usd):
    Tenant.objects.filter(pk=party.tenant.pk).update(monthly_cap_usd=usd)


def new_session(party, budget=0.5):
    return ReasoningSession.objects.create(
        tenant=party.tenant, problem_text=PROBLEM, model_primary="offline/sim", budget_usd=budget
    )


def spend(party):
    return TenantSpend.objects.get(tenant=party.tenant)


@pytest.mark.django_db
def test_a_lease_past_the_cap_is_refused_and_takes_nothing_from_the_session(alice):
    cap(alice, 0.10)
    first, second = new_session(alice), new_session(alice)
    assert ledger.reserve(first.pk, 0.06)
    assert not ledger.reserve(second.pk, 0.05)  # 0.06 + 0.05 > 0.10
    assert ReasoningSession.objects.get(pk=second.pk).budget_reserved_usd == 0.0  # rolled back with the tenant's
    assert ledger.reserve(second.pk, 0.04)
    assert spend(alice).reserved_usd == pytest.approx(0.10)
    ledger.settle(first.pk, cost=0.02, released=0.06)  # the call cost less than reserved: the rest comes back
    assert spend(alice).used_usd == pytest.approx(0.02) and spend(alice).reserved_usd == pytest.approx(0.04)
    assert ledger.reserve(first.pk, 0.04)


@pytest.mark.django_db
def test_without_a_cap_spend_is_still_counted(alice):
    session = new_session(alice)
    assert ledger.reserve(session.pk, 0.2)
    ledger.settle(session.pk, cost=0.15, released=0.2)
    assert usage.month_of(alice.tenant) == {
        "month": usage.month_start(), "cap_usd": None, "spent_usd": pytest.approx(0.15),
        "reserved_usd": pytest.approx(0.0), "left_usd": None, "written_off_usd": 0.0,
    }


@pytest.mark.django_db
def test_a_new_month_starts_from_nothing_spent_and_keeps_what_is_reserved(alice):
    cap(alice, 1.0)
    session = new_session(alice, budget=5.0)
    assert ledger.reserve(session.pk, 0.3)
    ledger.settle(session.pk, cost=0.5, released=0.0)
    TenantSpend.objects.filter(tenant=alice.tenant).update(month=usage.month_start() - timedelta(days=40))
    assert ledger.reserve(session.pk, 0.7)  # last month's 0.5 no longer counts; the 0.3 in flight does
    assert not ledger.reserve(session.pk, 0.01)
    row = spend(alice)
    assert row.month == usage.month_start() and row.used_usd == 0.0 and row.reserved_usd == pytest.approx(1.0)


def test_a_session_over_what_is_left_is_refused_naming_the_cap_and_what_is_left(client, alice, db):
    cap(alice, 0.30)
    assert ledger.reserve(new_session(alice).pk, 0.25)
    body = {"problem_text": PROBLEM, "mode": "tot", "budget_usd": 0.10}
    response = client.post("/api/sessions", body, content_type="application/json", **alice.auth)
    assert response.status_code == 422
    error = response.json()["detail"][0]
    assert error["field"] == "budget_usd" and error["cap_usd"] == 0.30 and error["left_usd"] == pytest.approx(0.05)
    assert "0.3000 USD" in error["message"] and "0.0500 USD" in error["message"]
    body["budget_usd"] = 0.05
    assert client.post("/api/sessions", body, content_type="application/json", **alice.auth).status_code == 201


def test_a_fork_over_what_is_left_is_refused(alice, db):
    from reasoning.models import ReasoningNode

    source = new_session(alice, budget=0.2)
    node = ReasoningNode.objects.create(tenant=alice.tenant, session=source, depth=0, thought="The problem.")
    cap(alice, 0.1)
    with pytest.raises(services.InvalidInput, match="monthly cap"):
        services.fork_session(alice.tenant, source.pk, "user:tester", str(node.pk))
    assert ReasoningSession.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_running_session_stops_exhausted_at_the_cap(alice):
    made = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    cap(alice, 0.01)  # lowered since: an offline ToT session spends about 0.03 USD of its 0.50
    asyncio.run(run_session(made.pk))
    session = ReasoningSession.objects.get(pk=made.pk)
    assert session.status == Status.EXHAUSTED and session.termination_reason == "monthly_cap"
    spent = sum(LLMCall.objects.filter(tenant=alice.tenant).values_list("cost_usd", flat=True))
    assert 0 < spent <= 0.01 + 1e-9 and spend(alice).used_usd == pytest.approx(spent)
    assert LLMCall.objects.filter(session=session, outcome=LLMCall.Outcome.BUDGET).exists()


@pytest.mark.django_db(transaction=True)
async def test_concurrent_sessions_never_pass_the_tenants_cap(alice, runner):
    from asgiref.sync import sync_to_async

    await Tenant.objects.filter(pk=alice.tenant.pk).aupdate(monthly_cap_usd=0.05)
    data = SessionIn(problem_text=PROBLEM, mode="tot", budget_usd=0.04)
    sessions = [await sync_to_async(services.create_session)(alice.tenant, data) for _ in range(4)]
    await runner.drain()
    ended = [await ReasoningSession.objects.aget(pk=s.pk) for s in sessions]
    spent = sum([c async for c in LLMCall.objects.filter(tenant=alice.tenant).values_list("cost_usd", flat=True)])
    assert spent <= 0.05 + 1e-9, spent
    assert Status.EXHAUSTED in {s.status for s in ended}
    row = await TenantSpend.objects.aget(tenant=alice.tenant)
    assert row.used_usd == pytest.approx(spent) and abs(row.reserved_usd) < 1e-9


@pytest.mark.django_db(transaction=True)
def test_leases_from_many_threads_at_once_never_pass_the_cap(alice):
    """Eight threads, each on its own database connection, lease for their own sessions of one tenant at once."""
    cap(alice, 1.0)
    sessions = [new_session(alice, budget=10.0) for _ in range(8)]

    def lease_all(session):
        try:
            return sum(0.03 for _ in range(20) if ledger.reserve(session.pk, 0.03))
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=8) as pool:
        taken = sum(pool.map(lease_all, sessions))
    assert taken <= 1.0 + 1e-9 and taken == pytest.approx(0.03 * 33)  # 33 leases fit under 1.00, the 34th not
    assert spend(alice).reserved_usd == pytest.approx(taken)
    assert sum(ReasoningSession.objects.filter(tenant=alice.tenant).values_list("budget_reserved_usd", flat=True)) == (
        pytest.approx(taken)
    )


@pytest.mark.django_db
def test_a_dead_runs_reservation_counts_as_spent_for_the_cap(alice):
    """The sweeper releases a dead run's lease; its calls in flight may have been paid, so the month counts them."""
    cap(alice, 1.0)
    session = new_session(alice)
    assert ledger.reserve(session.pk, 0.25)
    ledger.tenant_write_off(session.pk, 0.25)
    row = spend(alice)
    assert row.used_usd == pytest.approx(0.25) and row.reserved_usd == pytest.approx(0.0)
