"""One person, one name (issue 33): sessions started from the web form said "web:<login>", forks "user:<login>",
a member's key "user:<login>/key:<hint>" and the terminal "cli:user:<login>"; each now says "user:<login>". A
service key's "key:<hint>" and the system's names stay as they are. Numbered 0016: another branch holds 0015."""

from django.db import migrations

DOORS = ("web:", "cli:user:")


def person(actor):
    """selectors.person as it stands at this migration (a migration keeps its own copy of the rule it applies)."""
    for door in DOORS:
        if actor.startswith(door) and len(actor) > len(door):
            return "user:" + actor[len(door) :]
    if actor.startswith("user:"):
        return actor.split("/key:", 1)[0]
    return actor


def one_name(apps, schema_editor):
    sessions = apps.get_model("reasoning", "ReasoningSession").objects.using(schema_editor.connection.alias)
    old = sessions.filter(triggered_by__startswith="web:") | sessions.filter(triggered_by__startswith="cli:user:")
    old |= sessions.filter(triggered_by__startswith="user:", triggered_by__contains="/key:")
    names = old.values_list("triggered_by", flat=True).distinct()
    for name in list(names):
        sessions.filter(triggered_by=name).update(triggered_by=person(name))


class Migration(migrations.Migration):
    dependencies = [
        ("reasoning", "0015_answer_checked"),
    ]

    operations = [migrations.RunPython(one_name, migrations.RunPython.noop)]
