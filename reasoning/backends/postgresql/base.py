"""Django's PostgreSQL backend, with the connection set to the caller's tenant before each query (reasoning/rls.py).

The connection's role and `app.tenant_id` are set at session level (set_config(..., false)) when the caller's
differ from what this connection was last set to: one extra statement when a connection changes hands between
tenants, none while it serves one. A rollback (of a transaction or a savepoint) may undo a setting made inside
it, and a connection handed out anew (a fresh one, or one back from the pool) may carry anything: then the
setting is made again before the next query.

When the app logs in as its tenant role, the all-tenants door is a second login (rls.DOOR_ALIAS): `Connections`
hands out its connection as Django's default one inside rls.all_tenants(), so transactions, savepoints, on_commit
hooks and raw cursors there all use the door's connection, and the objects read there belong to `default`.
"""

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.postgresql import base
from django.db.utils import ConnectionHandler

from reasoning import rls

UNKNOWN = object()
# Savepoint statements run as Django ends a block, after an error too: a setting before them would fail.
PASS_THROUGH = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rls_state = UNKNOWN
        self.execute_wrappers.append(self._wall)

    def _wall(self, execute, sql, params, many, context):
        want = rls.wanted()
        if self.alias == rls.DOOR_ALIAS and rls.ENABLED and want[0] != rls.DOOR_ROLE:
            # Its login bypasses row-level security: a query outside all_tenants() must never run on it.
            raise DatabaseError(f"the all-tenants connection serves rls.all_tenants() only, not {want}")
        # A broken transaction is left to Django's own error (TransactionManagementError), not a failed setting.
        if want != self.rls_state and not self.needs_rollback and not sql.lstrip().upper().startswith(PASS_THROUGH):
            self.set_tenant_state(want)
        return execute(sql, params, many, context)

    def set_tenant_state(self, state):
        role, value = state
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('role', %s, false), set_config(%s, %s, false)", [role, rls.SETTING, value]
            )
        self.rls_state = state

    def connect(self):
        self.rls_state = UNKNOWN
        super().connect()

    def _close(self):
        self.rls_state = UNKNOWN
        return super()._close()

    def _rollback(self):
        self.rls_state = UNKNOWN
        return super()._rollback()

    def _savepoint_rollback(self, sid):
        self.rls_state = UNKNOWN
        return super()._savepoint_rollback(sid)


class Connections(ConnectionHandler):
    """django.db.connections, where the default connection is the door's inside rls.all_tenants()."""

    def __getitem__(self, alias):
        if alias == DEFAULT_DB_ALIAS and rls.current() == rls.ALL:
            alias = rls.DOOR_ALIAS
        return super().__getitem__(alias)


def open_door():
    """Make all_tenants() use the door's login (reasoning/apps.py, when settings name it). Every module holds
    django.db.connections by reference, so the handler itself changes class."""
    connections.__class__ = Connections
