"""Before an embedded server starts: sessions its previous run left `running` become `interrupted`."""

from django.core.management.base import BaseCommand

from reasoning.services import interrupt_running


class Command(BaseCommand):
    help = (
        "Mark sessions still 'running' as 'interrupted' (resumable). Run it before starting the only server of the "
        "embedded profile, whose in-process runner lost them when it stopped; never beside live workers."
    )

    def handle(self, *args, **options):
        count = interrupt_running()
        if count:
            self.stdout.write(f"{count} session(s) left running by a stopped server are now interrupted.")
