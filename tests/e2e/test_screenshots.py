"""Screenshots of the main pages, kept as test artifacts in var/screenshots/ (git-ignored) for a person to look at:
the sessions list, the new-session form, a solved session with its tree and a node inspected, its report, a fork
beside its parent, and a
large tree far out (canvas) and near in. Each page must load without an error. This module is also imported by
the spawned server process, so it imports no Django models at the top.
"""

from pathlib import Path

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api
from .test_scale import stored_tree

expect = sync_api.expect

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
PROBLEM = "Rebalance a CHF 3m portfolio that drifted to 72% equities against a 60/40 target, minimising realised gains."


@pytest.mark.e2e
@needs_chromium
class ScreenshotsTest(LiveBrowserTestCase):
    offline_latency_ms = "20"

    def test_the_main_pages_render_and_are_saved_as_screenshots(self):
        SHOTS.mkdir(parents=True, exist_ok=True)
        base = self.live_server_url
        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT))
            self.log_in(page)
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            body = {"problem_text": PROBLEM, "mode": "tot", "problem_kind": "allocation-rebalance"}
            reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
            assert reply.status == 201, reply.text()
            session_id = reply.json()["id"]

            page.goto(f"{base}/sessions/{session_id}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
            page.wait_for_timeout(500)  # the last transition
            self.shot(page, "session")
            final = page.evaluate("Explorer.model.session.final_node_id")
            page.locator(f'g.node[data-node-id="{final}"]').dispatch_event("click")
            expect(page.locator("#insp-id")).to_have_text(final)
            page.locator("#inspector").scroll_into_view_if_needed()
            self.shot(page, "session-inspector")

            page.goto(f"{base}/sessions/{session_id}/report/")
            self.shot(page, "report", full_page=True)
            fork = page.request.post(
                f"{base}/api/sessions/{session_id}/fork", data={"node_id": final}, headers={"X-CSRFToken": token}
            )
            assert fork.status == 201, fork.text()
            page.goto(f"{base}/sessions/{fork.json()['id']}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
            page.click('[data-testid="beside-parent-link"]')
            expect(page.locator('[data-testid="beside-parent"] [data-testid="beside-answer"]')).to_be_visible()
            self.shot(page, "fork-beside-parent", full_page=True)
            page.goto(f"{base}/")
            expect(page.locator("main")).to_contain_text(PROBLEM[:40])
            self.shot(page, "sessions-list")
            page.goto(f"{base}/sessions/new/")
            self.shot(page, "session-new", full_page=True)

            large, _ = stored_tree(self.tenant)
            page.goto(f"{base}/sessions/{large.id}/")
            page.wait_for_function(f"Number(document.body.dataset.treeSize) === {len(large.nodes.all())}")
            page.click('[data-testid="expand-all-button"]')
            page.wait_for_function("Explorer.isFar()")
            page.wait_for_timeout(300)
            self.shot(page, "large-tree-far")
            page.evaluate("Explorer.centerOn(Explorer.model.session.final_node_id)")
            page.wait_for_function("!Explorer.isFar()")
            page.wait_for_timeout(600)
            self.shot(page, "large-tree-near")
        assert self.page_errors == []

    def shot(self, page, name, full_page=False):
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 5000
