"""Writes: creating sessions and (later) overseer actions. Each validates, saves, then hands off."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from . import events, selectors
from .models import Mode, OverseerAction, ReasoningNode, ReasoningSession, Status
from .strategies import available_modes, get_strategy
from .strategies.auto import pick_mode


class InvalidInput(Exception):
    """Input that names its bad fields: [{"field": ..., "message": ...}]."""

    def __init__(self, errors):
        super().__init__("; ".join(f"{e['field']}: {e['message']}" for e in errors))
        self.errors = errors


def resolve_mode(requested, problem_kind):
    """(mode, reason) for a requested mode; InvalidInput for a mode that is not built yet."""
    if requested == Mode.AUTO:
        return pick_mode(problem_kind)
    if requested not in available_modes():
        raise InvalidInput(
            [
                {
                    "field": "mode",
                    "message": f"mode '{requested}' is not available yet; "
                    f"available: auto, {', '.join(sorted(available_modes()))}",
                }
            ]
        )
    return requested, f"requested: {requested}"


def validate_params(mode, params):
    """The strategy's params with defaults filled in; unknown keys and out-of-range values are refused."""
    try:
        return get_strategy(mode).Params.model_validate(params or {}).model_dump()
    except ValidationError as error:
        raise InvalidInput(
            [{"field": ".".join(["params", *(str(p) for p in e["loc"])]), "message": e["msg"]} for e in error.errors()]
        ) from None


def create_session(tenant, data, triggered_by="", submit=True):
    """Create a queued session from a validated SessionIn; submit it to the runner once committed."""
    kind = data.problem_kind or "general"
    if selectors.rubric_for(tenant, kind) is None:
        raise InvalidInput([{"field": "problem_kind", "message": f"no rubric for problem kind '{kind}'"}])
    mode, reason = resolve_mode(data.mode, kind)
    params = validate_params(mode, data.params)
    engine = settings.REASONING
    with transaction.atomic():
        session = ReasoningSession.objects.create(
            tenant=tenant,
            problem_kind=kind,
            problem_text=data.problem_text,
            requested_mode=data.mode,
            mode=mode,
            mode_reason=reason,
            model_primary=data.model_primary or engine["MODEL_PRIMARY"],
            model_fallback=data.model_fallback or engine["MODEL_FALLBACK"],
            budget_usd=data.budget_usd if data.budget_usd is not None else engine["DEFAULT_BUDGET_USD"],
            params=params,
            triggered_by=triggered_by,
        )
        if submit:
            transaction.on_commit(lambda: submit_to_runner(session.id))
    return session


def submit_to_runner(session_id):
    from .runner import get_runner

    get_runner().submit(session_id)


def transition(session_id, to, sources=None, **fields):
    """Move a session to a status from one of the sources (by default, every status the state machine allows),
    as one atomic claim; publish the change. True if it moved."""
    allowed = {source for source, targets in ReasoningSession.TRANSITIONS.items() if to in targets}
    sources = allowed if sources is None else set(sources) & allowed
    with transaction.atomic():
        moved = ReasoningSession.objects.filter(pk=session_id, status__in=sources).update(status=to, **fields)
        if moved:
            session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
            events.publish(session_id, [events.session_updated(session)])
    return bool(moved)


def cancel_session(tenant, session_id, actor):
    """Cancel a session that has not finished; the strategy stops at its next step boundary."""
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        if not transition(session.id, Status.CANCELLED, finished_at=timezone.now(), termination_reason="cancelled"):
            raise Conflict(f"a {session.status} session cannot be cancelled")
        _audit(session, None, actor, "cancel")
    return selectors.get_session(tenant, session_id)


def set_pruned(tenant, node_id, actor, pruned):
    """Prune or unprune a node by hand; a running strategy sees it at its next step boundary."""
    node = selectors.get_node(tenant, node_id)
    with transaction.atomic():
        ReasoningNode.objects.filter(pk=node.pk).update(pruned=pruned, pruned_by="overseer" if pruned else "")
        node.refresh_from_db()
        _audit(node.session, node, actor, "prune" if pruned else "unprune")
        events.publish(node.session_id, [events.node_event("node.updated", node)])
    return node


def _audit(session, node, actor, action, **payload):
    OverseerAction.objects.create(
        tenant_id=session.tenant_id, session=session, node=node, actor=actor, action=action, payload=payload
    )


class Conflict(Exception):
    """The action does not fit the session's current state."""


def interrupt_running(reason="server_restarted"):
    """Mark sessions left running by a stopped process as interrupted (resumable); returns how many."""
    running = ReasoningSession.objects.filter(status=Status.RUNNING).values_list("id", flat=True)
    return sum(
        transition(session_id, Status.INTERRUPTED, [Status.RUNNING], termination_reason=reason)
        for session_id in list(running)
    )
