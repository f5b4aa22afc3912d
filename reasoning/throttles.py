"""Rate limits per caller (a person, whichever of their keys or their login they use; a service key; a login's address
and name): sliding windows counted in
Django's cache.

A limit of `count` per `period` seconds holds over every stretch of `period` seconds, not only within fixed windows
(a fixed window let twice the limit through across its boundary). The period is cut into SLOTS slots; a call adds one
to its slot with an atomic cache increment and is allowed when the slots covering the last period (and at most one
slot more) hold no more than `count`, so concurrent calls cannot overshoot it. A refused call is taken back out: a
caller that keeps knocking is let in again once its earlier calls leave the window.

The cache is the profile's (settings.CACHE_URL): the scale-out profile's Redis, shared by every server process, so a
limit is counted once whichever process a request reaches; the embedded profile's process memory.
"""

import threading
import time

from django.conf import settings
from django.core.cache import cache
from ninja.throttling import BaseThrottle

SLOTS = 10  # a window is counted in tenths: it holds over any period, and frees up to a tenth of it late


def clock():
    return time.time()


def caller(principal):
    """Whose allowance a caller spends: the person ("person:<user id>") whichever door they come through (their
    login, any of their keys, the page or a socket), else the service key ("service-key:<key id>"). Not the audit's
    actor: one member with two keys created 60 sessions in 11 s when each key counted apart (issue 32)."""
    if principal is None:
        return None
    if principal.user_id is not None:
        return f"person:{principal.user_id}"
    return f"service-key:{principal.key_id}" if principal.key_id is not None else None


def caller_of(request):
    """The allowance an authenticated request spends (caller()); None before authentication."""
    return caller(getattr(request, "principal", None))


def take(limit, caller):
    """Spend one of the caller's calls under settings.REASONING[limit]: None if allowed, else seconds to wait."""
    rate = settings.REASONING.get(limit)
    if rate is None or caller is None:
        return None
    count, period = rate
    return spend(f"reasoning:rate:{limit}:{caller}", count, period)


def give_back(limit, caller):
    """Return a call take() allowed (a login that succeeded costs nothing)."""
    rate = settings.REASONING.get(limit)
    if rate is None or caller is None:
        return
    _, period = rate
    key = _slot_key(f"reasoning:rate:{limit}:{caller}", period, _slot(clock(), period))
    try:
        if (cache.get(key) or 0) > 0:
            cache.decr(key)
    except ValueError:  # the slot expired meanwhile: nothing left to give back
        pass


def spend(name, count, period):
    """One call against `count` per sliding `period` seconds under a name: None if allowed, else seconds to wait."""
    now = clock()
    slot = _slot(now, period)
    key = _slot_key(name, period, slot)
    timeout = int(period * (SLOTS + 1) / SLOTS) + 2  # a slot counts while it is in the window
    cache.add(key, 0, timeout=timeout)
    try:
        current = cache.incr(key)
    except ValueError:  # the slot's counter expired between add and incr
        cache.set(key, current := 1, timeout=timeout)
    earlier = [_slot_key(name, period, s) for s in range(slot - SLOTS, slot)]
    found = cache.get_many(earlier)
    counts = [int(found.get(k) or 0) for k in earlier]
    total = sum(counts) + current
    if total <= count:
        return None
    try:
        cache.decr(key)  # refused: it does not count
    except ValueError:
        pass
    return _wait(counts + [current - 1], total - count, slot, period, now)


def _wait(counts, excess, slot, period, now):
    """Seconds until the oldest slots holding `excess` calls have left the window."""
    width = period / SLOTS
    left = 0
    for offset, held in enumerate(counts):
        left += held
        if left >= excess:
            return max(0.0, (slot + offset + 1) * width - now)  # slot (slot - SLOTS + offset) leaves then
    return max(0.0, (slot + SLOTS + 1) * width - now)


def _slot(now, period):
    return int(now // (period / SLOTS))


def _slot_key(name, period, slot):
    return f"{name}:{period}:{slot}"


class CallerRate(BaseThrottle):
    """django-ninja's throttle door for take(): a 429 with Retry-After once the caller's allowance is spent."""

    def __init__(self, limit):
        self.limit = limit  # the key in settings.REASONING holding (count, period in seconds), or None for no limit
        self.last = threading.local()  # ninja asks wait() right after allow_request(), on the same thread

    def allow_request(self, request):
        self.last.wait = take(self.limit, caller_of(request))
        return self.last.wait is None

    def wait(self):
        return getattr(self.last, "wait", None)
