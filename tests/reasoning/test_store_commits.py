"""The store's cache follows the database (issue 22, item 6): a write that does not commit changes nothing a strategy
reads, a ledger row whose insert was rolled back stays unsaved for the gateway to write, and an error that ends a run
never silently drops another one beside it."""

import asyncio
import logging

import pytest
from asgiref.sync import sync_to_async
from django.db.models import F

from reasoning import events, sql, states
from reasoning.fence import RunLost
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession
from reasoning.store import DjangoStore
from reasoning.strategies.base import Answer, settle_all

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def session(alice):
    return ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", budget_usd=1.0, status="queued"
    )


def tree(session):
    root = ReasoningNode.objects.create(tenant=session.tenant, session=session, depth=0, thought="root")
    child = ReasoningNode.objects.create(tenant=session.tenant, session=session, parent=root, depth=1, thought="a")
    return root, child


def record(session, node):
    return LLMCall(
        tenant_id=session.tenant_id,
        session_id=session.id,
        node_id=node.id,
        purpose="tot.evaluate",
        model_requested="offline/sim",
        outcome="ok",
        cost_usd=0.01,
    )


async def lost_store(session):
    """A store whose run was taken over: every write it makes is refused (RunLost)."""
    fence = await sync_to_async(states.claim)(session.id, "old-run")
    store = await sync_to_async(DjangoStore)(session, fence=fence)
    await ReasoningSession.objects.filter(pk=session.id).aupdate(run_epoch=F("run_epoch") + 1)
    return store


async def test_a_refused_write_leaves_the_cached_rows_as_the_database_has_them(session):
    _, child = await sync_to_async(tree)(session)
    store = await lost_store(session)
    node = store.get(child.id)
    with pytest.raises(RunLost):
        await store.update(node, eval_score=0.9, eval_reason="judged", visit_count=3)
    with pytest.raises(RunLost):
        await store.prune([node])
    with pytest.raises(RunLost):
        answer = Answer(parsed=None, model="offline/sim", cost_usd=0.01, latency_ms=1, records=[record(session, child)])
        await store.add_critique(node, 1, 0.2, "Too vague.", spent=answer)
    cached = store.get(child.id)
    assert (cached.eval_score, cached.eval_reason, cached.visit_count, cached.pruned) == (None, "", 0, False)
    assert store.rows[child.id].cost_usd == 0.0 and store.critiques() == []


async def test_a_rolled_back_write_leaves_its_ledger_rows_unsaved_and_the_cache_unchanged(session, monkeypatch):
    _, child = await sync_to_async(tree)(session)
    store = await sync_to_async(DjangoStore)(session)
    calls = [record(session, child)]
    answer = Answer(parsed=None, model="offline/sim", cost_usd=0.01, latency_ms=1, records=calls)

    def broken(*args):  # the last statement of the write fails: everything before it is rolled back
        raise RuntimeError("the channel layer's sequence could not be read")

    monkeypatch.setattr(events, "publish", broken)
    with pytest.raises(RuntimeError):
        await store.update(store.get(child.id), eval_score=0.7, spent=answer)
    assert calls[0]._state.adding, "a ledger row the rollback took away must stay for the gateway to write"
    assert not await LLMCall.objects.filter(session=session).aexists()
    assert store.get(child.id).eval_score is None and store.rows[child.id].cost_usd == 0.0
    monkeypatch.undo()
    await store.update(store.get(child.id), eval_score=0.7, spent=answer)  # written again, once
    assert await LLMCall.objects.filter(session=session).acount() == 1
    assert (await ReasoningNode.objects.aget(pk=child.id)).cost_usd == pytest.approx(0.01)


def test_an_insert_inside_an_atomic_that_rolls_back_is_unsaved_again_nested_or_not(session):
    _, child = tree(session)
    inner, outer = record(session, child), record(session, child)
    with pytest.raises(ZeroDivisionError), sql.atomic():
        sql.insert([outer])
        with sql.atomic():
            sql.insert([inner])
        assert not inner._state.adding  # saved as far as the inner block knows
        1 / 0
    assert inner._state.adding and outer._state.adding and not LLMCall.objects.exists()
    with sql.atomic():
        sql.insert([inner])
    assert not inner._state.adding and LLMCall.objects.count() == 1


async def test_two_failed_inserts_raise_one_and_log_the_other(session, caplog):
    store = await sync_to_async(DjangoStore)(session)

    async def fails(why):
        raise RuntimeError(why)

    store.queued = [asyncio.ensure_future(fails("first")), asyncio.ensure_future(fails("second"))]
    with caplog.at_level(logging.ERROR, logger="reasoning.store"), pytest.raises(RuntimeError, match="first"):
        await store.settled()
    assert any(r.exc_info and "second" in str(r.exc_info[1]) for r in caplog.records)


async def test_settle_all_raises_the_first_error_and_logs_the_others(caplog):
    async def fails(why):
        raise ValueError(why)

    async def fine():
        return 1

    with caplog.at_level(logging.ERROR, logger="reasoning.strategies.base"), pytest.raises(ValueError, match="one"):
        await settle_all(fails("one"), fine(), fails("two"))
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["two"]
