"""config/asgi.py: HTTP requests run on a fixed set of request threads, never on the process-wide sync thread."""

import asyncio
import threading

import pytest
from asgiref.sync import SyncToAsync, sync_to_async
from channels.testing import HttpCommunicator
from django.conf import settings
from django.db import connections

from reasoning import selectors, services
from reasoning.schemas import SessionIn


@pytest.mark.django_db(transaction=True)
async def test_requests_run_on_a_bounded_set_of_threads_of_their_own(alice, monkeypatch):
    from config.asgi import application, request_threads

    data = SessionIn(problem_text="Should the family sell the CHF 5m stake?", mode="tot")
    session = await sync_to_async(services.create_session)(alice.tenant, data, triggered_by="tests", submit=False)
    shared = await sync_to_async(threading.current_thread)()  # the thread every thread-sensitive call shares
    seen, read = set(), selectors.get_session

    def get_session(tenant, session_id):
        seen.add(threading.current_thread())
        return read(tenant, session_id)

    monkeypatch.setattr(selectors, "get_session", get_session)
    headers = [(b"host", b"testserver"), (b"authorization", f"Bearer {alice.key}".encode())]

    async def one():
        communicator = HttpCommunicator(application, "GET", f"/api/sessions/{session.id}/tree", headers=headers)
        status = (await communicator.get_response(timeout=30))["status"]
        await communicator.wait(timeout=30)
        return status

    try:
        statuses = await asyncio.gather(*(one() for _ in range(3 * settings.REQUEST_THREADS)))
    finally:
        for executor in request_threads.idle[asyncio.get_running_loop()]._queue:
            await asyncio.wrap_future(executor.submit(connections.close_all))
    assert statuses == [200] * (3 * settings.REQUEST_THREADS)
    assert shared not in seen and len(seen) <= settings.REQUEST_THREADS
    assert all(t.name.startswith("request-") for t in seen)
    assert SyncToAsync.single_thread_executor  # (the shared executor is still there for the engine and the sockets)


@pytest.mark.django_db(transaction=True)
async def test_a_request_runs_its_middleware_and_view_in_one_pass_without_going_back_to_the_loop(alice, monkeypatch):
    """Django's async chain would hand a sync stack back to the event loop and out again around the view."""
    from asgiref import sync

    from config.asgi import application, request_threads

    returns_to_loop, enter = [], sync.AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        returns_to_loop.append(getattr(self.awaitable, "__qualname__", self.awaitable))
        return enter(self, *args, **kwargs)

    monkeypatch.setattr(sync.AsyncToSync, "__call__", counted)
    headers = [(b"host", b"testserver"), (b"authorization", f"Bearer {alice.key}".encode())]
    communicator = HttpCommunicator(application, "GET", "/api/sessions", headers=headers)
    try:
        assert (await communicator.get_response(timeout=30))["status"] == 200
        await communicator.wait(timeout=30)
    finally:
        for executor in request_threads.idle[asyncio.get_running_loop()]._queue:
            await asyncio.wrap_future(executor.submit(connections.close_all))
    assert returns_to_loop == []
