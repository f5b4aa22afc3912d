"""The audit log's rows (OverseerAction): an action applied at once, published to the session's watchers as it is
written; a command a run applies later (services.command) is saved pending and settled by control.record_outcome."""

from django.utils import timezone

from . import events
from .models import OverseerAction


def row(session, node, actor, action, payload=None, before=None, **fields):
    return OverseerAction.objects.create(
        tenant_id=session.tenant_id,
        session=session,
        node=node,
        actor=actor,
        action=action,
        payload=payload or {},
        before=before or {},
        **fields,
    )


def audit(session, node, actor, action, payload=None, before=None, after=None, detail=""):
    applied = {"after": after or {}, "detail": detail, "applied_at": timezone.now()}
    written = row(session, node, actor, action, payload, before, **applied)
    events.publish(session.id, [events.action_event("action.created", written)])
    return written
