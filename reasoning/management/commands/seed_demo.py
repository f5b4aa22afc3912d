"""Seed the demo: tenant `demo`, the login advisor/advisor (demo only), rubrics and a few finished sessions.

The sessions come from fixtures/demo_sessions.json (written by `manage.py dump_demo` on the offline model), so
seeding calls no model, whatever model is configured.
"""

import json
from collections import defaultdict
from datetime import UTC, datetime, time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import DateTimeField
from django.utils import timezone

from reasoning import ledger, rls
from reasoning.fixtures import load_rubrics
from reasoning.models import LLMCall, Membership, ReasoningSession, Role, Tenant

DEMO_SESSIONS = settings.BASE_DIR / "fixtures" / "demo_sessions.json"


def load_demo_sessions(tenant, path=DEMO_SESSIONS):
    """The fixture's finished sessions with their nodes, edges, critiques and ledger, in this tenant; returns them.

    Ids are kept as recorded; times move together so that the newest is now; a field the models no longer have
    is skipped.
    """
    objects = [
        row.object
        for row in serializers.deserialize("python", json.loads(path.read_text())["objects"], ignorenonexistent=True)
    ]
    stamps = [
        (obj, field.attname)
        for obj in objects
        for field in obj._meta.concrete_fields
        if isinstance(field, DateTimeField) and getattr(obj, field.attname)
    ]
    shift = timezone.now() - max(getattr(obj, name) for obj, name in stamps)
    for obj, name in stamps:
        setattr(obj, name, getattr(obj, name) + shift)
    by_model = defaultdict(list)
    for obj in objects:
        obj.tenant_id = tenant.pk
        by_model[type(obj)].append(obj)
    for session in by_model[ReasoningSession]:
        if not session.ended_status and session.status in ReasoningSession.FINISHED:
            # Dumped before sessions recorded how their search first ended: it ended as it stands, when it finished.
            session.ended_status, session.ended_at = session.status, session.finished_at
        if not session.active_seconds and session.finished_at:
            # Dumped before the active time was kept: it ran once, from its start to its end.
            session.active_seconds = max(0.0, (session.finished_at - session.started_at).total_seconds())
            session.resumed_at = session.resumed_at or session.started_at
    this_month = datetime.combine(ledger.month_start(), time.min, tzinfo=UTC)
    with transaction.atomic():  # foreign keys are checked at commit, so the order of the models does not matter
        for model, rows in by_model.items():
            model.objects.bulk_create(rows)
        # Their calls were paid as a run's are: this month's go through the settlement the month's counter reads,
        # so "spent this month" on the usage page is its table's total.
        for session in by_model[ReasoningSession]:
            ledger.book(session.pk, sum(c.cost_usd for c in by_model[LLMCall] if c.session_id == session.pk
                                        and c.created_at >= this_month))
    return by_model[ReasoningSession]


class Command(BaseCommand):
    help = (
        "Create the demo tenant, the advisor/advisor login, the rubrics and a few finished demo sessions "
        "(idempotent; the sessions are loaded from fixtures/demo_sessions.json, no model is called)."
    )

    @rls.all_tenants()  # an operator's command: it works across tenants, as migrations do
    def handle(self, *args, **options):
        created = load_rubrics()
        tenant, _ = Tenant.objects.get_or_create(slug="demo", defaults={"name": "Demo Family Office"})
        user = self.advisor()
        # Admin of the demo tenant: its rubrics, keys and members in the admin, and nothing of other tenants.
        Membership.objects.update_or_create(user=user, defaults={"tenant": tenant, "role": Role.ADMIN})
        if not ReasoningSession.objects.filter(tenant=tenant).exists():
            for session in load_demo_sessions(tenant):
                self.stdout.write(
                    f"demo session {session.id}: {session.status}, {session.mode}, by {session.model_primary}"
                )
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo ready: tenant 'demo', rubrics loaded ({created} new). Log in as advisor / advisor (demo only)."
            )
        )

    def advisor(self):
        """A firm's advisor: staff to open the admin, never a superuser (an earlier seed made it one)."""
        user, is_new = get_user_model().objects.get_or_create(username="advisor")
        if is_new:
            user.set_password("advisor")
        user.is_staff, user.is_superuser = True, False
        user.save()
        return user
