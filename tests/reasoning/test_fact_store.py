"""The store checks each new thought against the client's facts and keeps the findings on the node; a judgement of a
node with a failed check is capped (reasoning.facts.check.CAP), saying why, so the search ranks it below sound steps."""

import pytest
from asgiref.sync import sync_to_async

from reasoning.facts.case import CaseCheck
from reasoning.facts.check import CAP
from reasoning.models import ReasoningNode, ReasoningSession
from reasoning.store import DjangoStore
from tests.reasoning.test_fact_answers import FACTS, PROBLEM

pytestmark = pytest.mark.django_db(transaction=True)

SOUND = "Sell the USD 2.24M employer stock (70% of USD 3.2M = USD 2.24M) in three stages."
SLIP = "Sell USD 450k of NIIT first."


@pytest.fixture
def session(alice):
    return ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text=PROBLEM, model_primary="offline/sim", budget_usd=1.0
    )


async def grown(session, case):
    store = await sync_to_async(DjangoStore)(session, case=case)
    root = await store.add_root(PROBLEM, {})
    sound, slip = await store.add_children(root, [{"thought": SOUND}, {"thought": SLIP}], None)
    await store.update_many([(sound, {"eval_score": 0.9, "eval_reason": "Strong."}), (slip, {"eval_score": 0.9})])
    await store.settled()
    return store, sound, slip


async def test_each_thought_keeps_its_findings_and_a_failed_check_caps_its_score(session):
    store, sound, slip = await grown(session, CaseCheck(FACTS))
    assert store.get(sound.id).eval_score == 0.9 and store.get(slip.id).eval_score == CAP
    row = await ReasoningNode.objects.aget(pk=slip.id)
    assert row.eval_score == CAP and "450k" in row.eval_reason
    assert any(c["kind"] == "label" and not c["ok"] and c["text"] == "USD 450k" for c in row.checks)
    clean = await ReasoningNode.objects.aget(pk=sound.id)
    assert clean.checks and all(c["ok"] for c in clean.checks) and clean.eval_reason == "Strong."
    assert row.to_dict()["checks"] == row.checks


async def test_with_the_checks_off_nothing_is_found_or_capped(session):
    store, _, slip = await grown(session, CaseCheck(FACTS, enabled=False))
    row = await ReasoningNode.objects.aget(pk=slip.id)
    assert row.checks == [] and row.eval_score == 0.9


# A real model's step (issue 30): a sound thought, and a state summary the page shows beside it with figures of its own.
SUMMARY = "Equity exposure up to 35.87% of the portfolio, 162.4% of salary, an annual tax bill of $110k."


async def test_a_state_summary_the_page_shows_is_checked_with_the_thought_and_caps_the_score(session):
    store = await sync_to_async(DjangoStore)(session, case=CaseCheck(FACTS))
    root = await store.add_root(PROBLEM, {})
    [node] = await store.add_children(root, [{"thought": SOUND, "state": {"summary": SUMMARY, "kind": "expand"}}], None)
    await store.update_many([(node, {"eval_score": 1.0, "eval_reason": "Perfect."})])
    await store.settled()
    row = await ReasoningNode.objects.aget(pk=node.id)
    failed = [c for c in row.checks if not c["ok"]]
    assert failed and all(c["field"] == "state.summary" for c in failed)
    assert "162.4%" in {c["text"] for c in failed}
    # a tax bill the summary neither derives nor finds on the sheet: unverified, shown as such, not a failure
    assert any(c["text"] == "$110k" and c["ok"] and c.get("verified") is False for c in row.checks)
    assert all(SUMMARY[c["start"] : c["end"]] == c["text"] for c in failed)  # spans in the text they were found in
    assert row.eval_score == CAP and "capped" in row.eval_reason


async def test_a_summary_a_later_judgement_writes_is_checked_then(session):
    store = await sync_to_async(DjangoStore)(session, case=CaseCheck(FACTS))
    root = await store.add_root(PROBLEM, {})
    [node] = await store.add_children(root, [{"thought": SOUND}], None)
    await store.update_many([(node, {"eval_score": 0.9, "state": {"summary": SUMMARY}})])
    await store.settled()
    row = await ReasoningNode.objects.aget(pk=node.id)
    assert any(not c["ok"] and c["field"] == "state.summary" for c in row.checks) and row.eval_score == CAP
