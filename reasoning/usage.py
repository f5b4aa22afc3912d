"""What a tenant spends: the ledger (LLMCall) summed by day, model, mode, person or key, and the month's spend
against the tenant's cap. Days and months are UTC, the cap's counter's too (ledger.py)."""

from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, F, Q, Sum, Value
from django.db.models.functions import Coalesce, NullIf, TruncDate

from . import meters
from .ledger import month_start  # noqa: F401  (the month the ledger counts in; tests and callers read it here too)
from .money import exact
from .models import ApiKey, LLMCall, ReasoningSession, Status, Tenant, TenantSpend
from .modes import mode_choices

MAX_DAYS = 366
NOBODY = "no person (a service key or the system)"
NO_KEY = "no key (the pages, the terminal or the system)"

# What each grouping sums by: an expression over the ledger's rows.
GROUPS = {
    "day": TruncDate("created_at", tzinfo=UTC),
    "model": Coalesce(NullIf("model_used", Value("")), "model_requested"),
    "mode": F("session__mode"),
    "user": F("session__created_by__username"),
    "key": F("session__api_key_id"),
}
MEASURES = {
    "cost_usd": Coalesce(Sum("cost_usd"), 0.0),
    "calls": Count("id", filter=~Q(outcome=LLMCall.Outcome.BUDGET)),  # a call refused for budget was never made
    "tokens_in": Coalesce(Sum("tokens_in"), 0),
    "tokens_out": Coalesce(Sum("tokens_out"), 0),
    "sessions": Count("session", distinct=True),
    "solved": Count("session", distinct=True, filter=Q(session__status=Status.SOLVED)),
}


class BadRange(ValueError):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def window(start=None, end=None):
    """The days asked for, defaulting to this month so far; BadRange (naming the field) for an impossible one."""
    end = end or datetime.now(UTC).date()
    start = start or month_start(end)
    if start > end:
        raise BadRange("from", f"must not be after 'to' ({end.isoformat()})")
    if (end - start).days >= MAX_DAYS:
        raise BadRange("to", f"the range spans more than {MAX_DAYS} days; ask for a year at a time")
    return start, end


def calls_between(tenant, start, end):
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    return LLMCall.objects.filter(tenant=tenant, created_at__gte=since, created_at__lt=until)


def report(tenant, start, end, group_by):
    """{from, to, group_by, rows, total, month}: one row per group, the days in order, the rest costliest first."""
    calls = calls_between(tenant, start, end)
    rows = list(calls.order_by().values(group=GROUPS[group_by]).annotate(**MEASURES))
    rows.sort(key=(lambda r: r["group"]) if group_by == "day" else (lambda r: (-r["cost_usd"], str(r["group"]))))
    labels = labeller(group_by, [r["group"] for r in rows])
    total = calls.aggregate(**MEASURES)
    return {
        "from": start,
        "to": end,
        "group_by": group_by,
        "rows": [measured(row, row["group"], labels(row["group"])) for row in rows],
        "total": measured(total, None, "total"),
        "month": month_of(tenant),
        "models": overruns(calls),
    }


def overruns(calls):
    """Per model these calls used: the calls billed past their reservation and by how much, the streams the gateway
    closed at their reservation (both from the tenant's ledger), and what the gateway has seen of the model's server
    in every tenant's calls (ModelMeter): whether it streams, and the dearest call it billed."""
    reserved = Q(reserved_usd__gt=0)  # a row written outside a run (a demo's) reserved nothing and overran nothing
    over = Q(cost_usd__gt=F("reserved_usd") + 1e-12) & reserved
    rows = list(
        calls.order_by()
        .values(model=GROUPS["model"])
        .annotate(
            calls_over=Count("id", filter=over),
            over_usd=Coalesce(Sum(F("cost_usd") - F("reserved_usd"), filter=over), 0.0),
            stopped=Count("id", filter=Q(stopped=True)),
        )
        .order_by("model")
    )
    records = meters.of([r["model"] for r in rows])
    return [
        {
            **row,
            "over_usd": exact(row["over_usd"]),
            "streams": records[row["model"]].streams if row["model"] in records else True,
            "marked": row["model"] in records and records[row["model"]].marked,
            "worst_tokens_out": records[row["model"]].worst_tokens_out if row["model"] in records else 0,
            "worst_usd": exact(records[row["model"]].worst_usd) if row["model"] in records else 0.0,
        }
        for row in rows
    ]


def measured(row, group, label):
    sessions = row["sessions"]
    return {
        **{name: row[name] for name in MEASURES},
        "cost_usd": round(row["cost_usd"], 10),
        "group": group if group is None or isinstance(group, str) else _text(group),
        "label": label,
        "solved_share": round(row["solved"] / sessions, 4) if sessions else None,
    }


def _text(group):
    return group.isoformat() if isinstance(group, date) else str(group)


def labeller(group_by, groups):
    """How each group reads in the table: a mode's name, a key's hint and name, a person's login."""
    if group_by == "mode":
        names = dict(mode_choices())
        return lambda g: names.get(g, g)
    if group_by == "key":
        keys = {k.pk: k for k in ApiKey.objects.filter(pk__in=[g for g in groups if g is not None])}
        return lambda g: NO_KEY if g is None else f"{keys[g].hint}… {keys[g].name}".strip()
    if group_by == "user":
        return lambda g: NOBODY if g is None else g
    return _text


def by_day_and_model(tenant, start, end):
    """[{day, model, cost_usd}]: the chart's stacks, cost by day and by model."""
    rows = (
        calls_between(tenant, start, end)
        .order_by()
        .values(day=GROUPS["day"], model=GROUPS["model"])
        .annotate(cost_usd=Coalesce(Sum("cost_usd"), 0.0))
        .order_by("day", "model")
    )
    return [{"day": r["day"].isoformat(), "model": r["model"], "cost_usd": round(r["cost_usd"], 10)} for r in rows]


def cap_stopped(session_id):
    """Whether the tenant's month has less left under its cap than the session's own budget: the reason an
    exhausted session gives ("monthly_cap" rather than "budget")."""
    session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
    left = month_of(session.tenant)["left_usd"]
    return left is not None and left < session.budget_usd - session.budget_used_usd - session.budget_reserved_usd


def token_capped(session_id):
    """Whether its token cap, not its USD budget, stopped an exhausted session ("token_cap" rather than "budget"): an
    unmetered session's budget never binds; a metered one's cap did when it had used more of its tokens than of its
    budget."""
    session = ReasoningSession.objects.get(pk=session_id)
    if not session.token_cap:
        return False
    if session.unmetered or not session.budget_usd:
        return True
    tokens = LLMCall.objects.filter(session_id=session_id).aggregate(
        used=Coalesce(Sum(F("tokens_in") + F("tokens_out")), 0)
    )["used"]
    return tokens / session.token_cap >= session.budget_used_usd / session.budget_usd


def month_of(tenant):
    """This month's spend against the tenant's cap: {month, cap_usd, spent_usd, reserved_usd, left_usd,
    written_off_usd}. written_off_usd is the part of the spend no call of the ledger costs: what runs that died had
    reserved for calls in flight (their `unaccounted` rows), counted as spent since those calls may have been paid."""
    month = month_start()
    spend = TenantSpend.objects.filter(tenant_id=tenant.pk).first()
    spent = spend.used_usd if spend is not None and spend.month == month else 0.0
    reserved = spend.reserved_usd if spend is not None else 0.0
    cap = Tenant.objects.filter(pk=tenant.pk).values_list("monthly_cap_usd", flat=True).first()  # as it is now
    left = None if cap is None else max(cap - spent - reserved, 0.0)
    # Sums of floats drift (-2.8e-17 reserved once nothing is): the month in whole millionths of a dollar.
    spent, reserved, left = exact(spent), max(exact(reserved), 0.0), exact(left)
    today = datetime.now(UTC).date()
    lost = calls_between(tenant, month, today).filter(outcome=LLMCall.Outcome.UNACCOUNTED)
    written_off = exact(lost.aggregate(usd=Coalesce(Sum("reserved_usd"), 0.0))["usd"])
    return {
        "month": month, "cap_usd": cap, "spent_usd": spent, "reserved_usd": reserved, "left_usd": left,
        "written_off_usd": written_off,
    }
