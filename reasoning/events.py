"""Publish tree and session events to a session's channel group, after the write commits.

Each event gets the session's next sequence number inside the writing transaction, so a
client that saw the snapshot at seq N can apply exactly the events after N, in order.
Writes happen on worker threads; sending is handed to the event loop without blocking them,
through one FIFO per loop, so events leave in the order they were numbered.
"""

import asyncio
import collections
import contextvars
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connections, router, transaction

from . import tree_memo
from .models import ReasoningSession

log = logging.getLogger(__name__)
_senders = {}
_senders_lock = threading.Lock()
MAX_BATCH = 500  # events per channel message


def group_name(session_id):
    return f"session.{session_id}"


def publish(session_id, events):
    """Number events [(type, payload), ...] in this transaction; send them once it commits.

    Money is not moved here: the writer settles spend with ledger.settle() in the same transaction.
    """
    if not events:
        return
    last = _advance_seq(session_id, len(events))
    first = last - len(events) + 1
    messages = [{"type": kind, "seq": first + i, **payload} for i, (kind, payload) in enumerate(events)]
    transaction.on_commit(lambda: _committed(session_id, messages))


def _committed(session_id, messages):
    tree_memo.changed(session_id)  # before the send: a reader told of the change must not be answered 304
    send(session_id, messages)


def _advance_seq(session_id, count):
    """Add count to the session's seq and return the new seq, in one statement."""
    alias = router.db_for_write(ReasoningSession)
    connection = connections[alias]
    table = connection.ops.quote_name(ReasoningSession._meta.db_table)
    pk = ReasoningSession._meta.pk.get_db_prep_value(session_id, connection)
    # Inside the writer's transaction (every caller has one) a savepoint would add two statements to each write.
    with transaction.atomic(using=alias, savepoint=False), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET seq = seq + %s WHERE id = %s RETURNING seq", [count, pk])
        return cursor.fetchone()[0]


def bind_loop(loop):
    """Sends from threads of this loop's process go through this loop without blocking the writer."""
    with _senders_lock:
        for old in [lp for lp in _senders if lp.is_closed()]:
            del _senders[old]
        _senders.setdefault(loop, _Sender(loop))


def send(session_id, messages):
    sender = _current_sender()
    if sender is not None:
        sender.loop.call_soon_threadsafe(
            sender.enqueue, group_name(session_id), messages, context=contextvars.Context()
        )
        return
    layer = get_channel_layer()
    if layer is not None:
        try:
            async_to_sync(_group_send)(layer, group_name(session_id), messages)
        except Exception:  # the database has the change; a client that misses it re-syncs on the seq gap
            log.warning("could not publish %d event(s) to %s", len(messages), group_name(session_id), exc_info=True)


async def flush():
    """Wait until every event this loop has queued has been handed to the channel layer."""
    sender = _senders.get(asyncio.get_running_loop())
    if sender is not None:
        await sender.flush()


def _current_sender():
    with _senders_lock:
        live = [s for s in _senders.values() if not s.loop.is_closed() and s.loop.is_running()]
    # With one serving loop (the ASGI server, a worker) every thread's events go through it.
    return live[0] if len(live) == 1 else None


class _Sender:
    def __init__(self, loop):
        self.loop = loop
        self.pending = collections.deque()
        self.task = None

    def enqueue(self, group, messages):
        self.pending.append((group, messages))
        if self.task is None or self.task.done():
            self.task = self.loop.create_task(self._drain(), context=contextvars.Context())

    async def _drain(self):
        layer = get_channel_layer()
        while self.pending:
            group, messages = self.pending.popleft()
            # Coalesce what queued up behind it for the same group, in order.
            while self.pending and self.pending[0][0] == group and len(messages) < MAX_BATCH:
                messages = messages + self.pending.popleft()[1]
            try:
                if layer is not None:
                    await _group_send(layer, group, messages)
            except Exception:  # the database has the change; a client that misses it re-syncs on the seq gap
                log.exception("could not publish %d event(s) to %s", len(messages), group)

    async def flush(self):
        while self.pending or (self.task is not None and not self.task.done()):
            await asyncio.sleep(0)
            if self.task is not None and not self.task.done():
                await asyncio.shield(self.task)


async def _group_send(layer, group, messages):
    # One channel message per batch: a burst of nodes must not overflow a watcher's channel.
    await layer.group_send(group, {"type": "reasoning.events", "events": messages})


def session_updated(session):
    return ("session.updated", {"session": session.to_dict()})


def node_event(kind, node):
    return (kind, {"node": node.to_dict()})


def action_event(kind, action):
    return (kind, {"action": action.to_dict()})
