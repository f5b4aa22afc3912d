"""The management commands a user runs from the terminal."""

import io
import socket

import pytest
from django.core.management import CommandError, call_command

from reasoning.models import ApiKey, LLMCall, Membership, ReasoningSession, Tenant

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


def test_solve_exits_4_when_the_budget_runs_out_and_prints_small_money():
    with pytest.raises(CommandError) as ended:
        run("solve", "Game of 24: use 4 9 10 13 to make 24.", "--mode", "tot", "--budget", "0.00001", "--tenant", "cli")
    assert ended.value.returncode == 4 and "exhausted" in str(ended.value)
    session = ReasoningSession.objects.get(tenant__slug="cli")
    assert session.status == "exhausted"


def test_solve_prints_a_small_budget_as_it_is(capsys):
    with pytest.raises(CommandError):
        call_command("solve", "Game of 24: use 4 9 10 13 to make 24.", "--budget", "0.00001", "--tenant", "cli")
    assert "of 0.00001 USD" in capsys.readouterr().out


def test_solve_exits_3_when_the_session_fails(settings, monkeypatch):
    """A model whose server is not there: every call fails at once, the session fails, the exit code says so."""
    with socket.socket() as probe:  # a local port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-nope")
    monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{port}/v1")
    settings.REASONING = {**settings.REASONING, "LLM_RETRIES": 0, "LLM_TIMEOUT_S": 5.0}
    args = ["Rebalance a CHF 2m portfolio to 50/50.", "--mode", "tot", "--params", '{"depth": 1, "branching": 1}']
    with pytest.raises(CommandError) as ended:
        run("solve", *args, "--model", "openai/nope", "--tenant", "cli")
    assert ended.value.returncode == 3 and "failed" in str(ended.value)
    assert LLMCall.objects.filter(session__tenant__slug="cli", outcome="error").exists()
