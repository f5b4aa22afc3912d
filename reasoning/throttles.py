"""Rate limits per caller (an API key, or a logged-in user): fixed windows counted in Django's cache.

The count is an atomic cache increment, so concurrent requests cannot overshoot it. The default cache
(LocMemCache) counts per process: with several server processes, point CACHES at a shared cache (Redis,
memcached) for a limit to hold across them.
"""

import threading
import time

from django.conf import settings
from django.core.cache import cache
from ninja.throttling import BaseThrottle


def clock():
    return time.time()


def caller_of(request):
    """Whose allowance a request spends: the authenticated actor, "key:<hint>" for an API key or "user:<name>"."""
    return getattr(request, "actor", None) or None


def take(limit, caller):
    """Spend one of the caller's calls under settings.REASONING[limit]: None if allowed, else seconds to wait."""
    rate = settings.REASONING.get(limit)
    if rate is None or caller is None:
        return None
    count, period = rate
    now = clock()
    window = int(now // period)
    key = f"reasoning:rate:{limit}:{caller}:{period}:{window}"
    cache.add(key, 0, timeout=period + 1)
    try:
        used = cache.incr(key)
    except ValueError:  # the window's counter expired between add and incr
        cache.set(key, used := 1, timeout=period + 1)
    return None if used <= count else (window + 1) * period - now


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
