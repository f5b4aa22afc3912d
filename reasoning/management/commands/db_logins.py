"""The app's two database logins (reasoning/rls.py): reasoning_app, bound by row-level security, for the app, and
reasoning_all, with BYPASSRLS, for its all-tenants door. Run as the tables' owner (with CREATEROLE) or a superuser,
after migrate; `make run-scaled` does, then serves as reasoning_app."""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from reasoning import rls


class Command(BaseCommand):
    help = (
        f"Let the roles {rls.ROLE} (the app) and {rls.DOOR_ROLE} (its all-tenants door) log in, with the passwords "
        f"{rls.PASSWORDS[rls.ROLE]} and {rls.PASSWORDS[rls.DOOR_ROLE]} (else the demo's). Run as the tables' owner "
        "or a superuser, after migrate."
    )

    def handle(self, *args, **options):
        if connection.vendor != "postgresql":
            raise CommandError("the database logins are PostgreSQL's (DATABASE_URL)")
        with rls.as_owner(), connection.cursor() as cursor:
            for role in (rls.ROLE, rls.DOOR_ROLE):
                # The password is a parameter: the driver quotes it (client-side, as Django's cursors bind).
                cursor.execute(f"ALTER ROLE {role} LOGIN PASSWORD %s", [rls.password(role)])
                self.stdout.write(f"{role} may log in.")
