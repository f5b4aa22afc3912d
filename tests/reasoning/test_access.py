"""The one resolver of "who is this, and which tenant" behind the API, the socket, the pages and the admin."""

import dataclasses

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from reasoning import access
from reasoning.models import ROLE_SCOPES, ApiKey, Membership, Role, Scope, sha256

pytestmark = pytest.mark.django_db


def test_a_member_is_its_tenant_by_name(alice):
    principal = access.for_user(alice.user)
    assert principal == access.Principal(
        tenant=alice.tenant, actor="user:alice-advisor", scopes=ROLE_SCOPES[Role.ADVISOR], user_id=alice.user.pk
    )
    assert not principal.is_admin and principal.can_act


def test_the_principal_is_frozen(alice):
    with pytest.raises(dataclasses.FrozenInstanceError):
        access.for_user(alice.user).scopes = frozenset(Scope.values)


def test_an_admin_member_is_admin(alice):
    Membership.objects.filter(user=alice.user).update(role=Role.ADMIN)
    principal = access.for_user(alice.user)
    assert principal.is_admin and principal.can_act


def test_a_viewer_watches_but_cannot_act(alice):
    Membership.objects.filter(user=alice.user).update(role=Role.VIEWER)
    principal = access.for_user(alice.user)
    assert principal.tenant == alice.tenant and not principal.can_act and not principal.is_admin


def test_a_user_without_membership_anonymous_or_inactive_is_nobody(alice):
    loner = get_user_model().objects.create_user(username="loner", password="pw-for-tests")
    assert access.for_user(loner) is None
    assert access.for_user(AnonymousUser()) is None
    assert access.for_user(None) is None
    alice.user.is_active = False
    assert access.for_user(alice.user) is None


def test_a_key_is_its_tenant_and_its_use_is_recorded(alice):
    key = ApiKey.objects.get(tenant=alice.tenant)
    assert key.last_used_at is None
    principal = access.for_key(alice.key)
    assert principal == access.Principal(
        tenant=alice.tenant, actor=f"key:{alice.key[:10]}", scopes=frozenset(ApiKey.SERVICE_SCOPES), key_id=key.pk
    )
    assert ApiKey.objects.get(pk=key.pk).last_used_at is not None


def test_an_admin_key_is_admin(alice):
    _, plaintext = ApiKey.issue(alice.tenant, scopes=Scope.values)
    assert access.for_key(plaintext).is_admin


def test_a_revoked_key_is_refused_and_not_marked_used(alice):
    key = ApiKey.objects.get(tenant=alice.tenant)
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    assert access.for_key(alice.key) is None
    assert ApiKey.objects.get(pk=key.pk).last_used_at is None


@pytest.mark.parametrize(
    "garbage",
    ["", "rk_nope", "not-a-key", "rk_" + "a" * 300, "x" * 10_000, None, 42, b"rk_bytes"],
)
def test_garbage_and_over_long_keys_are_nobody(alice, garbage):
    assert access.for_key(garbage) is None


def test_an_over_long_key_is_refused_even_when_its_hash_matches(alice):
    long_key = "rk_" + "b" * 300
    ApiKey.objects.create(tenant=alice.tenant, key_hash=sha256(long_key), hint="rk_bbbbbbb")
    assert access.for_key(long_key) is None


def test_attach_gives_the_request_what_its_code_reads(alice, rf):
    request = rf.get("/")
    principal = access.attach(request, access.for_key(alice.key))
    assert request.principal is principal
    assert (request.tenant, request.actor, request.is_admin, request.can_act) == (
        alice.tenant,
        f"key:{alice.key[:10]}",
        False,
        True,
    )
    bare = rf.get("/")
    assert access.attach(bare, None) is None and not hasattr(bare, "principal")
