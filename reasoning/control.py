"""The overseers as a running strategy meets them: stop requests, pending commands, the run's heartbeat.

A watcher task reads the session's status a few times a second (and at once when this process
is told of a change), so a pause or cancel stops new model calls within one call rather than at
the end of a step; the strategy itself unwinds at its next step boundary.
"""

import asyncio
import contextlib
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import events, ledger, sql, states
from .models import OverseerAction, ReasoningSession, Status
from .strategies.base import Command, StopRequested

log = logging.getLogger(__name__)
RUN_COMMANDS = ("expand", "edit", "promote", "resynthesize", "fact.add", "fact.edit", "fact.remove")
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

    async def stop(self):
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
        engine = settings.REASONING
        beaten = self.loop.time()
        while self.stop_status is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.woken.wait(), engine["CONTROL_POLL_S"])
            self.woken.clear()
            # Reads a few times a second; writes the heartbeat only every few seconds.
            beating = self.loop.time() - beaten >= engine["HEARTBEAT_S"]
            try:
                status = await sync_to_async(states.beat if beating else states.held_status)(self.fence)
            except Exception:  # a busy database must not kill the run; the next poll tries again
                log.warning("could not check session %s", self.session_id, exc_info=True)
                continue
            beaten = self.loop.time() if beating else beaten
            if status != Status.RUNNING:
                self.request_stop(status or "lost")

    async def checkpoint(self):
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
        statement = (
            f"SELECT s.{q('status')}, s.{q('run_owner')}, s.{q('run_epoch')}, EXISTS(SELECT 1 FROM "
            f"{q(OverseerAction._meta.db_table)} a WHERE a.{q('session_id')} = s.{q('id')} AND a.{q('state')} = %s "
            f"AND a.{q('action')} IN ({marks})) FROM {q(ReasoningSession._meta.db_table)} s WHERE s.{q('id')} = %s"
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
        return row[0], list(pending.order_by("id"))

    async def done(self, command, applied, detail="", after=None):
        await sync_to_async(record_outcome)(command.id, applied, detail, after, self.fence)


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
