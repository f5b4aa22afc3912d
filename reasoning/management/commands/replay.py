"""Replay a session from its ledger and say whether its tree comes out the same; the exit code says which."""

import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from reasoning import rls
from reasoning.models import ReasoningSession
from reasoning.replay import NotReplayable, replay_now

DIVERGED = 3  # 1 and 2 are Django's and argparse's (input refused, bad arguments)


class Command(BaseCommand):
    help = (
        "Replay <session id>: its strategy run again with the ledger's replies in place of the model and the "
        "advisors' actions where its runs met them; no model is called, nothing is written or charged. "
        "Exit codes: 0 identical, 3 diverged (the first divergence is printed with both versions)."
    )

    def add_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("--json", action="store_true", help="print the report as the API answers it")

    def handle(self, *args, **options):
        with rls.all_tenants():  # an operator's command: the session is named by its id, whatever its tenant
            session = ReasoningSession.objects.filter(pk=_uuid(options["session"])).first()
        if session is None:
            raise CommandError(f"no session {options['session']}")
        with rls.tenant(session.tenant_id):
            try:
                report = replay_now(session)
            except NotReplayable as error:
                raise CommandError(str(error)) from None
        self.stdout.write(json.dumps(report, indent=2) if options["json"] else summary(report))
        if not report["identical"]:
            raise SystemExit(DIVERGED)


def summary(report):
    head = (
        f"{report['nodes']} nodes replayed ({report['recorded_nodes']} recorded) from "
        f"{report['calls_replayed']} recorded replies; no model called, nothing charged."
    )
    first = report["first_divergence"]
    if first is None:
        return f"identical: {head}"
    versions = "\n".join(
        f"  {name}: {json.dumps(first[name], ensure_ascii=False)}" for name in ("recorded", "replayed")
    )
    return f"diverged at {first['node'] or 'a node only the replay made'}: {head}\n{versions}"


def _uuid(text):
    try:
        return uuid.UUID(text)
    except ValueError:
        raise CommandError(f"not a session id: {text}") from None
