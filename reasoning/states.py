"""Session status moves and the run claim: the one place a session's status or owner changes.

A run claims a queued session with its owner id (host, pid, a per-process token) and a new epoch, its
fencing token (fence.Fence), and keeps a heartbeat written on the database's clock; another process can
then tell a live run from one whose process is gone or whose heartbeat went stale (compared on the same
clock), and take over only the dead one. Every write of a run carries its fence, so a run that was taken
over writes nothing more. Engine, services and runner all move sessions through here.
"""

import os
import secrets
import socket
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, DateTimeField, ExpressionWrapper, F, Q, Value, When
from django.db.models.functions import Now
from django.utils import timezone

from . import events, ledger, rls
from .fence import Fence, RunLost
from .models import LLMCall, ReasoningSession, Status

__all__ = ["Fence", "RunLost"]

PROCESS_TOKEN = secrets.token_hex(4)
HOST = socket.gethostname()[:60]


def _new_process_token():
    """A forked child (a Celery pool child) is a process of its own: its runs must not pass for its parent's or its
    siblings' (it imported this module before the fork, with their token)."""
    global PROCESS_TOKEN
    PROCESS_TOKEN = secrets.token_hex(4)


os.register_at_fork(after_in_child=_new_process_token)


def owner_id():
    """Who runs sessions in this process: host, pid and a token that a reused pid cannot repeat."""
    return f"{HOST}:{os.getpid()}:{PROCESS_TOKEN}"


def transition(session_id, to, sources=None, when=None, fence=None, alive_until=None, **fields):
    """Move a session to a status from one of the sources (by default, every status the state machine allows),
    as one atomic claim; publish the change. True if it moved.

    alive_until is a dead run's last heartbeat: its running time ends there, not when it was found dead.

    With a run's fence, the move happens only while that run holds the session (in the same statement); if it
    did not move because the run lost the session, RunLost is raised.
    """
    allowed = {source for source, targets in ReasoningSession.TRANSITIONS.items() if to in targets}
    sources = allowed if sources is None else set(sources) & allowed
    with transaction.atomic():
        rows = ReasoningSession.objects.filter(pk=session_id, status__in=sources)
        rows = rows.filter(when) if when is not None else rows
        rows = rows.filter(fence.q()) if fence is not None else rows
        if Status.RUNNING in sources:
            moved = _leave_running(rows, to, fields, alive_until) or rows.exclude(status=Status.RUNNING).update(status=to, **fields)
        else:
            moved = rows.update(status=to, **fields)
        if moved:
            session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
            events.publish(session_id, [events.session_updated(session)])
    if not moved and fence is not None and not fence.held():
        raise fence.lost()
    return bool(moved)


def _leave_running(rows, to, fields, alive_until=None, tries=3):
    """Move a running session on, banking the run's time since its last resume in active_seconds in the same
    statement, so the event it publishes already carries it; a dead run's time ends at its last heartbeat
    (alive_until). Guarded by what was read (optimistic): a concurrent move makes it read again. 0 when the
    session is not running."""
    running = rows.filter(status=Status.RUNNING)
    for _ in range(tries):
        seen = running.values_list("resumed_at", "active_seconds").first()
        if seen is None:
            return 0
        resumed, banked = seen
        until = min(timezone.now(), alive_until) if alive_until is not None else timezone.now()
        spent = max(0.0, (until - resumed).total_seconds()) if resumed else 0.0
        if running.filter(resumed_at=resumed, active_seconds=banked).update(
            status=to, active_seconds=banked + spent, **fields
        ):
            return 1
    return 0


@rls.all_tenants()
def tenant_of(session_id):
    """The id of the session's tenant (None for no such session): a run learns for whom it works from it."""
    return ReasoningSession.objects.filter(pk=session_id).values_list("tenant_id", flat=True).first()


def claim(session_id, owner):
    """Take a queued session for a run; only when no live run holds it. The run's Fence if it has it now, else None.

    The claim bumps the session's epoch: a run that held it before (even under the same owner id) is fenced out.
    """
    now = timezone.now()
    with transaction.atomic():
        moved = transition(
            session_id,
            Status.RUNNING,
            [Status.QUEUED],
            when=Q(run_owner=""),
            run_owner=owner,
            run_epoch=F("run_epoch") + 1,
            turns=F("turns") + 1,
            heartbeat_at=Now(),
            dispatched_at=None,
            # started_at is the first run's start and never moves; resumed_at is this run's.
            started_at=Case(When(resumed_at=None, then=Value(now)), default=F("started_at")),
            resumed_at=now,
            finished_at=None,
        )
        if not moved:
            return None
        epoch = ReasoningSession.objects.filter(pk=session_id).values_list("run_epoch", flat=True).get()
    return Fence(session_id, owner, epoch)


def release(fence):
    """Give the session back; returns its status then (a queued one wants another run), None if the run had lost it."""
    if not fence.rows().update(run_owner="", heartbeat_at=None):
        return None
    return ReasoningSession.objects.filter(pk=fence.session_id).values_list("status", flat=True).first()


def beat(fence):
    """The run is alive (on the database's clock); returns the session's status, or None if this run no longer
    holds it. The heartbeat thread beats for the runs of every tenant."""
    with rls.all_tenants(), transaction.atomic():
        if not fence.rows().update(heartbeat_at=Now()):
            return None
        return ReasoningSession.objects.filter(pk=fence.session_id).values_list("status", flat=True).first()


def held_status(fence):
    """The session's status, or None if this run no longer holds it (a read: no heartbeat written)."""
    return fence.rows().values_list("status", flat=True).first()


def stale_before():
    """The heartbeat older than which a run is taken for dead, on the database's clock (hosts' clocks differ)."""
    stale = timedelta(seconds=settings.REASONING["HEARTBEAT_STALE_S"])
    return ExpressionWrapper(Now() - stale, output_field=DateTimeField())


def is_dead(session):
    """True if the run holding the session is gone: its process ended on this host, or its heartbeat is stale
    (compared with the database's clock, the one it was written with)."""
    if not session.run_owner:
        return True
    gone = _gone(session.run_owner)
    if gone is not None:
        return gone
    return not ReasoningSession.objects.filter(
        pk=session.pk, run_owner=session.run_owner, heartbeat_at__gte=stale_before()
    ).exists()


def _gone(owner):
    """True if the owner's process has ended, False if it is this very process, None if only its heartbeat can tell."""
    host, _, rest = owner.partition(":")
    pid, _, token = rest.partition(":")
    if host == HOST and pid.isdigit():
        if int(pid) == os.getpid():
            return token != PROCESS_TOKEN
        if not _process_exists(int(pid)):
            return True
    return None


def take_over(session):
    """Free a dead run's session: record what it left reserved as unaccounted, release it, queue it again.

    The release is one statement fenced by what was judged dead: the same owner and epoch, the same reservation,
    and (when only the heartbeat could tell) a heartbeat still stale on the database's clock. A run that beat
    meanwhile keeps its session and its lease. The epoch moves on, so the old run's later writes are refused.
    Returns True if the session is queued for a new run.
    """
    with transaction.atomic():
        # A row another transaction holds is left to a later sweep rather than waited for: a frozen run may hold it
        # until the database ends its transaction (DB_IDLE_IN_TRANSACTION_S), and the sweep has other sessions to see.
        # NO KEY: a node being inserted under the session (a key share) is no reason to wait.
        free = ReasoningSession.objects.select_for_update(skip_locked=True, no_key=True)
        fresh = free.filter(pk=session.pk).first()
        if fresh is None or fresh.status not in (Status.RUNNING, Status.INTERRUPTED, Status.QUEUED):
            return False
        if not is_dead(fresh):
            return False
        judged = Q(
            pk=fresh.pk,
            run_owner=fresh.run_owner,
            run_epoch=fresh.run_epoch,
            budget_reserved_usd=fresh.budget_reserved_usd,
        )
        if fresh.run_owner and _gone(fresh.run_owner) is None:
            judged &= Q(heartbeat_at=None) | Q(heartbeat_at__lt=stale_before())
        taken = ReasoningSession.objects.filter(judged).update(
            run_owner="", heartbeat_at=None, budget_reserved_usd=0.0, run_epoch=F("run_epoch") + 1
        )
        if not taken:
            return False
        if fresh.budget_reserved_usd > 1e-12:
            # A call in flight when the run stopped may have been paid for; its row never came back. The tenant's
            # month counts it as spent: its cap must hold even for what the ledger cannot tell.
            ledger.tenant_write_off(fresh.pk, fresh.budget_reserved_usd)
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
        if fresh.status == Status.QUEUED:
            return True
        if fresh.status == Status.RUNNING:
            transition(
                fresh.pk, Status.INTERRUPTED, [Status.RUNNING], alive_until=fresh.heartbeat_at,
                termination_reason="run_lost",
            )
        return transition(fresh.pk, Status.QUEUED, [Status.INTERRUPTED], termination_reason="")


def _process_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
