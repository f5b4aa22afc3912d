"""Django's migrate, run as the connection's own role with every tenant visible (reasoning/rls.py): the schema's
changes need the tables' owner, not the app's role, and a data migration sees every row under the forced policies."""

from django.core.management.commands import migrate

from reasoning import rls


class Command(migrate.Command):
    def handle(self, *args, **options):
        with rls.as_owner():
            return super().handle(*args, **options)
