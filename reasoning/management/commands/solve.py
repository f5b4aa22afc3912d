"""Run one session in the terminal with a progress bar and print the answer; the exit code says how it ended."""

import asyncio
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from reasoning import access, rls, selectors, services
from reasoning.engine import run_session
from reasoning.fixtures import load_rubrics
from reasoning.models import UNMETERED, ReasoningNode, ReasoningSession, Scope, Status, Tenant, is_offline
from reasoning.money import usd
from reasoning.schemas import SessionIn
from reasoning.strategies import get_strategy, modes

# How the session ended, as the exit code; 1 (input refused) and 2 (bad arguments) are Django's and argparse's.
EXIT_CODES = {
    Status.SOLVED: 0,
    Status.FAILED: 3,
    Status.EXHAUSTED: 4,
    Status.CANCELLED: 5,
    Status.INTERRUPTED: 6,
    Status.PAUSED: 6,
}


class Command(BaseCommand):
    help = (
        'Solve a problem: solve "<problem>" --mode tot --kind investment-thesis. Exit codes: 0 solved, '
        "1 input refused, 2 bad arguments, 3 failed, 4 exhausted (the budget ran out), 5 cancelled, "
        "6 interrupted or paused (resumable)."
    )

    def add_arguments(self, parser):
        parser.add_argument("problem")
        parser.add_argument("--mode", default="auto", choices=modes())
        parser.add_argument("--kind", default=None, help="problem kind (a rubric); default general")
        parser.add_argument("--tenant", default="demo", help="the tenant the session belongs to (created if new)")
        parser.add_argument(
            "--user", default=None, help="run as this member: in their tenant, refused if their role is viewer"
        )
        parser.add_argument("--budget", type=float, default=None, help="budget in USD")
        parser.add_argument(
            "--token-cap", type=int, default=None, help="tokens the session may use at most (binds a model priced at 0)"
        )
        parser.add_argument("--model", default=None, help="primary model (any litellm model name)")
        parser.add_argument("--fallback", default=None, help="fallback model")
        parser.add_argument("--params", default="{}", help="the strategy's params as JSON, e.g. '{\"depth\": 3}'")

    def handle(self, *args, **o):
        with rls.all_tenants():  # the shared rubrics, and the tenant or member named: no tenant is known yet
            load_rubrics()
            tenant, triggered_by, principal = self.caller(o)
        with rls.tenant(tenant.pk):
            self.solve(tenant, triggered_by, principal, o)

    def solve(self, tenant, triggered_by, principal, o):
        try:
            data = SessionIn(
                problem_text=o["problem"],
                mode=o["mode"],
                problem_kind=o["kind"],
                budget_usd=o["budget"],
                token_cap=o["token_cap"],
                model_primary=o["model"],
                model_fallback=o["fallback"],
                params=json.loads(o["params"]),
            )
            session = services.create_session(tenant, data, triggered_by=triggered_by, submit=False, by=principal)
        except ValueError as error:  # pydantic's ValidationError and a malformed --params alike
            raise CommandError(str(error)) from None
        except services.InvalidInput as error:
            raise CommandError(str(error)) from None
        fallback = f", fallback {session.model_fallback}" if session.model_fallback else ""
        self.stdout.write(
            f"session {session.id}: {session.mode} ({session.mode_reason}), model {session.model_primary}{fallback}"
        )
        if session.unmetered:
            self.stdout.write(f"{UNMETERED}{cap_note(session)}")
        asyncio.run(self.run_with_progress(session))
        session.refresh_from_db()
        self.stdout.write(f"\nstatus: {session.status}  nodes: {session.nodes.count()}  spent: {spent(session)}")
        offline = f"  ({session.offline_words})" if session.partly_offline else ""
        self.stdout.write(f"written by: {written_by(session)}{offline}")
        if session.answer_model:
            self.stdout.write(f"answer written by: {session.answer_model}{offline_note(session)}")
        if session.error:
            self.stderr.write(session.error)
        self.stdout.write("\n" + (session.final_answer or "(no answer)"))
        code = EXIT_CODES.get(session.status, 6)
        if code:
            reason = f" ({session.termination_reason})" if session.termination_reason else ""
            raise CommandError(f"session {session.id} ended {session.status}{reason}", returncode=code)

    def caller(self, o):
        """(tenant, who the session records as its starter, the member's principal or None): a named member's, else
        the --tenant's as the operator."""
        if o["user"] is None:
            tenant, _ = Tenant.objects.get_or_create(slug=o["tenant"], defaults={"name": o["tenant"]})
            return tenant, "cli", None
        user = get_user_model().objects.filter(username=o["user"]).first()
        principal = access.for_user(user)
        if principal is None:
            raise CommandError(f"'{o['user']}' is not an active member of any tenant")
        if not principal.may(Scope.RUN):
            raise CommandError(
                f"'{o['user']}' may not start sessions: a viewer watches them and a reviewer signs off their answers"
            )
        return principal.tenant, f"cli:{principal.actor}", principal

    async def run_with_progress(self, session):
        task = asyncio.create_task(run_session(session.id))
        strategy = get_strategy(session.mode)
        expected = strategy.expected_nodes(strategy.Params.model_validate(session.params))
        # A failed attempt's log line is written above the bar, not into it.
        bar = tqdm(total=expected, unit="node", desc=session.mode, file=self.stderr._out)
        with logging_redirect_tqdm(), bar:
            while not task.done():
                await asyncio.wait({task}, timeout=0.2)
                count = await ReasoningNode.objects.filter(session_id=session.id).acount()
                spent = (
                    await ReasoningSession.objects.filter(pk=session.id)
                    .values_list("budget_used_usd", flat=True)
                    .aget()
                )
                bar.update(count - bar.n)
                bar.set_postfix_str(usd(spent))
        await task


def written_by(session):
    """Which models actually wrote the nodes: "openai/x 19 of 22 nodes, offline/sim (fallback) 3 of 22 nodes"."""
    used = selectors.models_used(session)
    total = sum(u["nodes"] for u in used)
    parts = [
        f"{u['model']}{' (fallback)' if u['role'] == 'fallback' else ''} {u['nodes']} of {total} nodes" for u in used
    ]
    return ", ".join(parts) or "no model (no node was written)"


def spent(session):
    """What it spent of its budget, and that the budget cannot bind an unmetered model."""
    text = f"{usd(session.budget_used_usd)} of {usd(session.budget_usd)}"
    return f"{text} ({UNMETERED}{cap_note(session)})" if session.unmetered else text


def cap_note(session):
    return f"; token cap {session.token_cap:,}" if session.token_cap else "; no token cap (--token-cap)"


def offline_note(session):
    if session.offline:
        return " (the offline model: illustrative text, not advice)"
    if is_offline(session.answer_model):
        return " (partly offline: the offline model, the fallback, wrote it: illustrative text, not advice)"
    return ""
