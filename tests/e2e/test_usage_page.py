"""The admin's usage page in Chromium (issue 25, part 2): the month against the cap, the chart of cost by day stacked by
model (d3 from npm), the table below it and the CSV export, under the pages' Content-Security-Policy. A screenshot is
kept in the test's tmp path. This module is also imported by the spawned server process: no models at the top."""

from datetime import timedelta

import pytest

from .live import VIEWPORT, LiveBrowserTestCase, needs_chromium, sync_api

expect = sync_api.expect
MODELS = ("offline/sim", "openai/gpt-4o-mini")
SPEND = [(0, MODELS[0], 0.02), (0, MODELS[1], 0.05), (1, MODELS[1], 0.03), (3, MODELS[0], 0.01)]  # days ago, model, USD


@pytest.mark.e2e
@needs_chromium
class UsagePageTest(LiveBrowserTestCase):
    offline_latency_ms = "0"

    @pytest.fixture(autouse=True)
    def keep_tmp_path(self, tmp_path):
        self.tmp_path = tmp_path

    def setUp(self):
        super().setUp()
        from django.utils import timezone

        from reasoning.models import LLMCall, Membership, ModelMeter, ReasoningSession, Role, Tenant

        Membership.objects.filter(user=self.user).update(role=Role.ADMIN)
        self.user.is_staff = True
        self.user.save(update_fields=["is_staff"])
        Tenant.objects.filter(pk=self.tenant.pk).update(monthly_cap_usd=2.0)
        self.today = timezone.now()
        for age, model, cost in SPEND:
            session = ReasoningSession.objects.create(
                tenant=self.tenant, problem_text="Plan a transfer.", mode="tot", status="solved", model_primary=model
            )
            LLMCall.objects.create(
                tenant=self.tenant, session=session, purpose="propose", model_requested=model, model_used=model,
                cost_usd=cost, outcome=LLMCall.Outcome.OK, tokens_in=300, tokens_out=80,
                created_at=self.today - timedelta(days=age),
                reserved_usd=cost - 0.02 if age == 1 else 0.0,  # issue 32: a call its server billed past its reservation
            )
        ModelMeter.objects.create(model=MODELS[1], calls_over=1, over_usd=0.02, worst_tokens_out=19859, worst_usd=0.03)

    def test_the_usage_page_draws_cost_by_day_stacked_by_model(self):
        base = self.live_server_url
        start = (self.today - timedelta(days=6)).date().isoformat()
        with self.chromium() as browser:
            # Under the real CSP: the chart is an ES module and d3 a file from node_modules, nothing inline.
            page = self.open_page(browser.new_context(viewport=VIEWPORT, bypass_csp=False))
            violations = []
            page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
            self.log_in(page)
            page.goto(f"{base}/admin/reasoning/tenant/")
            page.click('[data-testid="usage-link"]')
            page.goto(f"{page.url}&start={start}&group_by=model")
            chart = page.locator('[data-testid="usage-chart"] svg')
            expect(chart).to_be_visible()
            expect(page.locator('[data-testid="usage-chart"] svg g[data-model] rect')).to_have_count(7 * len(MODELS))
            for model in MODELS:
                expect(page.locator('[data-testid="usage-legend"]')).to_contain_text(model)
            expect(page.locator('[data-testid="month-cap"]')).to_have_text("2.0000 USD")
            table = page.locator('[data-testid="usage-table"]')
            expect(table.locator("tbody tr")).to_have_count(len(MODELS))
            expect(table.locator("tfoot")).to_contain_text("0.1100 USD")
            overrun = page.locator(f'[data-testid="usage-overruns"] tr[data-model="{MODELS[1]}"]')
            expect(overrun).to_contain_text("1 calls, 0.020000 USD")
            expect(overrun).to_contain_text("19859 reply tokens")
            path = self.tmp_path / "usage.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 5000
            with page.expect_download() as download:
                page.click('[data-testid="usage-csv"]')
            csv_text = open(download.value.path(), encoding="utf-8").read()
            assert csv_text.startswith("group,label,cost_usd") and "openai/gpt-4o-mini" in csv_text
        assert self.page_errors == [] and violations == []
