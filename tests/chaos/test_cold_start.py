"""A cold start of the scaled profile (issue 23, item 5): two Daphne servers and two Celery workers started from
nothing, six sessions created the moment the workers are ready, at the profile's own heartbeat settings (a beat every
2 s, a run stale after 15 s), on a machine made cold: litellm's first import takes 20 s longer. Every run must keep
its session: a live run taken over means its heartbeat stopped while the process was busy starting (litellm imported
lazily on the heartbeat's thread took 5.6 s on an idle core), and each session then sat queued and ran again from the
start.

Run by `make test-chaos` (REASONING_CHAOS=1), not by a plain `pytest`.
"""

import json
import uuid
from pathlib import Path

import pytest
from django.db import connections

from reasoning.models import ReasoningSession
from tests.chaos.test_chaos import Redis, Scaled, create, print_logs, wait_until_all_rest  # scripts/ on the path
from tests.test_restart import database_url, free_port

pytestmark = pytest.mark.django_db(transaction=True)

SESSIONS = 6


def test_a_cold_start_takes_over_no_live_run(alice):
    if connections["default"].vendor != "postgresql":
        pytest.skip("the scaled profile runs on PostgreSQL (DATABASE_URL)")
    redis = Redis(free_port()).start()
    ports = (free_port(), free_port())
    env = {
        "REASONING_CREATE_RATE": "off",
        "REASONING_OFFLINE_LATENCY_MS": "400",  # each run lasts several heartbeats, as a real model's does
        "SECRET_KEY": "a-secret-key-for-the-cold-start-test-only-0123456789",
        # A cold machine: litellm's first import in each process takes 20 s longer, more than a heartbeat's 15 s of
        # staleness, so a run whose heartbeat waited for it would be taken over (slow_import/sitecustomize.py).
        "PYTHONPATH": str(Path(__file__).parent / "slow_import"),
        "REASONING_SLOW_IMPORT_S": "20",
    }  # the heartbeat, its staleness and the sweep at the profile's defaults: nothing shortened for the test
    profile = Scaled(database_url(), f"redis://127.0.0.1:{redis.port}/0", ports=ports, env=env)
    try:
        profile.start()
        ids = [create(ports[i % 2], alice.key, str(uuid.uuid4()), budget_usd=0.5) for i in range(SESSIONS)]

        wait_until_all_rest(ids)
    except Exception:
        print_logs(profile)
        raise
    finally:
        profile.stop()
        redis.stop()

    sessions = list(ReasoningSession.objects.filter(pk__in=ids))
    assert [s.status for s in sessions] == ["solved"] * SESSIONS, [(s.status, s.error) for s in sessions]
    assert [s.run_epoch for s in sessions] == [1] * SESSIONS, json.dumps({str(s.id): s.run_epoch for s in sessions})
