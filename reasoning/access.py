"""Who is calling, and for which tenant: the one answer the API, the socket, the pages and the admin all ask for."""

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from . import rls, selectors
from .models import ApiKey, Tenant

STAMP_EVERY = timedelta(minutes=1)  # how fresh an API key's last_used_at is kept


@dataclass(frozen=True)
class Principal:
    """A caller resolved to its tenant: a member of it, or one of its API keys."""

    tenant: Tenant
    actor: str  # what the audit log records: "user:<username>" or "key:<hint>"
    is_admin: bool  # may also write rubrics and keys
    can_act: bool  # may run and steer sessions; a viewer only watches


def for_user(user):
    """A logged-in, active member's principal; None for anonymous users and users without a membership."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    membership = selectors.membership_for(user)
    if membership is None:
        return None
    return Principal(
        tenant=membership.tenant,
        actor=f"user:{user.username}",
        is_admin=membership.is_admin,
        can_act=membership.can_act,
    )


def for_key(plaintext):
    """A live API key's principal, its use recorded; None for an unknown, revoked or malformed key."""
    with rls.all_tenants():  # the key names its tenant: until it is found, no tenant is known
        return _stamped(ApiKey.find(plaintext) if isinstance(plaintext, str) else None)


def _stamped(key):
    if key is None:
        return None
    # Stamped only while still unrevoked: a key revoked since the lookup is refused, not used. At most once a
    # minute: a write on every read put all of a key's readers behind one row lock (and SQLite's one writer).
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at >= STAMP_EVERY:
        if not ApiKey.objects.filter(pk=key.pk, revoked_at=None).update(last_used_at=now):
            return None
    return Principal(tenant=key.tenant, actor=f"key:{key.hint}", is_admin=key.is_admin, can_act=True)


def attach(request, principal):
    """Hang the principal on the request, with the tenant, actor, is_admin and can_act that code reads; returns it.
    The rest of the request works for that tenant behind the database's wall too (reasoning/rls.py)."""
    if principal is not None:
        rls.use_tenant(principal.tenant.pk)
        request.principal = principal
        request.tenant, request.actor = principal.tenant, principal.actor
        request.is_admin, request.can_act = principal.is_admin, principal.can_act
    return principal
