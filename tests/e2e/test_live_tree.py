"""A real Chromium watches a Tree of Thoughts grow live: log in, start a session, see the tree arrive over the socket.

This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import contextlib
import functools
import multiprocessing
import os
import time

import pytest
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
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
SCREENSHOT = "/tmp/explorer.png"
OFFLINE_LATENCY_MS = "250"  # slow enough to watch the tree grow, even on a slow machine
FULL_TREE = 22  # ToT defaults: root + 3 + 6 + 6 + 6
PROBLEM = "A 58-year-old client holds 70% of her wealth in one tech stock; how should she diversify before retiring?"


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


def use_database(name):
    """In the server process: talk to the test database this process created."""
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = name


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
        self.setup = functools.partial(use_database, connections["default"].settings_dict["NAME"])


@pytest.mark.e2e
@pytest.mark.skipif(
    not os.path.exists(CHROMIUM) and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"
)
class LiveTreeTest(ChannelsLiveServerTestCase):
    ProtocolServerProcess = SpawnedDaphneProcess

    @classmethod
    def setUpClass(cls):
        # The server process reads its settings afresh, so the slower offline model goes through the environment.
        cls._saved_env = {"REASONING_OFFLINE_LATENCY_MS": os.environ.get("REASONING_OFFLINE_LATENCY_MS")}
        os.environ["REASONING_OFFLINE_LATENCY_MS"] = OFFLINE_LATENCY_MS
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

        from reasoning.models import Membership, Rubric, RubricCriterion, Tenant

        tenant = Tenant.objects.create(slug="e2e", name="E2E")
        user = get_user_model().objects.create_user(username="e2e-advisor", password="e2e-password")
        Membership.objects.create(user=user, tenant=tenant)
        rubric, created = Rubric.objects.get_or_create(
            tenant=None,
            problem_kind="general",
            defaults={"name": "General", "description": "Sound, specific, client-suitable reasoning."},
        )
        if created:
            RubricCriterion.objects.create(
                rubric=rubric, name="Soundness", description="Each step follows.", weight=1.0
            )

    def test_the_tree_grows_live_and_the_inspector_shows_a_thought(self):
        page_errors = []
        with allow_sync_orm_beside_playwright(), sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.set_default_timeout(20_000)
                page.on("pageerror", lambda error: page_errors.append(str(error)))
                self.run_flow(page)
            finally:
                browser.close()
        assert page_errors == []

    def run_flow(self, page):
        from reasoning.models import ReasoningNode, ReasoningSession

        base = self.live_server_url
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", "e2e-advisor")
        page.fill("#id_password", "e2e-password")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")

        page.goto(f"{base}/sessions/new/")
        page.fill("#id_problem_text", PROBLEM)
        page.click("text=Start reasoning")
        page.wait_for_url("**/sessions/*-*-*-*-*/")
        session = ReasoningSession.objects.get()
        assert page.url == f"{base}/sessions/{session.id}/"
        page.evaluate("window.__marker = 1")  # survives only if the page never navigates again

        # The tree grows without a reload: sample the node count until the whole tree is there.
        counts = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            count = int(page.evaluate("document.body.dataset.nodeCount || '0'"))
            if not counts or count != counts[-1]:
                counts.append(count)
            if count >= FULL_TREE:
                break
            time.sleep(0.02)
        session.refresh_from_db()
        seen = (
            f"counts {counts}; session {session.status} {session.error!r}; socket: {page.text_content('#conn-status')}"
        )
        assert counts[-1] == FULL_TREE, seen
        assert len([c for c in counts if c > 0]) >= 2, f"saw no growth: {seen}"
        assert counts == sorted(counts), seen

        status = page.locator('[data-testid="session-status"]')
        sync_api.expect(status).to_have_text("solved", timeout=20_000)
        final = page.locator('[data-testid="final-answer"]')
        sync_api.expect(final).to_be_visible()
        sync_api.expect(final).not_to_be_empty()
        assert page.locator('svg[data-testid="tree"] g.node').count() == FULL_TREE
        assert page.evaluate("window.__marker") == 1

        # Click the final thought; the inspector shows its text (as text, not HTML).
        session.refresh_from_db()
        node = ReasoningNode.objects.get(pk=session.final_node_id)
        page.locator(f'g.node[data-node-id="{node.id}"]').click()
        thought = page.locator('[data-testid="inspector"] [data-testid="inspector-thought"]')
        sync_api.expect(thought).to_have_text(node.thought)
        sync_api.expect(page.locator(f'g.node.selected[data-node-id="{node.id}"]')).to_have_count(1)
        assert page.locator("g.node.best").count() == node.depth + 1
        assert page.locator("g.node.pruned").count() > 0

        # Prune the final thought by hand: the socket applies it, and the tree and inspector show it.
        page.click('[data-testid="prune-button"]')
        sync_api.expect(page.locator(f'g.node.pruned[data-node-id="{node.id}"]')).to_have_count(1)
        sync_api.expect(page.locator("#insp-pruned")).to_have_text("pruned by overseer")
        sync_api.expect(page.locator('[data-testid="prune-button"]')).to_have_text("Unprune branch")
        node.refresh_from_db()
        assert node.pruned and node.pruned_by == "overseer"

        page.screenshot(path=SCREENSHOT)
