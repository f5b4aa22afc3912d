"""The tree as strategies see it, persisted through the ORM: every write saves, then publishes."""

import uuid

from asgiref.sync import sync_to_async
from django.db import connections, router, transaction

from . import events
from .models import ReasoningNode, ReasoningSession
from .strategies.base import Node

UPDATABLE = {"eval_score", "eval_reason", "parse_error", "is_terminal", "visit_count", "total_reward", "state"}


def view(row):
    return Node(
        id=str(row.id),
        parent_id=str(row.parent_id) if row.parent_id else None,
        depth=row.depth,
        thought=row.thought,
        state=row.state,
        eval_score=row.eval_score,
        pruned=row.pruned,
        is_terminal=row.is_terminal,
        visit_count=row.visit_count,
        total_reward=row.total_reward,
        parse_error=row.parse_error,
    )


class DjangoStore:
    """Keeps the session's rows in memory (one writer: the running strategy) and writes each change through.

    Overseers change pruned flags and thoughts in the database; refresh() re-reads them at
    each step boundary, which is when a strategy promises to honour them.
    """

    def __init__(self, session):
        self.session_id = session.id
        self.tenant_id = session.tenant_id
        self.rows = {row.id: row for row in ReasoningNode.objects.filter(session=session)}

    async def add_root(self, thought, state):
        return await sync_to_async(self._add_root)(thought, state)

    async def add_children(self, parent, items, answer):
        return await sync_to_async(self._add_children)(parent, items, answer)

    async def update(self, node, **fields):
        await self.update_many([(node, fields)])

    async def update_many(self, changes):
        if changes:
            await sync_to_async(self._update_many)([(_uuid(node.id), dict(fields)) for node, fields in changes])

    async def prune(self, nodes):
        if nodes:
            await sync_to_async(self._prune)([_uuid(n.id) for n in nodes])

    async def refresh(self, nodes):
        return await sync_to_async(self._refresh)([_uuid(n.id) for n in nodes])

    async def path(self, node):
        """Root-first path to a node, from memory: no database round trip on the hot path."""
        ids, current = [], _uuid(node.id)
        while current is not None and current in self.rows:
            ids.append(current)
            current = self.rows[current].parent_id
        return [view(self.rows[i]) for i in reversed(ids)]

    def _add_root(self, thought, state):
        with transaction.atomic():
            row = ReasoningNode.objects.create(
                tenant_id=self.tenant_id, session_id=self.session_id, depth=0, thought=thought, state=state
            )
            ReasoningSession.objects.filter(pk=self.session_id).update(root_node=row)
            events.publish(self.session_id, [events.node_event("node.created", row)])
        self.rows[row.id] = row
        return view(row)

    def _add_children(self, parent, items, answer):
        share = answer.cost_usd / len(items) if answer and items else 0.0
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
            )
            for item in items
        ]
        with transaction.atomic():
            ReasoningNode.objects.bulk_create(rows)
            events.publish(self.session_id, [events.node_event("node.created", row) for row in rows])
        self.rows.update((row.id, row) for row in rows)
        return [view(row) for row in rows]

    def _update_many(self, changes):
        applied = [self._apply(node_id, fields) for node_id, fields in changes]
        rows = [row for row, _ in applied]
        columns = sorted(set().union(*(written for _, written in applied)))
        with transaction.atomic():
            write_columns(rows, columns)
            events.publish(self.session_id, [events.node_event("node.updated", row) for row in rows])

    def _apply(self, node_id, fields):
        """Apply a strategy's change to the cached row; returns the row and the columns to write."""
        add_cost = fields.pop("add_cost", 0.0)
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise ValueError(f"not updatable by a strategy: {sorted(unknown)}")
        row = self.rows[node_id]
        if add_cost:
            fields["cost_usd"] = row.cost_usd + add_cost  # only the strategy writes costs
        for name, value in fields.items():
            setattr(row, name, value)
        return row, fields

    def _prune(self, node_ids):
        with transaction.atomic():
            ReasoningNode.objects.filter(pk__in=node_ids, pruned=False).update(pruned=True, pruned_by="strategy")
            rows = [self.rows[i] for i in node_ids]
            for row in rows:
                row.pruned, row.pruned_by = True, row.pruned_by or "strategy"
            events.publish(self.session_id, [events.node_event("node.updated", row) for row in rows])

    def _refresh(self, node_ids):
        """Re-read what overseers may have changed, for these nodes and their ancestors."""
        wanted = set()
        for node_id in node_ids:
            current = node_id
            while current is not None and current not in wanted:
                wanted.add(current)
                current = self.rows[current].parent_id if current in self.rows else None
        for node_id, pruned, pruned_by, thought in ReasoningNode.objects.filter(pk__in=wanted).values_list(
            "id", "pruned", "pruned_by", "thought"
        ):
            row = self.rows[node_id]
            row.pruned, row.pruned_by, row.thought = pruned, pruned_by, thought
        return [view(self.rows[i]) for i in node_ids if i in self.rows]


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
