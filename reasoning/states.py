"""Session status moves and the run claim: the one place a session's status or owner changes.

A run claims a queued session with its owner id (host, pid, a per-process token) and keeps a
heartbeat; another process can then tell a live run from one whose process is gone, and take
over only the dead one. Engine, services and runner all move sessions through here.
"""

import os
import secrets
import socket
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from . import events
from .models import LLMCall, ReasoningSession, Status

PROCESS_TOKEN = secrets.token_hex(4)
HOST = socket.gethostname()[:60]


def owner_id():
    """Who runs sessions in this process: host, pid and a token that a reused pid cannot repeat."""
    return f"{HOST}:{os.getpid()}:{PROCESS_TOKEN}"


def transition(session_id, to, sources=None, when=None, **fields):
    """Move a session to a status from one of the sources (by default, every status the state machine allows),
    as one atomic claim; publish the change. True if it moved."""
    allowed = {source for source, targets in ReasoningSession.TRANSITIONS.items() if to in targets}
    sources = allowed if sources is None else set(sources) & allowed
    with transaction.atomic():
        rows = ReasoningSession.objects.filter(pk=session_id, status__in=sources)
        moved = (rows.filter(when) if when is not None else rows).update(status=to, **fields)
        if moved:
            session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
            events.publish(session_id, [events.session_updated(session)])
    return bool(moved)


def claim(session_id, owner):
    """Take a queued session for a run; only when no live run holds it. True if this run has it now."""
    return transition(
        session_id,
        Status.RUNNING,
        [Status.QUEUED],
        when=Q(run_owner=""),
        run_owner=owner,
        heartbeat_at=timezone.now(),
        started_at=timezone.now(),
        finished_at=None,
    )


def release(session_id, owner):
    """Give the session back; returns its status then (a queued one wants another run)."""
    ReasoningSession.objects.filter(pk=session_id, run_owner=owner).update(run_owner="", heartbeat_at=None)
    return ReasoningSession.objects.filter(pk=session_id).values_list("status", flat=True).first()


def beat(session_id, owner):
    """The run is alive; returns the session's status, or None if this run no longer holds it."""
    with transaction.atomic():
        held = ReasoningSession.objects.filter(pk=session_id, run_owner=owner).update(heartbeat_at=timezone.now())
        if not held:
            return None
        return ReasoningSession.objects.filter(pk=session_id).values_list("status", flat=True).first()


def held_status(session_id, owner):
    """The session's status, or None if this run no longer holds it (a read: no heartbeat written)."""
    row = ReasoningSession.objects.filter(pk=session_id).values_list("status", "run_owner").first()
    return row[0] if row and row[1] == owner else None


def is_dead(session):
    """True if the run holding the session is gone: its process ended on this host, or its heartbeat is stale."""
    if not session.run_owner:
        return True
    host, _, rest = session.run_owner.partition(":")
    pid, _, token = rest.partition(":")
    if host == HOST and pid.isdigit():
        if int(pid) == os.getpid():
            return token != PROCESS_TOKEN
        if not _process_exists(int(pid)):
            return True
    stale = timezone.now() - timedelta(seconds=settings.REASONING["HEARTBEAT_STALE_S"])
    return session.heartbeat_at is None or session.heartbeat_at < stale


def take_over(session):
    """Free a dead run's session: record what it left reserved as unaccounted, release it, queue it again.

    Returns True if the session is queued for a new run.
    """
    with transaction.atomic():
        fresh = ReasoningSession.objects.select_for_update().get(pk=session.pk)
        if fresh.status not in (Status.RUNNING, Status.INTERRUPTED, Status.QUEUED) or not is_dead(fresh):
            return False
        if fresh.budget_reserved_usd > 1e-12:
            # A call in flight when the process died may have been paid for; its row never came back.
            LLMCall.objects.create(
                tenant_id=fresh.tenant_id,
                session_id=fresh.pk,
                purpose="recovery",
                model_requested=fresh.model_primary,
                outcome=LLMCall.Outcome.UNACCOUNTED,
                reserved_usd=fresh.budget_reserved_usd,
                error=(
                    f"the run stopped with {fresh.budget_reserved_usd:.6f} USD reserved; calls in flight then "
                    "may have been paid for and are not in this ledger"
                ),
            )
        ReasoningSession.objects.filter(pk=fresh.pk).update(run_owner="", heartbeat_at=None, budget_reserved_usd=0.0)
        if fresh.status == Status.QUEUED:
            return True
        if fresh.status == Status.RUNNING:
            transition(fresh.pk, Status.INTERRUPTED, [Status.RUNNING], termination_reason="run_lost")
        return transition(fresh.pk, Status.QUEUED, [Status.INTERRUPTED], termination_reason="")


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
