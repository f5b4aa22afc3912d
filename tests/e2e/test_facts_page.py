"""The client's fact sheet on the session page, in a real Chromium: the facts read from the problem above the tree,
an advisor correcting, adding and removing one (audited, and back over the socket), a viewer who only reads them, the
inspector's findings with their spans marked, and the answer's figure badge. Screenshots go to /tmp/facts-*.png for a
person to look at. This module is also imported by the spawned server process, so it imports no Django models at the
top.
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest

from .live import LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect

SHOTS = Path("/tmp")
WIDE, SMALL = {"width": 1440, "height": 900}, {"width": 1024, "height": 768}
NODE = 'svg[data-testid="tree"] g.node'
PROBLEM = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock, cost basis $400k, salary $450k; "
    "she is considering an exchange fund, a charitable remainder trust, a donor-advised fund and a collar."
)
STEP = "Sell USD 2.24M of employer stock into an exchange fund; her salary of $400k keeps her in the top bracket."
FINAL_STEP = "Fund a charitable remainder trust with USD 500k of the low-basis shares and collar the rest."
ASTRAY = "Apply the <b>UK</b> capital gains allowance to the sale."
ANSWER = (
    "Move USD 2.24M into an exchange fund over two years, fund a CRT with $3.2 of low-basis stock, collar the rest."
)


def finding(text, within, ok, kind, detail):
    start = within.find(text) if text else -1
    end = start + len(text) if text else -1
    return {"kind": kind, "ok": ok, "text": text, "detail": detail, "start": start, "end": end}


def shot(page, name):
    page.screenshot(path=str(SHOTS / f"facts-{name}.png"))


@pytest.mark.e2e
@needs_chromium
class FactsPageTest(LiveBrowserTestCase):
    offline_latency_ms = "20"

    def checked_session(self):
        """A solved session created from PROBLEM (its facts read as any new session's are), with a path of two steps,
        a step off it, and an answer a person promoted, each with the checker's findings."""
        from django.utils import timezone

        from reasoning import services
        from reasoning.models import ReasoningNode
        from reasoning.schemas import SessionIn

        session = services.create_session(
            self.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), triggered_by="user:e2e", submit=False
        )
        clock = timezone.now() - timedelta(minutes=10)

        def node(parent, thought, checks, score):
            nonlocal clock
            clock += timedelta(seconds=1)
            return ReasoningNode.objects.create(
                tenant=self.tenant,
                session=session,
                parent=parent,
                depth=parent.depth + 1 if parent else 0,
                thought=thought,
                checks=checks,
                eval_score=score,
                eval_reason="capped at 0.3 by the fact check" if any(not c["ok"] for c in checks) else "Specific.",
                model_used="offline/sim" if parent else "",
                created_at=clock,
            )

        root = node(None, PROBLEM, [], None)
        step = node(
            root,
            STEP,
            [
                finding("USD 2.24M", STEP, True, "figure", "USD 2.24M is 70% of the portfolio (USD 3,200,000)"),
                finding("$400k", STEP, False, "label", "$400k is the cost basis, not the salary (USD 450,000)"),
            ],
            0.3,
        )
        final = node(
            step, FINAL_STEP, [finding("USD 500k", FINAL_STEP, True, "figure", "USD 500k: a part of USD 3.2M")], 0.8
        )
        elsewhere = finding("UK", ASTRAY, False, "jurisdiction", "a UK rule; the client is in US-CA")
        astray = node(root, ASTRAY, [elsewhere], 0.3)
        session.status, session.termination_reason = "solved", "solved"
        session.root_node, session.final_node = root, final
        session.final_answer, session.answer_chosen_by = ANSWER, "user:e2e-advisor"
        session.answer_checks = [
            finding("USD 2.24M", ANSWER, True, "figure", "USD 2.24M is 70% of the portfolio"),
            finding("$3.2", ANSWER, False, "figure", "$3.2 is not the client's: USD 3.2M with its scale dropped?"),
            finding("", ANSWER, False, "coverage", "the donor-advised fund the client listed is not addressed"),
        ]
        session.save()
        return session, {"step": step, "final": final, "astray": astray}

    def open(self, browser, session, viewport=WIDE):
        page = self.open_page(browser.new_context(viewport=viewport))
        self.log_in(page)
        page.goto(f"{self.live_server_url}/sessions/{session.id}/")
        expect(page.locator("#conn-status")).to_have_text("finished")
        return page

    def chip(self, page, fact):
        return page.locator(f'[data-testid="fact-list"] li.fact[data-fact-id="{fact.pk}"] .fact-chip')

    # ---- the sheet, above the tree -------------------------------------------------------------------------------

    def test_the_sheet_lists_the_facts_read_from_the_problem_above_the_tree(self):
        from reasoning.models import CaseFact

        session, nodes = self.checked_session()
        facts = list(CaseFact.objects.filter(session=session))
        assert len(facts) >= 5, [f.label for f in facts]  # read from the problem when the session was created
        salary = CaseFact.objects.get(session=session, kind="amount", number=450_000)
        portfolio = CaseFact.objects.get(session=session, kind="amount", number=3_200_000)
        with self.chromium() as browser:
            for viewport, name in ((WIDE, "1440"), (SMALL, "1024")):
                page = self.open(browser, session, viewport)
                sheet = page.locator('[data-testid="fact-list"]')
                expect(sheet.locator("li.fact")).to_have_count(len(facts))
                for fact in facts:  # an instrument named as its label ("collar") shows its name once
                    expect(self.chip(page, fact)).to_contain_text(fact.label)
                    expect(self.chip(page, fact).locator(".fact-kind")).to_have_text(fact.kind)
                expect(self.chip(page, salary).locator(".fact-value-text")).to_have_text("USD 450k")
                expect(self.chip(page, portfolio).locator(".fact-value-text")).to_have_text("USD 3.2M")
                places = [f for f in facts if f.kind == "place"]
                if places and places[0].value == "US-CA":
                    expect(self.chip(page, places[0])).to_contain_text("California")
                # The sheet sits above the tree and leaves it most of the panel.
                sheet_box = page.locator('[data-testid="fact-sheet"]').bounding_box()
                stage_box = page.locator("#tree-stage").bounding_box()
                assert sheet_box["y"] + sheet_box["height"] <= stage_box["y"] + 1, (sheet_box, stage_box)
                assert stage_box["height"] >= 0.45 * viewport["height"], (viewport, sheet_box, stage_box)
                # Hover shows the words the client wrote.
                self.chip(page, portfolio).hover()
                tip = page.locator('[data-testid="fact-tip"]')
                expect(tip).to_be_visible()
                expect(tip).to_contain_text("USD 3,200,000")
                expect(tip).to_contain_text(portfolio.text)
                shot(page, f"{name}-sheet-hover")
                # A node's inspector is in view, below the sheet.
                page.locator(f'{NODE}[data-node-id="{nodes["step"].id}"]').dispatch_event("click")
                thought = page.locator('[data-testid="inspector-thought"]')
                expect(thought).to_be_in_viewport()
                shot(page, f"{name}-inspector")
                # Collapsed, the sheet is one line and the tree grows into the room.
                page.click('[data-testid="fact-sheet-toggle"]')
                expect(sheet).to_be_hidden()
                page.wait_for_function(
                    f"document.getElementById('tree-stage').getBoundingClientRect().height > {stage_box['height'] + 20}"
                )
                shot(page, f"{name}-collapsed")
                page.click('[data-testid="fact-sheet-toggle"]')  # remembered by the browser: leave it open
                expect(sheet).to_be_visible()
                page.context.close()
        assert self.page_errors == []

    # ---- an advisor corrects, adds and removes ------------------------------------------------------------------

    def test_an_advisor_corrects_adds_and_removes_a_fact_and_the_audit_trail_shows_it(self):
        from reasoning.models import CaseFact, OverseerAction

        session, _ = self.checked_session()
        salary = CaseFact.objects.get(session=session, kind="amount", number=450_000)
        with self.chromium() as browser:
            page = self.open(browser, session)
            self.chip(page, salary).click()
            form = page.locator('[data-testid="fact-form"]')
            expect(form).to_be_visible()
            expect(page.locator('[data-testid="fact-value"]')).to_have_value("450,000")
            # A value the server cannot read: its 422 is shown next to the field.
            page.fill('[data-testid="fact-value"]', "a lot")
            page.click('[data-testid="fact-submit"]')
            error = page.locator('[data-testid="fact-value-error"]')
            expect(error).to_be_visible()
            expect(error).not_to_be_empty()
            expect(page.locator('[data-testid="fact-value"]')).to_have_attribute("aria-invalid", "true")
            shot(page, "1440-edit-error")
            # The correction: it comes back over the socket, marked as an advisor's, and is audited.
            page.fill('[data-testid="fact-value"]', "475,000")
            page.click('[data-testid="fact-submit"]')
            expect(form).to_be_hidden()
            expect(self.chip(page, salary).locator(".fact-value-text")).to_have_text("USD 475k")
            expect(self.chip(page, salary).locator(".fact-advisor")).to_be_visible()
            trail = page.locator('[data-testid="audit-trail"]')
            expect(trail.locator('li.audit-item[data-action="fact.edit"]')).to_have_count(1)
            shot(page, "1440-edited")
            salary.refresh_from_db()
            assert salary.value == 475_000 and salary.source == "advisor"
            # An addition, then its removal.
            count = page.locator('[data-testid="fact-list"] li.fact').count()
            page.click('[data-testid="fact-add"]')
            page.fill('[data-testid="fact-label"]', "retirement")
            page.select_option('[data-testid="fact-kind"]', "goal")
            page.fill('[data-testid="fact-value"]', "retire at 62")
            page.set_viewport_size(SMALL)  # the open form leaves the tree room on a small screen too
            stage = page.locator("#tree-stage").bounding_box()
            assert stage["height"] >= 0.3 * SMALL["height"], stage
            shot(page, "1024-add-form")
            page.set_viewport_size(WIDE)
            page.click('[data-testid="fact-submit"]')
            added = page.locator('[data-testid="fact-list"] li.fact', has_text="retire at 62")
            expect(added).to_have_count(1)
            expect(page.locator('[data-testid="fact-list"] li.fact')).to_have_count(count + 1)
            expect(trail.locator('li.audit-item[data-action="fact.add"]')).to_have_count(1)
            added.locator(".fact-chip").click()
            page.click('[data-testid="fact-remove"]')
            page.click('[data-testid="fact-remove-yes"]')
            expect(added).to_have_count(0)
            expect(trail.locator('li.audit-item[data-action="fact.remove"]')).to_have_count(1)
        actions = set(OverseerAction.objects.filter(session=session).values_list("action", flat=True))
        assert {"fact.edit", "fact.add", "fact.remove"} <= actions
        assert self.page_errors == []

    def test_an_advisor_adds_a_limit_with_its_role_and_an_amount_keeps_its_typed_currency(self):
        from reasoning.models import CaseFact

        session, _ = self.checked_session()
        with self.chromium() as browser:
            page = self.open(browser, session, WIDE)
            chips = page.locator('[data-testid="fact-list"] li.fact')
            page.click('[data-testid="fact-add"]')
            expect(page.locator('[data-testid="fact-unit"]')).to_have_value("")  # no USD to win over the typed EUR
            page.fill('[data-testid="fact-label"]', "holiday flat")
            page.fill('[data-testid="fact-value"]', "EUR 1.8M")
            page.click('[data-testid="fact-submit"]')
            expect(chips.filter(has_text="EUR 1.8M")).to_have_count(1)
            page.click('[data-testid="fact-add"]')
            page.fill('[data-testid="fact-label"]', "cash floor")
            page.select_option('[data-testid="fact-kind"]', "limit")
            page.select_option('[data-testid="fact-role"]', "floor")
            page.fill('[data-testid="fact-value"]', "18")
            page.fill('[data-testid="fact-unit"]', "months")
            page.fill('[data-testid="fact-base"]', "expenses")
            shot(page, "1440-add-limit")
            page.click('[data-testid="fact-submit"]')
            limit = chips.filter(has_text="floor 18 months")
            expect(limit).to_have_count(1)
            expect(limit).to_contain_text("of expenses")
        flat = CaseFact.objects.get(session=session, label="holiday flat")
        assert (flat.number, flat.unit) == (1_800_000, "EUR")
        floor = CaseFact.objects.get(session=session, label="cash floor")
        assert (floor.kind, floor.number, floor.unit, floor.role, floor.base) == ("limit", 18, "months", "floor", "expenses")
        assert self.page_errors == []

    def test_a_viewer_reads_the_sheet_with_no_way_to_change_it(self):
        from reasoning.models import CaseFact, Role

        self.user.membership.role = Role.VIEWER
        self.user.membership.save()
        session, _ = self.checked_session()
        salary = CaseFact.objects.get(session=session, kind="amount", number=450_000)
        with self.chromium() as browser:
            page = self.open(browser, session, SMALL)
            expect(self.chip(page, salary)).to_be_visible()
            expect(page.locator('[data-testid="fact-add"]')).to_be_hidden()
            expect(self.chip(page, salary)).to_have_attribute("aria-disabled", "true")
            self.chip(page, salary).click(force=True)  # it is not offered as a control; a click opens nothing
            expect(page.locator('[data-testid="fact-form"]')).to_be_hidden()
            self.chip(page, salary).focus()  # the client's words on focus too
            expect(page.locator('[data-testid="fact-tip"]')).to_contain_text("$450k")
            shot(page, "1024-viewer")
        assert self.page_errors == []

    # ---- the findings: the inspector and the answer -------------------------------------------------------------

    def test_the_inspector_and_the_answer_show_their_findings_with_the_failed_spans_marked(self):
        session, nodes = self.checked_session()
        with self.chromium() as browser:
            for viewport, name in ((WIDE, "1440"), (SMALL, "1024")):
                page = self.open(browser, session, viewport)
                # The answer a person promoted: its badge in red, its failures listed, its failed span marked.
                badge = page.locator('[data-testid="answer-badge"]')
                expect(badge).to_be_visible()
                expect(badge).to_have_attribute("data-tone", "bad")
                expect(badge).to_contain_text(re.compile(r"figures? checked"))
                failures = page.locator('[data-testid="answer-checks-failed"] li')
                expect(failures).to_have_count(2)
                expect(failures.first).to_contain_text("scale dropped")
                expect(page.locator('[data-testid="final-answer"] mark.check-fail')).to_have_text("$3.2")
                expect(page.locator('[data-testid="final-answer"]')).to_have_text(ANSWER)
                expect(page.locator('[data-testid="answer-checks-note"]')).to_contain_text("stands")
                shot(page, f"{name}-answer-badge")
                # A step's inspector: the failed finding first, in full; the passed one folded; the span marked.
                page.locator(f'{NODE}[data-node-id="{nodes["step"].id}"]').dispatch_event("click")
                checks = page.locator('[data-testid="insp-checks"]')
                expect(checks).to_be_visible()
                failed = checks.locator('[data-testid="insp-checks-failed"] li')
                expect(failed).to_have_count(1)
                expect(failed.first).to_contain_text("label")
                expect(failed.first).to_contain_text("not the salary")
                expect(checks.locator('[data-testid="insp-checks-passed"] summary')).to_have_text("1 figure checked")
                mark = page.locator('[data-testid="inspector-thought"] mark.check-fail')
                expect(mark).to_have_text("$400k")
                expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(STEP)
                expect(checks).to_be_in_viewport()
                shot(page, f"{name}-inspector-findings")
                # Model text stays text: the astray step's <b> is shown, not rendered.
                page.locator(f'{NODE}[data-node-id="{nodes["astray"].id}"]').dispatch_event("click")
                expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(ASTRAY)
                expect(page.locator('[data-testid="inspector-thought"] b')).to_have_count(0)
                expect(page.locator('[data-testid="inspector-thought"] mark.check-fail')).to_have_text("UK")
                expect(page.locator(f'{NODE}[data-node-id="{nodes["astray"].id}"] .mark')).to_have_text("✗")
                if name == "1440":  # the printable report: the sheet and every finding
                    page.goto(f"{self.live_server_url}/sessions/{session.id}/report/")
                    expect(page.locator('[data-testid="report-facts"]')).to_contain_text("USD 3,200,000")
                    expect(page.locator('[data-testid="report-answer-checks"]')).to_contain_text("scale dropped")
                    expect(page.locator('[data-testid="report-failed-steps"]')).to_contain_text("not the salary")
                    page.emulate_media(media="print")
                    page.screenshot(path=str(SHOTS / "facts-report-print.png"), full_page=True)
                page.context.close()
        assert self.page_errors == []

    def test_a_figure_shows_its_chain_back_to_the_client_s_facts_and_the_report_lists_them(self):
        from reasoning.facts.case import CaseCheck
        from reasoning.factsheet import facts_of
        from reasoning.models import CaseFact

        session, nodes = self.checked_session()
        portfolio = CaseFact.objects.get(session=session, kind="amount", number=3_200_000)
        share = CaseFact.objects.get(session=session, kind="percent", number=70)
        case = CaseCheck(facts_of(session))
        stock = {"label": "employer stock", "value": 2_240_000, "unit": "USD",
                 "derivation": f"{share.label} × {portfolio.label}"}  # fmt: skip
        step = nodes["step"]
        step.state = {**step.state, "figures": case.figures([stock], STEP)}
        step.save()
        session.answer_figures = case.figures([stock, {**stock, "label": "slipped", "value": 3.2}], ANSWER)
        session.save()
        with self.chromium() as browser:
            page = self.open(browser, session)
            chain = page.locator('[data-testid="figure-chain"]')
            # In the answer: hovering the figure shows its derivation and the facts with the client's words.
            page.locator('[data-testid="final-answer"] .figure-ref').first.hover()
            expect(chain).to_be_visible()
            expect(chain).to_contain_text(f"= {share.label} × {portfolio.label}")
            expect(chain).to_contain_text(f"{portfolio.label}: USD 3,200,000 (the client wrote \"{portfolio.text}\")")
            expect(chain).to_contain_text(share.text)
            # The slipped figure: marked as failed, its chain says why.
            bad = page.locator('[data-testid="final-answer"] .figure-ref.figure-bad')
            expect(bad).to_have_text("$3.2")
            bad.hover()
            expect(chain).to_contain_text("declared 3.2")
            shot(page, "1440-figure-chain")
            # In a step's inspector, by keyboard focus too.
            page.locator(f'{NODE}[data-node-id="{step.id}"]').dispatch_event("click")
            ref = page.locator('[data-testid="inspector-thought"] .figure-ref')
            expect(ref).to_have_text("USD 2.24M")
            ref.focus()
            expect(chain).to_be_visible()
            expect(chain).to_contain_text("employer stock = USD 2,240,000 ✓")
            expect(page.locator('[data-testid="inspector-thought"]')).to_have_text(STEP)
            # The printed report's appendix: every figure of the answer, its derivation and its facts.
            page.goto(f"{self.live_server_url}/sessions/{session.id}/report/")
            appendix = page.locator('[data-testid="report-figures"]')
            expect(appendix.locator("tbody tr")).to_have_count(2)
            expect(appendix).to_contain_text(f"{share.label} × {portfolio.label}")
            expect(appendix).to_contain_text(portfolio.text)
            page.context.close()
        assert self.page_errors == []

    # ---- a live search, checked as it grows ---------------------------------------------------------------------

    def test_a_live_search_on_a_model_that_errs_is_checked_step_by_step(self):
        """The Californian's problem on offline/noisy, started from the page: the sheet is there from the start, and
        the steps and the answer arrive with their findings."""
        from reasoning.models import ReasoningSession

        with self.chromium() as browser:
            page = self.open_page(browser.new_context(viewport=WIDE))
            self.log_in(page)
            page.goto(f"{self.live_server_url}/sessions/new/")
            page.fill("#id_problem_text", PROBLEM)
            page.select_option("#id_mode", "tot")
            page.fill("#id_model_primary", "offline/noisy")
            page.click("text=Start reasoning")
            page.wait_for_url("**/sessions/*-*-*-*-*/")
            expect(page.locator('[data-testid="fact-list"] li.fact').first).to_be_visible()
            expect(page.locator("#conn-status")).to_have_text("finished", timeout=60_000)
            session = ReasoningSession.objects.get()
            checked = [n for n in session.nodes.filter(depth__gt=0) if n.checks]
            assert checked, "no step was checked against the facts"
            failing = [n for n in checked if any(not c["ok"] for c in n.checks)]
            node = (failing or checked)[0]
            page.locator(f'{NODE}[data-node-id="{node.id}"]').dispatch_event("click")
            expect(page.locator('[data-testid="insp-checks"]')).to_be_visible()
            if failing:
                expect(page.locator('[data-testid="insp-checks-failed"] li').first).to_be_visible()
            shot(page, "1440-live-inspector")
            if session.final_answer:
                page.click('[data-testid="tab-answer"]')
                expect(page.locator('[data-testid="answer-badge"]')).to_contain_text(re.compile(r"figures? checked"))
                shot(page, "1440-live-answer")
        assert self.page_errors == []

    # ---- an answer that fails says so, an unchecked one claims nothing (issue 30) ----------------------------------

    def test_an_answer_that_fails_needs_review_a_summary_is_checked_and_a_stopped_answer_is_not_checked(self):
        from reasoning.models import ReasoningNode, ReasoningSession

        session, nodes = self.checked_session()
        summary = "Equity exposure up to 35.87%, an annual tax bill of $110k."
        failed = finding("$110k", summary, False, "figure", "$110k is neither on the fact sheet nor derived")
        ReasoningNode.objects.filter(pk=nodes["final"].pk).update(
            state={"summary": summary}, checks=nodes["final"].checks + [{**failed, "field": "state.summary"}]
        )
        with self.chromium() as browser:
            page = self.open(browser, session)
            # A person's promote that fails a check stands, under "needs review": never plainly solved.
            expect(page.locator("#progress-status")).to_contain_text("needs review")
            expect(page.locator('[data-testid="answer-review"]')).to_be_visible()
            # The summary shown beside the thought is checked too: its finding named, its span marked where it shows.
            page.locator(f'{NODE}[data-node-id="{nodes["final"].id}"]').dispatch_event("click")
            failures = page.locator('[data-testid="insp-checks-failed"] li')
            expect(failures).to_have_count(1)
            expect(failures.first).to_contain_text("in its summary")
            expect(page.locator("#insp-state mark.check-fail")).to_have_text("$110k")
            expect(page.locator('[data-testid="inspector-thought"] mark.check-fail')).to_have_count(0)
            shot(page, "1440-summary-finding")
            # A cancelled session's partial answer: "not checked", no badge claiming "0 of 0", and why it is partial.
            ReasoningSession.objects.filter(pk=session.pk).update(
                status="cancelled", answer_partial=True, answer_checked=False, answer_checks=[], answer_chosen_by=""
            )
            page = self.open(browser, session)
            page.click('[data-testid="tab-answer"]')
            badge = page.locator('[data-testid="answer-badge"]')
            expect(badge).to_have_text("not checked")
            expect(badge).to_have_attribute("data-tone", "none")
            expect(page.locator('[data-testid="answer-partial-why"]')).to_contain_text("cancelled")
            expect(page.locator('[data-testid="answer-review"]')).to_be_hidden()
            shot(page, "1440-not-checked")
        assert self.page_errors == []

    # ---- four eyes: the review panel (issue 34, section 3) -------------------------------------------------------

    def test_a_reviewer_requests_changes_then_approves_and_an_edit_on_the_answers_line_withdraws_it(self):
        from reasoning.models import OverseerAction, ReasoningSession, Role

        self.tenant.require_review = True
        self.tenant.save()
        self.user.membership.role = Role.ADMIN  # steers and signs off
        self.user.membership.save()
        session, nodes = self.checked_session()
        ReasoningSession.objects.filter(pk=session.pk).update(review_state="awaiting")
        with self.chromium() as browser:
            # The one who chose the answer does not approve it: the button is off, and the panel says why.
            page = self.open(browser, session)
            expect(page.locator('[data-testid="review-state"]')).to_have_text("Awaiting review")
            expect(page.locator('[data-testid="review-approve"]')).to_be_disabled()
            expect(page.locator('[data-testid="review-own"]')).to_be_visible()
            ReasoningSession.objects.filter(pk=session.pk).update(answer_chosen_by="user:ana")
            page = self.open(browser, session)
            watcher = self.open(browser, session)
            panel = page.locator('[data-testid="review-panel"]')
            # A request for changes says why: an empty one is refused at the form.
            page.click('[data-testid="review-changes"]')
            page.click('[data-testid="review-submit"]')
            expect(page.locator('[data-testid="review-error"]')).to_contain_text("needs a comment")
            page.fill('[data-testid="review-text"]', "Name the tranches and their tax years.")
            page.click('[data-testid="review-submit"]')
            for seen in (page, watcher):  # the watcher's page learns it over the socket
                expect(seen.locator('[data-testid="review-state"]')).to_have_text("Changes requested")
                expect(seen.locator('[data-testid="review-comment"]')).to_have_text("Name the tranches and their tax years.")
            expect(page.locator('[data-testid="review-line"]')).to_contain_text("by user:e2e-advisor at")
            shot(page, "review-changes-requested")
            page.click('[data-testid="review-approve"]')
            for seen in (page, watcher):
                expect(seen.locator('[data-testid="review-state"]')).to_have_text("Approved")
            expect(panel).to_have_attribute("data-state", "approved")
            expect(page.locator('[data-testid="review-approve"]')).to_be_hidden()  # it stands: only changes are asked
            audit = page.locator('#audit-list li[data-action="review.approve"]')
            expect(audit).to_contain_text("user:e2e-advisor")
            expect(page.locator('[data-testid="review-comment"]')).to_be_hidden()
            shot(page, "review-approved")
            # An edit on the answer's line withdraws the approval, at once and with its reason, on every page.
            edited = page.evaluate(
                "([id]) => window.Explorer.request('POST', `nodes/${id}/edit`, {thought: 'Sell in four tranches.'})",
                [str(nodes["step"].id)],
            )
            assert edited["ok"], edited
            for seen in (page, watcher):
                expect(seen.locator('[data-testid="review-state"]')).to_have_text("Awaiting review")
                expect(seen.locator('[data-testid="review-reason"]')).to_contain_text(
                    "approval by user:e2e-advisor withdrawn: user:e2e-advisor edited step 1 of the answer's line"
                )
            shot(watcher, "review-withdrawn")
        actions = list(OverseerAction.objects.filter(action__startswith="review.").values_list("action", flat=True))
        assert actions[:3] == ["review.request_changes", "review.approve", "review.withdrawn"], actions
        assert self.page_errors == []
