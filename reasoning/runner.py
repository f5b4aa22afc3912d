"""Where sessions run: as asyncio tasks on the ASGI server's loop (default), or on Celery workers."""

import asyncio
import contextvars
import logging
import threading

from django.conf import settings

from . import events

log = logging.getLogger(__name__)


class InProcessRunner:
    """Runs each session as a task on one event loop, at most MAX_CONCURRENT_SESSIONS at a time."""

    def __init__(self, limit):
        self.limit = limit
        self.loop = None
        self.tasks = set()
        self._semaphore = None

    def bind(self, loop):
        if loop is not self.loop:
            self.loop, self._semaphore = loop, None
            events.bind_loop(loop)

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

    def _start(self, session_id):
        # A fresh context: the session must not inherit the submitting request's (asgiref's executor among it).
        task = self.loop.create_task(self._run(session_id), name=f"session-{session_id}", context=contextvars.Context())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, session_id):
        from .engine import run_session

        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.limit)
        async with self._semaphore:
            try:
                await run_session(session_id)
            except Exception:  # run_session keeps a session's own failures; this is the engine failing around it
                log.exception("the runner could not run session %s", session_id)

    async def drain(self):
        """Wait for every submitted session to end (tests and shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


class CeleryRunner:
    """Scale-out: a Celery worker runs the session (TASK_RUNNER=celery)."""

    def submit(self, session_id):
        from .tasks import run_session_task

        return run_session_task.delay(str(session_id))


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
