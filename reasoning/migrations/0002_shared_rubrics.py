"""Seed the shared rubrics, so a fresh database can take problems of every seeded kind."""

import json
from pathlib import Path

from django.db import migrations

RUBRICS = Path(__file__).resolve().parents[2] / "fixtures" / "rubrics.json"


def load(apps, schema_editor):
    Rubric = apps.get_model("reasoning", "Rubric")
    Criterion = apps.get_model("reasoning", "RubricCriterion")
    for item in json.loads(RUBRICS.read_text()):
        rubric, is_new = Rubric.objects.get_or_create(
            tenant=None,
            problem_kind=item["problem_kind"],
            defaults={"name": item["name"], "description": item["description"]},
        )
        if is_new:
            Criterion.objects.bulk_create(
                Criterion(rubric=rubric, position=i, **c) for i, c in enumerate(item["criteria"])
            )


class Migration(migrations.Migration):
    dependencies = [("reasoning", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
