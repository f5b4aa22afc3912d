"""Seed the demo: tenant `demo`, the login advisor/advisor (demo only), rubrics and a few finished sessions."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from reasoning.fixtures import load_rubrics
from reasoning.models import Membership, ReasoningSession, Role, Tenant
from reasoning.schemas import SessionIn
from reasoning.services import solve

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


class Command(BaseCommand):
    help = (
        "Create the demo tenant, the advisor/advisor login, the rubrics and a few finished demo sessions (idempotent)."
    )

    def handle(self, *args, **options):
        created = load_rubrics()
        tenant, _ = Tenant.objects.get_or_create(slug="demo", defaults={"name": "Demo Family Office"})
        user = self.advisor()
        # Admin of the demo tenant: its rubrics, keys and members in the admin, and nothing of other tenants.
        Membership.objects.update_or_create(user=user, defaults={"tenant": tenant, "role": Role.ADMIN})
        if not ReasoningSession.objects.filter(tenant=tenant).exists():
            for kind, mode, problem in DEMO_PROBLEMS:
                session = solve(
                    tenant, SessionIn(problem_text=problem, mode=mode, problem_kind=kind), triggered_by="seed_demo"
                )
                self.stdout.write(f"demo session {session.id}: {session.status}, {session.nodes.count()} nodes")
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
