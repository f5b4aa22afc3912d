"""Nothing stranded: sessions whose run died with its process continue from their stored tree.

Every runner sweeps. A server resumes them when it starts and sweeps every SWEEP_S seconds while it serves
(whichever runner is configured: with Celery its sweep dispatches to the workers); a Celery worker resumes them
when it starts and sweeps from a timer thread (tasks.start_sweeper). A sweep takes over runs whose process died
or whose heartbeat went stale, and dispatches again queued sessions no run picked up for REDISPATCH_S seconds
(their start message was lost with the broker). On SIGTERM a server stops its runs at once: calls in flight may
finish for a few seconds, the ledger is written, the sessions rest `interrupted`.
"""

import asyncio
import logging
import sys
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import DateTimeField, ExpressionWrapper
from django.db.models.functions import Now

from . import rls, states
from .models import ReasoningSession, Status
from .runner import InProcessRunner, get_runner

log = logging.getLogger(__name__)


@rls.all_tenants()  # the sweeper and recovery look at every tenant's sessions
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


@rls.all_tenants()  # the sweeper and recovery look at every tenant's sessions
def sweep():
    """One pass of the sweeper, on every runner: dead runs taken over and dispatched, lost starts dispatched again."""
    return resume_dead_runs() + dispatch_waiting()


def resume_dead_runs():
    """Sessions whose run died (a queued session waiting for a slot here is not stranded)."""
    dead = [s for s in ReasoningSession.objects.filter(status=Status.RUNNING) if states.is_dead(s)]
    resumed = [s.pk for s in dead if states.take_over(s)]
    for session_id in resumed:
        _submit(session_id)
    return resumed


def dispatch_waiting():
    """Queued sessions no run has claimed for REDISPATCH_S seconds are dispatched again: a session's start never
    rests on one broker message. A sweep marks a waiting session when it first sees it, and dispatches it when the
    mark is old enough, moving the mark in the same statement (two sweepers dispatch it once). A session this
    process's runner already holds is waiting for a slot here, not lost."""
    waiting = ReasoningSession.objects.filter(status=Status.QUEUED, run_owner="")
    waiting.filter(dispatched_at=None).update(dispatched_at=Now())
    due_before = ExpressionWrapper(
        Now() - timedelta(seconds=settings.REASONING["REDISPATCH_S"]), output_field=DateTimeField()
    )
    runner, dispatched = get_runner(), []
    for session_id in waiting.filter(dispatched_at__lt=due_before).values_list("pk", flat=True):
        if getattr(runner, "holds", lambda _: False)(session_id):
            continue
        still_due = waiting.filter(pk=session_id, dispatched_at__lt=due_before)
        if still_due.update(dispatched_at=Now()) and _submit(session_id):
            dispatched.append(session_id)
    if dispatched:
        log.warning("dispatched %d queued session(s) again: no run had picked them up", len(dispatched))
    return dispatched


@rls.all_tenants()  # the sweeper and recovery look at every tenant's sessions
def adopt(session_id):
    """A run could not claim its session (a redelivered task, a second dispatch): True if the session needs a run
    and is free for one now (queued with no run, or its run is dead and was taken over), False if a live run holds
    it or it needs no run."""
    session = ReasoningSession.objects.filter(pk=session_id).first()
    if session is None or session.status not in (Status.RUNNING, Status.INTERRUPTED, Status.QUEUED):
        return False
    if session.status == Status.QUEUED and not session.run_owner:
        return True
    if states.is_dead(session) and states.take_over(session):
        log.warning("session %s: its run was dead; this delivery takes it over", session_id)
        return True
    log.info("session %s is held by a live run; this delivery leaves it to that run", session_id)
    return False


def _submit(session_id):
    """Hand a session to the runner; a broker that is down now leaves it for the next sweep. True if handed."""
    try:
        get_runner().submit(session_id)
    except Exception:
        log.warning("could not dispatch session %s; the next sweep tries again", session_id, exc_info=True)
        return False
    return True


async def serve_forever(resume=True):
    """On the server's loop: resume what a stopped server left, then sweep for runs that die."""
    if resume:
        await sync_to_async(resume_stranded)()
    while True:
        await asyncio.sleep(settings.REASONING["SWEEP_S"])
        try:
            await sync_to_async(sweep)()
        except Exception:  # the sweep must outlive a busy database
            log.exception("the sweep for dead runs failed")


def install_server_hooks():
    """Under Daphne (Twisted's asyncio reactor): recovery when the server starts, a checkpoint before it stops."""
    if "daphne.server" not in sys.modules:
        return
    from twisted.internet import defer, reactor  # only under Daphne, whose reactor is installed by now

    runner = get_runner()
    if not isinstance(runner, InProcessRunner):
        # The workers run the sessions and resume theirs when they start; the server sweeps beside them.
        reactor.callWhenRunning(lambda: asyncio.get_event_loop().create_task(serve_forever(resume=False)))
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
