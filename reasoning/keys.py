"""Issuing and revoking API keys: the one door the API, the admin and `create_api_key` go through, so a key is
checked alike wherever it is made. A member's key is refused scopes their role lacks; at each use access.for_key
narrows it again to the role of that moment."""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from .models import ROLE_SCOPES, ApiKey, Membership, Scope

log = logging.getLogger(__name__)


class KeyRefused(Exception):
    """A key that cannot be issued as asked: `field` names what is wrong."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field, self.message = field, message


def member_of(tenant, username):
    """The tenant's active member by login name; KeyRefused (field `user`) otherwise."""
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    membership = Membership.objects.filter(user=user, tenant=tenant).first() if user else None
    if membership is None:
        raise KeyRefused("user", f"'{username}' is not an active member of this tenant")
    return membership


def check_scopes(membership, scopes):
    """KeyRefused (field `scopes`) if the member's role does not allow every scope asked for."""
    beyond = sorted(set(scopes) - ROLE_SCOPES[membership.role])
    if beyond:
        raise KeyRefused(
            "scopes", f"a {membership.role}'s key cannot hold {', '.join(beyond)}; allowed: {allowed(membership)}"
        )


def check_service_scopes(scopes):
    """KeyRefused (field `scopes`) for a service key asked to sign off answers: four eyes are two people's."""
    if Scope.REVIEW in scopes:
        raise KeyRefused("scopes", "a service key cannot hold review: a sign-off is a person's (give the key a user)")


def allowed(membership):
    return ", ".join(sorted(ROLE_SCOPES[membership.role]))


def issue(tenant, scopes, name="", username=None, expires_at=None):
    """(key, plaintext) for a member (by login name) or, without one, a service key of the tenant."""
    user = None
    if username:
        membership = member_of(tenant, username)
        check_scopes(membership, scopes)
        user = membership.user
    else:
        check_service_scopes(scopes)
    if expires_at is not None and expires_at <= timezone.now():
        raise KeyRefused("expires_at", "must be a time in the future")
    return ApiKey.issue(tenant, name=name, scopes=scopes, user=user, expires_at=expires_at)


def revoke(tenant, key_id):
    """Revoke the tenant's key (ApiKey.DoesNotExist for another tenant's or none); revoking twice keeps the first
    time. Returns the key."""
    key = ApiKey.objects.select_related("user").get(tenant=tenant, pk=key_id)
    if key.revoked_at is None:
        ApiKey.objects.filter(pk=key.pk, revoked_at=None).update(revoked_at=timezone.now())
        key.refresh_from_db()
        rights_changed([key.pk])
    return key


def group_name(key_id):
    """The channel group of a key's open sockets (explorer/consumers.py)."""
    return f"key.{key_id}"


def rights_changed(key_ids):
    """Once the change commits, every open socket of these keys checks its rights again, on whichever server process
    holds it: a revoked key's sockets close at once, not at their next action or event."""

    def tell():
        layer = get_channel_layer()
        for key_id in key_ids:
            try:
                async_to_sync(layer.group_send)(group_name(key_id), {"type": "rights.changed"})
            except Exception:  # the key is refused anyway; its watchers are closed at their next check
                log.warning("could not tell the sockets of key %s", key_id, exc_info=True)

    if get_channel_layer() is not None:
        transaction.on_commit(tell)


def of_tenant(tenant):
    return ApiKey.objects.filter(tenant=tenant).select_related("user").order_by("-created_at", "-id")
