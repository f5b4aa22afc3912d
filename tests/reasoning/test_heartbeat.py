"""A fresh worker's runs stay alive (issue 23, item 5): the heartbeat is written on a thread of its own, whatever the
run's sync work is doing (a cold pool child imported litellm for 5.6 s on the thread the heartbeat shared, and its
live runs were taken over), and a Celery worker imports litellm before it forks its pool children."""

import asyncio
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

from reasoning import engine, services
from reasoning.engine import run_session
from reasoning.models import ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "Plan a CHF 4m wealth transfer to two heirs in Vaud, with the house kept in the family."


def beat_within(session_id, seconds):
    recent = ExpressionWrapper(Now() - datetime.timedelta(seconds=seconds), output_field=DateTimeField())
    return ReasoningSession.objects.filter(pk=session_id, heartbeat_at__gte=recent).exists()


async def test_the_heartbeat_goes_on_while_the_runs_sync_work_is_busy(alice, settings, monkeypatch):
    settings.REASONING = {**settings.REASONING, "HEARTBEAT_S": 0.3, "CONTROL_POLL_S": 0.1}
    data = SessionIn(problem_text=PROBLEM, mode="tot", params={"branching": 1, "depth": 1})
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    original, busy = engine.start_turn, {"s": 4.0}

    def slow_start(*args, **kwargs):  # the run's sync thread held for seconds, as a cold import of litellm held it
        time.sleep(busy["s"])
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "start_turn", slow_start)
    run = asyncio.create_task(run_session(session.id))
    await asyncio.sleep(1.0)
    ages = []
    for _ in range(5):  # read off the run's sync thread: it is the one held
        await asyncio.sleep(0.5)
        ages.append(await sync_to_async(beat_within, thread_sensitive=False)(session.id, 1.0))
    await run
    assert all(ages), ages  # a heartbeat within the last second throughout the four busy seconds
    await session.arefresh_from_db()
    assert session.status == "solved" and session.run_owner == ""


def test_a_celery_worker_imports_litellm_before_it_forks_its_pool():
    probe = (
        "import sys; import config.celery; from celery.signals import worker_init; "
        "assert 'litellm' not in sys.modules; worker_init.send(sender=None); print('litellm' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-2000:]
