# Row-level security on PostgreSQL (reasoning/rls.py): a role the app works as, and a forced policy on every tenant
# table. A no-op on SQLite, whose only wall is the query filter.

from django.db import migrations

from reasoning import rls

CREATE_ROLE = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{rls.ROLE}') THEN
        CREATE ROLE {rls.ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another database's migration made it meanwhile (roles belong to the whole server)
END
$$;
"""


def grants():
    # The role works on every table of the schema, this migration's and later ones' (default privileges), and the
    # user that migrates (the app's) may switch to it.
    rights = "SELECT, INSERT, UPDATE, DELETE"
    return [
        # A role a DBA made and granted beforehand needs no CREATEROLE here, nor the admin option to grant it again.
        f"DO $$ BEGIN IF NOT pg_has_role(current_user, '{rls.ROLE}', 'MEMBER') THEN GRANT {rls.ROLE} TO "
        "CURRENT_USER; END IF; END $$",
        f"GRANT USAGE ON SCHEMA public TO {rls.ROLE}",
        f"GRANT {rights} ON ALL TABLES IN SCHEMA public TO {rls.ROLE}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {rls.ROLE}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT {rights} ON TABLES TO {rls.ROLE}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {rls.ROLE}",
    ]


# The tables as they are at this migration; a later model with a tenant gets its policy in its own migration
# (tests/reasoning/test_rls.py checks every model with a tenant has one).
TENANT_TABLES = [
    "reasoning_apikey",
    "reasoning_membership",
    "reasoning_reasoningsession",
    "reasoning_reasoningnode",
    "reasoning_reasoningedge",
    "reasoning_reasoningcritique",
    "reasoning_casefact",
    "reasoning_llmcall",
    "reasoning_overseeraction",
    "reasoning_idempotencykey",
    "reasoning_tenantspend",
]


def tables():
    yield "reasoning_tenant", rls.tenant_column_policy("id")
    for table in TENANT_TABLES:
        yield table, rls.tenant_column_policy()
    yield "reasoning_rubric", rls.shared_or_tenant_policy()
    yield "reasoning_rubriccriterion", rls.parent_policy("reasoning_rubric", "rubric_id")


def wall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    statements = [CREATE_ROLE, *grants()]
    for table, (using, check) in tables():
        statements += rls.enable(table, using, check)
    for sql in statements:
        schema_editor.execute(sql)


def unwall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, _ in tables():
        for sql in rls.disable(table):
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("reasoning", "0011_keys_scopes_and_tenant_cap"),
    ]

    operations = [migrations.RunPython(wall, unwall)]
