"""A server restart seen from the page: a real Daphne killed mid-session says so on the page ("reconnecting…"),
and once it is started again on the same port the page reconnects by itself, the session resumes, and the tree
catches up to every node in the database. No reload."""

import os
import re
import signal

import pytest

from tests.test_restart import PROBLEM, Server, free_port, nodes_of, wait_for

from .live import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, allow_sync_orm_beside_playwright, needs_chromium, sync_api

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
expect = sync_api.expect
SCREENSHOT = "/tmp/reconnect.png"
PARAMS = {"branching": 4, "depth": 8, "keep": 3}  # about 90 nodes at 0.3 s a call: long enough to kill it midway


@needs_chromium
def test_the_page_reconnects_after_a_server_restart_and_catches_up(alice):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    first = Server(port)
    second = None
    try:
        status, session = first.post(
            "/api/sessions", {"problem_text": PROBLEM, "mode": "tot", "params": PARAMS}, alice.key
        )
        assert status == 201
        session_id = session["id"]
        with allow_sync_orm_beside_playwright(), sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport=VIEWPORT, bypass_csp=True).new_page()  # Playwright polls with eval
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.set_default_timeout(30_000)
            page.goto(f"{base}/accounts/login/")
            page.fill("#id_username", alice.user.username)
            page.fill("#id_password", "pw-for-tests")
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/")
            page.goto(f"{base}/sessions/{session_id}/")
            conn = page.locator("#conn-status")
            expect(conn).to_have_text("live")
            wait_for(lambda: len(nodes_of(session_id)) >= 12, timeout=60, what="the tree to grow")

            os.kill(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=10)
            expect(conn).to_have_text("reconnecting…")  # said on the page, not left showing "live"

            second = Server(port)  # `make run` again: it resumes the stranded session
            # Back by itself: live, or finished if the resumed session ended before the page got its socket back.
            expect(conn).to_have_text(re.compile(r"^(live|finished)$"), timeout=60_000)
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=120_000)
            expect(conn).to_have_text("finished")
            total = len(nodes_of(session_id))
            expect(page.locator("#progress-nodes")).to_contain_text(f"{total} nodes")
            expect(page.locator("g.node")).to_have_count(total)
            page.screenshot(path=SCREENSHOT)
            browser.close()
        assert errors == []
    finally:
        for server in (first, second):
            if server is not None:
                server.stop()
