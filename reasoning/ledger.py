"""The one place a session's money moves: budget leased to a run, and spend settled from reserved to used.

Both statements carry the run's fence (when the run has one): a run that lost its session can neither lease
budget nor settle spend, so a run taken over mid-call cannot take the session past its budget, and the ledger
rows and node costs written with a settlement roll back with it. The store calls settle() in the transaction
that writes the nodes and ledger rows a call produced; the gateway calls reserve() before each call it cannot
cover from its lease and settle() for failed attempts and its unspent lease.
"""

from django.db import connections, router

from .models import ReasoningSession

EPSILON = 1e-12


def settle(session_id, cost=0.0, released=None, fence=None):
    """Move `released` (default: `cost`) out of the session's reservation and `cost` into what it used, in one
    statement fenced by the run's token. With nothing to move it still checks the fence (and, on PostgreSQL,
    locks the session's row until the write commits, so a take-over waits for it or is seen by it).

    Raises RunLost when the fence no longer holds.
    """
    released = cost if released is None else released
    if fence is None and not cost and not released:
        return
    connection = connections[router.db_for_write(ReasoningSession)]
    quote = connection.ops.quote_name
    table = quote(ReasoningSession._meta.db_table)
    used, reserved = quote("budget_used_usd"), quote("budget_reserved_usd")
    where, params = _target(session_id, fence, connection)
    sql = f"UPDATE {table} SET {used} = {used} + %s, {reserved} = {reserved} - %s WHERE {where}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [cost, released, *params])
        if cursor.rowcount != 1 and fence is not None:
            raise fence.lost()


def reserve(session_id, amount, fence=None):
    """Atomically reserve an amount for a run's calls; False if it would take the session past its budget.

    Raises RunLost when the run no longer holds the session: its lease is refused whatever the budget.
    Written by hand like settle(): a run leases budget every few calls, on the critical path before a call.
    """
    connection = connections[router.db_for_write(ReasoningSession)]
    quote = connection.ops.quote_name
    table = quote(ReasoningSession._meta.db_table)
    budget, used, reserved = quote("budget_usd"), quote("budget_used_usd"), quote("budget_reserved_usd")
    where, params = _target(session_id, fence, connection)
    sql = f"UPDATE {table} SET {reserved} = {reserved} + %s WHERE {where} AND {used} <= {budget} - {reserved} - %s + %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [amount, *params, amount, EPSILON])
        taken = cursor.rowcount
    if not taken and fence is not None and not fence.held():
        raise fence.lost()
    return taken == 1


def _target(session_id, fence, connection):
    """The WHERE clause (and its parameters) naming the session's row: as the run's fence holds it, if it has one."""
    if fence is not None:
        return fence.where(connection)
    pk = ReasoningSession._meta.pk.get_db_prep_value(session_id, connection)
    return f"{connection.ops.quote_name('id')} = %s", [pk]
