"""The tree as strategies see it, persisted through the ORM: every write saves, then publishes.

The running strategy is the session's one writer of nodes and scores, so the store keeps the
session's rows in memory and answers reads from there. Overseers change flags in the database
(pruned, edited thoughts, stale marks); refresh() re-reads them at each step boundary, and
add_children re-reads the parent's ancestry in its own transaction, so children that arrive under
a branch pruned meanwhile are kept but known to be out of the search.

Each write's transaction settles what its model calls spent through ledger.settle(), fenced by the
run's token: a run that lost its session (fence.RunLost) writes no node, no score and no ledger row.

New children are the one write not waited for: add_children returns them from memory once it has read whether their
branch was pruned meanwhile, and their insert runs on the run's writer thread while their judgements are asked (it
is on the critical path between a proposal and its evaluations otherwise). Every later write of the run is handed to
that same thread after it, so it lands first; settled() waits for it and raises its error, and every other write of
the store waits for it too, so an error reaches the strategy at its next write at the latest.
"""

import asyncio
import copy
import logging
import uuid

from asgiref.sync import sync_to_async
from django.db import connections, router

from . import events, ledger, sql
from .facts.case import CaseCheck, node_checks, shown_texts, with_figures
from .facts.check import capped
from .facts.sheet import Finding
from .models import ReasoningCritique, ReasoningEdge, ReasoningNode, ReasoningSession, is_offline
from .strategies.base import Critique, Edge, Node

log = logging.getLogger(__name__)

UPDATABLE = {
    "eval_score",
    "eval_reason",
    "parse_error",
    "is_terminal",
    "visit_count",
    "total_reward",
    "state",
    "stale",
}
# The columns overseers write; everything else in a row is the strategy's. A strategy's `stale=False` (it scored the
# node) clears the stale mark only if no edit marked the node again after the strategy read it (stale_mark).
OVERSEER_COLUMNS = (
    "id",
    "pruned",
    "pruned_by",
    "pruned_actor",
    "pruned_at",
    "thought",
    "stale",
    "stale_mark",
    "stale_reason",
    "original_thought",
)


def view(row):
    return Node(
        id=str(row.id),
        parent_id=str(row.parent_id) if row.parent_id else None,
        depth=row.depth,
        thought=row.thought,
        state=row.state,
        eval_score=row.eval_score,
        eval_reason=row.eval_reason,
        pruned=row.pruned,
        pruned_by=row.pruned_by,
        stale=row.stale,
        stale_mark=row.stale_mark,
        is_terminal=row.is_terminal,
        visit_count=row.visit_count,
        total_reward=row.total_reward,
        parse_error=row.parse_error,
    )


class DjangoStore:
    def __init__(self, session, fence=None, case=None):
        self.session_id = session.id
        self.fence = fence  # the run's token: every write below checks it in the statement that settles its spend
        # The client's facts: each new thought is checked against them, and a failed check caps the node's score.
        self.case = case if case is not None else CaseCheck(enabled=False)
        self.tenant_id = session.tenant_id
        self.wrote_offline = getattr(session, "wrote_offline", False)
        self.queued = []  # inserts of children handed to the writer thread and not yet waited for
        self.rows = {row.id: row for row in ReasoningNode.objects.filter(session_id=session.id).order_by("created_at")}
        self.kids = {}
        for row in self.rows.values():
            self.kids.setdefault(row.parent_id, []).append(row.id)
        self.edge_views = [
            Edge(str(e.from_node_id), str(e.to_node_id), e.action, e.observation)
            for e in ReasoningEdge.objects.filter(session_id=session.id).order_by("created_at")
        ]
        self.critique_views = [
            Critique(_str(c.node_id), c.attempt_num, c.outcome_score, c.critique, c.applied_to_next, str(c.id))
            for c in ReasoningCritique.objects.filter(session_id=session.id).order_by("attempt_num", "created_at")
        ]

    # ---- reads, from memory ---------------------------------------------------------------

    def get(self, node_id):
        row = self.rows.get(_uuid_or_none(node_id))
        return view(row) if row else None

    def nodes(self):
        return [view(row) for row in self.rows.values()]

    def edges(self):
        return list(self.edge_views)

    def critiques(self):
        return list(self.critique_views)

    def children(self, node):
        return [view(self.rows[i]) for i in self.kids.get(_uuid(node.id), [])]

    def path(self, node):
        """Root-first path to a node."""
        return [view(self.rows[i]) for i in reversed(self._lineage(_uuid(node.id)))]

    def is_pruned(self, node):
        return any(self.rows[i].pruned for i in self._lineage(_uuid(node.id)))

    def _lineage(self, node_id):
        ids, current = [], node_id
        while current is not None and current in self.rows:
            ids.append(current)
            current = self.rows[current].parent_id
        return ids

    # ---- writes ---------------------------------------------------------------------------

    async def add_root(self, thought, state):
        return await self._write(self._add_root, thought, state)

    async def add_children(self, parent, items, answer):
        """The children, from memory, once the branch's prune flags are read; their insert is queued (see above)."""
        # Made (and timed) before the branch is read: a child made after a prune is always seen to be under it.
        rows, edges = self._new_children(parent, items, answer)
        for node_id in await self._write(self._pruned_lineage, _uuid(parent.id)):
            self.rows[node_id].pruned = True  # an overseer pruned the branch while the proposals were in flight
        self._remember(rows)
        self.edge_views += [Edge(str(e.from_node_id), str(e.to_node_id), e.action, e.observation) for e in edges]
        self.queued.append(asyncio.ensure_future(sync_to_async(self._insert_children)(rows, edges, answer)))
        # One turn of the loop: the queued task's first step hands the insert to the writer thread, ahead of later writes.
        await asyncio.sleep(0)
        return [view(row) for row in rows]

    async def settled(self):
        """Wait for the queued inserts; raise the first one's error (to one waiter: the run then ends)."""
        queued, self.queued = self.queued, []
        # Shielded: a run cancelled while it waits must not cancel an insert the writer thread may not have begun.
        results = await asyncio.gather(*(asyncio.shield(task) for task in queued), return_exceptions=True)
        errors = [result for result in results if isinstance(result, BaseException)]
        for dropped in errors[1:]:  # one error ends the run; the others would be lost without a word
            log.error("session %s: a queued insert also failed", self.session_id, exc_info=dropped)
        if errors:
            raise errors[0]

    async def update(self, node, **fields):
        await self.update_many([(node, fields)])

    async def update_many(self, changes):
        if changes:
            seen = [(_uuid(node.id), dict(fields), node.stale_mark if node.stale else None) for node, fields in changes]
            await self._write(self._update_many, seen)

    async def prune(self, nodes):
        if nodes:
            await self._write(self._prune, [_uuid(n.id) for n in nodes])

    async def refresh(self):
        await self._write(self._refresh)

    async def add_critique(self, node, attempt_num, outcome_score, critique, spent=None):
        """A reflection on an attempt, kept as memory; `spent` (an Answer) is the call that wrote it."""
        return await self._write(self._add_critique, node, attempt_num, outcome_score, critique, spent)

    async def mark_applied(self, critiques):
        """These critiques went into the next attempt's prompt."""
        if critiques:
            await self._write(self._mark_applied, critiques)

    async def _write(self, work, *args):
        """A write (or read) of the store on the writer thread, after the queued inserts (their error first)."""
        await self.settled()
        return await sync_to_async(work)(*args)

    def _add_critique(self, node, attempt_num, outcome_score, critique, spent):
        row = ReasoningCritique(
            tenant_id=self.tenant_id,
            session_id=self.session_id,
            node_id=_uuid(node.id) if node else None,
            attempt_num=attempt_num,
            outcome_score=outcome_score,
            critique=critique,
        )
        records = [r for r in getattr(spent, "records", []) if r._state.adding]
        charged = None
        with sql.atomic():
            row.save()
            if node is not None and records:
                # The call that wrote the critique is charged to the attempt it judged, like any other.
                charged = copy.copy(self.rows[_uuid(node.id)])
                charged.cost_usd += sum(r.cost_usd for r in records)
                write_columns([charged], ["cost_usd"])
            self._settle(record_cost(records))  # before the rows: a refused write leaves them for the gateway
            write_records(records)
            events.publish(self.session_id, [("critique.created", {"critique": row.to_dict()})])
        if charged is not None:  # committed: the cache takes the charge
            self.rows[charged.id].cost_usd = charged.cost_usd
        memory = Critique(_str(row.node_id), attempt_num, outcome_score, critique, False, str(row.id))
        self.critique_views.append(memory)
        return memory

    def _mark_applied(self, critiques):
        ids = [c.id for c in critiques]
        with sql.atomic():
            self._settle()
            ReasoningCritique.objects.filter(pk__in=ids).update(applied_to_next=True)
            rows = list(ReasoningCritique.objects.filter(pk__in=ids))
            events.publish(self.session_id, [("critique.updated", {"critique": r.to_dict()}) for r in rows])
        for critique in critiques:
            critique.applied_to_next = True

    def _add_root(self, thought, state):
        with sql.atomic():
            self._settle()
            row = ReasoningNode.objects.create(
                tenant_id=self.tenant_id, session_id=self.session_id, depth=0, thought=thought, state=state
            )
            ReasoningSession.objects.filter(pk=self.session_id).update(root_node=row)
            events.publish(self.session_id, [events.node_event("node.created", row)])
        self._remember([row])
        return view(row)

    def _pruned_lineage(self, parent_id):
        """The node and its ancestors that an overseer has pruned (one statement)."""
        return [node_id for (node_id,) in flagged(self._lineage(parent_id), "pruned", ["id"])]

    def _new_children(self, parent, items, answer):
        share = answer.cost_usd / len(items) if answer and items else 0.0
        items = [{**item, "state": with_figures(self.case, item)} for item in items]
        rows = [
            ReasoningNode(
                tenant_id=self.tenant_id,
                session_id=self.session_id,
                parent_id=_uuid(parent.id),
                depth=parent.depth + 1,
                thought=item["thought"],
                state=item.get("state") or {},
                model_used=answer.model if answer else "",
                latency_ms=answer.latency_ms if answer else 0,
                cost_usd=share,
                checks=node_checks(self.case, item["thought"], item.get("state")),
            )
            for item in items
        ]
        # A step taken with a tool (ReAct) is an edge carrying its action and the tool's real output.
        edges = [
            ReasoningEdge(
                tenant_id=self.tenant_id,
                session_id=self.session_id,
                from_node_id=_uuid(parent.id),
                to_node=row,
                action=str(item.get("action", ""))[:500],
                observation=str(item.get("observation", "")),
            )
            for row, item in zip(rows, items, strict=True)
            if item.get("action") or item.get("observation")
        ]
        return rows, edges

    def _insert_children(self, rows, edges, answer):
        with sql.atomic():
            self._settle(record_cost(answer.records if answer else []))
            sql.insert(rows)
            offline = not self.wrote_offline and any(is_offline(row.model_used) for row in rows)
            if offline:  # said once, with the node: the session's label follows what wrote it, not only its primary
                ReasoningSession.objects.filter(pk=self.session_id).update(wrote_offline=True)
            ReasoningEdge.objects.bulk_create(edges)
            write_records(answer.records if answer else [])
            events.publish(
                self.session_id,
                [events.node_event("node.created", row) for row in rows]
                + [("edge.created", {"edge": edge.to_dict()}) for edge in edges],
            )
        self.wrote_offline = self.wrote_offline or offline  # once committed

    def _settle(self, spent=0.0):
        """The fenced statement of every write: settle its spend, and refuse the write if the run lost the session."""
        ledger.settle(self.session_id, spent, fence=self.fence)

    def _remember(self, rows):
        for row in rows:
            self.rows[row.id] = row
            self.kids.setdefault(row.parent_id, []).append(row.id)

    def _update_many(self, changes):
        """The changes written on copies of the cached rows; the cache takes the copies once the write committed."""
        copies = {}  # node id -> its copy: several changes of one node in one write build on each other
        staged = [self._apply(node_id, fields, copies) for node_id, fields, _ in changes]
        rows = [row for row, _, _ in staged]
        judged = zip(rows, changes, strict=True)
        clears = [(row, seen) for row, (_, fields, seen) in judged if fields.get("stale") is False]
        columns = sorted(set().union(*(written for _, written, _ in staged)))
        records = [record for _, _, spent in staged for record in spent]
        with sql.atomic():
            self._settle(record_cost(records))
            if columns:
                write_columns(rows, columns)
            if clears:  # judgements: an edit may have marked their nodes while they were asked
                self._clear_stale(rows, [(row, seen) for row, seen in clears if seen is not None])
            write_records(records)
            events.publish(self.session_id, [events.node_event("node.updated", row) for row in rows])
        for row in rows:
            self.rows[row.id] = row

    def _clear_stale(self, rows, clears):
        """Clear the stale marks these judgements saw (and no later edit's), then read which of the rows an edit
        marked stale meanwhile: their events and the cache say so (one query)."""
        by_mark = {}
        for row, seen in clears:
            by_mark.setdefault(seen, []).append(row.id)
        for seen, ids in by_mark.items():
            ReasoningNode.objects.filter(pk__in=ids, stale_mark__lte=seen).update(stale=False, stale_reason="")
        marked = flagged([row.id for row in rows], "stale", ["id", "stale_mark", "stale_reason"])
        still = {i: (mark, why) for i, mark, why in marked}
        for row in rows:
            row.stale = row.id in still
            row.stale_mark, row.stale_reason = still.get(row.id, (row.stale_mark, ""))

    def _apply(self, node_id, fields, copies):
        """A strategy's change applied to a copy of the cached row (kept in `copies`); returns the copy, the columns
        to write and the ledger rows.

        `stale` is the overseer's column: a strategy's stale=False goes to _clear_stale, over the mark it saw only.
        """
        fields = dict(fields)
        spent = fields.pop("spent", None)
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable by a strategy: {sorted(unknown)}")
        row = copies.setdefault(node_id, copy.copy(self.rows[node_id]))
        records = [r for r in getattr(spent, "records", []) if r._state.adding]
        # A cost is charged once, with the ledger rows that record it (an answer without rows: a fake gateway's).
        cost = sum(r.cost_usd for r in records) if getattr(spent, "records", None) else getattr(spent, "cost_usd", 0)
        if cost:
            fields["cost_usd"] = row.cost_usd + cost  # only the strategy writes costs
        if fields.pop("stale", False):
            raise ValueError("only an overseer's edit marks a node stale")
        if "state" in fields and shown_texts(fields["state"]) != shown_texts(row.state):
            fields["checks"] = node_checks(self.case, row.thought, fields["state"])  # a new text shown: checked too
            row.checks = fields["checks"]
        if fields.get("eval_score") is not None and row.checks:
            fields["eval_score"], why = capped(fields["eval_score"], [Finding.from_dict(c) for c in row.checks])
            if why:
                fields["eval_reason"] = f"{fields.get('eval_reason', row.eval_reason)} {why}".strip()
        for name, value in fields.items():
            setattr(row, name, value)
        return row, fields, records

    def _prune(self, node_ids):
        rows = [copy.copy(self.rows[i]) for i in node_ids]
        for row in rows:
            row.pruned, row.pruned_by = True, row.pruned_by or "strategy"
        with sql.atomic():
            self._settle()
            mark_pruned(node_ids)
            events.publish(self.session_id, [events.node_event("node.updated", row) for row in rows])
        for row in rows:  # committed
            self.rows[row.id] = row

    def _refresh(self):
        """Re-read the columns overseers write, for every node of the session (one statement, written by hand as
        sql.py says why: this runs at every step boundary)."""
        connection = sql.connection_for(ReasoningNode)
        session = sql.prep(ReasoningNode, "session", self.session_id, connection)
        where = f"{connection.ops.quote_name('session_id')} = %s"
        for values in sql.select(ReasoningNode, OVERSEER_COLUMNS, where, [session]):
            row = self.rows.get(values[0])
            if row is not None:
                for name, value in zip(OVERSEER_COLUMNS[1:], values[1:], strict=True):
                    setattr(row, name, value)


def record_cost(records):
    """What the ledger rows not written yet cost: the spend their write settles."""
    return sum(r.cost_usd for r in records if r._state.adding)


def write_records(records):
    """Write the ledger rows not written yet (the caller settles their cost with ledger.settle); returns that cost."""
    fresh = [r for r in records if r._state.adding]
    if not fresh:
        return 0.0
    sql.insert(fresh)
    return sum(r.cost_usd for r in fresh)


def flagged(ids, flag, names):
    """The rows among these node ids whose boolean `flag` is set: their `names` (one statement, see sql.py)."""
    if not ids:
        return []
    connection = sql.connection_for(ReasoningNode)
    among, params = sql.pk_in(ReasoningNode, ids, connection)
    return sql.select(ReasoningNode, names, f"{among} AND {connection.ops.quote_name(flag)} = %s", [*params, True])


def mark_pruned(ids):
    """The strategy prunes these nodes (those no one pruned before): one statement, as flagged() reads."""
    connection = connections[router.db_for_write(ReasoningNode)]
    quote = connection.ops.quote_name
    among, params = sql.pk_in(ReasoningNode, ids, connection)
    statement = (
        f"UPDATE {quote(ReasoningNode._meta.db_table)} SET {quote('pruned')} = %s, {quote('pruned_by')} = %s "
        f"WHERE {among} AND {quote('pruned')} = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, [True, "strategy", *params, False])


def write_columns(rows, names):
    """Write these fields of these rows with one prepared UPDATE run for each row.

    The ORM's bulk_update builds a CASE expression per column, which costs milliseconds on the hot path.
    """
    connection = connections[router.db_for_write(ReasoningNode)]
    quote = connection.ops.quote_name
    fields = [ReasoningNode._meta.get_field(name) for name in names]
    pk = ReasoningNode._meta.pk
    sql = "UPDATE {} SET {} WHERE {} = %s".format(
        quote(ReasoningNode._meta.db_table), ", ".join(f"{quote(f.column)} = %s" for f in fields), quote(pk.column)
    )
    params = [
        [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
        + [pk.get_db_prep_value(row.pk, connection)]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _uuid(value):
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _str(value):
    return str(value) if value is not None else None


def _uuid_or_none(value):
    try:
        return _uuid(value)
    except (TypeError, ValueError):
        return None
