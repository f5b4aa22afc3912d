"""Loading the shipped fixtures (rubrics) idempotently."""

import json

from django.conf import settings
from django.db import transaction

from .models import Rubric, RubricCriterion

RUBRICS = settings.BASE_DIR / "fixtures" / "rubrics.json"


@transaction.atomic
def load_rubrics(path=RUBRICS):
    """Create the shared rubrics that are missing; never overwrite one an admin has edited."""
    created = 0
    for item in json.loads(path.read_text()):
        rubric, is_new = Rubric.objects.get_or_create(
            tenant=None,
            problem_kind=item["problem_kind"],
            defaults={"name": item["name"], "description": item["description"]},
        )
        if is_new:
            created += 1
            RubricCriterion.objects.bulk_create(
                RubricCriterion(rubric=rubric, position=i, **c) for i, c in enumerate(item["criteria"])
            )
    return created
