"""The JSON API (django-ninja): thin endpoints over selectors and services, scoped to the caller's tenant."""

from typing import Literal

from django.db import IntegrityError, transaction
from django.utils import timezone
from ninja import NinjaAPI, Query, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.responses import Status as Reply
from ninja.security import HttpBearer, SessionAuth

from . import selectors, services
from .models import ApiKey, Mode, ReasoningNode, ReasoningSession, Rubric, RubricCriterion, Status
from .schemas import ErrorOut, RubricIn, SessionIn, SessionOut, TreeOut


class BearerKey(HttpBearer):
    def authenticate(self, request, token):
        key = ApiKey.find(token)
        if key is None:
            return None
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
        request.tenant, request.actor, request.is_admin = key.tenant, f"key:{key.hint}", key.is_admin
        return key


class BrowserSession(SessionAuth):
    """The logged-in user of the explorer, working in their membership's tenant."""

    def _get_key(self, request):
        if self.param_name not in request.COOKIES:
            return None  # no browser session: an API client gets 401, not a CSRF error
        return super()._get_key(request)

    def authenticate(self, request, key):
        user = super().authenticate(request, key)
        membership = selectors.membership_for(user)
        if membership is None:
            return None
        request.tenant, request.actor, request.is_admin = membership.tenant, f"user:{user.username}", membership.is_admin
        return user


api = NinjaAPI(
    title="Reasoning engine API",
    version="1",
    description="Run structured reasoning strategies over a tree of thoughts. Auth: `Authorization: Bearer <api key>` or the browser session.",
    auth=[BearerKey(), BrowserSession()],
    urls_namespace="api",
)


@api.exception_handler(NinjaValidationError)
def invalid_request(request, exc):
    return api.create_response(request, {"detail": [_field_error(e) for e in exc.errors]}, status=422)


@api.exception_handler(services.InvalidInput)
def invalid_input(request, exc):
    return api.create_response(request, {"detail": exc.errors}, status=422)


@api.exception_handler(ReasoningSession.DoesNotExist)
@api.exception_handler(ReasoningNode.DoesNotExist)
def not_found(request, exc):
    return api.create_response(request, {"detail": "Not found."}, status=404)


@api.exception_handler(services.Conflict)
def conflict(request, exc):
    return api.create_response(request, {"detail": str(exc)}, status=409)


@api.exception_handler(AuthenticationError)
def unauthorized(request, exc):
    return api.create_response(
        request, {"detail": "Authentication required: a Bearer API key or a logged-in session."}, status=401
    )


def _field_error(error):
    loc = [str(p) for p in error.get("loc", ())]
    # ninja's loc starts with the source and the argument name ("body", "data", ...): the field follows them.
    field = ".".join(loc[2:] if len(loc) > 2 and loc[0] in {"body", "query", "path"} else loc[1:] or loc)
    return {"field": field or "body", "message": error.get("msg", "invalid").removeprefix("Value error, ")}


class SessionFilters(Schema):
    status: Literal[tuple(Status.values)] | None = None
    problem_kind: str | None = None
    mode: Literal[tuple(Mode.values)] | None = None


@api.post("/sessions", response={201: SessionOut, 422: ErrorOut}, tags=["sessions"])
def create_session(request, data: SessionIn):
    session = services.create_session(request.tenant, data, triggered_by=request.actor)
    return Reply(201, session.to_dict())


@api.get("/sessions", response=list[SessionOut], tags=["sessions"])
@paginate(LimitOffsetPagination)
def list_sessions(request, filters: Query[SessionFilters]):
    return [s.to_dict() for s in selectors.sessions_for(request.tenant, **filters.dict())]


@api.get("/sessions/{session_id}", response={200: SessionOut, 404: ErrorOut}, tags=["sessions"])
def get_session(request, session_id: str):
    return selectors.get_session(request.tenant, session_id).to_dict()


@api.get("/sessions/{session_id}/tree", response={200: TreeOut, 404: ErrorOut}, tags=["sessions"])
def get_tree(request, session_id: str):
    return selectors.tree(selectors.get_session(request.tenant, session_id))


@api.post("/sessions/{session_id}/cancel", response={200: SessionOut, 404: ErrorOut, 409: ErrorOut}, tags=["oversight"])
def cancel_session(request, session_id: str):
    return services.cancel_session(request.tenant, session_id, request.actor).to_dict()


@api.post("/nodes/{node_id}/prune", response={200: dict, 404: ErrorOut}, tags=["oversight"])
def prune_node(request, node_id: str):
    return services.set_pruned(request.tenant, node_id, request.actor, pruned=True).to_dict()


@api.post("/nodes/{node_id}/unprune", response={200: dict, 404: ErrorOut}, tags=["oversight"])
def unprune_node(request, node_id: str):
    return services.set_pruned(request.tenant, node_id, request.actor, pruned=False).to_dict()


@api.get("/rubrics", response=list[dict], tags=["rubrics"])
def list_rubrics(request):
    return [r.to_dict() for r in selectors.rubrics_for(request.tenant)]


@api.post("/rubrics", response={201: dict, 403: ErrorOut, 409: ErrorOut, 422: ErrorOut}, tags=["rubrics"])
def create_rubric(request, data: RubricIn):
    if not request.is_admin:
        raise HttpError(403, "Only tenant admins may write rubrics.")
    try:
        with transaction.atomic():
            rubric = Rubric.objects.create(
                tenant=request.tenant, problem_kind=data.problem_kind, name=data.name, description=data.description
            )
            RubricCriterion.objects.bulk_create(
                RubricCriterion(rubric=rubric, position=i, **c.dict()) for i, c in enumerate(data.criteria)
            )
    except IntegrityError:
        raise HttpError(409, f"This tenant already has a rubric for '{data.problem_kind}'.") from None
    return Reply(201, rubric.to_dict())
