from django.apps import AppConfig


class ReasoningConfig(AppConfig):
    name = "reasoning"
    verbose_name = "Reasoning engine"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.conf import settings

        from . import rls, tree_memo
        from .llm import offline

        offline.register()  # the offline models' provider and price, before the first call (a litellm provider)
        tree_memo.connect()
        if rls.DOOR_ALIAS in settings.DATABASES:
            from .backends.postgresql.base import open_door

            open_door()
