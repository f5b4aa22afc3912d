"""The advisor's desk, second pass (issue 26), in a real Chromium: an honest clock read off the page, trees readable
at 60 and 300 nodes (screenshots in var/screenshots/, looked at), the list's columns and the session header at 1440
and 1024 px. This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import re
import time
from pathlib import Path

import pytest

from .live import LiveBrowserTestCase, needs_chromium, sync_api
from .test_desk import deepest
from .test_scale import stored_tree

expect = sync_api.expect

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
NODE = 'svg[data-testid="tree"] g.node'

# Every label drawn (not hidden by the level of detail): its node, text, on-screen box, font size on screen, whether
# its background covers it, and what is on top at its middle (the label or its background, never a link).
LABELS_JS = """() => {
  const k = window.Explorer.zoomTransform().k;
  return Array.from(document.querySelectorAll('#tree g.node text.label'))
    .filter((t) => t.textContent && getComputedStyle(t).display !== 'none')
    .map((t) => {
      const g = t.parentNode, box = t.getBoundingClientRect(), bg = g.querySelector('rect.label-bg');
      const back = bg.getBoundingClientRect();
      const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return {
        id: g.dataset.nodeId, text: t.textContent, best: g.classList.contains('best'),
        left: box.left, right: box.right, top: box.top, bottom: box.bottom,
        px: parseFloat(getComputedStyle(t).fontSize) * k,
        covered: back.left <= box.left + 0.5 && back.right >= box.right - 0.5,
        onTop: top ? (top.closest('g.node') === g ? top.tagName : top.tagName + '.' + top.getAttribute('class')) : null,
      };
    });
}"""
# How many lines the text of the first element matching a selector takes.
LINES_JS = """(selector) => {
  const range = document.createRange();
  range.selectNodeContents(document.querySelector(selector));
  return new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size;
}"""
MATCHES_JS = "Array.from(document.querySelectorAll('#tree g.node.match'), (g) => g.dataset.nodeId)"
ACTIVE_JS = "() => document.querySelector('[data-testid=progress-active]').textContent"


def shot(page, name, full_page=False):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"desk2-{name}.png"), full_page=full_page)


def active_seconds(page):
    text = page.evaluate(ACTIVE_JS)
    match = re.fullmatch(r"active (?:(\d+) min )?(\d+) s", text)
    assert match, text
    return int(match.group(1) or 0) * 60 + int(match.group(2))


@pytest.mark.e2e
@needs_chromium
class DeskSecondPassTest(LiveBrowserTestCase):
    offline_latency_ms = "500"  # a search that runs long enough to pause, resume and cancel it

    def open(self, browser, path, viewport=None):
        page = self.open_page(browser.new_context(viewport=viewport or {"width": 1400, "height": 900}))
        self.log_in(page)
        page.goto(f"{self.live_server_url}{path}")
        return page

    # ---- item 1: an honest clock --------------------------------------------------------------

    def test_the_active_counter_keeps_real_time_through_pause_resume_and_cancel(self):
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
            reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
            assert reply.status == 201, reply.text()
            session_id = reply.json()["id"]
            page.goto(f"{base}/sessions/{session_id}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("running")

            def truth():  # the server's own figure now, read from the database (this process shares its clock)
                return ReasoningSession.objects.get(pk=session_id).active_time()

            page.wait_for_timeout(1000)
            first, at_first = active_seconds(page), time.monotonic()
            assert abs(first - truth()) <= 2, (first, truth())
            page.wait_for_timeout(6000)
            second, at_second = active_seconds(page), time.monotonic()
            assert abs(second - truth()) <= 2, (second, truth())
            # The counter moves with the wall clock (it ran at about twice real time: 12 s in 6 s); a figure that
            # arrives late (a loaded machine) shifts it a little, never doubles its pace.
            elapsed = at_second - at_first
            assert abs((second - first) - elapsed) <= 2.5, (first, second, elapsed)

            page.click('[data-testid="pause-button"]')
            expect(page.locator('[data-testid="session-status"]')).to_have_text("paused")
            page.wait_for_timeout(600)  # the pause's own event already carries the time it ran
            paused = active_seconds(page)
            assert paused >= second, (paused, second)  # not "active 0 s"
            page.wait_for_timeout(2500)
            assert active_seconds(page) == paused  # a pause does not count
            shot(page, "1-paused-counter")

            page.click('[data-testid="resume-button"]')
            expect(page.locator('[data-testid="session-status"]')).to_have_text("running")
            page.wait_for_timeout(1000)
            page.click('[data-testid="cancel-button"]')
            page.click('[data-testid="cancel-confirm-yes"]')
            expect(page.locator('[data-testid="session-status"]')).to_have_text("cancelled")
            page.wait_for_timeout(600)
            after_cancel = active_seconds(page)
            stored = ReasoningSession.objects.get(pk=session_id)
            assert abs(after_cancel - stored.active_seconds) <= 1, (after_cancel, stored.active_seconds)
            page.reload()
            expect(page.locator('[data-testid="session-status"]')).to_have_text("cancelled")
            assert active_seconds(page) == after_cancel  # a reload reads what the page said (it read 10 s, then 19 s)
            api = page.request.get(f"{base}/api/sessions/{session_id}").json()
            assert api["started_at"] == stored.started_at.isoformat() and api["resumed_at"] > api["started_at"]
            expect(page.locator('[data-testid="progress-timeline"]')).to_contain_text("resumed ")
            shot(page, "1-cancelled-counter")
        assert self.page_errors == []

    # ---- item 2: trees readable at any size ----------------------------------------------------

    def test_best_path_labels_are_readable_at_60_and_300_nodes(self):
        with self.chromium() as browser:
            for total in (60, 300):
                session, _ = stored_tree(self.tenant, total)
                session.final_answer, session.final_node = "Sell in three tranches.", deepest(session)
                session.root_node = session.nodes.get(depth=0)
                session.save()
                page = self.open(browser, f"/sessions/{session.id}/")
                page.wait_for_function(f"Number(document.body.dataset.treeSize) === {total}")
                page.click("#fit-button")
                page.wait_for_timeout(800)
                shot(page, f"2-tree-{total}")
                labels = page.evaluate(LABELS_JS)
                on_path = [label for label in labels if label["best"]]
                best = page.evaluate("Array.from(document.querySelectorAll('#tree g.node.best')).length")
                assert best >= 4 and len(on_path) == best, (total, best, on_path)  # every best-path label shows
                stage = page.locator("#tree").bounding_box()
                for label in labels:
                    assert label["px"] >= 10.99, label  # never smaller than 11 px on screen
                    assert label["covered"], label  # on its background
                    assert label["onTop"] in ("text", "rect"), label  # no link drawn over its words
                    assert stage["x"] - 1 <= label["left"] and label["right"] <= stage["x"] + stage["width"] + 1, label
                    assert len(label["text"]) >= 8, label
                    if label["text"].endswith("…"):  # cut after a whole word
                        assert label["text"][-2] != " " and re.search(r"[\w:.,)]…$", label["text"]), label
                # The full text on keyboard focus.
                final = page.evaluate("Explorer.model.session.final_node_id")
                page.locator(f'{NODE}[data-node-id="{final}"]').focus()
                tip = page.locator('[data-testid="node-tip"]')
                expect(tip).to_be_visible()
                expect(tip).to_contain_text("against the gains of year")
                shot(page, f"2-tree-{total}-focus")
                page.keyboard.press("Escape")
                # Search matches keep their labels however far out.
                page.fill('[data-testid="tree-search"]', "lot 7 ")
                matches = []
                for _ in range(40):  # the search is debounced and redraws: a busy machine takes its time
                    page.wait_for_timeout(250)
                    shown = {label["id"] for label in page.evaluate(LABELS_JS)}
                    found = page.evaluate(MATCHES_JS)
                    matches = [node for node in found if node in shown]
                    if found and len(matches) == len(found):
                        break
                # Every match shows its label, however far out (where a label is cut depends on the font's widths).
                assert found and len(matches) == len(found), (total, found, matches)
                page.fill('[data-testid="tree-search"]', "")
        assert self.page_errors == []

    # ---- item 3: lists an advisor can work from ------------------------------------------------

    def test_the_list_and_the_header_do_not_wrap_at_1440_and_1024(self):
        from reasoning.models import ReasoningSession

        session = ReasoningSession.objects.create(
            tenant=self.tenant,
            problem_text="Plan the succession of a CHF 40m family company to two children, one active in the firm.",
            case_name="Meier family – succession",
            model_primary="offline/sim",
            status="solved",
            triggered_by="web:e2e-advisor",
        )
        with self.chromium() as browser:
            for width in (1440, 1024):
                page = self.open(browser, "/", viewport={"width": width, "height": 900})
                by = page.locator('[data-testid="row-by"]').first
                expect(by).to_have_text("web:e2e-advisor")
                lines = page.evaluate(LINES_JS, "td.by")
                assert lines == 1, lines  # "web:e2e-advisor" on one line, not a letter or two a line
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no overflow
                expect(page.locator('[data-testid="row-case-name"]')).to_have_text("Meier family – succession")
                shot(page, f"3-list-{width}")
                page.goto(f"{self.live_server_url}/sessions/{session.id}/")
                report = page.locator('[data-testid="report-link"]')
                expect(report).to_be_visible()
                height = report.bounding_box()["height"]
                assert height < 30 and page.evaluate(LINES_JS, '[data-testid="report-link"]') == 1, height
                expect(page.locator('[data-testid="case-name"]')).to_have_text("Meier family – succession")
                assert page.title().startswith("Meier family – succession · ")
                page.screenshot(path=str(SHOTS / f"desk2-3-header-{width}.png"), clip={"x": 0, "y": 0, "width": width, "height": 160})
        assert self.page_errors == []

    # ---- the README's first session, as the page shows it ---------------------------------------

    def test_the_readmes_first_session_walk_through_matches_the_page(self):
        readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
        walk = readme.split("**A first session, all on one page.**", 1)[1].split("\n\n", 1)[0]
        for words in ("*New session*", "*Case name*", "*Start reasoning*", "**active**", "*started*", "arrow keys"):
            assert words in walk, words
        with self.chromium() as browser:
            page = self.open(browser, "/")
            page.click("text=New session")
            page.fill("#id_case_name", "Meier family – succession")
            page.fill("#id_problem_text", "Plan the succession of a CHF 40m family company to two children.")
            page.click(".session-form button[type=submit]")
            page.wait_for_url(re.compile(r".*/sessions/[0-9a-f-]+/$"))
            assert page.title().startswith("Meier family – succession · ")
            expect(page.locator('[data-testid="case-name"]')).to_have_text("Meier family – succession")
            expect(page.locator('[data-testid="progress-active"]')).to_contain_text("active ")
            expect(page.locator('[data-testid="progress-timeline"]')).to_contain_text("started ")
            page.wait_for_function("document.querySelectorAll('#tree g.node').length >= 2")
            root = page.locator(f'{NODE}[data-depth="0"]')
            root.dispatch_event("click")
            expect(page.locator('[data-testid="tab-inspector"]')).to_have_attribute("aria-selected", "true")
            root.focus()
            page.keyboard.press("ArrowRight")  # the arrow keys move through the tree; the whole label shows
            expect(page.locator('[data-testid="node-tip"]')).to_be_visible()
            shot(page, "readme-first-session")
        assert self.page_errors == []
