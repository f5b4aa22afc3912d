"""Celery tasks for the scale-out runner, the worker's start-up recovery and its sweeper.

A worker started with TASK_RUNNER=celery sweeps every REASONING_SWEEP_S seconds from a timer thread in its main
process (not a Celery beat: every worker sweeps, none is special, and the sweep's take-over is one fenced statement,
so two workers sweeping at once resume a session once). The sweep takes over runs whose pool child died or whose
heartbeat went stale and dispatches them again, and dispatches queued sessions whose start message was lost.
"""

import asyncio
import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from .runner import RUN_SESSION_TASK

log = logging.getLogger(__name__)
_sweeper = None


@shared_task(name=RUN_SESSION_TASK, acks_late=True)
def run_session_task(session_id):
    from .engine import NOT_CLAIMED, REQUEUED, run_session
    from .recovery import adopt

    while True:
        outcome = asyncio.run(run_session(session_id))
        # A command that arrived as a turn ended asks for another turn at once; a delivery that finds its session
        # held by a dead run (a redelivered task, a sweep's dispatch) takes it over and runs it.
        if outcome == REQUEUED or (outcome == NOT_CLAIMED and adopt(session_id)):
            continue
        return outcome


@worker_ready.connect
def resume_sessions_on_worker_start(**kwargs):
    """Sessions whose run died with its worker continue from their stored tree; a scale-out worker then sweeps."""
    from django.conf import settings

    from .recovery import resume_stranded

    resume_stranded()
    if settings.REASONING["RUNNER"] == "celery":
        start_sweeper()


@worker_shutdown.connect
def stop_sweeper_on_worker_shutdown(**kwargs):
    stop_sweeper()


def start_sweeper(interval=None):
    """The worker's sweep: a daemon thread running recovery.sweep() every `interval` (REASONING_SWEEP_S) seconds."""
    global _sweeper
    from django.conf import settings
    from django.db import close_old_connections, connections

    from . import recovery

    if _sweeper is not None and _sweeper.is_alive():
        return _sweeper
    every = interval or settings.REASONING["SWEEP_S"]
    stopping = threading.Event()

    def sweep_forever():
        try:
            while not stopping.wait(every):
                try:
                    close_old_connections()  # a database that restarted meanwhile gets a fresh connection
                    recovery.sweep()
                except Exception:  # the sweep must outlive a database or broker outage
                    log.exception("the sweep for dead runs failed")
        finally:
            connections.close_all()  # this thread's connection

    _sweeper = threading.Thread(target=sweep_forever, name="reasoning-sweeper", daemon=True)
    _sweeper.stopping = stopping
    _sweeper.start()
    return _sweeper


def stop_sweeper():
    global _sweeper
    if _sweeper is not None:
        _sweeper.stopping.set()
        _sweeper.join(timeout=10)
        _sweeper = None
