"""The second wall: PostgreSQL's row-level security, keyed on the tenant the code at hand works for.

Every query is scoped by its tenant in Python (selectors, services); on PostgreSQL the database checks it again.
Each tenant table has a forced policy that shows and accepts only rows whose tenant_id is the connection's
`app.tenant_id`, a number: no value opens more than one tenant. Which tenant that is follows the code, not the
connection: a ContextVar says it, and the database backend (reasoning/backends/postgresql) brings the connection in
line before each query it runs.

Why a ContextVar and not a SET LOCAL per transaction: most of the app's queries run in autocommit, outside any
transaction, and one connection serves many callers in turn. The in-process runner's sessions of several tenants
and every socket share asgiref's one sync thread and its connection, a request's connection goes back to the pool
after it. A ContextVar follows each request, socket and run (asyncio tasks and sync_to_async carry it), so the
backend sets the connection to the caller's tenant at the query, whichever connection it is; a pooled connection
carries no tenant from one caller to the next. See docs/DESIGN.md, "Row-level security".

The states:
- a tenant id (`tenant(...)`, `use_tenant(...)`): the app works as ROLE, which sees that tenant's rows only;
- ALL (`all_tenants()`): as DOOR_ROLE, which bypasses row-level security; the one door for code that must see every
  tenant (the sweeper and recovery, management commands, an API key's or a login's lookup before its tenant is
  known, the superuser's admin). When the app logs in as ROLE (the scaled profile, production), ROLE cannot become
  DOOR_ROLE: the door is a second login, the database alias DOOR_ALIAS (DATABASE_ALL_TENANTS_URL), and inside
  all_tenants() Django's default connection is that login's (`Connections`). A login that owns the tables or is a
  superuser (development, the test suite, `migrate`) is a member of both roles and switches on its own connection;
- OWNER (`as_owner()`): the connection's own role with no tenant: the `migrate` command runs so;
- unset: the connection's own role, with no tenant. ROLE, and a role that owns the tables, see nothing (the
  policies are forced); a superuser (CI's `postgres`, a developer's) bypasses row-level security and sees
  everything, which is what migrations and the test suite's fixtures need.

SQLite (the demo) has no row-level security: there the query filter is the only wall, and this module does nothing.
"""

import contextlib
import contextvars
import os
import urllib.parse

ROLE = "reasoning_app"  # no superuser, no BYPASSRLS: created by migration 0012; the app's login (db_logins)
DOOR_ROLE = "reasoning_all"  # BYPASSRLS, no superuser: created by migration 0018; the door's login
DOOR_ALIAS = "all_tenants"  # the door's database alias, when the app logs in as ROLE (config/settings.py)
ALL = "all"
OWNER = "owner"  # the connection's own role, no tenant: migrations (reasoning/management/commands/migrate.py)
SETTING = "app.tenant_id"
# Each login's password: its variable, else the demo's (`make run-scaled`; set both anywhere else).
PASSWORDS = {ROLE: "REASONING_APP_DB_PASSWORD", DOOR_ROLE: "REASONING_ALL_TENANTS_DB_PASSWORD"}

# False turns the wall off in this process (bench/rls_cost.py measures with and without; REASONING_RLS=off).
ENABLED = True

_tenant = contextvars.ContextVar("rls_tenant", default=None)
# (role, tenant setting) with no tenant named: the connection's own role. Tests make it ROLE (as when the app logs
# in as ROLE) to show which paths go through all_tenants() and which would see nothing.
PLAIN = ("none", "")

POLICY = "tenant_wall"


def visible(column):
    """The policy's test: `column` is the connection's tenant. A setting that is not a number (unset, empty, 'all',
    anything a statement may set) matches nothing; the cast never meets one. A subquery, so the setting is read once
    per statement (an InitPlan), not per row, and an index on `column` serves it."""
    value = f"current_setting('{SETTING}', true)"
    return f"({column} = (SELECT CASE WHEN {value} ~ '^[0-9]{{1,18}}$' THEN {value}::bigint END))"


def tenant_column_policy(column="tenant_id", test=visible):
    """(USING, WITH CHECK) of a table whose rows name their tenant in `column`."""
    return test(column), test(column)


def shared_or_tenant_policy(test=visible):
    """(USING, WITH CHECK) of a table whose rows without a tenant are shared (rubrics): every tenant reads them,
    only code that sees every tenant writes them."""
    return f"(tenant_id IS NULL OR {test('tenant_id')})", test("tenant_id")


def parent_policy(parent_table, fk_column, test=visible):
    """(USING, WITH CHECK) of a table reached only through a parent that names its tenant: a row is visible when
    its parent is (the subquery runs under the parent's own policy), and written only for the caller's own."""
    parent = f"EXISTS (SELECT 1 FROM {parent_table} p WHERE p.id = {fk_column}{{}})"
    return parent.format(""), parent.format(f" AND {test('p.tenant_id')}")


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


def create_role(role, attributes):
    """The statement that creates `role` unless the server has it (roles belong to the whole server)."""
    return f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
        CREATE ROLE {role} {attributes};
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN
        NULL;  -- another database's migration made it meanwhile
    WHEN insufficient_privilege THEN
        -- No placeholders in the message: the migration runs this as a statement with (no) parameters.
        RAISE EXCEPTION USING MESSAGE = 'the role {role} is missing and ' || current_user || ' may not create it: '
            || 'have a superuser run CREATE ROLE {role} {attributes}; GRANT {role} TO ' || current_user || ';';
END
$$;
"""


def grants(role):
    """The statements that let `role` work on every table of the schema, this migration's and later ones' (default
    privileges), and let the user that migrates switch to it (on its own connection: tests, development)."""
    rights = "SELECT, INSERT, UPDATE, DELETE"
    return [
        # A role a DBA made and granted beforehand needs no CREATEROLE here, nor the admin option to grant it again.
        f"DO $$ BEGIN IF NOT pg_has_role(current_user, '{role}', 'MEMBER') THEN GRANT {role} TO "
        "CURRENT_USER; END IF; END $$",
        f"GRANT USAGE ON SCHEMA public TO {role}",
        f"GRANT {rights} ON ALL TABLES IN SCHEMA public TO {role}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT {rights} ON TABLES TO {role}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {role}",
    ]


def password(role, environ=os.environ):
    return environ.get(PASSWORDS[role]) or f"{role}-demo"


def login_url(database_url, role, environ=os.environ):
    """`database_url` (the owner's) with `role`'s login and password in it."""
    parts = urllib.parse.urlsplit(database_url)
    host = parts.netloc.rpartition("@")[2]
    auth = f"{role}:{urllib.parse.quote(password(role, environ), safe='')}"
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{auth}@{host}"))


def logins(database_url, environ=os.environ):
    """The app's environment on the owner's database: it logs in as ROLE, and its door as DOOR_ROLE."""
    return {
        "DATABASE_URL": login_url(database_url, ROLE, environ),
        "DATABASE_ALL_TENANTS_URL": login_url(database_url, DOOR_ROLE, environ),
    }


def wanted():
    """(role, tenant setting) the next query should run with: ('none', '') is the connection's own role."""
    value = _tenant.get() if ENABLED else None
    if value is None:
        return PLAIN
    if value == OWNER:
        return ("none", "")
    if value == ALL:
        return (DOOR_ROLE, "")
    return (ROLE, str(int(value)))


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
    """Work as the connection's own role (the tables' owner, or a superuser) with no tenant: the schema's changes
    need the owner. A superuser (or an owner a DBA gave BYPASSRLS) sees every row in a data migration; any other
    owner sees none, the policies being forced."""
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
