"""The pages around the tree, as an advisor uses them: the new-session form (auto's pick, a parameter error in plain
words), a solved session's recommendation (its steps select their nodes, Copy), compare two nodes, the printable
report, and the sessions list (answer preview, search). One browser, one page.

This module is also imported by the spawned server process, so it imports no Django models at the top.
"""

import re

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect

PROBLEM = "Should a 58-year-old client sell her concentrated tech position before retiring in 2027?"
OTHER = "A client of 70 asks how to gift the holiday home to her children"


@pytest.mark.e2e
@needs_chromium
class PagesTest(LiveBrowserTestCase):
    offline_latency_ms = "20"  # the session only has to finish: no need to watch it grow

    def test_an_advisor_reads_compares_prints_and_finds_a_session(self):
        with self.chromium() as browser:
            context = browser.new_context(viewport=VIEWPORT, permissions=["clipboard-read", "clipboard-write"])
            page = self.open_page(context)
            self.log_in(page)
            self.new_session_form(page)
            session = self.wait_until_solved(page)
            self.recommendation(page, session)
            self.prompt_and_reply(page, session)
            self.compare(page, session)
            self.report(page, session)
            self.sessions_list(page)
            self.unpriced_model(page)
        assert self.page_errors == []

    def new_session_form(self, page):
        page.goto(f"{self.live_server_url}/sessions/new/")
        page.fill("#id_problem_text", PROBLEM)
        page.select_option("#id_problem_kind", "investment-thesis")
        pick = page.locator('[data-testid="auto-pick"]')
        expect(pick).to_be_visible()
        expect(pick).to_contain_text("Auto will use tot for investment-thesis")
        page.select_option("#id_mode", "tot")
        expect(pick).to_be_hidden()
        page.fill("#id_tot-branching", "99")
        page.fill("#id_tot-depth", "2")
        page.click("text=Start reasoning")
        error = page.locator("#id_tot-branching_error")
        expect(error).to_have_text("at most 8")
        expect(page.locator('fieldset.params[data-mode="tot"]')).to_be_visible()
        page.screenshot(path="/tmp/pages-new.png", full_page=True)
        page.fill("#id_tot-branching", "2")
        page.click("text=Start reasoning")
        page.wait_for_url("**/sessions/*-*-*-*-*/")

    def wait_until_solved(self, page):
        from reasoning.models import ReasoningSession

        expect(page.locator('[data-testid="session-status"]')).to_have_text("solved", timeout=30_000)
        expect(page.locator("#conn-status")).to_have_text("finished")
        expect(page.locator('[data-testid="status-reason"]')).to_have_text("Solved")
        expect(page.locator("#progress-nodes")).to_contain_text("nodes")
        expect(page.locator("#progress-elapsed")).to_contain_text("active ")
        expect(page.locator('[data-testid="progress-timeline"]')).to_contain_text("ended ")
        return ReasoningSession.objects.get(problem_text=PROBLEM)

    def recommendation(self, page, session):
        from reasoning.models import ReasoningNode

        final = ReasoningNode.objects.get(pk=session.final_node_id)
        steps = page.locator('[data-testid="answer-steps"] button')
        expect(steps).to_have_count(final.depth)
        steps.last.click()
        expect(page.locator(f'g.node.selected[data-node-id="{final.id}"]')).to_have_count(1)
        expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(final.thought)
        page.click('[data-testid="tab-answer"]')  # the answer and the inspector share the panel
        page.click('[data-testid="answer-copy"]')
        expect(page.locator('[data-testid="answer-copy"]')).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == session.final_answer
        page.screenshot(path="/tmp/pages-session.png")

    def prompt_and_reply(self, page, session):
        """The selected node's ledger rows, one click away: each attempt's prompt as sent and the raw reply."""
        from reasoning.models import LLMCall, ReasoningNode

        written = ReasoningNode.objects.filter(session=session).exclude(model_used="").count()
        expect(page.locator('[data-testid="session-models"]')).to_have_text(
            f"offline/sim: {written} of {written} nodes"
        )
        page.click('[data-testid="tab-inspector"]')
        expect(page.locator('[data-testid="insp-model"]')).to_have_text("offline/sim")
        page.click('[data-testid="insp-calls"] summary')
        calls = LLMCall.objects.filter(node_id=session.final_node_id).order_by("created_at")
        shown = page.locator("#insp-calls-list .insp-call")
        expect(shown).to_have_count(calls.count())
        evaluation = calls.get(purpose="tot.evaluate")
        first = shown.filter(has_text="tot.evaluate")
        expect(first.locator(".insp-call-head")).to_contain_text("attempt 1 · offline/sim · ok · parsed")
        expect(first.locator(".insp-call-prompt")).to_have_text(evaluation.prompt)
        expect(first.locator(".insp-call-reply")).to_have_text(evaluation.reply)
        expect(page.locator("#insp-calls-status")).to_contain_text(f"{calls.count()} calls")
        page.screenshot(path="/tmp/pages-ledger.png")

    def compare(self, page, session):
        from reasoning.models import ReasoningNode

        final = ReasoningNode.objects.get(pk=session.final_node_id)
        other = ReasoningNode.objects.filter(session=session, depth=final.depth).exclude(pk=final.pk).first()
        page.click('[data-testid="compare-button"]')
        page.locator(f'g.node[data-node-id="{other.id}"]').click()
        panel = page.locator('[data-testid="compare-panel"]')
        expect(panel).to_be_visible()
        expect(panel.locator('[data-testid="compare-left"] .cmp-thought')).to_have_text(final.thought)
        expect(panel.locator('[data-testid="compare-right"] .cmp-thought')).to_have_text(other.thought)
        expect(panel.locator('[data-testid="compare-left"] .cmp-path li')).to_have_count(final.depth + 1)
        page.screenshot(path="/tmp/pages-compare.png")
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden()

    def report(self, page, session):
        from reasoning.models import ReasoningNode

        page.click('[data-testid="report-link"]')
        page.wait_for_url("**/report/")
        answer = page.locator('[data-testid="report-answer"]')
        expect(answer).to_contain_text(session.final_answer.split("\n")[0][:60])
        final = ReasoningNode.objects.get(pk=session.final_node_id)
        expect(page.locator('[data-testid="report-path"] li')).to_have_count(final.depth)
        expect(page.locator('[data-testid="report-status"]')).to_have_text("Solved")
        page.emulate_media(media="print")
        page.screenshot(path="/tmp/pages-report.png", full_page=True)
        page.emulate_media(media="screen")

    def unpriced_model(self, page):
        """A session on a model nobody priced, allowed by the operator: the page says it is counted at the default."""
        from reasoning.models import ReasoningSession

        session = ReasoningSession.objects.create(
            tenant=self.tenant,
            problem_text="Plan the gifting of a holiday home worth CHF 1.2m to two children.",
            model_primary="openai/unpriced",
            prices={"openai/unpriced": {"input": 1.0, "output": 4.0, "source": "default"}},
            status="cancelled",
        )
        page.goto(f"{self.live_server_url}/sessions/{session.id}/")
        expect(page.locator('[data-testid="session-unpriced"]')).to_have_text(
            "openai/unpriced counted at the default price"
        )
        expect(page.locator('[data-testid="session-models"]')).to_have_text("openai/unpriced")

    def sessions_list(self, page):
        from reasoning.models import ReasoningSession

        ReasoningSession.objects.create(tenant=self.tenant, problem_text=OTHER, mode="tot", model_primary="offline/sim")
        page.goto(f"{self.live_server_url}/")
        rows = page.locator("table.sessions tbody tr")
        expect(rows).to_have_count(2)
        solved = rows.filter(has_text=PROBLEM[:40])
        expect(solved.locator('[data-testid="answer-preview"]')).to_be_visible()
        expect(solved.locator('[data-testid="node-count"]')).to_have_text(re.compile(r"^[1-9]\d*$"))
        page.screenshot(path="/tmp/pages-list.png")
        page.fill('[data-testid="session-search"]', "holiday home")
        page.click("text=Filter")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("holiday home")
