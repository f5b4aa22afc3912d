"""Write fixtures/demo_sessions.json: the demo problems solved by the offline model, for seed_demo to load."""

import json

from django.conf import settings
from django.core import serializers
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from reasoning import rls, services
from reasoning.fixtures import load_rubrics
from reasoning.management.commands.seed_demo import DEMO_SESSIONS
from reasoning.models import (
    CaseFact,
    LLMCall,
    ReasoningCritique,
    ReasoningEdge,
    ReasoningNode,
    ReasoningSession,
    Tenant,
)
from reasoning.schemas import SessionIn

DEMO_PROBLEMS = [
    (
        "investment-thesis",
        "tot",
        "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m family "
        "portfolio that is 60% global equities, 30% CHF bonds and 10% cash, for a client aged 58 retiring in 7 years.",
    ),
    (
        "wealth-transfer",
        "auto",
        "A Geneva-based entrepreneur aged 67 wants to pass a CHF 40m operating company and a CHF 6m property "
        "portfolio to two children, one active in the business, while keeping an income of CHF 400,000 a year.",
    ),
    ("general", "tot", "Game of 24: use the numbers 4 9 10 13 with + - * / to make 24."),
]
SCRATCH_TENANT = "demo-dump"  # the sessions are solved here, written out, then deleted


class Command(BaseCommand):
    help = (
        "Solve the demo problems on offline/sim in this database (in a scratch tenant, deleted afterwards) and "
        "write them, with their nodes, edges, critiques, ledger and facts, to fixtures/demo_sessions.json."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", default=str(DEMO_SESSIONS))

    @rls.all_tenants()  # an operator's command: it works across tenants, as migrations do
    def handle(self, *args, **options):
        load_rubrics()
        Tenant.objects.filter(slug=SCRATCH_TENANT).delete()
        tenant = Tenant.objects.create(slug=SCRATCH_TENANT, name="dump_demo scratch")
        try:
            with override_settings(REASONING={**settings.REASONING, "MODEL_FALLBACK": "", "OFFLINE_LATENCY_MS": 0}):
                sessions = [
                    services.solve(
                        tenant,
                        SessionIn(
                            problem_text=text,
                            mode=mode,
                            problem_kind=kind,
                            model_primary="offline/sim",
                        ),
                        triggered_by="seed_demo",
                    )
                    for kind, mode, text in DEMO_PROBLEMS
                ]
            for session in sessions:
                check(session)
            ids = [s.pk for s in sessions]
            rows = [
                ReasoningSession.objects.filter(pk__in=ids).order_by("created_at"),
                ReasoningNode.objects.filter(session__in=ids).order_by("created_at", "id"),
                ReasoningEdge.objects.filter(session__in=ids).order_by("created_at", "id"),
                ReasoningCritique.objects.filter(session__in=ids).order_by("created_at", "id"),
                LLMCall.objects.filter(session__in=ids).order_by("created_at", "id"),
                # The client's facts the steps and the answer were checked against: a demo without them would
                # show "none read from the problem" under an answer's figure badge.
                CaseFact.objects.filter(session__in=ids).order_by("session", "position"),
            ]
            objects = [item for queryset in rows for item in serializers.serialize("python", queryset)]
        finally:
            tenant.delete()
        for item in objects:
            item["fields"].pop("tenant")  # seed_demo puts them in its tenant
            if item["model"] in ("reasoning.llmcall", "reasoning.casefact"):
                item.pop("pk")  # a ledger row's id is a counter of the database it lands in
        about = (
            "Demo sessions written by the offline model (offline/sim) with `manage.py dump_demo`; seed_demo loads them."
        )
        text = json.dumps({"about": about, "objects": objects}, indent=1, ensure_ascii=False, default=_json)
        with open(options["out"], "w") as out:
            out.write(text + "\n")
        self.stdout.write(f"{len(sessions)} sessions, {len(objects)} rows written to {options['out']}")


def check(session):
    """A demo session is solved, and its ledger, its spend and its nodes' costs agree."""
    ledger = sum(LLMCall.objects.filter(session=session).values_list("cost_usd", flat=True))
    nodes = sum(session.nodes.values_list("cost_usd", flat=True))
    if session.status != "solved" or not session.final_answer:
        raise CommandError(f"demo session {session.id} ended {session.status}: {session.error}")
    if abs(ledger - session.budget_used_usd) > 1e-9 or abs(nodes - ledger) > 1e-9 or session.budget_reserved_usd > 1e-9:
        raise CommandError(
            f"demo session {session.id}: ledger {ledger}, spent {session.budget_used_usd}, nodes {nodes}, "
            f"reserved {session.budget_reserved_usd}"
        )


def _json(value):
    """Datetimes with their microseconds (the order of nodes made in the same millisecond), UUIDs as text."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
