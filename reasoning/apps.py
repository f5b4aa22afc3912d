from django.apps import AppConfig


class ReasoningConfig(AppConfig):
    name = "reasoning"
    verbose_name = "Reasoning engine"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import tree_memo

        tree_memo.connect()
