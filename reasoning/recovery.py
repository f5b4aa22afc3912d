"""Nothing stranded: sessions whose run died with its process continue from their stored tree.

A server (embedded profile) resumes them when it starts and sweeps for dead runs while it serves;
a Celery worker resumes them when it starts. On SIGTERM a server stops its runs at once: calls in
flight may finish for a few seconds, the ledger is written, the sessions rest `interrupted`.
"""

import asyncio
import logging
import sys

from asgiref.sync import sync_to_async
from django.conf import settings

from . import states
from .models import ReasoningSession, Status
from .runner import InProcessRunner, get_runner

log = logging.getLogger(__name__)
SWEEP_S = 5.0


def resume_stranded():
    """Queue every session whose run is gone (and every queued one) for a run; returns their ids."""
    ids = []
    stranded = ReasoningSession.objects.filter(status__in=[Status.RUNNING, Status.INTERRUPTED, Status.QUEUED])
    for session in stranded.order_by("created_at"):
        if session.status == Status.QUEUED and not session.run_owner:
            ids.append(session.pk)
        elif states.is_dead(session) and states.take_over(session):
            ids.append(session.pk)
    runner = get_runner()
    for session_id in ids:
        runner.submit(session_id)
    if ids:
        log.warning("resumed %d session(s) left by a stopped run", len(ids))
    return ids


def resume_dead_runs():
    """The sweep: only sessions whose run died (a queued session waiting for a slot here is not stranded)."""
    dead = [s for s in ReasoningSession.objects.filter(status=Status.RUNNING) if states.is_dead(s)]
    resumed = [s.pk for s in dead if states.take_over(s)]
    for session_id in resumed:
        get_runner().submit(session_id)
    return resumed


async def serve_forever():
    """On the server's loop: resume what a stopped server left, then sweep for runs that die."""
    await sync_to_async(resume_stranded)()
    while True:
        await asyncio.sleep(SWEEP_S)
        try:
            await sync_to_async(resume_dead_runs)()
        except Exception:  # the sweep must outlive a busy database
            log.exception("the sweep for dead runs failed")


def install_server_hooks():
    """Under Daphne (Twisted's asyncio reactor): recovery when the server starts, a checkpoint before it stops."""
    if "daphne.server" not in sys.modules:
        return
    from twisted.internet import defer, reactor  # only under Daphne, whose reactor is installed by now

    runner = get_runner()
    if not isinstance(runner, InProcessRunner):
        return

    def started():
        loop = asyncio.get_event_loop()
        runner.bind(loop)
        loop.create_task(serve_forever(), name="reasoning-recovery")

    def stopping():
        grace = settings.REASONING["SHUTDOWN_GRACE_S"]
        return defer.Deferred.fromFuture(asyncio.ensure_future(runner.shutdown(grace)))

    reactor.callWhenRunning(started)
    reactor.addSystemEventTrigger("before", "shutdown", stopping)
