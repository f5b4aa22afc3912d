"""HTTP through Django, websockets through Channels; the in-process runner binds to this server's loop."""

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup(set_prefix=False)

from asgiref.sync import ThreadSensitiveContext, sync_to_async  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402


class OnePassASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware and the view run as one sync call in the request's thread.

    Our middleware and views are all sync. Django's async chain would run them in the thread, come back to the event
    loop for its async core (URL resolution, the view's adapter), and go to the thread again for the view: two more
    hand-overs between threads for every request, about 15% of a tree read's cost under 200 readers. Built
    as a sync chain instead, it is adapted once at the top, exactly as Django adapts a sync-only stack's top.
    """

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


django_asgi_app = OnePassASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

import reasoning.llm.gateway  # noqa: E402,F401  litellm takes seconds to import: pay it at startup, not in a session
from config import serving  # noqa: E402
from explorer.middleware import TokenOrOriginValidator  # noqa: E402
from explorer.routing import websocket_urlpatterns  # noqa: E402
from reasoning.middleware import AsgiBodyLimit  # noqa: E402
from reasoning.recovery import install_server_hooks  # noqa: E402
from reasoning.runner import bind_loop  # noqa: E402
from reasoning.tree_memo import answer as not_modified_from_memory  # noqa: E402

install_server_hooks()  # under Daphne: resume stranded sessions at start, checkpoint running ones on SIGTERM
serving.install()  # under Daphne: bodies counted as they stream, deadlines for a request, 1009 for big messages

router = ProtocolTypeRouter(
    {
        "http": AsgiBodyLimit(django_asgi_app),
        "websocket": TokenOrOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)


class RequestThreads:
    """Every HTTP request's sync code (middleware, the view, the ORM) runs on one of a fixed set of threads.

    Django under ASGI runs each request's sync code in a thread of its own, made for the request and ended after it
    (a ThreadSensitiveContext per request): so 200 readers meant 200 threads and, with no pool, 200 database
    connections, each opened and closed for one request. Here a request borrows one of REQUEST_THREADS single-thread
    executors for its whole duration (Django's own context inside ours then uses it), waits on the event loop when
    all are busy, and each thread keeps its connection (SQLite) or takes one from the pool (PostgreSQL). Neither
    these threads nor Django's per-request ones are the process-wide thread that every other thread-sensitive
    sync_to_async shares (the in-process runner's engine, the sockets' snapshot reads).
    """

    def __init__(self, size):
        self.size = size
        self.idle = {}  # loop -> asyncio.Queue of idle executors; a server has one loop, tests may start several

    async def __call__(self, app, scope, receive, send):
        loop = asyncio.get_running_loop()
        idle = self.idle.get(loop)
        if idle is None:
            idle = self.idle[loop] = asyncio.Queue()
            for i in range(self.size):
                idle.put_nowait(ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"request-{i}"))
        executor = await idle.get()
        try:
            async with ThreadSensitiveContext(executor=executor):
                return await app(scope, receive, send)
        finally:
            idle.put_nowait(executor)


request_threads = RequestThreads(settings.REQUEST_THREADS)


async def application(scope, receive, send):
    bind_loop()
    if scope["type"] == "http":
        if await not_modified_from_memory(scope, send):  # a poller's unchanged tree: no thread, no query
            return
        return await request_threads(router, scope, receive, send)
    return await router(scope, receive, send)
