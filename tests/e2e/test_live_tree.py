"""A real Chromium watches a Tree of Thoughts grow live: log in, start a session, see the tree arrive over the socket.

This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import re
import time

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

SCREENSHOT = "/tmp/explorer.png"
FULL_TREE = 22  # ToT defaults: root + 3 + 6 + 6 + 6
PROBLEM = "A 58-year-old client holds 70% of her wealth in one tech stock; how should she diversify before retiring?"


@pytest.mark.e2e
@needs_chromium
class LiveTreeTest(LiveBrowserTestCase):
    offline_latency_ms = "250"  # slow enough to watch the tree grow, even on a slow machine

    def test_the_tree_grows_live_and_the_inspector_shows_a_thought(self):
        with self.chromium() as browser:
            self.run_flow(self.open_page(browser.new_context(viewport=VIEWPORT)))
        assert self.page_errors == []

    def run_flow(self, page):
        from reasoning.models import ReasoningNode, ReasoningSession

        base = self.live_server_url
        self.log_in(page)

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

        # Prune the final thought by hand: the API applies it, the socket brings the change to the tree and inspector.
        page.click('[data-testid="prune-button"]')
        sync_api.expect(page.locator(f'g.node.pruned[data-node-id="{node.id}"]')).to_have_count(1)
        sync_api.expect(page.locator("#insp-pruned")).to_have_text(
            re.compile(r"^pruned by user:e2e-advisor at \d\d:\d\d:\d\d \S+$")
        )
        sync_api.expect(page.locator('[data-testid="prune-button"]')).to_have_text("Unprune branch")
        node.refresh_from_db()
        assert node.pruned and node.pruned_by == "overseer"

        page.screenshot(path=SCREENSHOT)
