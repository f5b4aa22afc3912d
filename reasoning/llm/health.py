"""What the gateway knows about each model across every session of the process: which ones rest after failing, and
how many requests each may have in flight.

litellm's Router has cooldowns and `max_parallel_requests`, but a Router here names one session's primary and
fallback, and each attempt must be reserved at its own model's price and kept as its own ledger row: so the rest and
the limit are kept per model, for the whole process, in this small registry, and the gateway drives the attempts.
"""

import asyncio
import collections
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


class FairSlots:
    """At most `limit` requests in flight; those waiting are served by session in turn (round robin), each session's
    own in the order they came. A session that starts while another waits with a whole level of calls waits for one
    call of each session ahead of it, not for their levels."""

    def __init__(self, limit):
        self.limit, self.busy = limit, 0
        self.waiting = {}  # session -> its waiting futures; the dict's order is the turn

    async def acquire(self, who):
        if self.busy < self.limit and not self.waiting:
            self.busy += 1
            return
        future = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(who, collections.deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # handed the slot as it was cancelled: the next one takes it
            else:
                queue = self.waiting.get(who)
                if queue is not None and future in queue:
                    queue.remove(future)
                    if not queue:
                        del self.waiting[who]
            raise

    def release(self):
        self.busy -= 1
        while self.busy < self.limit and self.waiting:
            who = next(iter(self.waiting))
            queue = self.waiting.pop(who)
            future = queue.popleft()
            if queue:
                self.waiting[who] = queue  # to the back of the turn
            if future.cancelled():
                continue
            self.busy += 1
            future.set_result(None)

    @contextlib.asynccontextmanager
    async def held(self, who):
        await self.acquire(who)
        try:
            yield
        finally:
            self.release()


class ParallelLimits:
    """At most `limit` requests in flight per model in one event loop; the rest wait their turn (outside their
    timeout, which covers the request itself), shared between sessions in turn (FairSlots)."""

    def __init__(self):
        self.by_loop = weakref.WeakKeyDictionary()

    def slot(self, model, limit, who=None):
        if not limit:
            return contextlib.nullcontext()
        slots = self.by_loop.setdefault(asyncio.get_running_loop(), {})
        if model not in slots or slots[model].limit != limit:
            slots[model] = FairSlots(limit)
        return slots[model].held(who)


HEALTH = ModelHealth()
LIMITS = ParallelLimits()
