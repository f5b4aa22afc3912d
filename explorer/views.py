"""The explorer's pages: thin views that authorise, read through selectors and write through services."""

from functools import wraps

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from pydantic import ValidationError

from reasoning import access, selectors, services
from reasoning.models import Mode, ReasoningSession, Status, is_offline
from reasoning.schemas import SessionIn

from .forms import SessionForm

PAGE_SIZE = 25


def engine_context(request):
    """A context processor: what every page's header shows about the engine."""
    return {"engine_offline": is_offline(settings.REASONING["MODEL_PRIMARY"])}


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
    filters = {
        "status": _choice(request.GET.get("status"), Status.values),
        "mode": _choice(request.GET.get("mode"), Mode.values),
        "problem_kind": (request.GET.get("problem_kind") or "").strip()[:64] or None,
    }
    sessions = selectors.sessions_for(request.tenant, **filters)
    page = Paginator(sessions, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "explorer/session_list.html",
        {
            "page_obj": page,
            "filters": filters,
            "statuses": Status.values,
            "modes": Mode.choices,
            "kinds": sorted(set(kinds) | ({filters["problem_kind"]} if filters["problem_kind"] else set())),
        },
    )


@tenant_required
def session_new(request):
    rubrics = list(selectors.rubrics_for(request.tenant))
    form = SessionForm(request.POST if request.method == "POST" else None, rubrics=rubrics)
    if request.method == "POST" and form.is_valid():
        session = _create_session(request, form)
        if session is not None:
            return redirect("explorer:session_detail", session_id=session.id)
    return render(request, "explorer/session_new.html", {"form": form, "no_rubrics": not rubrics})


@tenant_required
def session_detail(request, session_id):
    try:
        session = selectors.get_session(request.tenant, session_id)
    except ReasoningSession.DoesNotExist:
        raise Http404("No such session.") from None
    tree = selectors.tree(session)
    return render(
        request,
        "explorer/session_detail.html",
        {
            "session": session,
            "tree": tree,
            "ws_path": f"/ws/sessions/{session.id}/",
            "tree_url": f"/api/sessions/{session.id}/tree",
            "budget_pct": _budget_pct(session),
            "finished": session.is_finished,
            "can_act": request.principal.can_act,
        },
    )


def _create_session(request, form):
    """Validate with SessionIn, create through the service; errors land on the form's fields, never a 500."""
    try:
        data = SessionIn.model_validate(form.session_payload())
    except ValidationError as error:
        for e in error.errors():
            form.add_service_error(".".join(str(p) for p in e["loc"]), _pydantic_message(e))
        return None
    try:
        return services.create_session(request.tenant, data, triggered_by=f"web:{request.user.get_username()}")
    except services.InvalidInput as error:
        for e in error.errors:
            form.add_service_error(e.get("field") or "", e.get("message") or "invalid")
        return None


def _pydantic_message(error):
    return error["msg"].removeprefix("Value error, ")


def _choice(value, allowed):
    return value if value in allowed else None


def _budget_pct(session):
    if not session.budget_usd:
        return 0
    return max(0.0, min(100.0, 100.0 * session.budget_used_usd / session.budget_usd))
