"""The JSON API (django-ninja): thin endpoints over selectors and services, scoped to the caller's tenant."""

import collections
import functools
import inspect
import math
import threading
import uuid
from typing import Annotated, Literal

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from ninja import Field, NinjaAPI, Query, Schema
from ninja import Path as PathParam
from ninja.errors import AuthenticationError, HttpError, Throttled
from ninja.errors import ValidationError as NinjaValidationError
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.responses import Status as Reply
from ninja.security import HttpBearer, SessionAuth

from . import access, idempotency, keys, replay, selectors, services, tree_memo, usage
from .factsheet import FactError
from .models import ApiKey, CaseFact, ReasoningNode, ReasoningSession, Rubric, RubricCriterion, Scope, Status
from .schemas import (
    KIND,
    NO_NUL,
    ActionOut,
    CallOut,
    EditIn,
    ErrorOut,
    ExpandIn,
    FactIn,
    FactOut,
    FactPatch,
    ForkIn,
    KeyIn,
    KeyIssuedOut,
    KeyOut,
    PromoteIn,
    ReplayIn,
    ReplayOut,
    ReviewIn,
    RubricIn,
    SessionIn,
    SessionOut,
    TreeOut,
    UsageIn,
    UsageOut,
)
from .selectors import REVIEW_FILTERS
from .modes import modes
from .throttles import CallerRate


class Scoped:
    """An auth that, given the operation's scope, refuses a caller without it (403 naming it) before the body is
    read: a read key's bad body is refused for its scope, not validated."""

    def __init__(self, scope=None):
        super().__init__()
        self.scope = scope

    def admit(self, request, principal):
        access.attach(request, principal)
        if principal is not None and self.scope is not None and not principal.may(self.scope):
            raise MissingScope(self.scope, principal)
        return principal


class BearerKey(Scoped, HttpBearer):
    def authenticate(self, request, token):
        return self.admit(request, access.for_key(token, access.address_of(request)))


class BrowserSession(Scoped, SessionAuth):
    """The logged-in user of the explorer, working in their membership's tenant."""

    def _get_key(self, request):
        if self.param_name not in request.COOKIES:
            return None  # no browser session: an API client gets 401, not a CSRF error
        return super()._get_key(request)

    def authenticate(self, request, key):
        return self.admit(request, access.for_user(super().authenticate(request, key)))


def callers(scope):
    return [BearerKey(scope), BrowserSession(scope)]


api = NinjaAPI(
    title="Reasoning engine API",
    version="1",
    description=(
        "Run structured reasoning strategies over a tree of thoughts. Auth: `Authorization: Bearer <api key>` or the "
        "browser session. Each operation names the scope it needs (`x-scope`): `read`, `run` (create and fork, which "
        "spends), `oversee` (steer), `review` (sign off answers) or `admin` (rubrics, keys); a member's key never "
        "holds more than their role."
    ),
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


@api.exception_handler(services.Forbidden)
def forbidden(request, exc):
    return api.create_response(request, {"detail": str(exc)}, status=403)


@api.exception_handler(services.Conflict)
def conflict(request, exc):
    return api.create_response(request, {"detail": str(exc)}, status=409)


@api.exception_handler(idempotency.InvalidKey)
def invalid_idempotency_key(request, exc):
    detail = [{"field": idempotency.HEADER, "message": str(exc)}]
    return api.create_response(request, {"detail": detail}, status=422)


@api.exception_handler(AuthenticationError)
def unauthorized(request, exc):
    return api.create_response(
        request, {"detail": "Authentication required: a Bearer API key or a logged-in session."}, status=401
    )


class MissingScope(Exception):
    def __init__(self, scope, principal):
        held = ", ".join(sorted(principal.scopes)) if principal is not None else "none"
        words = SCOPE_WORDS[scope]
        super().__init__(f"This call needs the '{scope}' scope ({words}); this key or login holds: {held}.")
        self.scope = scope


SCOPE_WORDS = {
    Scope.READ: "read sessions, rubrics and usage",
    Scope.RUN: "start and fork sessions, which spends; a viewer may watch sessions but not start them",
    Scope.OVERSEE: "steer sessions; a viewer may watch sessions but not act on them",
    Scope.REVIEW: "approve answers or request changes: a reviewer's or an admin's; a viewer sees the review only",
    Scope.ADMIN: "rubrics, keys and members: a tenant admin's",
}


@api.exception_handler(MissingScope)
def missing_scope(request, exc):
    return api.create_response(request, {"detail": str(exc), "scope": exc.scope}, status=403)


def requires(scope):
    """The endpoint refuses a caller without `scope` (403 naming it). Its authentication (route) refuses first,
    before the body is validated; this check stays in case a route's authentication is ever replaced."""

    def wrap(view):
        @functools.wraps(view)
        def guarded(request, *args, **kwargs):
            principal = getattr(request, "principal", None)
            if principal is None or not principal.may(scope):
                raise MissingScope(scope, principal)
            return view(request, *args, **kwargs)

        return guarded

    return wrap


def route(method, path, scope, response, **options):
    """Register an endpoint that needs `scope`: checked at authentication and in the endpoint, stated in the OpenAPI
    document (`x-scope` and a line of the description), and its 403 documented."""

    def register(view):
        doc = inspect.cleandoc(view.__doc__ or "")
        line = f"Scope: `{scope}` ({SCOPE_WORDS[scope]})."
        return getattr(api, method)(
            path,
            response={403: ErrorOut, **response},
            auth=callers(scope),
            openapi_extra={"x-scope": str(scope)},
            description=f"{doc}\n\n{line}" if doc else line,
            **options,
        )(requires(scope)(view))

    return register


def _field_error(error):
    loc = [str(p) for p in error.get("loc", ())]
    # ninja's loc starts with the source and the argument name ("body", "data", ...): the field follows them.
    field = ".".join(loc[2:] if len(loc) > 2 and loc[0] in {"body", "query", "path"} else loc[1:] or loc)
    return {"field": field or "body", "message": error.get("msg", "invalid").removeprefix("Value error, ")}


class SessionFilters(Schema):
    status: Literal[tuple(Status.values)] | None = None
    problem_kind: str | None = Field(None, max_length=64, pattern=KIND)
    mode: Literal[tuple(modes())] | None = None
    model: Literal["offline", "noisy", "real"] | None = Field(
        None, description="offline: the simulator; noisy: the simulator that errs; real: any other model."
    )
    origin: Literal["fork", "original"] | None = Field(None, description="Forks only, or originals only.")
    by: str | None = Field(
        None, max_length=200, pattern=NO_NUL, description="Who started it, exactly as triggered_by reads."
    )
    q: str | None = Field(None, max_length=200, pattern=NO_NUL, description="Words in the case name or the problem.")
    review: Literal[tuple(REVIEW_FILTERS)] | None = Field(
        None, description="awaiting, approved or changes_requested; none: sessions no review was asked for."
    )


class CallFilters(Schema):
    node_id: uuid.UUID | None = Field(None, description="Only the calls about this node.")


# What any call may answer, and what a call with a body may answer besides: documented on every operation.
READ = {401: ErrorOut, 422: ErrorOut, 503: ErrorOut}
WRITE = {**READ, 400: ErrorOut, 413: ErrorOut, 415: ErrorOut}


@api.exception_handler(Throttled)
def throttled(request, exc):
    # ninja adds the Retry-After header (whole seconds) to this response.
    wait = f"retry in {math.ceil(exc.wait)} s" if exc.wait is not None else "retry later"
    return api.create_response(request, {"detail": f"Too many requests from this key or user: {wait}."}, status=429)


class DictPages(LimitOffsetPagination):
    """limit/offset sliced in SQL: only the page's rows are read, and only they are turned into dicts."""

    class Input(LimitOffsetPagination.Input):
        # Past any real list, yet inside a 64-bit integer: a larger offset broke the SQL (a 500, not a 422).
        offset: int = Field(0, ge=0, le=1_000_000_000)

    def paginate_queryset(self, queryset, pagination, request, **params):
        page = super().paginate_queryset(queryset, pagination, request, **params)
        return {**page, "items": [row.to_dict() for row in page["items"]]}


@route(
    "post",
    "/sessions",
    Scope.RUN,
    response={201: SessionOut, 200: SessionOut, 403: ErrorOut, 429: ErrorOut, **WRITE},
    throttle=CallerRate("CREATE_RATE"),
    tags=["sessions"],
)
def create_session(request, data: SessionIn):
    """At most REASONING_CREATE_RATE per API key or user; beyond it, a 429 with Retry-After (seconds). A viewer
    may not start sessions (403). With an `Idempotency-Key` header (1 to 200 visible ASCII characters), a retry
    of the same request returns the session the first one made (200, same id) instead of making another."""
    tenant, actor = caller(request)
    session, made = idempotency.make_once(
        request, tenant, lambda: services.create_session(tenant, data, triggered_by=actor, by=request.principal)
    )
    return Reply(201 if made else 200, session.to_dict(with_forks=True))


@route("get", "/sessions", Scope.READ, response={200: list[SessionOut], **READ}, tags=["sessions"])
@paginate(DictPages)
def list_sessions(request, filters: Query[SessionFilters]):
    return selectors.sessions_for(request.tenant, **filters.dict())


@route(
    "get", "/sessions/{session_id}", Scope.READ, response={200: SessionOut, 404: ErrorOut, **READ}, tags=["sessions"]
)
def get_session(request, session_id: str):
    session = selectors.get_session(request.tenant, session_id)
    return {**session.to_dict(with_forks=True), "models_used": selectors.models_used(session)}


@route(
    "get",
    "/sessions/{session_id}/tree",
    Scope.READ,
    response={200: TreeOut, 304: None, 404: ErrorOut, **READ},
    tags=["sessions"],
)
def get_tree(request, session_id: str, response: HttpResponse):
    """The whole tree, with an ETag that changes with every event of the session and every change to it. Sent back
    in If-None-Match, an unchanged tree answers 304 with no body, and no node is read."""
    seen = tree_memo.generation(session_id)
    session = selectors.get_session(request.tenant, session_id)
    head = session.to_dict(with_forks=True)
    response.headers["ETag"] = etag = selectors.tree_etag(head)
    response.headers["Cache-Control"] = "private, no-cache"
    # The next poller with this ETag is answered from memory, on the event loop (config/asgi.py).
    tree_memo.remember(session.pk, session.tenant_id, etag, seen, *_bearer_key(request))
    if tree_memo.etag_matches(request.headers.get("If-None-Match", ""), etag):
        return Reply(304, None)
    body = rendered_trees.get((session.pk, etag))
    if body is None:
        tree = TreeOut.model_validate(selectors.tree(session, head)).model_dump()
        body = rendered_trees.put((session.pk, etag), api.renderer.render(request, tree, response_status=200))
    response.content = body
    return response


class RenderedTrees:
    """The JSON of recently read trees by (session, ETag), a few MB at most: the readers of one live tree render
    each of its versions once, not once each. The key comes after the tenant's check (get_session), never before."""

    def __init__(self, max_bytes=32 * 1024 * 1024):
        self.max_bytes, self.bytes = max_bytes, 0
        self.bodies = collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            body = self.bodies.get(key)
            if body is not None:
                self.bodies.move_to_end(key)
            return body

    def put(self, key, body):
        with self.lock:
            if key not in self.bodies and len(body) <= self.max_bytes // 4:
                self.bodies[key], self.bytes = body, self.bytes + len(body)
                while self.bytes > self.max_bytes:
                    self.bytes -= len(self.bodies.popitem(last=False)[1])
        return body


rendered_trees = RenderedTrees()


def _bearer_key(request):
    """(the bearer key, its expiry as a timestamp) when a key authorised this request; else (None, None)."""
    principal = request.principal
    if principal.key_id is None:
        return None, None
    expires = principal.key_expires_at
    return tree_memo.bearer(request.headers.get("Authorization", "")), (expires.timestamp() if expires else None)


@route(
    "get",
    "/sessions/{session_id}/calls",
    Scope.READ,
    response={200: list[CallOut], 404: ErrorOut, **READ},
    tags=["sessions"],
)
@paginate(DictPages)
def list_calls(request, session_id: str, filters: Query[CallFilters]):
    """The ledger: every attempt at a model call, retries and failures included, with the prompt as sent and
    the raw reply, oldest first."""
    return selectors.calls_of(selectors.get_session(request.tenant, session_id), filters.node_id)


@route(
    "get",
    "/sessions/{session_id}/actions",
    Scope.READ,
    response={200: list[ActionOut], 404: ErrorOut, **READ},
    tags=["oversight"],
)
def list_actions(request, session_id: str):
    """The audit trail: every overseer action on the session, oldest first."""
    return [a.to_dict() for a in selectors.actions_of(selectors.get_session(request.tenant, session_id))]


@route(
    "post",
    "/sessions/{session_id}/replay",
    Scope.READ,
    response={200: ReplayOut, 403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 429: ErrorOut, **WRITE},
    throttle=CallerRate("REPLAY_RATE"),
    tags=["sessions"],
)
def replay_session(request, session_id: str, data: ReplayIn = None):
    """Run the session's strategy again with the ledger's replies in place of the model (matched by contract and
    prompt) and the advisors' actions where its runs met them, and compare the trees node for node. No model is called,
    nothing is written or charged. Scope `read`: it changes and spends nothing, and shows nothing the tree and the
    ledger do not, so an auditor who may not run sessions can check the record. A session still running: 409."""
    session = selectors.get_session(request.tenant, session_id)
    try:
        return replay.replay_now(session)
    except replay.NotReplayable as error:
        raise services.Conflict(str(error)) from None


ACTED = {403: ErrorOut, 404: ErrorOut, 409: ErrorOut, 429: ErrorOut, **WRITE}
# Oversight actions per API key or user (REASONING_ACTION_RATE), counted with the same caller's socket actions: a
# prune/unprune loop cannot fill the audit log.
ACTING = CallerRate("ACTION_RATE")


def caller(request):
    """The tenant and the actor the audit log records (the endpoint's @requires checked the caller's scope)."""
    return request.tenant, request.actor


@route(
    "post",
    "/sessions/{session_id}/pause",
    Scope.OVERSEE,
    response={200: SessionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def pause_session(request, session_id: str):
    """Stops starting model calls at once; resume continues from the stored tree."""
    tenant, actor = caller(request)
    return services.pause_session(tenant, session_id, actor).to_dict(with_forks=True)


@route(
    "post",
    "/sessions/{session_id}/resume",
    Scope.OVERSEE,
    response={200: SessionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def resume_session(request, session_id: str):
    tenant, actor = caller(request)
    return services.resume_session(tenant, session_id, actor).to_dict(with_forks=True)


@route(
    "post",
    "/sessions/{session_id}/cancel",
    Scope.OVERSEE,
    response={200: SessionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def cancel_session(request, session_id: str):
    """Ends the session within one model call; its best line so far becomes a partial answer."""
    tenant, actor = caller(request)
    return services.cancel_session(tenant, session_id, actor).to_dict(with_forks=True)


@route(
    "post",
    "/sessions/{session_id}/fork",
    Scope.RUN,
    response={201: SessionOut, 200: SessionOut, 429: ErrorOut, **ACTED},
    throttle=CallerRate("CREATE_RATE"),
    tags=["oversight"],
)
def fork_session(request, session_id: str, data: ForkIn):
    """A new session holding a copy of the path to node_id, continuing with the same or another mode. A fork is a new
    session: it counts against REASONING_CREATE_RATE with every other creation (429 with Retry-After beyond it). An
    `Idempotency-Key` header makes a retry return the fork the first request made (200, same id)."""
    tenant, actor = caller(request)
    fork, made = idempotency.make_once(
        request, tenant, lambda: services.fork_session(tenant, session_id, actor, **data.dict(), by=request.principal)
    )
    return Reply(201 if made else 200, fork.to_dict(with_forks=True))


@route(
    "post", "/nodes/{node_id}/prune", Scope.OVERSEE, response={200: dict, **ACTED}, throttle=ACTING, tags=["oversight"]
)
def prune_node(request, node_id: str):
    """The node's subtree leaves the search from this moment."""
    tenant, actor = caller(request)
    return services.set_pruned(tenant, node_id, actor, pruned=True).to_dict()


@route(
    "post",
    "/nodes/{node_id}/unprune",
    Scope.OVERSEE,
    response={200: dict, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def unprune_node(request, node_id: str):
    tenant, actor = caller(request)
    return services.set_pruned(tenant, node_id, actor, pruned=False).to_dict()


@route(
    "post",
    "/nodes/{node_id}/expand",
    Scope.OVERSEE,
    response={202: ActionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def expand_node(request, node_id: str, data: ExpandIn = None):
    """k children proposed and scored by the session's strategy; a finished session reopens for them."""
    tenant, actor = caller(request)
    k = data.k if data is not None else ExpandIn().k
    return Reply(202, services.expand_node(tenant, node_id, actor, k).to_dict())


@route(
    "post",
    "/nodes/{node_id}/edit",
    Scope.OVERSEE,
    response={202: ActionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def edit_node(request, node_id: str, data: EditIn):
    """The thought is replaced (the original kept) and rescored; its descendants are stale until rescored."""
    tenant, actor = caller(request)
    return Reply(202, services.edit_node(tenant, node_id, actor, data.thought).to_dict())


@route(
    "post",
    "/nodes/{node_id}/promote",
    Scope.OVERSEE,
    response={202: ActionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def promote_node(request, node_id: str, data: PromoteIn = None):
    """This node becomes the final answer, marked as chosen by a person."""
    tenant, actor = caller(request)
    note = data.note if data is not None else ""
    return Reply(202, services.promote_node(tenant, node_id, actor, note).to_dict())


@route(
    "post",
    "/sessions/{session_id}/review",
    Scope.REVIEW,
    response={200: SessionOut, **ACTED},
    throttle=ACTING,
    tags=["oversight"],
)
def review_session(request, session_id: str, data: ReviewIn):
    """Four eyes: approve the answer, or request changes saying what and why (`comment`, required then). The person
    who ran the session or chose its answer may not approve it (403) unless the tenant allows self-approval; a session
    with no answer, or one still running, answers 409. A later edit on the answer's line, a change of the client's
    facts or a promote withdraws the decision: the session's `review` awaits again, with the reason."""
    tenant, _ = caller(request)
    return services.review_session(tenant, session_id, request.principal, data.decision, data.comment).to_dict(
        with_forks=True
    )


@route(
    "get",
    "/sessions/{session_id}/facts",
    Scope.READ,
    response={200: list[FactOut], 404: ErrorOut, **READ},
    tags=["facts"],
)
def list_facts(request, session_id: str):
    """The client's fact sheet: read from the problem when the session was created, and corrected by advisors."""
    session = selectors.get_session(request.tenant, session_id)
    return [f.to_dict() for f in session.facts.all()]


@route(
    "post",
    "/sessions/{session_id}/facts",
    Scope.OVERSEE,
    response={201: FactOut, **ACTED},
    throttle=ACTING,
    tags=["facts"],
)
def add_fact(request, session_id: str, data: FactIn):
    """An advisor adds a fact. Audited; the steps it touches are marked stale with the reason, and a running search
    uses the new sheet from its next step."""
    tenant, actor = caller(request)
    return Reply(201, services.add_fact(tenant, session_id, actor, data.dict()).to_dict())


@route(
    "patch",
    "/sessions/{session_id}/facts/{fact_id}",
    Scope.OVERSEE,
    response={200: FactOut, **ACTED},
    throttle=ACTING,
    tags=["facts"],
)
def update_fact(request, session_id: str, fact_id: str, data: FactPatch):
    """An advisor corrects a fact (only the fields sent change); as adding one, audited and re-checked."""
    tenant, actor = caller(request)
    return services.update_fact(tenant, session_id, fact_id, actor, data.dict(exclude_unset=True)).to_dict()


@route(
    "delete",
    "/sessions/{session_id}/facts/{fact_id}",
    Scope.OVERSEE,
    response={204: None, **ACTED},
    throttle=ACTING,
    tags=["facts"],
)
def remove_fact(request, session_id: str, fact_id: str):
    tenant, actor = caller(request)
    services.remove_fact(tenant, session_id, fact_id, actor)
    return Reply(204, None)


@api.exception_handler(FactError)
def invalid_fact(request, exc):
    return api.create_response(request, {"detail": exc.errors}, status=422)


@api.exception_handler(CaseFact.DoesNotExist)
def fact_not_found(request, exc):
    return api.create_response(request, {"detail": "No such fact in this session."}, status=404)


@route("get", "/rubrics", Scope.READ, response={200: list[dict], **READ}, tags=["rubrics"])
def list_rubrics(request):
    return [r.to_dict() for r in selectors.rubrics_for(request.tenant)]


@route("post", "/rubrics", Scope.ADMIN, response={201: dict, 403: ErrorOut, 409: ErrorOut, **WRITE}, tags=["rubrics"])
def create_rubric(request, data: RubricIn):
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


@route("get", "/keys", Scope.ADMIN, response={200: list[KeyOut], 403: ErrorOut, **READ}, tags=["keys"])
def list_keys(request):
    """The tenant's keys, newest first, revoked ones included: each with its person (none: a service key), scopes,
    expiry, and when and from which address it was last used. Never a secret."""
    return [key.to_dict() for key in keys.of_tenant(request.tenant)]


@route("post", "/keys", Scope.ADMIN, response={201: KeyIssuedOut, 403: ErrorOut, **WRITE}, tags=["keys"])
def create_key(request, data: KeyIn):
    """A key for a member (`user`: their login; its scopes never more than their role allows, then or later) or,
    without `user`, a service key of the tenant. The answer holds the secret: it is shown this once, and only its
    hash is kept."""
    key, plaintext = keys.issue(request.tenant, data.scopes, data.name, data.user, data.expires_at)
    return Reply(201, {**key.to_dict(), "secret": plaintext})


@route(
    "delete", "/keys/{key_id}", Scope.ADMIN, response={204: None, 403: ErrorOut, 404: ErrorOut, **READ}, tags=["keys"]
)
def revoke_key(request, key_id: Annotated[int, PathParam(ge=1, le=2**63 - 1)]):
    """Revoked at once, on open sockets too (they check their key again at each action). Kept on record."""
    keys.revoke(request.tenant, key_id)
    return Reply(204, None)


@api.exception_handler(keys.KeyRefused)
def key_refused(request, exc):
    return api.create_response(request, {"detail": [{"field": exc.field, "message": exc.message}]}, status=422)


@api.exception_handler(ApiKey.DoesNotExist)
def key_not_found(request, exc):
    return api.create_response(request, {"detail": "No such key in this tenant."}, status=404)


@route("get", "/usage", Scope.READ, response={200: UsageOut, 403: ErrorOut, **READ}, by_alias=True, tags=["usage"])
def get_usage(request, query: Query[UsageIn]):
    """What the tenant spent, from the ledger: cost, calls (refused ones not counted), tokens, sessions and their
    solved share, per day, model, mode, person (`user`) or key, from `from` to `to` (UTC days, both included;
    by default this month so far), with the month's spend against the tenant's monthly cap."""
    start, end = usage.window(query.start, query.end)
    return usage.report(request.tenant, start, end, query.group_by)


@api.exception_handler(usage.BadRange)
def bad_range(request, exc):
    return api.create_response(request, {"detail": [{"field": exc.field, "message": str(exc)}]}, status=422)
