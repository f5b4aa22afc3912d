"""The all-tenants door becomes a role of its own (issue 32, section 3): `reasoning_all`, with BYPASSRLS, instead of
the value 'all' of app.tenant_id, which any statement on the app's connection could set. The policies of 0012 are
made again without it: only a tenant's number opens its rows. A no-op on SQLite."""

import importlib

from django.db import migrations

from reasoning import rls

walled = importlib.import_module("reasoning.migrations.0012_row_level_security")


def visible_to_all_too(column):
    """0012's test, for the way back: the value 'all' opened every tenant."""
    value = f"current_setting('{rls.SETTING}', true)"
    return f"({value} = 'all' OR {column} = nullif(nullif({value}, 'all'), '')::bigint)"


def door(apps, schema_editor):
    # BYPASSRLS needs a superuser to create; NOINHERIT: the role holds no other's rights.
    role = rls.create_role(rls.DOOR_ROLE, "NOLOGIN NOSUPERUSER BYPASSRLS NOINHERIT")
    walled.run(schema_editor, [role, *rls.grants(rls.DOOR_ROLE), *walled.policies()])


def undoor(apps, schema_editor):
    # The role stays: it belongs to the whole server, and other databases may use it.
    walled.run(schema_editor, walled.policies(visible_to_all_too))


class Migration(migrations.Migration):
    dependencies = [
        ("reasoning", "0018_review"),
    ]

    operations = [migrations.RunPython(door, undoor)]
