"""An advisor steers a running Tree of Thoughts from the session page: prune a branch, expand a node, cancel.

A second tab on the same session sees the prune without a reload. This module is also imported by the
spawned server process, so it imports no Django models at the top.
"""

import json
import re
import time

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, relay, sync_api

expect = sync_api.expect

SCREENSHOT = "/tmp/steering.png"
PROBLEM = "Sequence the sale of a CHF 4m single-stock position over three tax years for a client retiring in 2027."
PARAMS = {"branching": 3, "depth": 6, "keep": 2}
BUDGET = 5.0  # far more than six levels cost: the search must still be running when the advisor cancels

# Every g.node under a node (by data-parent-id), with whether it is drawn out of the search.
DESCENDANTS_JS = """(rootId) => {
  const children = new Map();
  for (const g of document.querySelectorAll('svg[data-testid="tree"] g.node')) {
    const parent = g.dataset.parentId;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(g);
  }
  const found = [];
  const queue = [...(children.get(rootId) || [])];
  while (queue.length) {
    const g = queue.shift();
    const link = document.querySelector(`path.link[data-target-id="${g.dataset.nodeId}"]`);
    const linkOut = !!link && link.classList.contains("out");
    found.push({ id: g.dataset.nodeId, out: g.classList.contains("out"), linkOut });
    queue.push(...(children.get(g.dataset.nodeId) || []));
  }
  return found;
}"""


def wait_for(predicate, what, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.mark.e2e
@needs_chromium
class SteeringTest(LiveBrowserTestCase):
    offline_latency_ms = "300"  # a level takes about two calls, 0.6 s: time to steer while the tree grows

    def test_an_advisor_prunes_expands_and_cancels_a_running_search(self):
        with self.chromium() as browser:
            context = browser.new_context(viewport=VIEWPORT)
            page = self.open_page(context)
            self.log_in(page)
            session = self.start_session(page)
            watcher = self.open_page(context)  # a second tab on the same session, never reloaded
            watcher.goto(page.url)
            watcher.evaluate("window.__marker = 1")
            page.bring_to_front()  # Chromium paces the animation frames of the tab behind, and clicks wait for frames

            pruned, other = self.prune_a_kept_branch(page, session)
            self.expand(page, other, k=2)
            self.cancel(page)
            self.check_audit_trail(page, pruned)
            self.check_the_other_tab(watcher, pruned)
            self.wait_for_the_run_to_end(session)
            self.check_nothing_grew_under(page, session, pruned)
            page.locator(".side-panel").evaluate("panel => { panel.scrollTop = 0; }")
            page.screenshot(path=SCREENSHOT)
        assert self.page_errors == []

    def test_a_missed_event_is_mended_by_a_snapshot_on_the_same_socket(self):
        """A delta lost on the way makes a gap in seq: the page asks this socket for a snapshot, never reconnects."""
        from reasoning.models import ReasoningNode

        sockets, sent = [], []

        def drop_the_sixth_delta(ws):
            sockets.append(ws.url)
            deltas = []

            def passes(message):
                if json.loads(message).get("type") not in ("snapshot", "error"):
                    deltas.append(message)
                    return len(deltas) != 6
                return True

            relay(ws, passes, sent)

        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT))
            self.log_in(page)
            page.route_web_socket("**/ws/sessions/**", drop_the_sixth_delta)
            session = self.start_session(page, params={"depth": 3})
            shown = set()  # every label the connection indicator showed while the tree grew

            def ended():
                shown.add(page.text_content("#conn-status"))
                return page.text_content('[data-testid="session-status"]') in ("solved", "failed", "exhausted")

            wait_for(ended, "the session to end")
            count = ReasoningNode.objects.filter(session=session).count()
            expect(page.locator('svg[data-testid="tree"] g.node')).to_have_count(count)
            expect(page.locator("#conn-status")).to_have_text("finished")
        assert len(sockets) == 1 and sent == [{"action": "snapshot"}], (sockets, sent)
        assert shown <= {"connecting…", "live", "finished"}, shown
        assert self.page_errors == []

    def test_a_viewer_watches_without_controls(self):
        from reasoning import services
        from reasoning.models import ReasoningNode, Role
        from reasoning.schemas import SessionIn

        self.user.membership.role = Role.VIEWER
        self.user.membership.save()
        data = SessionIn(problem_text=PROBLEM, mode="tot", params=PARAMS)
        session = services.create_session(self.tenant, data, submit=False)  # queued: no run, nothing moves
        root = ReasoningNode.objects.create(tenant=self.tenant, session=session, depth=0, thought=PROBLEM)
        session.root_node = root
        session.save(update_fields=["root_node"])
        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT))
            self.log_in(page)
            posts = []
            page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
            page.goto(f"{self.live_server_url}/sessions/{session.id}/")
            expect(page.locator('[data-testid="session-status"]')).to_have_text("queued")
            self.select(page, str(root.id))
            for controls in ("#session-actions", "#node-actions"):
                expect(page.locator(controls)).to_be_hidden()
            page.locator("body").press("e")  # no shortcut acts for a viewer
            page.keyboard.press("Shift+P")
            expect(page.locator("#status-line")).to_be_empty()
        assert posts == []
        assert self.page_errors == []

    def start_session(self, page, params=PARAMS):
        """Start a ToT session through the JSON API as the logged-in advisor, then open its page."""
        from reasoning.models import ReasoningSession

        base = self.live_server_url
        token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        body = {"problem_text": PROBLEM, "mode": "tot", "budget_usd": BUDGET, "params": params}
        reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
        assert reply.status == 201, reply.text()
        session = ReasoningSession.objects.get(pk=reply.json()["id"])
        page.goto(f"{base}/sessions/{session.id}/")
        page.evaluate("window.__marker = 1")  # survives only if the page never navigates again
        return session

    def scored_level(self, session, depth):
        """The level's nodes, best first, once all of them are scored; else None."""
        nodes = list(session.nodes.filter(depth=depth))
        if len(nodes) < PARAMS["branching"] or any(n.eval_score is None for n in nodes):
            return None
        return sorted(nodes, key=lambda n: n.eval_score, reverse=True)

    def select(self, page, node_id):
        # The node may still be moving in a transition; a dispatched click does not wait for it to settle.
        page.locator(f'g.node[data-node-id="{node_id}"]').dispatch_event("click")
        expect(page.locator("#insp-id")).to_have_text(node_id)

    def prune_a_kept_branch(self, page, session):
        """While level 2 is being proposed, prune the best depth-1 node; returns (its id, the other kept one's id)."""
        best, other = [str(n.id) for n in wait_for(lambda: self.scored_level(session, 1), "depth 1 scored")[:2]]
        self.select(page, best)
        expect(page.locator('[data-testid="session-status"]')).to_have_text("running")
        page.click('[data-testid="prune-button"]')
        expect(page.locator(f'g.node.out.cut[data-node-id="{best}"]')).to_have_count(1)
        expect(page.locator("#insp-pruned")).to_have_text(
            re.compile(r"^pruned by user:e2e-advisor at \d\d:\d\d:\d\d \S+$")
        )
        expect(page.locator('[data-testid="prune-button"]')).to_have_text("Unprune branch")
        expect(page.locator('[data-testid="insp-actions"] li')).to_have_text(
            re.compile(r"^\d\d:\d\d:\d\d \S+ · user:e2e-advisor · prune$")
        )  # the inspector lists what people did to this node
        self.check_subtree_is_out(page, best)
        return best, other

    def check_subtree_is_out(self, page, node_id):
        under = page.evaluate(DESCENDANTS_JS, node_id)
        assert all(d["out"] and d["linkOut"] for d in under), under
        return under

    def expand(self, page, node_id, k):
        """Ask a running search for k more children of a node; they appear live."""
        children = page.locator(f'g.node[data-parent-id="{node_id}"]')
        expect(children).to_have_count(PARAMS["branching"])  # its own level's children first
        self.select(page, node_id)
        page.fill('[data-testid="expand-k"]', str(k))
        page.click('[data-testid="expand-button"]')
        expect(page.locator("#status-line")).to_contain_text("Expansion queued")
        expect(children).to_have_count(PARAMS["branching"] + k, timeout=15_000)

    def cancel(self, page):
        status = page.locator('[data-testid="session-status"]')
        expect(status).to_have_text("running")
        page.click('[data-testid="cancel-button"]')
        page.click('[data-testid="cancel-confirm-yes"]')  # cancel asks first: it cannot be undone
        expect(status).to_have_text("cancelled", timeout=5_000)
        expect(page.locator('[data-testid="cancel-button"]')).to_be_hidden()
        expect(page.locator("#conn-status")).to_have_text("finished")
        partial = page.locator('[data-testid="answer-partial"]')
        expect(partial).to_have_text("Partial — best answer so far", timeout=15_000)
        expect(page.locator('[data-testid="final-answer"]')).not_to_be_empty()

    def check_audit_trail(self, page, pruned):
        for action in ("prune", "expand", "cancel"):
            expect(page.locator(f'#audit-list li[data-action="{action}"]')).to_have_count(1)
        expect(page.locator('#audit-list li[data-action="expand"][data-state="applied"]')).to_have_count(1)
        expect(page.locator("#audit-list li").first).to_have_attribute("data-action", "cancel")  # newest first
        page.locator('#audit-list li[data-action="prune"]').click()
        expect(page.locator("#insp-id")).to_have_text(pruned)

    def check_the_other_tab(self, watcher, pruned):
        expect(watcher.locator(f'g.node.out.cut[data-node-id="{pruned}"]')).to_have_count(1)
        expect(watcher.locator('[data-testid="session-status"]')).to_have_text("cancelled")
        expect(watcher.locator('#audit-list li[data-action="prune"]')).to_have_count(1)
        self.check_subtree_is_out(watcher, pruned)
        assert watcher.evaluate("window.__marker") == 1

    def wait_for_the_run_to_end(self, session):
        """Cancelled, the run stops at its next step boundary; wait until it lets the session go."""

        def released():
            session.refresh_from_db()
            return session.status == "cancelled" and not getattr(session, "run_owner", "")

        wait_for(released, "the run to release the cancelled session")

    def check_nothing_grew_under(self, page, session, pruned):
        from reasoning.models import ReasoningNode

        rows = {str(n.id): n for n in ReasoningNode.objects.filter(session=session)}
        top = rows[pruned]
        under = {pruned}
        for node in sorted(rows.values(), key=lambda n: n.depth):
            if node.parent_id is not None and str(node.parent_id) in under:
                under.add(str(node.id))
        # What was there when the prune landed stays; after it, only results already in flight land (one level under
        # what existed), and nothing is proposed under them.
        existing = {i for i in under if rows[i].created_at <= top.pruned_at}
        later = [rows[i] for i in under if i not in existing]
        assert all(str(n.parent_id) in existing for n in later), "a later level grew under the pruned branch"
        assert str(session.final_node_id) not in under
        assert session.answer_partial
        drawn = self.check_subtree_is_out(page, pruned)
        assert {d["id"] for d in drawn} == under - {pruned}
        assert page.evaluate("window.__marker") == 1
