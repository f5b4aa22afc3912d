"""The pages work under their Content-Security-Policy (no inline script, no eval): a real Chromium that does not bypass
it logs in, starts a session, watches its tree arrive, prints its report and opens the API docs, with no CSP violation reported.

This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import time

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium

FULL_TREE = 22
PROBLEM = "A 58-year-old client holds 70% of her wealth in one tech stock; how should she diversify before retiring?"


@pytest.mark.e2e
@needs_chromium
class ContentSecurityPolicyTest(LiveBrowserTestCase):
    def test_the_explorer_runs_under_its_csp(self):
        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT, bypass_csp=False))
            refused = []
            page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
            self.log_in(page)
            page.goto(f"{self.live_server_url}/sessions/new/")
            page.fill("#id_problem_text", PROBLEM)
            page.click("text=Start reasoning")
            page.wait_for_url("**/sessions/*-*-*-*-*/")
            deadline, count = time.monotonic() + 30, 0
            while count < FULL_TREE and time.monotonic() < deadline:
                count = int(page.evaluate("document.body.dataset.nodeCount || '0'"))  # CDP, not page eval
                time.sleep(0.05)
            assert count == FULL_TREE, f"the tree did not arrive under the CSP: {count} nodes; {refused}"
            page.goto(page.url + "report/")
            page.evaluate("window.print = () => { window.__printed = true; }")
            page.click("[data-print]")
            assert page.evaluate("window.__printed === true")
            page.goto(f"{self.live_server_url}/api/docs")  # Swagger UI, from ninja's own static files
            page.locator(".opblock").first.wait_for()
            assert refused == []
        assert self.page_errors == []
