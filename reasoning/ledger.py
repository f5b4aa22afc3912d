"""The one place a session's money moves: budget leased to a run, and spend settled from reserved to used.

Both statements carry the run's fence (when the run has one): a run that lost its session can neither lease
budget nor settle spend, so a run taken over mid-call cannot take the session past its budget, and the ledger
rows and node costs written with a settlement roll back with it. The store calls settle() in the transaction
that writes the nodes and ledger rows a call produced; the gateway calls reserve() before each call it cannot
cover from its lease and settle() for failed attempts and its unspent lease.

Each statement on a session moves the tenant's month (TenantSpend) alike, in the same transaction and always after
the session's row (one lock order, so two runs never wait on each other crosswise): a lease that would take the
tenant past its monthly cap is refused as one past the session's budget is, and concurrent sessions of a tenant
can never pass its cap between them. The month is UTC; a new one starts from nothing spent, while reservations
carry over (the calls they cover are paid when they end).
"""

from datetime import UTC, datetime

from django.db import connections, router, transaction

from . import sql
from .models import ReasoningSession, Tenant, TenantSpend

EPSILON = 1e-12


def month_start(today=None):
    """The first day of the month a tenant's spend is counted in (UTC)."""
    today = today or datetime.now(UTC).date()
    return today.replace(day=1)


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
    # No savepoint: the store settles inside its own transaction, and a failure here fails that whole write anyway.
    with transaction.atomic(using=connection.alias, savepoint=False), connection.cursor() as cursor:
        cursor.execute(sql, [cost, released, *params])
        if cursor.rowcount != 1 and fence is not None:
            raise fence.lost()
        if cost or released:
            tenant_settle(connection, session_id, cost, released)


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
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(sql, [amount, *params, amount, EPSILON])
        taken = cursor.rowcount == 1
        if taken and not tenant_reserve(connection, session_id, amount):
            transaction.set_rollback(True, using=connection.alias)  # the session's lease goes with the tenant's
            return False
    if not taken and fence is not None and not fence.held():
        raise fence.lost()
    return taken


def month_left(tenant_id):
    """What the tenant's cap leaves this month once spend and reservations are counted (it may be below 0 by what a
    dead run's write-off counted); None without a cap. Read by hand: the gateway asks at every step boundary."""
    (cap,) = sql.by_pk(Tenant, ("monthly_cap_usd",), tenant_id).values()
    if cap is None:
        return None
    try:
        spend = sql.by_pk(TenantSpend, ("month", "used_usd", "reserved_usd"), tenant_id)
    except TenantSpend.DoesNotExist:
        return cap
    used = spend["used_usd"] if spend["month"] == month_start() else 0.0
    return cap - used - spend["reserved_usd"]


def _spend_sql(connection):
    """(spend table, the session's tenant id as a subquery, the month's spend as of now), quoted for this database."""
    quote = connection.ops.quote_name
    spend = quote(TenantSpend._meta.db_table)
    session_tenant = (
        f"(SELECT {quote('tenant_id')} FROM {quote(ReasoningSession._meta.db_table)} WHERE {quote('id')} = %s)"
    )
    used_now = f"(CASE WHEN {quote('month')} = %s THEN {quote('used_usd')} ELSE 0 END)"
    return spend, session_tenant, used_now


def tenant_reserve(connection, session_id, amount):
    """Reserve an amount of the session's tenant's month; False if it would pass the tenant's monthly cap."""
    quote = connection.ops.quote_name
    spend, session_tenant, used_now = _spend_sql(connection)
    tenants = quote(Tenant._meta.db_table)
    cap = f"(SELECT {quote('monthly_cap_usd')} FROM {tenants} WHERE {quote('id')} = {spend}.{quote('tenant_id')})"
    sql = (
        f"UPDATE {spend} SET {quote('reserved_usd')} = {quote('reserved_usd')} + %s, {quote('used_usd')} = {used_now},"
        f" {quote('month')} = %s WHERE {quote('tenant_id')} = {session_tenant}"
        f" AND ({cap} IS NULL OR {used_now} + {quote('reserved_usd')} + %s <= {cap} + %s)"
    )
    month, pk = _month_param(connection), _pk_param(connection, session_id)
    params = [amount, month, month, pk, month, amount, EPSILON]
    return _update_counting(connection, sql, params, session_id)


def tenant_settle(connection, session_id, cost, released):
    """Move `released` out of the tenant's reservation and `cost` into its month's spend."""
    quote = connection.ops.quote_name
    spend, session_tenant, used_now = _spend_sql(connection)
    sql = (
        f"UPDATE {spend} SET {quote('used_usd')} = {used_now} + %s,"
        f" {quote('reserved_usd')} = {quote('reserved_usd')} - %s, {quote('month')} = %s"
        f" WHERE {quote('tenant_id')} = {session_tenant}"
    )
    month = _month_param(connection)
    _update_counting(connection, sql, [month, cost, released, month, _pk_param(connection, session_id)], session_id)


def tenant_write_off(session_id, amount):
    """A dead run's reservation counts as spent: its calls in flight may have been paid for (states.release)."""
    connection = connections[router.db_for_write(ReasoningSession)]
    with transaction.atomic(using=connection.alias):
        tenant_settle(connection, session_id, amount, amount)


def book(session_id, cost):
    """A finished call's cost, paid outside a run (a loaded demo session's ledger row), counted in the tenant's
    month as a run's settlement counts it: the month's counter and the ledger's rows of the month then agree."""
    if not cost:
        return
    connection = connections[router.db_for_write(ReasoningSession)]
    with transaction.atomic(using=connection.alias):
        tenant_settle(connection, session_id, cost, 0.0)


def _update_counting(connection, sql, params, session_id):
    """Run the update; a tenant without its counter row yet gets one (at nothing spent) and the update again."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount:
            return True
        if _open_counter(connection, session_id):
            cursor.execute(sql, params)
            return cursor.rowcount == 1
    return False


def _open_counter(connection, session_id):
    """Give the session's tenant its counter if it has none yet; True if the tenant has one now."""
    sessions = ReasoningSession.objects.using(connection.alias)
    tenant_id = sessions.filter(pk=session_id).values_list("tenant_id", flat=True).first()
    if tenant_id is None:
        return False
    counters = TenantSpend.objects.using(connection.alias)
    counters.bulk_create([TenantSpend(tenant_id=tenant_id, month=month_start())], ignore_conflicts=True)
    return True


def _month_param(connection):
    return connection.ops.adapt_datefield_value(month_start())


def _pk_param(connection, session_id):
    return ReasoningSession._meta.pk.get_db_prep_value(session_id, connection)


def _target(session_id, fence, connection):
    """The WHERE clause (and its parameters) naming the session's row: as the run's fence holds it, if it has one."""
    if fence is not None:
        return fence.where(connection)
    pk = ReasoningSession._meta.pk.get_db_prep_value(session_id, connection)
    return f"{connection.ops.quote_name('id')} = %s", [pk]
