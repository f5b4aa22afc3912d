"""The second wall: PostgreSQL's row-level security, keyed on the tenant the code at hand works for.

Every query is scoped by its tenant in Python (selectors, services); on PostgreSQL the database checks it again.
Each tenant table has a forced policy that shows and accepts only rows whose tenant_id is the connection's
`app.tenant_id`. Which tenant that is follows the code, not the connection: a ContextVar says it, and the database
backend (reasoning/backends/postgresql) brings the connection in line before each query it runs.

Why a ContextVar and not a SET LOCAL per transaction: most of the app's queries run in autocommit, outside any
transaction, and one connection serves many callers in turn. The in-process runner's sessions of several tenants
and every socket share asgiref's one sync thread and its connection, a request's connection goes back to the pool
after it. A ContextVar follows each request, socket and run (asyncio tasks and sync_to_async carry it), so the
backend sets the connection to the caller's tenant at the query, whichever connection it is; a pooled connection
carries no tenant from one caller to the next. See docs/DESIGN.md, "Row-level security".

The states:
- a tenant id (`tenant(...)`, `use_tenant(...)`): the app works as ROLE, which sees that tenant's rows only;
- ALL (`all_tenants()`): as ROLE, seeing every tenant's rows; the one door for code that must (the sweeper and
  recovery, management commands, an API key's or a login's lookup before its tenant is known, the superuser's
  admin);
- OWNER (`as_owner()`): the connection's own role, seeing every tenant: the `migrate` command runs so;
- unset: the connection's own role, with no tenant. A role that owns the tables sees nothing (the policies are
  forced); a superuser (CI's `postgres`, a developer's) bypasses row-level security and sees everything, which is
  what migrations and the test suite's fixtures need.

SQLite (the demo) has no row-level security: there the query filter is the only wall, and this module does nothing.
"""

import contextlib
import contextvars

ROLE = "reasoning_app"  # NOLOGIN, no superuser, no BYPASSRLS: created by migration 0011
ALL = "all"
OWNER = "owner"  # the connection's own role, every tenant visible: migrations (reasoning/management/commands/migrate.py)
SETTING = "app.tenant_id"

# False turns the wall off in this process (bench/rls_cost.py measures with and without; REASONING_RLS=off).
ENABLED = True

_tenant = contextvars.ContextVar("rls_tenant", default=None)
# (role, tenant setting) with no tenant named: the connection's own role. Tests make it ROLE (a role that owns the
# tables, as in production) to show which paths go through all_tenants() and which would see nothing.
PLAIN = ("none", "")

POLICY = "tenant_wall"


def visible(column):
    """The policy's test: the caller sees every tenant (ALL), or `column` is its tenant. An unset or empty setting
    matches nothing; the casts never meet 'all' or ''."""
    value = f"current_setting('{SETTING}', true)"
    return f"({value} = '{ALL}' OR {column} = nullif(nullif({value}, '{ALL}'), '')::bigint)"


def tenant_column_policy(column="tenant_id"):
    """(USING, WITH CHECK) of a table whose rows name their tenant in `column`."""
    return visible(column), visible(column)


def shared_or_tenant_policy():
    """(USING, WITH CHECK) of a table whose rows without a tenant are shared (rubrics): every tenant reads them,
    only code that sees every tenant writes them."""
    return f"(tenant_id IS NULL OR {visible('tenant_id')})", visible("tenant_id")


def parent_policy(parent_table, fk_column):
    """(USING, WITH CHECK) of a table reached only through a parent that names its tenant: a row is visible when
    its parent is (the subquery runs under the parent's own policy), and written only for the caller's own."""
    parent = f"EXISTS (SELECT 1 FROM {parent_table} p WHERE p.id = {fk_column}{{}})"
    return parent.format(""), parent.format(f" AND {visible('p.tenant_id')}")


def enable(table, using, check):
    """The statements that put `table` behind the wall; forced, so the tables' owner is held to it too."""
    return [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {POLICY} ON {table}",
        f"CREATE POLICY {POLICY} ON {table} USING ({using}) WITH CHECK ({check})",
    ]


def disable(table):
    return [
        f"DROP POLICY IF EXISTS {POLICY} ON {table}",
        f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
    ]


def wanted():
    """(role, tenant setting) the next query should run with: ('none', '') is the connection's own role."""
    value = _tenant.get() if ENABLED else None
    if value is None:
        return PLAIN
    if value == OWNER:
        return ("none", ALL)
    return (ROLE, ALL if value == ALL else str(int(value)))


def current():
    """The tenant id (or ALL) the code at hand works for; None when unset."""
    return _tenant.get()


@contextlib.contextmanager
def tenant(tenant_id):
    """Work for one tenant inside the block (also a decorator)."""
    token = _tenant.set(tenant_id)
    try:
        yield
    finally:
        _tenant.reset(token)


def all_tenants():
    """See every tenant inside the block (also a decorator): the one documented door past the wall."""
    return tenant(ALL)


def as_owner():
    """Work as the connection's own role (the tables' owner, or a superuser), seeing every tenant: the schema's
    changes need the owner, and a data migration sees every row under the forced policies too."""
    return tenant(OWNER)


def use_tenant(tenant_id):
    """Work for this tenant from here to the end of the current context: a request (RequestWall resets it), a
    socket's task, a session's run (each runs in a context of its own)."""
    _tenant.set(tenant_id)


class RequestWall:
    """Each request starts with no tenant and leaves none behind: authentication names it (access.attach), a
    superuser's request sees every tenant (Django's superuser sees every row in the admin)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        with tenant(ALL if user is not None and user.is_superuser else None):
            return self.get_response(request)
