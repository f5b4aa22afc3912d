"""A search typed while the tree grows also finds the nodes that arrive after it: their match mark and the count
follow the tree. This module is also imported by the spawned server process, so it imports no Django models at
the top.
"""

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect

PROBLEM = "Sequence a CHF 2m gift of shares to two heirs over three tax years."
NODE = 'svg[data-testid="tree"] g.node'
QUERY = "the"  # in most thoughts the offline model writes, so later nodes match too


@pytest.mark.e2e
@needs_chromium
class SearchLiveTest(LiveBrowserTestCase):
    offline_latency_ms = "150"  # slow enough to type before the tree has grown

    def test_a_search_matches_nodes_that_arrive_after_it_was_typed(self):
        from reasoning.models import ReasoningNode, ReasoningSession

        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT))
            self.log_in(page)
            base = self.live_server_url
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            body = {"problem_text": PROBLEM, "mode": "tot", "params": {"branching": 2, "depth": 2, "keep": 1}}
            reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
            assert reply.status == 201, reply.text()
            session = ReasoningSession.objects.get(pk=reply.json()["id"])
            page.goto(f"{base}/sessions/{session.id}/")
            page.fill('[data-testid="tree-search"]', QUERY)
            typed_at = int(page.evaluate("document.body.dataset.treeSize || '0'"))
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)

            rows = list(ReasoningNode.objects.filter(session=session))
            expected = sorted(str(n.id) for n in rows if QUERY in n.thought.lower())
            assert len(rows) > typed_at, "the tree had finished before the search was typed"
            later = [n for n in rows if QUERY in n.thought.lower() and n.depth > 0]
            assert later, "no node after the root matches: pick another query"
            expect(page.locator(f"{NODE}.match")).to_have_count(len(expected))
            matched = page.locator(f"{NODE}.match").evaluate_all("gs => gs.map((g) => g.dataset.nodeId)")
            assert sorted(matched) == expected
            expect(page.locator("#search-count")).to_have_text(f"{len(expected)} found")
        assert self.page_errors == []
