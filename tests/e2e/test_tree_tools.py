"""The tree's tools on a solved Tree of Thoughts: collapse and expand, search, best path only, the arrow keys,
export as JSON, SVG and PNG, and a permalink to a node. This module is also imported by the spawned server process,
so it imports no Django models at the top.
"""

import json
import struct
import xml.etree.ElementTree as ET

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect

SCREENSHOT = "/tmp/tree-tools.png"
PROBLEM = "Rebalance a CHF 3m portfolio toward 60/40 before the client retires."
PARAMS = {"branching": 3, "depth": 2, "keep": 2}
SVG = "{http://www.w3.org/2000/svg}"
NODE = 'svg[data-testid="tree"] g.node'


@pytest.mark.e2e
@needs_chromium
class TreeToolsTest(LiveBrowserTestCase):
    offline_latency_ms = "20"  # a finished tree is what these tools are for: let it finish quickly

    def test_the_tree_tools_on_a_solved_session(self):
        with self.chromium() as browser:
            context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
            page = self.open_page(context)
            self.log_in(page)
            session_id = self.start_solved_session(page)
            tree = page.request.get(f"{self.live_server_url}/api/sessions/{session_id}/tree").json()
            nodes = {n["id"]: n for n in tree["nodes"]}
            expect(page.locator(NODE)).to_have_count(len(nodes))

            self.collapse_and_expand(page, nodes)
            self.search(page, nodes)
            self.best_path_only(page, tree, nodes)
            self.arrows(page, nodes)
            self.export_json(page, session_id, nodes)
            self.export_svg(page, nodes)
            self.export_png(page, session_id)
            self.permalink(context, page, nodes)
        assert self.page_errors == []

    def start_solved_session(self, page):
        base = self.live_server_url
        token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        body = {"problem_text": PROBLEM, "mode": "tot", "params": PARAMS}
        reply = page.request.post(f"{base}/api/sessions", data=body, headers={"X-CSRFToken": token})
        assert reply.status == 201, reply.text()
        session_id = reply.json()["id"]
        page.goto(f"{base}/sessions/{session_id}/")
        expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
        return session_id

    def collapse_and_expand(self, page, nodes):
        parent = next(
            i for i, n in nodes.items() if n["depth"] == 1 and any(c["parent_id"] == i for c in nodes.values())
        )
        under = [i for i, n in nodes.items() if n["parent_id"] == parent]
        children = page.locator(f'{NODE}[data-parent-id="{parent}"]')
        expect(children).to_have_count(len(under))
        toggle = page.locator(f'{NODE}[data-node-id="{parent}"] g.fold')
        toggle.dispatch_event("click")
        expect(children).to_have_count(0)
        folded = page.locator(f'{NODE}[data-node-id="{parent}"]')
        expect(folded).to_have_attribute("data-hidden", str(len(under)))
        expect(folded.locator("text.hidden-count")).to_have_text(f"+{len(under)}")
        expect(folded).to_have_attribute("aria-expanded", "false")
        page.screenshot(path=SCREENSHOT)
        toggle.dispatch_event("click")
        expect(children).to_have_count(len(under))
        expect(folded).to_have_attribute("aria-expanded", "true")

    def search(self, page, nodes):
        target = next(n for n in nodes.values() if n["depth"] == 2)
        word = max(target["thought"].split(), key=len).strip(".,;:")
        expected = [i for i, n in nodes.items() if word.lower() in n["thought"].lower()]
        page.locator("body").press("/")
        expect(page.locator("#tree-search")).to_be_focused()
        page.keyboard.type(word)
        expect(page.locator(f"{NODE}.match")).to_have_count(len(expected))
        page.keyboard.press("Enter")
        expect(page.locator("#insp-id")).to_have_text(expected[0])
        expect(page.locator("#search-count")).to_have_text(f"1 of {len(expected)}")
        expect(page.locator(f"{NODE}.selected")).to_have_attribute("data-node-id", expected[0])
        self.assert_centred(page, expected[0])
        page.keyboard.press("/")  # the match has the focus (so n and N work); / returns to the box
        page.keyboard.press("Escape")
        expect(page.locator(f"{NODE}.match")).to_have_count(0)

    def assert_centred(self, page, node_id):
        panel = page.locator('svg[data-testid="tree"]').bounding_box()
        page.wait_for_timeout(500)  # the view glides there
        box = page.locator(f'{NODE}[data-node-id="{node_id}"] circle.dot').bounding_box()
        centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        assert abs(centre[0] - (panel["x"] + panel["width"] / 2)) < 30, (centre, panel)
        assert abs(centre[1] - (panel["y"] + panel["height"] / 2)) < 30, (centre, panel)

    def best_path_only(self, page, tree, nodes):
        path, node_id = [], tree["session"]["final_node_id"]
        while node_id:
            path.append(node_id)
            node_id = nodes[node_id]["parent_id"]
        page.click('[data-testid="best-button"]')
        expect(page.locator('[data-testid="best-button"]')).to_have_attribute("aria-pressed", "true")
        expect(page.locator(NODE)).to_have_count(len(path))
        drawn = page.locator(NODE).evaluate_all("gs => gs.map((g) => g.dataset.nodeId)")
        assert sorted(drawn) == sorted(path)
        page.locator("body").press("b")
        expect(page.locator(NODE)).to_have_count(len(nodes))

    def arrows(self, page, nodes):
        root = next(i for i, n in nodes.items() if n["parent_id"] is None)
        page.locator(f'{NODE}[data-node-id="{root}"]').dispatch_event("click")
        page.locator(f'{NODE}[data-node-id="{root}"]').focus()
        page.keyboard.press("ArrowRight")
        first = page.locator("#insp-id").text_content()
        assert nodes[first]["parent_id"] == root
        focused = page.evaluate("document.activeElement.dataset.nodeId")
        assert focused == first
        page.keyboard.press("ArrowDown")
        second = page.locator("#insp-id").text_content()
        assert second != first and nodes[second]["parent_id"] == root
        page.keyboard.press("ArrowRight")
        expect(page.locator("#insp-id")).not_to_have_text(second)
        assert nodes[page.locator("#insp-id").text_content()]["parent_id"] == second
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#insp-id")).to_have_text(second)
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#insp-id")).to_have_text(root)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")  # inspects the focused node
        expect(page.locator("#insp-id")).to_have_text(first)
        expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(nodes[first]["thought"])
        label = page.locator(f'{NODE}[data-node-id="{first}"]').get_attribute("aria-label")
        assert label.startswith("Depth 1, score ") and nodes[first]["thought"][:20] in label, label

    def download(self, page, item):
        page.click('[data-testid="export-button"]')
        with page.expect_download() as info:
            page.click(f'[data-testid="{item}"]')
        return info.value

    def export_json(self, page, session_id, nodes):
        download = self.download(page, "export-json")
        assert download.suggested_filename == f"{session_id}.json"
        with open(download.path()) as f:
            data = json.load(f)
        assert set(data) == {"session", "nodes", "edges", "critiques", "actions"}
        assert {n["id"] for n in data["nodes"]} == set(nodes)
        assert data["session"]["id"] == session_id

    def export_svg(self, page, nodes):
        download = self.download(page, "export-svg")
        assert download.suggested_filename.endswith(".svg")
        root = ET.parse(download.path()).getroot()
        assert root.tag == f"{SVG}svg"
        drawn = [g for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]
        assert sorted(g.get("data-node-id") for g in drawn) == sorted(nodes)
        assert root.find(f"{SVG}style") is not None and ".node" in root.find(f"{SVG}style").text
        labels = [t.text for t in root.iter(f"{SVG}text") if "label" in (t.get("class") or "")]
        assert any(labels), "labels stay text"

    def export_png(self, page, session_id):
        download = self.download(page, "export-png")
        assert download.suggested_filename == f"{session_id}.png"
        with open(download.path(), "rb") as f:
            data = f.read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
        width, height = struct.unpack(">II", data[16:24])
        # The whole tree at twice its size (the drawing's bounds), not the panel's view of it.
        bounds = page.evaluate(
            "(() => { const b = Explorer.treeBounds(); return [b.right - b.left, b.bottom - b.top]; })()"
        )
        assert abs(width - 2 * int(bounds[0])) <= 4 and abs(height - 2 * int(bounds[1])) <= 4, (width, height, bounds)
        assert len(data) > 2000  # more than an empty canvas
        expect(page.locator("#status-line")).not_to_have_attribute("data-tone", "error")

    def permalink(self, context, page, nodes):
        target = next(i for i, n in nodes.items() if n["depth"] == 2)
        page.locator(f'{NODE}[data-node-id="{target}"]').dispatch_event("click")
        assert page.evaluate("location.hash") == f"#node={target}"
        fresh = self.open_page(context)
        fresh.goto(page.url)
        expect(fresh.locator("#insp-id")).to_have_text(target)
        expect(fresh.locator(f"{NODE}.selected")).to_have_attribute("data-node-id", target)
        fresh.close()
