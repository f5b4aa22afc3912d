"""The scaled profile heals itself (issue 32, section 2). Under supervisord (scripts/scaled.py), a Celery worker's
main process SIGKILLed is started again while the servers and the other worker keep serving, and every session ends
with its answer (before, scripts/scaled.py stopped everything and the sessions stayed `queued`). A worker frozen
whole (SIGSTOP of its process group) has its run taken over within the documented bound, HEARTBEAT_STALE_S +
SWEEP_S after its last heartbeat (README, "Nothing stranded"), and run again on a live worker.

Run by `make test-chaos` (REASONING_CHAOS=1), not by a plain `pytest`.
"""

import os
import signal
import time
import urllib.request
import uuid

import pytest
from django.db import connections

from reasoning.models import ReasoningSession
from tests.chaos.test_chaos import Redis, Scaled, create, owner_pid, print_logs, wait_until_all_rest
from tests.test_restart import database_url, free_port

pytestmark = pytest.mark.django_db(transaction=True)

SWEEP_S, STALE_S = 1, 4
ENV = {
    "REASONING_SWEEP_S": str(SWEEP_S),
    "REASONING_HEARTBEAT_S": "0.5",
    "REASONING_HEARTBEAT_STALE_S": str(STALE_S),
    "REASONING_REDISPATCH_S": "3",
    "REASONING_CREATE_RATE": "off",
    "REASONING_OFFLINE_LATENCY_MS": "300",  # each run lasts several heartbeats
    "SECRET_KEY": "a-secret-key-for-the-supervision-test-only-0123456789",
}


@pytest.fixture
def profile():
    if connections["default"].vendor != "postgresql":
        pytest.skip("the scaled profile runs on PostgreSQL (DATABASE_URL)")
    redis = Redis(free_port()).start()
    scaled = Scaled(database_url(), f"redis://127.0.0.1:{redis.port}/0", ports=(free_port(), free_port()), env=ENV)
    try:
        scaled.start()
        for port in scaled.ports:  # each server's first request pays for what it loads lazily
            answers(port, timeout=120)
        yield scaled
    except Exception:
        print_logs(scaled)
        raise
    finally:
        scaled.stop()
        redis.stop()


def answers(port, timeout=10):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=timeout) as response:
        return response.status


def make(port, key):
    """A session made through the server; a reply slow on a busy machine is asked again under the same
    Idempotency-Key, so it makes one session."""
    attempt = str(uuid.uuid4())
    for _ in range(5):
        try:
            return create(port, key, attempt, budget_usd=0.5)
        except TimeoutError:
            continue
    raise AssertionError("the session could not be created")


def process_group(pid):
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def test_a_worker_killed_is_started_again_and_the_others_keep_serving(alice, profile):
    ids = [make(profile.ports[i % 2], alice.key) for i in range(6)]
    worker = profile.celery[0]
    killed = worker.pid
    Scaled.wait(lambda: ReasoningSession.objects.filter(pk__in=ids, status="running").exists(), "a session to run")
    os.kill(killed, signal.SIGKILL)

    # The servers and the other worker go on: nothing else stops, and new sessions are made and run.
    time.sleep(1)
    assert [answers(port) for port in profile.ports] == [200, 200]
    assert profile.states()["worker-1"] == "RUNNING"
    ids += [make(profile.ports[i % 2], alice.key) for i in range(2)]
    # supervisord starts the worker again, and it is ready to take sessions.
    Scaled.wait(lambda: worker.poll() is None and worker.pid not in (0, killed), "the worker to be started again", 60)
    Scaled.wait(lambda: profile.log("worker-0").count("ready.") >= 2, "the restarted worker to be ready", 300)

    wait_until_all_rest(ids)
    sessions = list(ReasoningSession.objects.filter(pk__in=ids))
    assert [s.status for s in sessions] == ["solved"] * len(ids), [(s.status, s.error) for s in sessions]
    assert set(profile.states().values()) == {"RUNNING"}


def test_a_frozen_workers_run_is_taken_over_within_the_documented_bound(alice, profile):
    ids = [make(profile.ports[i % 2], alice.key) for i in range(4)]
    frozen_group = process_group(profile.celery[0].pid)

    def held_by_the_frozen_worker():
        running = ReasoningSession.objects.filter(pk__in=ids, status="running").exclude(run_owner="")
        return next((s for s in running if process_group(owner_pid(s)) == frozen_group), None)

    Scaled.wait(lambda: held_by_the_frozen_worker() is not None, "worker 0 to hold a session", 120)
    os.killpg(frozen_group, signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        victim = held_by_the_frozen_worker()
        assert victim is not None, "its session ended just before the freeze"
        epoch = victim.run_epoch

        def run_elsewhere():
            victim.refresh_from_db()
            if victim.run_epoch == epoch:
                return False
            taken = victim.status != "running" or not victim.run_owner
            return taken or process_group(owner_pid(victim)) != frozen_group

        # Taken over: its heartbeat is stale STALE_S after the last one (at most a beat before the freeze), and the
        # next sweep (every SWEEP_S) sees it; one second of slack for a sweep's own queries on a busy machine.
        bound = STALE_S + SWEEP_S + 1
        Scaled.wait(run_elsewhere, "the frozen run to be taken over", bound + 30)
        took = time.monotonic() - frozen_at
        assert took <= bound, f"taken over {took:.1f} s after the freeze; the bound is {bound} s"
        # Run again on the live worker, while the frozen one stays frozen.
        Scaled.wait(lambda: ReasoningSession.objects.get(pk=victim.pk).status in {"solved", "failed"},
                    "the taken-over session to end on the live worker", 120)
    finally:
        os.killpg(frozen_group, signal.SIGCONT)
    wait_until_all_rest(ids)
    sessions = list(ReasoningSession.objects.filter(pk__in=ids))
    assert [s.status for s in sessions] == ["solved"] * len(ids), [(s.status, s.error) for s in sessions]
