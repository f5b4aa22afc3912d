"""The overseers as a running strategy meets them: stop requests, pending commands, the run's heartbeat.

A watcher task reads the session's status a few times a second (and at once when this process
is told of a change), so a pause or cancel stops new model calls within one call rather than at
the end of a step; the strategy itself unwinds at its next step boundary.
"""

import asyncio
import contextlib
import logging
import threading

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from . import events, ledger, sql, states
from .models import OverseerAction, ReasoningSession, Status
from .strategies.base import Command, StopRequested

log = logging.getLogger(__name__)
RUN_COMMANDS = ("expand", "edit", "promote", "resynthesize", "fact.add", "fact.edit", "fact.remove")
STOPS = ("pause", "cancel")  # actions a run meets by stopping
_live = {}  # session id -> the SessionControl of the run this process has for it


def wake(session_id):
    """An overseer changed this session: a run in this process looks at once instead of at its next poll."""
    control = _live.get(str(session_id))
    if control is not None:
        control.loop.call_soon_threadsafe(control.woken.set)


def stop(session_id, status):
    """The session was paused or cancelled: a run in this process starts no model call from now on."""
    control = _live.get(str(session_id))
    if control is not None:
        control.loop.call_soon_threadsafe(control.request_stop, status)


def stop_all(status="interrupted"):
    """The process is stopping: every run here stops starting model calls and unwinds."""
    for control in list(_live.values()):
        control.loop.call_soon_threadsafe(control.request_stop, status)


class SessionControl:
    def __init__(self, session_id, owner, fence=None):
        self.session_id, self.owner = session_id, owner
        self.fence = fence  # the run's token: its heartbeat and reads count only while it holds the session
        # The run's turn (engine.start_turn sets it) and the step boundaries it has passed: each action is stamped with
        # where the run met it, so a replay applies it there (reasoning/replay.py). No turn: nothing is stamped.
        self.turn, self.steps = None, 0
        self.stop_status = None
        self.handed = set()  # commands given to the strategy already
        self.task = None
        self.loop = None
        self.woken = None

    def start(self):
        self.loop = asyncio.get_running_loop()
        self.woken = asyncio.Event()
        _live[str(self.session_id)] = self
        self.task = self.loop.create_task(self._watch(), name=f"watch-{self.session_id}")
        if self.fence is not None:
            HEARTBEATS.add(self)

    async def stop(self):
        HEARTBEATS.remove(self)
        _live.pop(str(self.session_id), None)
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    def request_stop(self, status):
        self.stop_status = self.stop_status or status

    def check(self):
        """Before each model call: raise if the session should stop (no I/O)."""
        if self.stop_status is not None:
            raise StopRequested(self.stop_status)

    async def _watch(self):
        """Reads the status a few times a second (the heartbeat is HEARTBEATS' to write, on a thread of its own)."""
        engine = settings.REASONING
        while self.stop_status is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.woken.wait(), engine["CONTROL_POLL_S"])
            self.woken.clear()
            try:
                status = await sync_to_async(states.held_status)(self.fence)
            except Exception:  # a busy database must not kill the run; the next poll tries again
                log.warning("could not check session %s", self.session_id, exc_info=True)
                continue
            if status != Status.RUNNING:
                self.request_stop(status or "lost")

    async def checkpoint(self):
        self.steps += 1
        self.check()
        status, rows = await sync_to_async(self._read)()
        if status != Status.RUNNING:
            self.request_stop(status or "lost")
            self.check()
        commands = [
            Command(
                id=r.id,
                action=r.action,
                node_id=str(r.node_id) if r.node_id else None,
                payload=r.payload,
                actor=r.actor,
            )
            for r in rows
            if r.id not in self.handed
        ]
        self.handed.update(c.id for c in commands)
        return commands

    def _read(self):
        """The status and the pending commands: one statement written by hand (sql.py says why) when there are none,
        the usual case."""
        connection = sql.connection_for(ReasoningSession)
        q = connection.ops.quote_name
        marks = ", ".join(["%s"] * len(RUN_COMMANDS))
        unmet = f"a.{q('turn')} IS NULL OR " if self.turn is not None else ""  # an action this run has not stamped
        statement = (
            f"SELECT s.{q('status')}, s.{q('run_owner')}, s.{q('run_epoch')}, EXISTS(SELECT 1 FROM "
            f"{q(OverseerAction._meta.db_table)} a WHERE a.{q('session_id')} = s.{q('id')} AND ({unmet}(a.{q('state')}"
            f" = %s AND a.{q('action')} IN ({marks})))) FROM {q(ReasoningSession._meta.db_table)} s "
            f"WHERE s.{q('id')} = %s"
        )
        params = [
            OverseerAction.State.PENDING,
            *RUN_COMMANDS,
            sql.prep(ReasoningSession, "id", self.session_id, connection),
        ]
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            row = cursor.fetchone()
        if row is None or row[1] != self.owner or (self.fence is not None and row[2] != self.fence.epoch):
            return None, []
        if not row[3]:
            return row[0], []
        pending = OverseerAction.objects.filter(
            session_id=self.session_id, state=OverseerAction.State.PENDING, action__in=RUN_COMMANDS
        )
        if self.turn is not None and row[0] == Status.RUNNING:  # a run stopping here meets nothing more
            stamp(self.session_id, self.turn, self.steps)
            pending = pending.filter(turn__isnull=False)  # one saved since the stamp waits for the next boundary
        return row[0], list(pending.order_by("id"))

    async def done(self, command, applied, detail="", after=None):
        await sync_to_async(record_outcome)(command.id, applied, detail, after, self.fence)


class Heartbeats:
    """One thread per process writes the heartbeat of every run the process holds, every HEARTBEAT_S seconds.

    Apart from the runs' event loop and from the thread their sync work shares (sync_to_async's), so nothing a run
    does delays it: a cold Celery pool child importing litellm for 5.6 s on that thread, a large tree written, a slow
    model call. Only the process's end (or a stop: SIGSTOP, a frozen host) stops it, which is what a take-over is for.
    The thread exists while there are runs to beat for, and holds a database connection only while it writes.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.controls = {}
        self.thread = None
        self.changed = threading.Event()

    def add(self, control):
        with self.lock:
            self.controls[id(control)] = control
            if self.thread is None or not self.thread.is_alive():  # none yet, or a fork left its parent's behind
                self.thread = threading.Thread(target=self._beat_forever, name="reasoning-heartbeat", daemon=True)
                self.thread.start()

    def remove(self, control):
        with self.lock:
            self.controls.pop(id(control), None)
        self.changed.set()

    def _beat_forever(self):
        while True:
            self.changed.wait(settings.REASONING["HEARTBEAT_S"])
            self.changed.clear()
            with self.lock:
                if not self.controls:
                    self.thread = None
                    return
                due = list(self.controls.values())
            try:
                for control in due:
                    if id(control) in self.controls:
                        self._beat(control)
            finally:
                connections.close_all()  # this thread's connection, back to the pool between beats

    def _beat(self, control):
        try:
            status = states.beat(control.fence)
        except Exception:  # a busy database must not end the beating; the next round tries again
            log.warning("could not write the heartbeat of session %s", control.session_id, exc_info=True)
            return
        if status != Status.RUNNING:
            with contextlib.suppress(RuntimeError):  # the run's loop closed meanwhile: it has stopped already
                control.loop.call_soon_threadsafe(control.request_stop, status or "lost")


HEARTBEATS = Heartbeats()


def record_outcome(action_id, applied, detail="", after=None, fence=None):
    with transaction.atomic():
        if fence is not None:
            ledger.settle(fence.session_id, fence=fence)  # only while the run holds the session (RunLost if not)
        action = OverseerAction.objects.get(pk=action_id)
        action.state = OverseerAction.State.APPLIED if applied else OverseerAction.State.REFUSED
        action.detail, action.applied_at = detail[:2000], timezone.now()
        action.after = after or action.after
        action.save(update_fields=["state", "detail", "applied_at", "after"])
        events.publish(action.session_id, [events.action_event("action.updated", action)])


def stamp(session_id, turn, step, actions=None):
    """The actions no run has met yet (of these kinds, if given), met now: by this turn, at this step boundary. At a
    run's start (step 0) a pending command is not met yet: it is handed, and stamped, at the first step boundary."""
    unmet = OverseerAction.objects.filter(session_id=session_id, turn__isnull=True)
    if actions is not None:
        unmet = unmet.filter(action__in=actions)
    if step == 0:
        unmet = unmet.exclude(state=OverseerAction.State.PENDING, action__in=RUN_COMMANDS)
    unmet.update(turn=turn, step=step)


def refuse_pending(session_id, why):
    """The session ended before a run applied its pending commands: each is refused, saying why, so none waits for a
    run that will not come."""
    pending = OverseerAction.objects.filter(
        session_id=session_id, state=OverseerAction.State.PENDING, action__in=RUN_COMMANDS
    )
    for action_id in pending.values_list("id", flat=True):
        record_outcome(action_id, False, why)


class GuardedGateway:
    """The strategy's gateway: no model call starts once the session should stop."""

    def __init__(self, gateway, control):
        self.inner, self.control = gateway, control

    async def ask(self, contract, prompt, node_id=None, expect=None, samples=1):
        self.control.check()
        return await self.inner.ask(contract, prompt, node_id=node_id, expect=expect, samples=samples)

    async def remaining_usd(self):
        return await self.inner.remaining_usd()

    def typical_call_usd(self):
        return self.inner.typical_call_usd()

    async def close(self):
        await self.inner.close()
