"""What the gateway knows about each model across every session of the process: which ones rest after failing, and
how many requests each may have in flight.

litellm's Router has cooldowns and `max_parallel_requests`, but a Router here names one session's primary and
fallback, and each attempt must be reserved at its own model's price and kept as its own ledger row: so the rest and
the limit are kept per model, for the whole process, in this small registry, and the gateway drives the attempts.
"""

import asyncio
import contextlib
import time
import weakref


class ModelHealth:
    """Consecutive failures per model; after `after` of them the model rests `seconds` (its next success resets it)."""

    def __init__(self, clock=time.monotonic):
        self.clock, self.failures, self.until = clock, {}, {}

    def resting(self, model):
        """Seconds the model still rests (0: it may be tried)."""
        return max(0.0, self.until.get(model, 0.0) - self.clock())

    def failed(self, model, after, seconds):
        self.failures[model] = self.failures.get(model, 0) + 1
        if after and self.failures[model] >= after:
            self.until[model] = self.clock() + seconds
            self.failures[model] = 0
            return True  # it starts resting now
        return False

    def succeeded(self, model):
        self.failures.pop(model, None)
        self.until.pop(model, None)

    def reset(self):
        self.failures.clear()
        self.until.clear()


class ParallelLimits:
    """At most `limit` requests in flight per model in one event loop; the rest wait their turn (outside their
    timeout, which covers the request itself)."""

    def __init__(self):
        self.by_loop = weakref.WeakKeyDictionary()

    def slot(self, model, limit):
        if not limit:
            return contextlib.nullcontext()
        semaphores = self.by_loop.setdefault(asyncio.get_running_loop(), {})
        if model not in semaphores or semaphores[model][1] != limit:
            semaphores[model] = (asyncio.Semaphore(limit), limit)
        return semaphores[model][0]


HEALTH = ModelHealth()
LIMITS = ParallelLimits()
