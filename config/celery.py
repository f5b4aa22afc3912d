"""The Celery app for the scale-out profile (TASK_RUNNER=celery, REDIS_URL)."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["reasoning"])


@worker_init.connect
def import_the_model_layer(**kwargs):
    """litellm takes seconds to import (5.6 s on an idle core): the worker pays it once, before it forks its pool
    children, which inherit it, instead of each child paying it inside its first session's run."""
    import django

    django.setup()  # the app's ready() registers the offline provider and its price, inherited by every child

    import reasoning.llm.gateway  # noqa: F401
