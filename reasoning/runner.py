"""Where sessions run: as asyncio tasks on the ASGI server's loop (default), or on Celery workers."""

import asyncio
import collections
import contextvars
import itertools
import logging
import threading

from asgiref.sync import sync_to_async
from django.conf import settings

from . import control, events, states
from .engine import REQUEUED, run_session

log = logging.getLogger(__name__)


class InProcessRunner:
    """Runs sessions as tasks on one event loop, at most MAX_CONCURRENT_SESSIONS at a time, fairly across tenants.

    A submitted session waits in its tenant's queue. When a slot frees, the next session comes from the tenant
    with the fewest runs here, and among equals the one served longest ago (round-robin): one tenant's burst
    cannot make another tenant's session wait behind all of it.
    """

    def __init__(self, limit):
        self.limit = limit
        self.loop = None
        self.tasks = set()
        self.sessions = set()  # ids submitted and not yet ended here: a second submit asks for another turn
        self.again = set()
        self.waiting = {}  # tenant id -> the ids waiting for a slot, oldest first
        self.runs = {}  # session id -> tenant id, for the runs holding a slot on this loop
        self.served = {}  # tenant id -> the turn its last run started at: the round-robin's memory
        self.turns = itertools.count()
        self.stopping = False

    def bind(self, loop):
        if loop is not self.loop:
            # A new loop has all its slots free; sessions still waiting move to it.
            self.loop, self.runs, self.stopping = loop, {}, False
            events.bind_loop(loop)
            if self.waiting:
                loop.call_soon_threadsafe(self._fill_slots)

    def submit(self, session_id):
        """Schedule a session; callable from the loop's thread or any other thread."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            self.bind(running)
        elif self.loop is None or self.loop.is_closed():
            self.bind(_background_loop())
        if running is self.loop:
            self._start(session_id)
        else:
            self.loop.call_soon_threadsafe(self._start, session_id, context=contextvars.Context())

    def holds(self, session_id):
        """The session was submitted here and has not ended: it runs or waits for a slot on this loop."""
        return str(session_id) in self.sessions

    def _start(self, session_id):
        if str(session_id) in self.sessions:
            self.again.add(str(session_id))  # already here: its run looks now, and one more turn follows it
            control.wake(session_id)
            return
        self.sessions.add(str(session_id))
        self._spawn(self._enqueue(session_id), f"enqueue-{session_id}")

    async def _enqueue(self, session_id):
        """Queue the session behind its tenant's others (one query for the tenant), then fill the free slots."""
        try:
            tenant_id = await sync_to_async(states.tenant_of)(session_id)
        except Exception:  # the run itself will meet the database's trouble and record it
            log.exception("the runner could not read the tenant of session %s", session_id)
            tenant_id = None
        self.waiting.setdefault(tenant_id, collections.deque()).append(session_id)
        self._fill_slots()

    def _fill_slots(self):
        while self.waiting and len(self.runs) < self.limit and not self.stopping:
            tenant_id = min(self.waiting, key=self._precedence)
            queue = self.waiting[tenant_id]
            session_id = queue.popleft()
            if not queue:
                del self.waiting[tenant_id]
            self.served[tenant_id] = next(self.turns)
            self.runs[str(session_id)] = tenant_id
            self._spawn(self._run(session_id, self.runs), f"session-{session_id}")

    def _precedence(self, tenant_id):
        running = sum(1 for t in self.runs.values() if t == tenant_id)
        return running, self.served.get(tenant_id, -1)

    def _spawn(self, coro, name):
        # A fresh context: a session must not inherit the submitting request's (asgiref's executor among it).
        task = self.loop.create_task(coro, name=name, context=contextvars.Context())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, session_id, runs):
        try:
            # A command that arrived as a turn ended asks for another turn at once.
            while await run_session(session_id) == REQUEUED or self._wanted_again(session_id):
                pass
        except Exception:  # run_session keeps a session's own failures; this is the engine failing around it
            log.exception("the runner could not run session %s", session_id)
        finally:
            self.sessions.discard(str(session_id))
            runs.pop(str(session_id), None)
            if runs is self.runs:  # a slot of this loop freed (a run of a loop left behind frees none here)
                self._fill_slots()

    def _wanted_again(self, session_id):
        wanted = str(session_id) in self.again
        self.again.discard(str(session_id))
        return wanted

    async def shutdown(self, grace_s):
        """Stop every run here: no new model call starts, calls in flight get grace_s to finish, then are cut.

        Each session ends interrupted with its tree and ledger written, to be resumed when a server starts;
        sessions still waiting for a slot stay queued in the database, for the next server to run.
        """
        self.stopping = True
        for queue in self.waiting.values():
            self.sessions.difference_update(str(session_id) for session_id in queue)
        self.waiting.clear()
        control.stop_all("interrupted")
        tasks = list(self.tasks)
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=grace_s)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=grace_s)

    async def drain(self):
        """Wait for every submitted session to end (tests and shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


RUN_SESSION_TASK = "reasoning.run_session"  # tasks.run_session_task's name: sent by name, the runner needs no tasks


class CeleryRunner:
    """Scale-out: a Celery worker runs the session (TASK_RUNNER=celery)."""

    def submit(self, session_id):
        from celery import current_app  # celery is the scale-out extra: loaded only where it dispatches

        control.wake(session_id)  # a run of it in this process (if any) looks now
        # By name, not by importing the task: tasks imports recovery, which imports this module.
        return current_app.send_task(RUN_SESSION_TASK, args=[str(session_id)])


_runner = None
_lock = threading.Lock()


def get_runner():
    global _runner
    with _lock:
        if _runner is None:
            engine = settings.REASONING
            _runner = (
                CeleryRunner() if engine["RUNNER"] == "celery" else InProcessRunner(engine["MAX_CONCURRENT_SESSIONS"])
            )
        return _runner


def bind_loop():
    """Called on the server's loop (from asgi.py) so sessions submitted from sync views run there."""
    runner = get_runner()
    if isinstance(runner, InProcessRunner):
        runner.bind(asyncio.get_running_loop())


def _background_loop():
    """A loop on a daemon thread, for processes with no server loop (e.g. a shell)."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="reasoning-runner", daemon=True).start()
    return loop
