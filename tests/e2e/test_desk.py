"""The advisor's desk (issue 16): what a new user tripped over, kept fixed in a real Chromium, with screenshots in
var/screenshots/ (desk-*.png) for a person to look at. This module is also imported by the spawned server process,
so it imports no Django models at the top.
"""

import re
from pathlib import Path

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api
from .test_scale import stored_tree

expect = sync_api.expect

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
NODE = 'svg[data-testid="tree"] g.node'
LONG_ANSWER = "\n\n".join(
    f"{i}. Sell the lots with the smallest gains first and keep the rebalancing band at five points." for i in range(40)
)

# The on-screen height of every label drawn (not hidden), in CSS pixels.
LABEL_HEIGHTS_JS = """() => Array.from(document.querySelectorAll('#tree g.node text.label, #tree text.edge-label'))
  .filter((t) => t.textContent && getComputedStyle(t).display !== 'none')
  .map((t) => parseFloat(getComputedStyle(t).fontSize) * (window.Explorer.zoomTransform().k))"""
# How much of the tree stage the drawn tree covers, across and down (0..1).
COVER_JS = """() => {
  const stage = document.getElementById('tree').getBoundingClientRect();
  const tree = document.querySelector('#tree g.nodes').getBoundingClientRect();
  return [tree.width / stage.width, tree.height / stage.height];
}"""


def shot(page, name, full_page=False):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"desk-{name}.png"), full_page=full_page)


def deepest(session):
    return session.nodes.filter(pruned=False).order_by("-depth", "-eval_score").first()


@pytest.mark.e2e
@needs_chromium
class DeskTest(LiveBrowserTestCase):
    offline_latency_ms = "20"

    def open(self, browser, path, viewport=VIEWPORT, **context):
        page = self.open_page(browser.new_context(viewport=viewport, **context))
        self.log_in(page)
        page.goto(f"{self.live_server_url}{path}")
        return page

    def session_with_answer(self, total=60, answer=LONG_ANSWER):
        session, _ = stored_tree(self.tenant, total)
        final = deepest(session)
        session.final_answer, session.final_node = answer, final
        session.root_node = session.nodes.get(depth=0)
        session.save()
        return session, final

    # ---- item 1: the inspector in view --------------------------------------------------------

    def test_clicking_a_node_shows_its_inspector_in_view_whatever_the_answers_length(self):
        session, final = self.session_with_answer()
        node = session.nodes.filter(depth=2, pruned=False).first()
        with self.chromium() as browser:
            for viewport in ({"width": 1280, "height": 800}, {"width": 1400, "height": 900}):
                page = self.open(browser, f"/sessions/{session.id}/", viewport=viewport)
                expect(page.locator('[data-testid="final-answer"]')).to_be_visible()
                page.locator(f'{NODE}[data-node-id="{node.id}"]').dispatch_event("click")
                thought = page.locator('[data-testid="inspector-thought"]')
                expect(thought).to_contain_text(node.thought[:40])
                expect(thought).to_be_in_viewport()
                box = thought.bounding_box()
                assert 0 < box["y"] and box["y"] + 40 < viewport["height"], (viewport, box)
                expect(page.locator('[data-testid="tab-inspector"]')).to_have_attribute("aria-selected", "true")
                if viewport["width"] == 1400:
                    shot(page, "1-inspector-in-view")
                page.click('[data-testid="tab-answer"]')  # the answer is one click away, still whole
                expect(page.locator('[data-testid="final-answer"]')).to_contain_text("39. Sell the lots")
                page.context.close()
        assert self.page_errors == []

    # ---- item 3: a viewer is told, and cannot start a session -----------------------------------

    def test_a_viewer_is_told_they_only_watch_and_is_offered_no_way_to_spend(self):
        from reasoning.models import Role

        self.user.membership.role = Role.VIEWER
        self.user.membership.save()
        session, _ = self.session_with_answer(total=30, answer="Sell in three tranches.")
        with self.chromium() as browser:
            page = self.open(browser, "/")
            expect(page.locator('[data-testid="view-only"]')).to_be_visible()
            expect(page.locator('nav a[href="/sessions/new/"]')).to_have_count(0)
            page.goto(f"{self.live_server_url}/sessions/new/")
            expect(page.locator('[data-testid="view-only-page"]')).to_contain_text("You are view-only")
            expect(page.locator("#id_problem_text")).to_have_count(0)
            shot(page, "3-viewer-new-session")
            page.goto(f"{self.live_server_url}/sessions/{session.id}/")
            expect(page.locator('[data-testid="view-only-note"]')).to_be_visible()
            page.locator(f"{NODE}[data-depth='1']").first.dispatch_event("click")
            expect(page.locator('[data-testid="prune-button"]')).to_be_hidden()
            shot(page, "3-viewer-session")
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            reply = page.request.post(
                f"{self.live_server_url}/api/sessions",
                data={"problem_text": "Spend the tenant's budget on a session.", "mode": "tot"},
                headers={"X-CSRFToken": token},
            )
            assert reply.status == 403, reply.text()
        assert self.page_errors == []

    # ---- items 4 and 5: cancel asks first, a fork continues it; promote keeps the history ---------

    def test_cancel_asks_first_then_offers_a_fork_and_a_promote_keeps_it_cancelled(self):
        from reasoning.models import ReasoningSession

        base = self.live_server_url
        with self.chromium() as browser:
            page = self.open(browser, "/")
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            body = {
                "problem_text": "Plan the sale of a CHF 4m position over three tax years.",
                "mode": "tot",
                "params": {"branching": 3, "depth": 8, "keep": 2},
                "budget_usd": 5,
            }
            self.__class__.offline_latency_ms = "20"
            reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
            assert reply.status == 201, reply.text()
            session_id = reply.json()["id"]
            page.goto(f"{base}/sessions/{session_id}/")
            page.click('[data-testid="pause-button"]')  # held still, so the test decides when it ends
            expect(page.locator('[data-testid="session-status"]')).to_have_text("paused")
            page.click('[data-testid="cancel-button"]')
            confirm = page.locator('[data-testid="cancel-confirm"]')
            expect(confirm).to_be_visible()
            expect(confirm).to_contain_text("cannot be resumed")
            page.click('[data-testid="cancel-confirm-no"]')
            expect(confirm).to_be_hidden()
            expect(page.locator('[data-testid="session-status"]')).to_have_text("paused")
            page.click('[data-testid="cancel-button"]')
            shot(page, "4-cancel-asks")
            page.click('[data-testid="cancel-confirm-yes"]')
            expect(page.locator('[data-testid="session-status"]')).to_have_text("cancelled")
            expect(page.locator('[data-testid="cancelled-note"]')).to_be_visible()

            # A promote after the cancel: a person chose the answer, and the session still says it was cancelled.
            node = ReasoningSession.objects.get(pk=session_id).nodes.filter(depth=1, pruned=False).first()
            reply = page.request.post(
                f"{base}/api/nodes/{node.id}/promote",
                data={"note": "The gentler line."},
                headers={"X-CSRFToken": token},
            )
            assert reply.status == 202, reply.text()
            expect(page.locator('[data-testid="answer-chosen"]')).to_contain_text("The gentler line.")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("cancelled")
            expect(page.locator('[data-testid="status-reason"]')).to_contain_text("Cancelled by")
            expect(page.locator('[data-testid="progress-active"]')).to_contain_text("active ")
            expect(page.locator('[data-testid="progress-timeline"]')).to_contain_text("ended ")
            shot(page, "5-promoted-after-cancel")

            page.click('[data-testid="continue-fork"]')
            expect(page.locator('[data-testid="fork-submit"]')).to_be_visible()
            page.click('[data-testid="fork-submit"]')
            page.wait_for_url(re.compile(r".*/sessions/(?!" + session_id + r")[0-9a-f-]+/$"))
            expect(page.locator("#forked-from")).to_be_visible()
        session = ReasoningSession.objects.get(pk=session_id)
        assert session.status == "cancelled" and session.ended_status == "cancelled"
        assert session.forks.count() == 1
        assert self.page_errors == []

    def test_promoting_an_edited_or_stale_node_asks_for_confirmation(self):
        from django.utils import timezone

        session, final = self.session_with_answer(total=30, answer="Sell in three tranches.")
        edited = final.parent
        edited.original_thought, edited.thought = edited.thought, "Sell a third each year instead."
        edited.edited_at, edited.stale = timezone.now(), True
        edited.save()
        with self.chromium() as browser:
            page = self.open(browser, f"/sessions/{session.id}/")
            page.locator(f'{NODE}[data-node-id="{edited.id}"]').dispatch_event("click")
            page.click('[data-testid="promote-button"]')
            warning = page.locator('[data-testid="promote-warning"]')
            expect(warning).to_contain_text("rewritten by a person")
            submit = page.locator('[data-testid="promote-submit"]')
            expect(submit).to_be_disabled()
            shot(page, "5-promote-asks")
            page.check('[data-testid="promote-confirm"]')
            expect(submit).to_be_enabled()
            page.keyboard.press("Escape")
            sibling = session.nodes.filter(depth=1, pruned=False).exclude(pk=edited.pk).first()
            page.locator(f'{NODE}[data-node-id="{sibling.id}"]').dispatch_event("click")
            page.click('[data-testid="promote-button"]')
            expect(warning).to_be_hidden()
            expect(submit).to_be_enabled()
            page.goto(f"{self.live_server_url}/sessions/{session.id}/report/")
            expect(page.locator('[data-testid="report-edited"]')).to_have_count(1)
        assert self.page_errors == []

    # ---- item 7: labels to read, a Fit that uses the panel, a minimap beside the tree -------------

    def test_labels_are_readable_fit_uses_the_panel_and_the_minimap_hides_no_node(self):
        session, final = self.session_with_answer(total=200, answer="Sell in three tranches.")
        with self.chromium() as browser:
            page = self.open(browser, f"/sessions/{session.id}/", viewport={"width": 1400, "height": 900})
            page.wait_for_function("Number(document.body.dataset.treeSize) === 200")
            page.click("#fit-button")
            page.wait_for_timeout(500)
            across, down = page.evaluate(COVER_JS)
            assert max(across, down) > 0.85, (across, down)  # the binding side is filled
            assert min(across, down) > 0.6, (across, down)  # and the other is not left mostly empty
            assert all(h >= 10.99 for h in page.evaluate(LABEL_HEIGHTS_JS))
            minimap = page.locator('[data-testid="minimap"]')
            expect(minimap).to_be_visible()
            stage, mm = page.locator("#tree").bounding_box(), minimap.bounding_box()
            assert mm["y"] >= stage["y"] + stage["height"] - 1, (stage, mm)  # under the tree, never over it
            shot(page, "7-fit")
            page.click('[data-testid="best-button"]')
            page.wait_for_timeout(500)
            heights = page.evaluate(LABEL_HEIGHTS_JS)
            assert heights and all(h >= 10.99 for h in heights), heights
            across, down = page.evaluate(COVER_JS)
            assert across > 0.8, across  # the best path fills the panel's width
            shot(page, "7-best-path")
        assert self.page_errors == []

    def test_a_react_fork_keeps_its_actions_on_the_links_readably(self):
        from reasoning.models import ReasoningSession

        base = self.live_server_url
        with self.chromium() as browser:
            page = self.open(browser, "/", viewport={"width": 1400, "height": 900})
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            body = {
                "problem_text": "Client C-1001 holds USD 5m; harvest USD 400k of losses before year end.",
                "mode": "react",
                "params": {"max_steps": 4},
            }
            source = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token}).json()
            page.goto(f"{base}/sessions/{source['id']}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
            step = ReasoningSession.objects.get(pk=source["id"]).nodes.get(depth=3)
            fork = page.request.post(
                f"{base}/api/sessions/{source['id']}/fork",
                data={"node_id": str(step.id), "mode": "react"},
                headers={"X-CSRFToken": token},
            ).json()
            page.goto(f"{base}/sessions/{fork['id']}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
            page.wait_for_timeout(500)
            labels = page.locator("#tree text.edge-label")
            assert labels.count() >= 3  # the copied steps keep their actions
            heights = page.evaluate(LABEL_HEIGHTS_JS)
            assert heights and all(h >= 10.99 for h in heights), heights
            shot(page, "6-react-fork")
            shot(page, "7-react-labels")
        assert self.page_errors == []

    def test_a_tree_of_thoughts_forked_into_reflexion_goes_on_from_the_path(self):
        from reasoning.models import ReasoningSession

        session, final = self.session_with_answer(total=30, answer="Sell in three tranches.")
        session.status = "solved"
        session.save()
        node = session.nodes.filter(depth=2, pruned=False).first()
        base = self.live_server_url
        with self.chromium() as browser:
            page = self.open(browser, f"/sessions/{session.id}/", viewport={"width": 1400, "height": 900})
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            fork = page.request.post(
                f"{base}/api/sessions/{session.id}/fork",
                data={"node_id": str(node.id), "mode": "reflexion", "params": {"threshold": 0.99, "max_attempts": 2}},
                headers={"X-CSRFToken": token},
            ).json()
            page.goto(f"{base}/sessions/{fork['id']}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
            page.wait_for_timeout(500)
            expect(page.locator("#tree g.node text.tag", has_text="attempt 2")).to_have_count(1)
            shot(page, "6-reflexion-fork")
        rows = ReasoningSession.objects.get(pk=fork["id"]).nodes.filter(source_node=None, depth__gt=0)
        assert rows.exists() and all(r.state.get("attempt") == 2 for r in rows)
        assert self.page_errors == []

    # ---- item 8: search keeps the keys working; a live tree never re-folds ----------------------

    def test_search_gives_the_keys_back_and_counts_and_a_growing_tree_does_not_refold(self):
        session, _ = stored_tree(self.tenant, 480)
        with self.chromium() as browser:
            page = self.open(browser, f"/sessions/{session.id}/")
            page.wait_for_function("Number(document.body.dataset.treeSize) === 480")
            page.click('[data-testid="tree-search"]')
            page.keyboard.type("harvest lot 1 ")
            count = page.locator("#search-count")
            expect(count).to_contain_text("found")
            total = int(count.text_content().split()[0])
            page.keyboard.press("Enter")
            expect(count).to_have_text(f"1 of {total}")
            page.wait_for_function("document.activeElement.id !== 'tree-search'")
            page.keyboard.press("n")
            expect(count).to_have_text(f"2 of {total}")
            page.keyboard.press("N")
            expect(count).to_have_text(f"1 of {total}")
            assert page.locator('[data-testid="tree-search"]').input_value() == "harvest lot 1 "

            # 40 more nodes arrive live: past 500, the dropped branches the reader sees stay where they are.
            drawn = int(page.evaluate("document.body.dataset.nodeCount"))
            page.evaluate("""() => {
              const E = window.Explorer, parent = [...E.model.nodes.values()].find((n) => n.depth === 1 && !n.pruned);
              for (let i = 0; i < 40; i++) E.applyDelta({ type: "node.created", seq: E.model.lastSeq + 1,
                node: { ...parent, id: crypto.randomUUID(), parent_id: parent.id, depth: 2, pruned: true,
                        pruned_by: "strategy", thought: "Live " + i, created_at: new Date().toISOString() } });
            }""")
            page.wait_for_function("Number(document.body.dataset.treeSize) === 520")
            page.wait_for_function(f"Number(document.body.dataset.nodeCount) === {drawn + 40}")
        assert self.page_errors == []

    # ---- item 9: times in the browser's zone, labelled -------------------------------------------

    def test_times_are_in_the_browsers_zone_and_say_so(self):
        session, final = self.session_with_answer(total=20, answer="Sell in three tranches.")
        with self.chromium() as browser:
            page = self.open(browser, "/", timezone_id="America/Los_Angeles")
            started = page.locator("td.started time")
            expect(started).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d (P[SD]T|GMT-[78])$"))
            page.goto(f"{self.live_server_url}/sessions/{session.id}/")
            expect(page.locator('[data-testid="progress-timeline"]')).to_have_text(
                re.compile(r"^started \d\d:\d\d:\d\d (P[SD]T|GMT-[78])")
            )
        assert self.page_errors == []
