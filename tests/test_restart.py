"""Nothing stranded, nothing lost: a real Daphne server killed (SIGKILL) or stopped (SIGTERM) mid-session.

The server runs as `make run` runs it (the daphne command, the in-process runner) against this test's
database; the test drives it over HTTP and reads the database directly.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.db import connections
from django.db.models import Sum

from reasoning.models import LLMCall, ReasoningNode, ReasoningSession

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
DAPHNE = str(Path(sys.executable).with_name("daphne"))
PARAMS = {"branching": 3, "depth": 6, "keep": 2}
PROBLEM = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."


def database_url():
    db = connections["default"].settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`daphne config.asgi:application` in its own process, on this test's database."""

    def __init__(self, port):
        self.port = port
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "REASONING_OFFLINE_LATENCY_MS": "300",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.process = subprocess.Popen(
            [DAPHNE, "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        wait_for(self.listening, timeout=60, what="the server to listen")

    def listening(self):
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited: {self.output()}")
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def post(self, path, body, key):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())

    def output(self):
        try:
            out, _ = self.process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            return "(still running)"
        return out.decode(errors="replace")[-3000:]

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def servers():
    started = []

    def start():
        server = Server(free_port())
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def nodes_of(session_id):
    return {n.id: n for n in ReasoningNode.objects.filter(session_id=session_id)}


def status_of(session_id):
    return ReasoningSession.objects.get(pk=session_id).status


def run_over(session_id):
    """Solved, and its run has let go: the status moves before the run releases its claim and closes its gateway."""
    return ReasoningSession.objects.filter(pk=session_id, status="solved", run_owner="").exists()


def start_session_and_let_it_grow(server, party):
    status, session = server.post(
        "/api/sessions", {"problem_text": PROBLEM, "mode": "tot", "params": PARAMS, "budget_usd": 1.0}, party.key
    )
    assert status == 201
    wait_for(lambda: len(nodes_of(session["id"])) >= 12, timeout=60, what="the tree to grow")
    return session["id"]


def assert_finished_whole(session_id, before):
    session = ReasoningSession.objects.get(pk=session_id)
    nodes = nodes_of(session_id)
    assert session.status == "solved", (session.status, session.error)
    # Every node committed before the stop is there, unchanged; one root; nobody proposed under twice.
    assert set(before) <= set(nodes)
    assert all(nodes[i].thought == before[i].thought for i in before)
    assert len([n for n in nodes.values() if n.depth == 0]) == 1
    children = {}
    for n in nodes.values():
        children[n.parent_id] = children.get(n.parent_id, 0) + 1
    assert max(v for k, v in children.items() if k) <= PARAMS["branching"]
    # The ledger and the nodes agree; nothing stays reserved.
    ledger = LLMCall.objects.filter(session_id=session_id).aggregate(s=Sum("cost_usd"))["s"]
    costs = ReasoningSession.objects.filter(pk=session_id).aggregate(s=Sum("nodes__cost_usd"))["s"]
    assert ledger == pytest.approx(costs) and session.budget_used_usd == pytest.approx(ledger)
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-9) and session.run_owner == ""


def test_a_killed_server_restarted_finishes_the_session_with_nothing_lost(alice, servers):
    first = servers()
    session_id = start_session_and_let_it_grow(first, alice)
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=10)
    before = nodes_of(session_id)
    assert status_of(session_id) == "running"  # stranded until a server starts again

    servers()  # the new server resumes it on start, from the stored tree
    wait_for(lambda: run_over(session_id), timeout=120, what="the resumed session to finish and its run to let go")
    assert_finished_whole(session_id, before)
    # What the dead run had reserved is said in the ledger, never silently dropped.
    lost = LLMCall.objects.filter(session_id=session_id, outcome="unaccounted")
    assert all(row.cost_usd == 0 and row.reserved_usd > 0 for row in lost)


def test_sigterm_checkpoints_running_sessions_and_exits_within_seconds(alice, servers):
    first = servers()
    session_id = start_session_and_let_it_grow(first, alice)
    stopped_at = time.monotonic()
    first.process.send_signal(signal.SIGTERM)
    first.process.wait(timeout=15)
    took = time.monotonic() - stopped_at
    session = ReasoningSession.objects.get(pk=session_id)
    before = nodes_of(session_id)
    assert took < 10, f"took {took:.1f} s to stop: {first.output()}"
    assert session.status == "interrupted" and session.termination_reason == "server_stopped"
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-9)  # the lease went back
    assert not LLMCall.objects.filter(session_id=session_id, outcome="unaccounted").exists()

    servers()
    wait_for(lambda: run_over(session_id), timeout=120, what="the resumed session to finish and its run to let go")
    assert_finished_whole(session_id, before)
