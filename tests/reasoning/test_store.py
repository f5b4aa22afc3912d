"""The store: the whole tree loaded for a strategy, pruning as a property of a subtree, ledger rows with their nodes."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from django.db.models import F

from reasoning import states
from reasoning.fence import RunLost
from reasoning.models import LLMCall, ReasoningCritique, ReasoningEdge, ReasoningNode, ReasoningSession
from reasoning.store import DjangoStore
from reasoning.strategies.base import Answer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def session(alice):
    return ReasoningSession.objects.create(
        tenant=alice.tenant,
        problem_text="Plan it.",
        model_primary="offline/sim",
        budget_usd=1.0,
        budget_reserved_usd=0.5,
    )


def grow(session):
    def add(parent, thought):
        return ReasoningNode.objects.create(
            tenant=session.tenant,
            session=session,
            parent=parent,
            depth=parent.depth + 1 if parent else 0,
            thought=thought,
        )

    root = add(None, "root")
    a, b = add(root, "a"), add(root, "b")
    a1 = add(a, "a1")
    a11 = add(a1, "a11")
    ReasoningEdge.objects.create(tenant=session.tenant, session=session, from_node=a, to_node=a1, action="lookup()")
    ReasoningCritique.objects.create(
        tenant=session.tenant, session=session, node=a1, attempt_num=1, outcome_score=0.3, critique="Too vague."
    )
    return root, a, b, a1, a11


def test_it_loads_the_whole_tree_with_children_edges_and_critiques(session):
    root, a, b, a1, _ = grow(session)
    store = DjangoStore(session)
    assert len(store.nodes()) == 5
    assert [n.thought for n in store.children(store.get(root.id))] == ["a", "b"]
    assert [n.thought for n in store.path(store.get(a1.id))] == ["root", "a", "a1"]
    assert store.edges()[0].action == "lookup()" and store.edges()[0].to_id == str(a1.id)
    assert store.critiques()[0].critique == "Too vague." and store.get("not-an-id") is None


async def test_a_prune_takes_a_whole_subtree_out_of_the_search(session):
    root, a, b, a1, a11 = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    await ReasoningNode.objects.filter(pk=a.id).aupdate(pruned=True, pruned_by="overseer")
    assert not store.is_pruned(store.get(a11.id))  # not seen until a step boundary
    await store.refresh()
    assert [store.is_pruned(store.get(n.id)) for n in (root, a, b, a1, a11)] == [False, True, False, True, True]


async def test_children_arriving_under_a_branch_pruned_meanwhile_are_kept_and_known_to_be_out(session):
    root, a, b, a1, a11 = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    await ReasoningNode.objects.filter(pk=a.id).aupdate(pruned=True, pruned_by="overseer")  # while the call flew
    children = await store.add_children(store.get(a11.id), [{"thought": "late"}], None)
    assert await ReasoningNode.objects.filter(pk=children[0].id).aexists()
    assert store.is_pruned(children[0])


async def test_an_answers_ledger_rows_are_written_with_the_node_it_produced(session):
    root, *_ = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    record = LLMCall(
        tenant_id=session.tenant_id,
        session_id=session.id,
        node_id=root.id,
        purpose="tot.propose",
        model_requested="offline/sim",
        outcome="ok",
        cost_usd=0.01,
    )
    answer = Answer(parsed=None, model="offline/sim", cost_usd=0.01, latency_ms=5, records=[record])
    children = await store.add_children(store.get(root.id), [{"thought": "x"}, {"thought": "y"}], answer)
    await session.arefresh_from_db()
    assert await LLMCall.objects.filter(session=session).acount() == 1
    assert sum([c.cost_usd async for c in ReasoningNode.objects.filter(pk__in=[c.id for c in children])]) == 0.01
    assert session.budget_used_usd == pytest.approx(0.01) and session.budget_reserved_usd == pytest.approx(0.49)
    await store.update(children[0], eval_score=0.5, spent=answer)  # written once, however often it is passed
    assert await LLMCall.objects.filter(session=session).acount() == 1
    assert (await ReasoningNode.objects.aget(pk=children[0].id)).cost_usd == pytest.approx(0.005)


async def test_a_tool_step_becomes_an_edge_with_its_action_and_observation(session):
    root, *_ = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    items = [{"thought": "Look up the holdings.", "action": 'portfolio(client="C-1")', "observation": "60% equities"}]
    (child,) = await store.add_children(store.get(root.id), items, None)
    edge = await ReasoningEdge.objects.aget(to_node_id=child.id)
    assert edge.from_node_id == root.id and edge.action == 'portfolio(client="C-1")'
    assert edge.observation == "60% equities" and store.edges()[-1].to_id == child.id


async def test_critiques_are_kept_as_memory_and_marked_when_applied(session):
    root, a, *_ = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    critique = await store.add_critique(store.get(a.id), 2, 0.4, "Name the tax year of each sale.")
    assert [c.critique for c in store.critiques()][-1] == "Name the tax year of each sale."
    await store.mark_applied([critique])
    row = await ReasoningCritique.objects.aget(pk=critique.id)
    assert row.applied_to_next and row.attempt_num == 2 and row.node_id == a.id
    reloaded = await sync_to_async(DjangoStore)(session)
    assert reloaded.critiques()[-1].applied_to_next


async def test_new_children_come_back_before_their_insert_lands_and_later_writes_land_after_it(session, monkeypatch):
    root, *_ = await sync_to_async(grow)(session)
    store = await sync_to_async(DjangoStore)(session)
    held = threading.Event()
    insert = DjangoStore._insert_children

    def held_insert(self, *args):
        assert held.wait(10), "the insert was never let go"
        return insert(self, *args)

    monkeypatch.setattr(DjangoStore, "_insert_children", held_insert)
    # The children are back while their insert waits on the writer thread: their judgements could start now.
    children = await asyncio.wait_for(
        store.add_children(store.get(root.id), [{"thought": "x"}, {"thought": "y"}], None), 5
    )
    assert [c.thought for c in store.children(store.get(root.id))][-2:] == ["x", "y"]
    held.set()
    await store.update_many([(c, {"eval_score": 0.6}) for c in children])  # lands on the inserted rows
    scores = [n.eval_score async for n in ReasoningNode.objects.filter(pk__in=[c.id for c in children])]
    assert scores == [0.6, 0.6]


async def test_a_refused_insert_reaches_the_strategy_at_its_next_write_and_leaves_no_node(session):
    root, *_ = await sync_to_async(grow)(session)
    session.status, session.run_owner = "queued", ""
    await session.asave(update_fields=["status", "run_owner"])
    fence = await sync_to_async(states.claim)(session.id, "old-run")
    store = await sync_to_async(DjangoStore)(session, fence=fence)
    await ReasoningSession.objects.filter(pk=session.id).aupdate(run_epoch=F("run_epoch") + 1)  # taken over
    children = await store.add_children(store.get(root.id), [{"thought": "late"}], None)
    with pytest.raises(RunLost):
        await store.update(children[0], eval_score=0.9)
    assert not await ReasoningNode.objects.filter(thought="late").aexists()
    await store.settled()  # raised once: the run's ending path waits again without a second error
