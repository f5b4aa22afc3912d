"""What the browser tests share: a live Daphne server in a fresh interpreter, Debian's Chromium, a logged-in advisor.

This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import contextlib
import functools
import json
import multiprocessing
import os

import pytest
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
from django.conf import settings
from django.db import connections

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}
USERNAME, PASSWORD = "e2e-advisor", "e2e-password"

# The explorer is ES modules with no global; tests and the benchmark reach into it through window.Explorer, made
# here (an init script) from the modules the page loaded: one object over their exports, read live.
EXPOSE_EXPLORER_JS = """
document.addEventListener("DOMContentLoaded", async () => {
  const main = document.querySelector('script[type="module"][src$="explorer/main.js"]');
  if (!main) return;
  const base = main.src.replace(/main\\.js$/, "");
  const names = ["util", "model", "strategies", "tree", "viewport", "farview", "view", "minimap", "treetools", "export",
    "inspector", "session", "progress", "answer", "compare", "steering", "socket", "http", "status", "facts",
    "figures", "review"];
  const modules = await Promise.all(names.map((name) => import(base + name + ".js")));
  window.Explorer = new Proxy({}, {
    get: (_, key) => { for (const m of modules) if (key in m) return m[key]; return undefined; },
  });
});
"""

needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM) and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"
)


@contextlib.contextmanager
def allow_sync_orm_beside_playwright():
    """The sync Playwright API keeps an event loop in this thread; the test's ORM calls are still plain sync ones.

    Only for this block: the rest of the suite keeps Django's async-safety checks.
    """
    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved


def use_database(name, password_hashers):
    """In the server process: talk to the test database this process created, and check its passwords.

    The hashers travel too: this process may have read its settings before tests/conftest.py asked for the
    fast hasher (pytest-django loads them first), while the server reads them afresh with it.
    """
    settings.DATABASES["default"]["NAME"] = name
    settings.PASSWORD_HASHERS = password_hashers


class SpawnedDaphneProcess(DaphneProcess):
    """Daphne in a fresh interpreter (spawn) rather than a fork of this pytest process.

    Earlier tests here start threads that do not survive fork(): asgiref's single-thread
    executor (any async test using database_sync_to_async) and litellm's native runtime (any
    test that ran a session). A forked server then hangs on its first sync_to_async call, or
    fails every model call with ForkedAfterNativeRuntimeStarted.
    """

    _start_method = "spawn"

    @staticmethod
    def _Popen(process_obj):
        from multiprocessing.popen_spawn_posix import Popen

        return Popen(process_obj)

    def __init__(self, host, get_application, kwargs=None, setup=None, teardown=None, port=None):
        super().__init__(host, get_application, kwargs=kwargs, teardown=teardown, port=port)
        spawn = multiprocessing.get_context("spawn")
        self.port = spawn.Value("i", port if port is not None else 0)
        self.ready = spawn.Event()
        self.errors = spawn.Queue()
        # The settings module alone would name the default test database; use the one pytest made.
        self.setup = functools.partial(
            use_database, connections["default"].settings_dict["NAME"], list(settings.PASSWORD_HASHERS)
        )


class LiveBrowserTestCase(ChannelsLiveServerTestCase):
    """A live server on the offline model (slowed by offline_latency_ms) and an advisor of one tenant."""

    ProtocolServerProcess = SpawnedDaphneProcess
    offline_latency_ms = "250"

    @classmethod
    def setUpClass(cls):
        # The server process reads its settings afresh, so the slower offline model goes through the environment.
        cls._saved_env = {"REASONING_OFFLINE_LATENCY_MS": os.environ.get("REASONING_OFFLINE_LATENCY_MS")}
        os.environ["REASONING_OFFLINE_LATENCY_MS"] = cls.offline_latency_ms
        try:
            super().setUpClass()
        finally:
            cls._restore_env()

    @classmethod
    def _restore_env(cls):
        for name, value in cls._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    def setUp(self):
        from django.contrib.auth import get_user_model

        from reasoning.fixtures import load_rubrics
        from reasoning.models import Membership, Tenant

        # A live-server test case flushes the database after each test: the shipped rubrics come back each time.
        load_rubrics()
        self.tenant = Tenant.objects.create(slug="e2e", name="E2E")
        self.user = get_user_model().objects.create_user(username=USERNAME, password=PASSWORD)
        Membership.objects.create(user=self.user, tenant=self.tenant)

    @contextlib.contextmanager
    def chromium(self):
        """A Chromium for this test; its pages' uncaught errors are collected in self.page_errors."""
        self.page_errors = []
        with allow_sync_orm_beside_playwright(), sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            # Tests poll the page with string predicates, which Playwright evaluates: the pages' CSP forbids eval, so
            # test contexts bypass it unless they ask for it (tests/e2e/test_csp.py runs the pages under it).
            new_context = browser.new_context
            browser.new_context = lambda **options: new_context(**{"bypass_csp": True, **options})
            try:
                yield browser
            finally:
                browser.close()

    def open_page(self, context):
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.add_init_script(EXPOSE_EXPLORER_JS)
        page.on("pageerror", lambda error: self.page_errors.append(f"{page.url}: {error}"))
        return page

    def log_in(self, page):
        base = self.live_server_url
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", USERNAME)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")


def relay(ws, passes, sent):
    """Stand between a page and its websocket (a `page.route_web_socket` handler's body): the server's messages
    reach the page when `passes(message)` says so; the page's messages go on, and are kept in `sent` (as JSON)."""
    server = ws.connect_to_server()

    def from_server(message):
        if passes(message):
            ws.send(message)

    def from_page(message):
        sent.append(json.loads(message))
        server.send(message)

    server.on_message(from_server)
    ws.on_message(from_page)
