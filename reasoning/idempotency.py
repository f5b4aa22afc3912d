"""Idempotency-Key on the requests that make a session (POST /api/sessions, fork): a retry returns the same session.

A client that lost the answer (a timeout, a 503 while a dependency was down) sends the same request with the same
key and gets the session the first one made (200, same id) instead of a second session. The key and the session
are written in one transaction, so two concurrent requests with one key make one session. A key is honoured for
REASONING_IDEMPOTENCY_TTL_S (a day); the tenant's older keys are deleted as it sends new ones, so they never pile up.
"""

import hashlib
import re
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from .models import IdempotencyKey

HEADER = "Idempotency-Key"
META = "HTTP_IDEMPOTENCY_KEY"
# Visible ASCII, no spaces: a UUID, a ULID, "order-42/retry"...
VALID = re.compile(rf"[\x21-\x7e]{{1,{IdempotencyKey.MAX_LENGTH}}}")


class InvalidKey(Exception):
    """The header is present but no key (empty, too long, spaces or other characters), or reused for another
    request. The API answers 422 naming the header."""


def key_of(request):
    """The request's key, None when it sends none; InvalidKey when the header holds no valid key."""
    key = request.META.get(META)
    if key is None:
        return None
    if not VALID.fullmatch(key):
        raise InvalidKey(
            f"must be 1 to {IdempotencyKey.MAX_LENGTH} visible ASCII characters without spaces (a UUID, say)"
        )
    return key


def fingerprint(request):
    digest = hashlib.sha256()
    for part in (request.method.encode(), request.path.encode(), request.body):
        digest.update(part + b"\0")
    return digest.hexdigest()


def make_once(request, tenant, make):
    """(session, made) for a request that makes a session: `make()` runs unless this tenant already used the
    request's key, in which case the session that key made is returned (made=False)."""
    key = key_of(request)
    if key is None:
        return make(), True
    print_ = fingerprint(request)
    expired = timezone.now() - timedelta(seconds=settings.REASONING["IDEMPOTENCY_TTL_S"])
    IdempotencyKey.objects.filter(tenant=tenant, created_at__lt=expired).delete()
    earlier = _earlier(tenant, key, print_)
    if earlier is not None:
        return earlier, False
    try:
        with transaction.atomic():
            session = make()
            IdempotencyKey.objects.create(tenant=tenant, key=key, fingerprint=print_, session=session)
    except IntegrityError:  # a concurrent request with the same key made it first: its session is the answer
        earlier = _earlier(tenant, key, print_)
        if earlier is None:
            raise
        return earlier, False
    return session, True


def _earlier(tenant, key, print_):
    row = IdempotencyKey.objects.filter(tenant=tenant, key=key).select_related("session").first()
    if row is None:
        return None
    if row.fingerprint != print_:
        raise InvalidKey("was already used for another request; send a new key for a new request")
    return row.session
