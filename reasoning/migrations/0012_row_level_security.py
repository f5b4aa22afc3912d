# Row-level security on PostgreSQL (reasoning/rls.py): a role the app works as, and a forced policy on every tenant
# table. A no-op on SQLite, whose only wall is the query filter.

from django.db import migrations

from reasoning import rls

CREATE_ROLE = rls.create_role(rls.ROLE, "NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT")


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


def tables(test=rls.visible):
    """Each table and its (USING, WITH CHECK); `test` is the policy's test of a tenant column (0018 changed it)."""
    yield "reasoning_tenant", rls.tenant_column_policy("id", test)
    for table in TENANT_TABLES:
        yield table, rls.tenant_column_policy(test=test)
    yield "reasoning_rubric", rls.shared_or_tenant_policy(test)
    yield "reasoning_rubriccriterion", rls.parent_policy("reasoning_rubric", "rubric_id", test)


def run(schema_editor, statements):
    """The statements, on PostgreSQL only."""
    if schema_editor.connection.vendor == "postgresql":
        for sql in statements:
            schema_editor.execute(sql)


def policies(test=rls.visible):
    return [sql for table, (using, check) in tables(test) for sql in rls.enable(table, using, check)]


def wall(apps, schema_editor):
    run(schema_editor, [CREATE_ROLE, *rls.grants(rls.ROLE), *policies()])


def unwall(apps, schema_editor):
    run(schema_editor, [sql for table, _ in tables() for sql in rls.disable(table)])


class Migration(migrations.Migration):
    dependencies = [
        ("reasoning", "0011_keys_scopes_and_tenant_cap"),
    ]

    operations = [migrations.RunPython(wall, unwall)]
