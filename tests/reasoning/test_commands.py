"""The management commands a user runs from the terminal."""

import io

import pytest
from django.core.management import call_command

from reasoning.models import ApiKey, Membership, ReasoningSession, Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_seed_demo_is_idempotent():
    run("seed_demo")
    first = ReasoningSession.objects.count()
    run("seed_demo")
    assert ReasoningSession.objects.count() == first >= 3
    assert set(ReasoningSession.objects.values_list("status", flat=True)) <= {"solved"}
    membership = Membership.objects.get(user__username="advisor")
    assert membership.tenant.slug == "demo" and membership.user.check_password("advisor")


def test_create_api_key_prints_the_key_alone_on_its_last_line():
    out, _ = run("create_api_key", "acme")
    key = out.strip().splitlines()[-1]
    assert key.startswith("rk_") and " " not in key
    assert ApiKey.find(key).tenant == Tenant.objects.get(slug="acme")


def test_solve_prints_the_answer():
    out, err = run("solve", "Game of 24: use 4 9 10 13 to make 24.", "--mode", "tot", "--tenant", "cli")
    assert "status: solved" in out and "nodes: 22" in out
    assert "24" in out.split("status: solved", 1)[1]
    assert "node" in err  # the progress bar


def test_interrupt_running_marks_only_running_sessions():
    tenant = Tenant.objects.create(slug="ops")
    statuses = ["running", "queued", "solved"]
    sessions = [
        ReasoningSession.objects.create(tenant=tenant, problem_text="p", model_primary="offline/sim", status=s)
        for s in statuses
    ]
    out, _ = run("interrupt_running")
    assert "1 session(s)" in out
    assert [ReasoningSession.objects.get(pk=s.pk).status for s in sessions] == ["interrupted", "queued", "solved"]


def test_solve_takes_params_and_refuses_bad_ones(alice, capsys):
    from django.core.management import CommandError, call_command

    call_command(
        "solve",
        "Rebalance a CHF 2m portfolio to 50/50.",
        "--mode",
        "tot",
        "--params",
        '{"depth": 1}',
        "--tenant",
        "alice",
    )
    assert "status: solved  nodes: 4" in capsys.readouterr().out
    for bad in ('{"depth": 99}', "{not json"):
        with pytest.raises(CommandError):
            call_command(
                "solve", "Rebalance a CHF 2m portfolio.", "--mode", "tot", "--params", bad, "--tenant", "alice"
            )
