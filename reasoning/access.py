"""Who is calling, and for which tenant: the one answer the API, the socket, the pages and the admin all ask for.

A caller holds scopes (models.Scope): a member those of their role, a key those it was given, and a member's key
only those both allow, worked out again at every use, so a demotion or a removal takes effect at the next call."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from . import rls, selectors
from .models import ROLE_SCOPES, ApiKey, Membership, Scope, Tenant

STAMP_EVERY = timedelta(minutes=1)  # how fresh an API key's last_used_at is kept


@dataclass(frozen=True)
class Principal:
    """A caller resolved to its tenant: a member of it, or one of its API keys."""

    tenant: Tenant
    # What the audit log records: "user:<username>", "key:<hint>", or for a member's key "user:<username>/key:<hint>"
    # (the person and the key; no spaces, as it also keys the caller's rate limits).
    actor: str
    scopes: frozenset
    user_id: int | None = None  # the person, for a member or a member's key
    key_id: int | None = None  # the key, when the call came with one
    key_expires_at: datetime | None = None  # when that key stops working, if it does (reasoning/tree_memo.py)

    @property
    def is_admin(self):
        """May also write rubrics and keys."""
        return Scope.ADMIN in self.scopes

    @property
    def can_act(self):
        """May steer sessions; a viewer (or a read key) only watches."""
        return Scope.OVERSEE in self.scopes

    def may(self, scope):
        return scope in self.scopes


def for_user(user):
    """A logged-in, active member's principal; None for anonymous users and users without a membership."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    membership = selectors.membership_for(user)
    if membership is None:
        return None
    return Principal(
        tenant=membership.tenant, actor=f"user:{user.username}", scopes=membership.scopes, user_id=user.pk
    )


def for_key(plaintext, address=None):
    """A live API key's principal, its use (and the address it came from) recorded; None for an unknown, revoked,
    expired or malformed key, and for a member's key whose member left the tenant or was deactivated."""
    with rls.all_tenants():  # the key names its tenant: until it is found, no tenant is known
        return _principal(ApiKey.find(plaintext) if isinstance(plaintext, str) else None, address)


def _principal(key, address):
    if key is None:
        return None
    scopes, actor = frozenset(key.scopes), f"key:{key.hint}"
    if key.user_id is not None:
        membership = _membership_of(key)
        if membership is None:
            return None
        scopes, actor = scopes & ROLE_SCOPES[membership.role], f"user:{key.user.username}/{actor}"
    if not stamp(key, address):
        return None
    return Principal(
        tenant=key.tenant,
        actor=actor,
        scopes=scopes,
        user_id=key.user_id,
        key_id=key.pk,
        key_expires_at=key.expires_at,
    )


def _membership_of(key):
    """The key's member's membership in the key's tenant, or None if they are gone from it or deactivated."""
    user = key.user
    try:
        membership = user.membership
    except Membership.DoesNotExist:
        return None
    return membership if user.is_active and membership.tenant_id == key.tenant_id else None


def stamp(key, address):
    """Record the key's use; False if it was revoked since the lookup (it is refused, not used). At most once a
    minute from one address: a write on every read put all of a key's readers behind one row lock (and SQLite's
    one writer)."""
    now = timezone.now()
    if key.last_used_at is not None and now - key.last_used_at < STAMP_EVERY and address in (None, key.last_used_ip):
        return True
    fields = {"last_used_at": now, "last_used_ip": address} if address else {"last_used_at": now}
    return bool(ApiKey.objects.filter(pk=key.pk, revoked_at=None).update(**fields))


def attach(request, principal):
    """Hang the principal on the request, with the tenant, actor, is_admin and can_act that code reads; returns it.
    The rest of the request works for that tenant behind the database's wall too (reasoning/rls.py)."""
    if principal is not None:
        rls.use_tenant(principal.tenant.pk)
        request.principal = principal
        request.tenant, request.actor = principal.tenant, principal.actor
        request.is_admin, request.can_act = principal.is_admin, principal.can_act
    return principal


def address_of(request):
    """The client's address as the server saw it (behind a proxy, the proxy sets REMOTE_ADDR right or not at all)."""
    return request.META.get("REMOTE_ADDR") or None
