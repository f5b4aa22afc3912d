"""Commands and their outcomes at the edges: a command saved as its run ends, a crash between a command's effect and its
outcome, a person's choice against later actions, a prune as the answer is written."""

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from reasoning import engine, services
from reasoning.engine import run_session
from reasoning.models import OverseerAction, ReasoningNode, ReasoningSession, Status
from reasoning.schemas import SessionIn
from reasoning.strategies.base import Outcome
from tests.runs import HookedGateway, act, rows

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Plan the sequence for realising CHF 1.2m of gains across three tax years for a Zurich couple."


@pytest.fixture
def running(alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan it.", model_primary="offline/sim", status=Status.RUNNING, mode="tot"
    )
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=session, depth=0, thought="root")
    child = ReasoningNode.objects.create(
        tenant=alice.tenant, session=session, parent=root, depth=1, thought="a step", eval_score=0.6
    )
    return session, child


def in_thread(fn, *args):
    """Run fn on a thread of its own (its own database connection); the thread, started, and what fn left."""
    out = {}

    def body():
        try:
            out["value"] = fn(*args)
        except BaseException as error:  # handed to the test, which asserts on it
            out["error"] = error
        finally:
            connection.close()

    thread = threading.Thread(target=body)
    thread.start()
    return thread, out


def waits_on_a_lock(pid):
    """True while that PostgreSQL backend waits for a lock another transaction holds."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", [pid])
        return cursor.fetchone()[0] > 0


def backend_pid():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one write transaction at a time")
def test_a_command_saved_as_its_run_finishes_is_never_stranded(alice, running, monkeypatch):
    """The run ends while the command is being saved: either it sees the command or the command sees its end."""
    session, child = running
    create = OverseerAction.objects.create
    finishing = {}

    def finish_the_run():
        finishing["pid"] = backend_pid()
        ready.set()
        engine.finish(session.id, Outcome("An answer.", None, "solved"))

    def create_after_the_run_finishes(**fields):
        # The run finishes now, between the command's look at the session and its insert; with the session locked,
        # the finish waits for the command instead (seen as a wait on a lock), and then sees it.
        thread, out = in_thread(finish_the_run)
        ready.wait()
        deadline = time.monotonic() + 30
        while thread.is_alive() and not waits_on_a_lock(finishing["pid"]) and time.monotonic() < deadline:
            time.sleep(0.005)  # a poll for the finish's state, never a guess at how long it takes
        finishing["thread"], finishing["out"] = thread, out
        return create(**fields)

    ready = threading.Event()
    monkeypatch.setattr(OverseerAction.objects, "create", create_after_the_run_finishes)
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    action = services.expand_node(alice.tenant, child.id, "user:tester", 2)
    finishing["thread"].join()
    assert "error" not in finishing["out"]

    session.refresh_from_db()
    assert OverseerAction.objects.get(pk=action.pk).state == "pending"
    # Solved with a pending command and no run is the stranded command; queued, the session takes a turn for it.
    assert session.status == Status.QUEUED and session.final_answer == "An answer."


# ---- a prune as the answer is written --------------------------------------------------------------------------------


async def start_tot(party, params):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params=params)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


async def run_to_rest(session, gateway=None):
    """Every turn the session asks for (a prune of its answer's branch asks for one more), as the runner gives them."""
    while await run_session(session.id, gateway=gateway) == engine.REQUEUED:
        gateway = None
    await session.arefresh_from_db()
    return session


async def branch_of(node_id):
    """The depth-1 node the node's line goes through."""
    node = await ReasoningNode.objects.aget(pk=node_id)
    while node.depth > 1:
        node = await ReasoningNode.objects.aget(pk=node.parent_id)
    return node


async def assert_answer_in_a_live_branch(session, pruned):
    nodes = await rows(session)
    under = {pruned.id} | {n.id for n in nodes if n.depth > 1 and (await branch_of(n.id)).id == pruned.id}
    assert session.status == "solved" and session.final_answer and session.final_node_id not in under


async def test_a_prune_during_the_final_synthesis_writes_the_answer_from_a_live_branch(alice):
    session = await start_tot(alice, {"branching": 2, "depth": 2, "keep": 2})
    pruned = {}

    async def prune_the_answers_branch_as_it_is_written(n, contract):
        if contract.name == "tot.synthesize" and not pruned:
            best = max((r for r in await rows(session) if r.depth == 2 and not r.pruned), key=lambda r: r.eval_score)
            pruned["node"] = await branch_of(best.id)
            await act(services.set_pruned, alice.tenant, pruned["node"].id, "user:tester", pruned=True)

    gateway = await sync_to_async(HookedGateway)(session, prune_the_answers_branch_as_it_is_written)
    await run_to_rest(session, gateway)
    assert pruned and len(gateway.prompts_for("tot.synthesize")) >= 2
    await assert_answer_in_a_live_branch(session, pruned["node"])


async def test_a_prune_after_the_strategys_last_look_still_moves_the_answer(alice, monkeypatch):
    """The prune lands after the strategy checked its answer's branch and before the run's end is written."""
    session = await start_tot(alice, {"branching": 2, "depth": 2, "keep": 2})
    finish, pruned = engine.finish, {}

    def prune_then_finish(session_id, outcome, fence=None):
        if outcome.final_node is not None and not pruned:
            node = ReasoningNode.objects.get(pk=outcome.final_node.id)
            while node.depth > 1:
                node = node.parent
            pruned["node"] = node
            services.set_pruned(alice.tenant, node.id, "user:tester", pruned=True)
        return finish(session_id, outcome, fence)

    monkeypatch.setattr(engine, "finish", prune_then_finish)
    await run_to_rest(session)
    assert pruned
    await assert_answer_in_a_live_branch(session, pruned["node"])


# ---- a person's choice ----------------------------------------------------------------------------------------------


async def test_a_persons_promote_stands_through_a_later_edit_elsewhere_until_a_person_changes_it(alice, runner):
    session = await start_tot(alice, {"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    await session.arefresh_from_db()
    best = session.final_node_id
    chosen = next(r for r in await rows(session) if r.depth == 2 and r.id != best)  # the search's runner-up
    await act(services.set_pruned, alice.tenant, chosen.id, "user:tester", pruned=False)
    await act(services.promote_node, alice.tenant, chosen.id, "user:tester", "Lower tax drag for this client.")
    await runner.drain()
    await session.arefresh_from_db()
    assert session.final_node_id == chosen.id and session.answer_chosen_by == "user:tester"

    # An edit off the chosen line: rescored, its session's turn ends, and the person's choice is still the answer.
    elsewhere = next(r for r in await rows(session) if r.depth == 1 and r.id != chosen.parent_id)
    await act(services.edit_node, alice.tenant, elsewhere.id, "user:other", "Realise the gains in one year instead.")
    await runner.drain()
    await session.arefresh_from_db()
    assert (await OverseerAction.objects.aget(session=session, action="edit")).state == "applied"
    assert session.status == "solved" and session.final_node_id == chosen.id
    assert session.answer_chosen_by == "user:tester" and session.answer_note == "Lower tax drag for this client."

    # An expand under the chosen node adds deeper children; the answer stays where the person put it, unwritten again.
    answer = session.final_answer
    expand = await act(services.expand_node, alice.tenant, chosen.id, "user:other", 2)
    await runner.drain()
    await session.arefresh_from_db()
    assert (await OverseerAction.objects.aget(pk=expand.id)).state == "applied"
    assert session.final_node_id == chosen.id and session.final_answer == answer and session.answer_chosen_by

    # A person pruning the chosen branch changes it: the answer moves to the best live line, chosen by nobody.
    await act(services.set_pruned, alice.tenant, chosen.id, "user:tester", pruned=True)
    await runner.drain()
    await session.arefresh_from_db()
    assert session.final_node_id != chosen.id and session.final_answer and not session.answer_chosen_by


# ---- a crash between a command's effect and its outcome --------------------------------------------------------------


async def test_an_expand_cut_off_before_its_outcome_is_applied_once_on_the_next_run(alice, monkeypatch):
    from reasoning import control

    session = await start_tot(alice, {"branching": 2, "depth": 2, "keep": 1})
    await run_session(session.id)
    await session.arefresh_from_db()
    before = len(await rows(session))
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)  # this test gives the turns itself
    action = await act(services.expand_node, alice.tenant, session.final_node_id, "user:tester", 3)
    record = control.record_outcome

    def cut_before_the_record(*args, **kwargs):
        raise asyncio.CancelledError  # the worker stops after the children landed, before the outcome is written

    monkeypatch.setattr(control, "record_outcome", cut_before_the_record)
    with pytest.raises(asyncio.CancelledError):
        await run_session(session.id)
    assert len(await rows(session)) == before + 3
    assert (await OverseerAction.objects.aget(pk=action.id)).state == "pending"

    monkeypatch.setattr(control, "record_outcome", record)
    await act(services.resume_session, alice.tenant, session.id, "user:tester")
    await run_to_rest(session)
    await action.arefresh_from_db()
    nodes = await rows(session)
    assert action.state == "applied" and len(nodes) == before + 3
    assert sorted(action.after["children"]) == sorted(str(n.id) for n in nodes if n.state.get("command") == action.id)


# ---- a prune during a Tree of Thoughts level -------------------------------------------------------------------------


async def test_a_parent_pruned_as_its_level_is_proposed_gives_its_beam_slot_to_the_next_best(alice):
    session = await start_tot(alice, {"branching": 3, "depth": 2, "keep": 2})
    pruned, gateway = {}, None

    async def prune_the_parent_being_proposed_under(n, contract):
        if contract.name != "tot.propose" or pruned.get("asked"):
            return
        steps = gateway.prompts[-1][1].split("### STEPS SO FAR\n", 1)[1].split("### ALREADY PROPOSED", 1)[0]
        if "1." not in steps:
            return  # the root's proposals
        pruned["asked"] = True  # the first proposal under a depth-1 node (the level's others are asked meanwhile)
        pruned["node"] = next(r for r in await rows(session) if r.depth == 1 and r.thought in steps)
        await act(services.set_pruned, alice.tenant, pruned["node"].id, "user:tester", pruned=True)

    gateway = await sync_to_async(HookedGateway)(session, prune_the_parent_being_proposed_under)
    await run_to_rest(session, gateway)
    nodes = await rows(session)
    level_one = [n for n in nodes if n.depth == 1]
    live_parents = {n.parent_id for n in nodes if n.depth == 2} - {pruned["node"].id}
    # Two live parents, as the beam says: the depth-1 node left out of the beam took the pruned one's slot.
    assert session.status == "solved" and len(level_one) == 3 and len(live_parents) == 2
    assert all(not n.pruned for n in level_one if n.id in live_parents)


# ---- a run that ends without applying its commands ------------------------------------------------------------------


def test_a_run_that_fails_refuses_the_commands_it_never_applied(alice, running):
    session, child = running
    action = services.expand_node(alice.tenant, child.id, "user:tester", 2)
    engine.failed(session.id, RuntimeError("the database went away"))
    action.refresh_from_db()
    assert ReasoningSession.objects.get(pk=session.id).status == "failed"
    assert action.state == "refused" and action.detail.startswith("the run failed before applying it: RuntimeError")


def test_a_cancel_refuses_the_commands_no_run_applied(alice, running):
    session, child = running
    action = services.expand_node(alice.tenant, child.id, "user:tester", 2)
    services.cancel_session(alice.tenant, session.id, "user:other")
    action.refresh_from_db()
    assert action.state == "refused" and "cancelled by user:other" in action.detail
