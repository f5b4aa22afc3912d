"""The management commands a user runs from the terminal."""

import io
import socket

import pytest
from django.core.management import CommandError, call_command

from reasoning.llm import game24, gateway
from reasoning.management.commands.dump_demo import DEMO_PROBLEMS
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


def test_seed_demo_loads_finished_sessions_and_calls_no_model(settings, monkeypatch):
    """Seeding on a cloud model costs nothing: the sessions come from the fixture the offline model wrote."""
    settings.REASONING = {**settings.REASONING, "MODEL_PRIMARY": "openai/nope", "MODEL_FALLBACK": ""}

    def no_model(*args, **kwargs):
        raise AssertionError("seed_demo must call no model")

    monkeypatch.setattr(gateway.ModelGateway, "__init__", no_model)
    run("seed_demo")
    run("seed_demo")
    sessions = ReasoningSession.objects.filter(tenant__slug="demo")
    assert sessions.count() == 3 and ReasoningSession.objects.count() == 3
    for session in sessions:
        assert session.status == "solved" and session.final_answer and session.final_node.session_id == session.id
        assert session.ended_status == "solved" and session.ended_at == session.finished_at  # the header says when
        assert session.model_primary == "offline/sim" and session.triggered_by == "seed_demo"
        assert session.nodes.count() > 1 and session.root_node.session_id == session.id
        if session.problem_kind != "general":  # the client's facts the answer was checked on come with it
            assert session.facts.exists()
        ledger = list(session.llm_calls.values_list("cost_usd", flat=True))
        assert session.budget_used_usd > 0 and sum(ledger) == pytest.approx(session.budget_used_usd, abs=1e-12)
        assert sum(session.nodes.values_list("cost_usd", flat=True)) == pytest.approx(sum(ledger), abs=1e-12)
    assert not LLMCall.objects.exclude(model_requested="offline/sim").exists()
    assert not LLMCall.objects.filter(prompt="").exists() and not LLMCall.objects.filter(reply="").exists()
    assert not LLMCall.objects.exclude(tenant__slug="demo").exists()
    assert {s.problem_text for s in sessions} == {text for _, _, text in DEMO_PROBLEMS}


def test_dump_demo_writes_what_seed_demo_loads(tmp_path, rubrics):
    out = tmp_path / "demo.json"
    run("dump_demo", "--out", str(out))
    assert not Tenant.objects.filter(slug="demo-dump").exists() and not ReasoningSession.objects.exists()
    from reasoning.management.commands.seed_demo import load_demo_sessions

    sessions = load_demo_sessions(Tenant.objects.create(slug="demo"), out)
    assert [s.status for s in sessions] == ["solved"] * 3
    calls = LLMCall.objects.all()
    assert calls.count() > 3 and {c.model_used for c in calls} == {"offline/sim"}
    assert all(c.attempt >= 1 and c.prompt and c.reply for c in calls)  # the ledger keeps what was said
    thesis = next(s for s in sessions if s.problem_kind == "investment-thesis")
    assert {"CHF 2.4m", "58"} <= set(thesis.facts.values_list("text", flat=True))  # the sheet the answer was checked on


def test_create_api_key_prints_the_key_alone_on_its_last_line():
    out, _ = run("create_api_key", "acme")
    key = out.strip().splitlines()[-1]
    assert key.startswith("rk_") and " " not in key
    assert ApiKey.find(key).tenant == Tenant.objects.get(slug="acme")


def test_solve_prints_the_answer():
    out, err = run("solve", "Game of 24: use 4 9 10 13 to make 24.", "--mode", "tot", "--tenant", "cli")
    # Three levels of three proposals under a beam of two, then each kept line's answer (identical ones merged).
    assert "status: solved" in out and "nodes: 18" in out
    assert "written by: offline/sim 17 of 17 nodes" in out  # the root is the problem: no model wrote it
    assert game24.check_answer(out.split("status: solved", 1)[1].strip().splitlines()[-1], [4, 9, 10, 13])[0]
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
    assert "of < 0.0001 USD" in capsys.readouterr().out  # money reads one way, four places


def test_solve_exits_3_when_the_session_fails(settings, monkeypatch):
    """A model whose server is not there: every call fails at once, the session fails, the exit code says so."""
    with socket.socket() as probe:  # a local port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-nope")
    served = {"openai/nope": {"input": 1.0, "output": 1.0, "api_base": f"http://127.0.0.1:{port}/v1"}}
    settings.REASONING = {**settings.REASONING, "MODELS": served, "LLM_RETRIES": 0, "LLM_TIMEOUT_S": 5.0}
    args = ["Rebalance a CHF 2m portfolio to 50/50.", "--mode", "tot", "--params", '{"depth": 1, "branching": 1}']
    with pytest.raises(CommandError) as ended:
        run("solve", *args, "--model", "openai/nope", "--tenant", "cli")
    assert ended.value.returncode == 3 and "failed" in str(ended.value)
    errors = LLMCall.objects.filter(session__tenant__slug="cli", outcome="error").values_list("error", flat=True)
    assert errors and all("Connection" in error for error in errors)


def test_solve_says_which_models_wrote_the_nodes_when_the_fallback_stepped_in():
    from reasoning.management.commands.solve import written_by

    tenant = Tenant.objects.create(slug="mixed")
    session = ReasoningSession.objects.create(
        tenant=tenant, problem_text="p", model_primary="openai/local", model_fallback="offline/sim"
    )
    for depth, model in enumerate(["", "openai/local", "openai/local", "offline/sim"]):
        session.nodes.create(tenant=tenant, depth=depth, thought=f"t{depth}", model_used=model)
    assert written_by(session) == "openai/local 2 of 3 nodes, offline/sim (fallback) 1 of 3 nodes"


def test_solve_with_the_model_down_prints_one_line_per_attempt_and_no_traceback(tmp_path):
    """In a real terminal (a subprocess, logging as configured): the user reads the failures, not 500 lines of stack."""
    import os
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/solve.sqlite3",
        "OPENAI_API_KEY": "sk-test-nope",
        "SECRET_KEY": "a-secret-for-this-test-only",  # a real model is configured: the demo's key will not do
        "REASONING_MODELS": f'{{"openai/nope": {{"input": 1, "output": 1, "api_base": "http://127.0.0.1:{port}/v1"}}}}',
        "REASONING_LLM_RETRIES": "1",
        "REASONING_RETRY_BACKOFF_S": "0.05",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True)
    args = ["solve", "Rebalance a CHF 2m portfolio to 50/50.", "--mode", "tot", "--model", "openai/nope"]
    done = subprocess.run([*manage, *args, "--params", '{"depth": 1}'], env=env, capture_output=True, text=True)
    assert done.returncode == 3
    assert "Traceback" not in done.stderr and "site-packages" not in done.stderr
    lines = [line for line in done.stderr.replace("\r", "\n").splitlines() if "model call failed" in line]
    assert lines and all("openai/nope" in line for line in lines)
    # Each on a line of its own, above the progress bar, not glued after it (issue 24).
    assert all(line.startswith("model call failed: ConnectionRefused: nothing answers at 127.0.0.1") for line in lines)
    assert "rests" not in done.stderr and "no other model, so it is tried again" in done.stderr  # no fallback


def test_the_demo_s_spend_this_month_is_its_ledger_s_total(client):
    """Issue 33: the usage page said 1.3675 USD spent this month above a table whose total was 1.4348 USD: the seeded
    sessions' ledger rows never went through the settlement the month's counter reads."""
    from datetime import UTC, datetime

    from reasoning import usage

    run("seed_demo")
    run("seed_demo")  # a second seed loads nothing, so counts nothing again
    tenant = Tenant.objects.get(slug="demo")
    start, end = usage.window()
    total = usage.report(tenant, start, end, "day")["total"]["cost_usd"]
    assert total > 0 and usage.month_of(tenant)["spent_usd"] == pytest.approx(total, abs=1e-6)

    client.login(username="advisor", password="advisor")
    html = client.get("/admin/reasoning/tenant/usage/").content.decode()
    spent = html.split('data-testid="month-spent">')[1].split(" USD")[0]
    assert f"{total:.4f}" == spent and f"{total:.4f} USD</td>" in html
    assert datetime.now(UTC).date().replace(day=1) == usage.month_start()
