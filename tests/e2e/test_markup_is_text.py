"""Markup in what a model or a person wrote stays inert text on every page that shows it: the problem, thoughts,
evaluations, critiques, ReAct actions and tool observations, the answer and its note, the audit trail. Each
payload would set window.__pwned if it ever ran. This module is also imported by the spawned server process, so
it imports no Django models at the top.
"""

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"
SVG_PAYLOAD = '<svg onload="window.__pwned=3"><a href="javascript:window.__pwned=4">x</a></svg>'
NODE = 'svg[data-testid="tree"] g.node'


def payload(where):
    return f"{where}: {IMG} then {SCRIPT} and {SVG_PAYLOAD} &amp; done"


@pytest.mark.e2e
@needs_chromium
class MarkupIsTextTest(LiveBrowserTestCase):
    def stored(self, mode):
        """A solved session whose every text carries markup: root, a scored child with a critique, its answer."""
        from reasoning.models import OverseerAction, ReasoningCritique, ReasoningEdge, ReasoningNode, ReasoningSession

        t = self.tenant
        session = ReasoningSession.objects.create(
            tenant=t,
            problem_text=payload("problem"),
            mode=mode,
            mode_reason=payload("reason"),
            model_primary="offline/sim",
            status="solved",
        )
        root = ReasoningNode.objects.create(tenant=t, session=session, depth=0, thought=payload("root"))
        child = ReasoningNode.objects.create(
            tenant=t,
            session=session,
            parent=root,
            depth=1,
            thought=payload("thought"),
            eval_score=0.7,
            eval_reason=payload("evaluation"),
            is_terminal=True,
            state={"step": 1, "tool": "calculate", "answer": payload("state answer")} if mode == "react" else {},
        )
        ReasoningCritique.objects.create(
            tenant=t, session=session, node=child, attempt_num=1, outcome_score=0.4, critique=payload("critique")
        )
        if mode == "react":
            ReasoningEdge.objects.create(
                tenant=t,
                session=session,
                from_node=root,
                to_node=child,
                action=f'calculate({{"expression": "{IMG}"}})',
                observation=payload("observation"),
            )
        OverseerAction.objects.create(
            tenant=t,
            session=session,
            action="promote",
            actor=payload("actor")[:100],
            node=child,
            detail=payload("audit"),
        )
        session.root_node, session.final_node = root, child
        session.final_answer, session.answer_note = payload("answer"), payload("note")
        session.answer_chosen_by = "user:e2e-advisor"
        session.save()
        return session, root, child

    def test_markup_in_every_text_stays_text(self):
        tot = self.stored("tot")
        react = self.stored("react")
        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=VIEWPORT))
            self.log_in(page)
            for session, root, child in (tot, react):
                self.session_page(page, session, root, child)
                self.report_page(page, session)
            page.goto(f"{self.live_server_url}/")
            expect(page.locator("main")).to_contain_text(payload("problem")[:60])
            self.assert_inert(page)
        assert self.page_errors == []

    def assert_inert(self, page):
        page.wait_for_timeout(200)  # an onerror would have fired by now
        assert page.evaluate("window.__pwned") is None
        assert page.locator("main img, main iframe, main object, main svg svg, main a[href^='javascript']").count() == 0
        scripts = page.locator("script").evaluate_all("ss => ss.filter((s) => !s.src && s.type !== 'application/json')")
        assert scripts == [], scripts

    def session_page(self, page, session, root, child):
        page.goto(f"{self.live_server_url}/sessions/{session.id}/")
        expect(page.locator(NODE)).to_have_count(2)
        expect(page.locator("h1.problem-text")).to_have_text(payload("problem"))
        expect(page.locator('[data-testid="final-answer"]')).to_have_text(payload("answer"))
        expect(page.locator('[data-testid="answer-chosen"]')).to_contain_text(payload("note"))
        expect(page.locator("#audit-list")).to_contain_text(payload("audit"))
        labels = page.locator(f"{NODE} text.label").all_text_contents()
        assert any("<img" in label for label in labels), labels

        page.locator(f'{NODE}[data-node-id="{child.id}"]').dispatch_event("click")
        expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(payload("thought"))
        expect(page.locator("#insp-reason")).to_have_text(payload("evaluation"))
        expect(page.locator('[data-testid="insp-sections"]')).to_contain_text(payload("critique"))
        if session.mode == "react":
            expect(page.locator('[data-testid="insp-edge-observation"]')).to_have_text(payload("observation"))
            expect(page.locator('[data-testid="insp-edge-action"]')).to_contain_text(IMG)
            expect(page.locator("text.edge-label")).to_contain_text("<img")
            expect(page.locator('[data-testid="insp-sections"]')).to_contain_text(payload("state answer"))
        # The tooltip is made on hover, as text too.
        page.locator(f'{NODE}[data-node-id="{child.id}"] circle.dot').hover()
        title = page.locator(f'{NODE}[data-node-id="{child.id}"] > title')
        expect(title).to_contain_text(payload("thought")[:40])
        page.locator(f'{NODE}[data-node-id="{root.id}"]').dispatch_event("click")
        expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(payload("root"))
        self.assert_inert(page)

    def report_page(self, page, session):
        page.goto(f"{self.live_server_url}/sessions/{session.id}/report/")
        expect(page.locator("main")).to_contain_text(payload("answer"))
        expect(page.locator("main")).to_contain_text(payload("thought"))
        self.assert_inert(page)
