"""The explorer's pages: thin views that authorise, read through selectors and write through services."""

import math
import uuid
from functools import wraps

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from pydantic import ValidationError

from reasoning import access, selectors, services, throttles
from reasoning.models import (
    CHECKED,
    NEEDS_REVIEW,
    OverseerAction,
    ReasoningNode,
    ReasoningSession,
    Scope,
    Status,
    answer_badge,
    is_offline,
)
from reasoning.schemas import SessionIn
from reasoning.strategies import mode_choices, modes, page_registry
from reasoning.strategies.auto import pick_mode

from . import presenters
from .forms import SessionForm

REPORT_CHECKED_NODES = 60  # steps with a failed check the report lists by name; more are counted
# The list's filters beyond status, kind and mode: value -> what the select says (selectors.sessions_for applies them).
MODEL_FILTERS = {"offline": "Offline simulator", "noisy": "Noisy simulator", "real": "Real model"}
ORIGIN_FILTERS = {"original": "Originals", "fork": "Forks"}
REVIEW_FILTERS = {
    "awaiting": "Awaiting review",
    "approved": "Approved",
    "changes_requested": "Changes requested",
    "none": "No review asked",
}

PAGE_SIZE = 25
MAX_QUERY = 200  # characters of a search; more is cut, not refused
MAX_POLLED = 100  # ids one status poll may ask about
EMBED_MAX_NODES = 400  # a larger tree comes over the socket alone (explorer/snapshot.py)


def engine_context(request):
    """A context processor: what every page's header shows about the engine, and whether its user only watches."""
    principal = getattr(request, "principal", None) or access.for_user(getattr(request, "user", None))
    return {
        "engine_offline": is_offline(settings.REASONING["MODEL_PRIMARY"]),
        "view_only": principal is not None and not principal.can_act,
    }


def tenant_required(view):
    """Log in first; then request.principal says who and in which tenant (request.tenant); a non-member gets 403."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if access.attach(request, access.for_user(request.user)) is None:
            raise PermissionDenied("This account is not a member of any tenant.")
        return view(request, *args, **kwargs)

    return wrapper


@tenant_required
def session_list(request):
    kinds = [r.problem_kind for r in selectors.rubrics_for(request.tenant)]
    starters = selectors.session_starters(request.tenant)
    filters = {
        "status": _choice(request.GET.get("status"), Status.values),
        "mode": _choice(request.GET.get("mode"), modes()),
        "problem_kind": (request.GET.get("problem_kind") or "").strip()[:64] or None,
        "model": _choice(request.GET.get("model"), list(MODEL_FILTERS)),
        "origin": _choice(request.GET.get("origin"), list(ORIGIN_FILTERS)),
        "review": _choice(request.GET.get("review"), list(REVIEW_FILTERS)),
        "by": (request.GET.get("by") or "").strip()[:200] or None,
    }
    query = (request.GET.get("q") or "").strip()[:MAX_QUERY]
    sessions = with_node_counts(selectors.sessions_for(request.tenant, **filters, q=query))
    page = Paginator(sessions, PAGE_SIZE).get_page(request.GET.get("page"))
    now = timezone.now()
    for s in page.object_list:
        s.row = list_row(s, now)
    return render(
        request,
        "explorer/session_list.html",
        {
            "page_obj": page,
            "filters": filters,
            "query": query,
            "filtered": bool(query or any(filters.values())),
            "statuses": Status.values,
            "modes": mode_choices(),
            "kinds": sorted(set(kinds) | ({filters["problem_kind"]} if filters["problem_kind"] else set())),
            "model_filters": MODEL_FILTERS.items(),
            "origin_filters": ORIGIN_FILTERS.items(),
            "review_filters": REVIEW_FILTERS.items(),
            "starters": starters + ([filters["by"]] if filters["by"] and filters["by"] not in starters else []),
        },
    )


def with_node_counts(sessions):
    """Each session's node count in the same query: a subquery per listed row, so a page costs one query."""
    counts = ReasoningNode.objects.filter(session=OuterRef("pk")).order_by().values("session").annotate(n=Count("pk"))
    return sessions.annotate(node_count=Coalesce(Subquery(counts.values("n")), 0))


def list_row(session, now):
    """What a row of the list shows beyond the session's own fields."""
    return {
        "budget_pct": _budget_pct(session),
        "duration": presenters.duration_text(session.active_time(now)),
        "preview": " ".join((session.final_answer or "").split())[:160],
        "partial": session.answer_partial,
        "is_live": session.status in (Status.RUNNING, Status.QUEUED),
    }


@tenant_required
def session_statuses(request):
    """The list page's poll: status, budget, nodes and answer preview of the listed sessions (?ids=a,b,...)."""
    ids = [i for i in (request.GET.get("ids") or "").split(",") if i][:MAX_POLLED]
    valid = []
    for i in ids:
        try:
            valid.append(uuid.UUID(i))
        except ValueError:
            continue
    rows = with_node_counts(selectors.sessions_for(request.tenant).filter(pk__in=valid))
    now = timezone.now()
    return JsonResponse(
        {
            "sessions": [
                {
                    "id": str(s.id),
                    "status": s.status,
                    "budget_used_usd": s.budget_used_usd,
                    "budget_usd": s.budget_usd,
                    "budget_text": f"{presenters.usd(s.budget_used_usd)} of {presenters.usd(s.budget_usd)}",
                    "node_count": s.node_count,
                    **list_row(s, now),
                }
                for s in rows
            ]
        }
    )


@tenant_required
def auto_mode(request):
    """The mode auto would pick for this kind and text, and why: the form shows it before submitting."""
    kind = (request.GET.get("kind") or "general").strip()[:64]
    mode, reason = pick_mode(kind, (request.GET.get("text") or "")[:20_000])
    return JsonResponse({"mode": mode, "reason": reason})


@tenant_required
def session_new(request):
    if not request.principal.can_act:  # a viewer watches: starting a session spends the tenant's money
        return render(request, "explorer/view_only.html", status=403)
    rubrics = list(selectors.rubrics_for(request.tenant))
    form = SessionForm(request.POST if request.method == "POST" else None, rubrics=rubrics)
    status, wait = 200, None
    if request.method == "POST" and form.is_valid():
        # The API's creation limit, on the same count: a user creates as many sessions by the page as by the API.
        wait = throttles.take("CREATE_RATE", throttles.caller(request.principal))
        if wait is not None:
            form.add_error(None, f"Too many new sessions from this account: retry in {math.ceil(wait)} s.")
            status = 429
        else:
            session = _create_session(request, form)
            if session is not None:
                return redirect("explorer:session_detail", session_id=session.id)
    response = render(request, "explorer/session_new.html", {"form": form, "no_rubrics": not rubrics}, status=status)
    if wait is not None:
        response["Retry-After"] = str(math.ceil(wait))  # as the API's 429 says it
    return response


def session_or_404(request, session_id):
    """The tenant's session, or a 404 (another tenant's session is simply not there)."""
    try:
        return selectors.get_session(request.tenant, session_id)
    except ReasoningSession.DoesNotExist:
        raise Http404("No such session.") from None


@tenant_required
def session_detail(request, session_id):
    session = session_or_404(request, session_id)
    return render(
        request,
        "explorer/session_detail.html",
        {
            "session": session,
            "tree": embedded_tree(session),
            "ws_path": f"/ws/sessions/{session.id}/",
            "tree_url": f"/api/sessions/{session.id}/tree",
            "budget_pct": _budget_pct(session),
            "finished": session.is_finished,
            "can_act": request.principal.can_act,
            "can_review": request.principal.may(Scope.REVIEW),
            "person": selectors.person(request.principal.actor),
            "strategies": page_registry(),  # the modes' labels and legends, read by strategies.js
        },
    )


def embedded_tree(session):
    """What the page embeds: a small tree whole, so it shows before the socket opens; of a larger one only the
    session and its node count (the API's tree format with no rows), since the socket's snapshot brings the rows in
    parts anyway and building them twice would double the wait."""
    node_count = session.nodes.count()
    if node_count <= EMBED_MAX_NODES:
        return selectors.tree(session)
    return {
        "session": session.to_dict(with_forks=True),
        "node_count": node_count,
        "nodes": [],
        "edges": [],
        "critiques": [],
        "actions": [a.to_dict() for a in selectors.actions_of(session)],
    }


@tenant_required
def session_beside_parent(request, session_id):
    """A forked session beside the session it was forked from: each one's status, cost, models, answer and path,
    the steps the fork copied marked as shared."""
    fork = session_or_404(request, session_id)
    if not fork.forked_from_id:
        raise Http404("This session was not forked from another.")
    parent = session_or_404(request, fork.forked_from_id)
    return render(
        request, "explorer/session_beside.html", {"columns": [_column(parent, "Parent"), _column(fork, "Fork")]}
    )


def _column(session, role):
    return {
        "role": role,
        "session": session,
        "status_sentence": presenters.status_sentence(session, ""),
        "spent": presenters.usd(session.budget_used_usd),
        "budget": presenters.usd(session.budget_usd),
        "models_used": selectors.models_used(session),
        "path": presenters.answer_path(session)[1:],
    }


@tenant_required
def session_report(request, session_id):
    """One printable page an advisor can file: the problem, the status, the answer and the path that led to it."""
    session = session_or_404(request, session_id)
    cancel = OverseerAction.objects.filter(session=session, action="cancel").order_by("-created_at").first()
    path = presenters.answer_path(session)
    facts = list(session.facts.all())
    sheet = [fact.as_fact() for fact in facts]
    return render(
        request,
        "explorer/session_report.html",
        {
            "session": session,
            "status_sentence": presenters.status_sentence(session, cancel.actor if cancel else ""),
            "path": [_with_failures(node) for node in path],
            "facts": [_fact_row(fact) for fact in facts],
            "answer_findings": _failed_first(session.answer_checks) if session.final_answer else [],
            "figures_appendix": _figures_appendix(session, facts) if session.final_answer else [],
            "answer_badge": (
                answer_badge(session.answer_checks, sheet, session.answer_figures) if session.answer_state in (CHECKED, NEEDS_REVIEW) else None
            ),
            **_failed_steps(session, {node.pk for node in path}),
            "spent": presenters.usd(session.budget_used_usd),
            "budget": presenters.usd(session.budget_usd),
            "active": presenters.duration_text(session.active_time()),
            "node_count": session.nodes.count(),
            "models_used": selectors.models_used(session),
            "printed_at": timezone.now(),
        },
    )


# ---- the report's fact sheet and findings ----------------------------------------------------------------------


def _fact_row(fact):
    """A fact as the report prints it, in full: "USD 3,200,000", "70% of portfolio", "US-CA (California, ...)"."""
    from reasoning.facts.places import place_name  # pycountry's tables load where a place is named
    from reasoning.facts.sheet import display

    value = display(fact.as_fact())
    if fact.kind == "place":
        try:
            name = place_name(str(fact.value))
        except LookupError:  # a code pycountry does not know: the code alone
            name = ""
        value = f"{value} ({name})" if name and name != value else value
    return {"label": fact.label, "kind": fact.kind, "value": value, "text": fact.text, "source": fact.source}


def _figures_appendix(session, facts):
    """Every figure declared with the answer, as the report's appendix prints it: its value, its derivation (or the
    fact it is) and the client's facts it rests on, each with the words the client wrote."""
    from reasoning.facts.sheet import display

    by_id = {str(fact.pk): fact for fact in facts} | {fact.label: fact for fact in facts}
    rows = []
    for figure in session.answer_figures or []:
        value, unit = figure.get("value"), figure.get("unit") or ""
        shown = f"{value:,.10g}" if isinstance(value, int | float) else str(value)
        rests = [by_id[str(i)] for i in figure.get("facts") or [] if str(i) in by_id]
        rows.append({
            "label": figure.get("label", ""),
            "value": f"{shown}%" if unit == "%" else f"{unit} {shown}".strip(),
            "derivation": figure.get("derivation") or "the model's own figure (no derivation)",
            "ok": figure.get("ok", True),
            "detail": "" if figure.get("ok", True) else figure.get("detail", ""),
            "facts": [{"label": f.label, "value": display(f.as_fact()), "text": f.text} for f in rests],
        })
    return rows


def _failed_first(checks):
    return sorted(checks or [], key=lambda c: bool(c.get("ok")))


def _with_failures(node):
    node.failed_checks = [c for c in node.checks or [] if not c.get("ok")]
    return node


def _failed_steps(session, on_path):
    """The steps whose thought failed a check, the answer's path first, then by depth; and the score cap they got."""
    from reasoning.facts.check import CAP  # the checker's patterns compile where they are used

    steps = session.nodes.filter(depth__gt=0).only("id", "depth", "thought", "checks", "eval_score", "created_at")
    nodes = [n for n in steps.order_by("depth", "created_at") if _with_failures(n).failed_checks]
    nodes.sort(key=lambda n: n.pk not in on_path)  # stable: by depth within each group
    for n in nodes:
        n.on_path = n.pk in on_path
    return {
        "failed_steps": nodes[:REPORT_CHECKED_NODES],
        "failed_steps_more": max(0, len(nodes) - REPORT_CHECKED_NODES),
        "check_cap": CAP,
    }


def _create_session(request, form):
    """Validate with SessionIn, create through the service; errors land on the form's fields, never a 500."""
    try:
        data = SessionIn.model_validate(form.session_payload())
    except ValidationError as error:
        for e in error.errors():
            form.add_service_error(".".join(str(p) for p in e["loc"]), _pydantic_message(e))
        return None
    try:
        who = request.principal.actor  # "user:<login>", as the API and a fork name the same person
        return services.create_session(request.tenant, data, triggered_by=who, by=request.principal)
    except services.InvalidInput as error:
        for e in error.errors:
            form.add_service_error(e.get("field") or "", presenters.plain_message(e.get("message") or "invalid"))
        return None


def _pydantic_message(error):
    return presenters.plain_message(error["msg"])


def _choice(value, allowed):
    return value if value in allowed else None


def _budget_pct(session):
    if not session.budget_usd:
        return 0
    return max(0.0, min(100.0, 100.0 * session.budget_used_usd / session.budget_usd))
