"""A fork continues under its node in every mode (issue 22, item 5): from a mid-tree node of a session of each mode,
into each mode, the fork's new nodes all grow under the fork's node, its answer's line passes through it, and what
the copy does not carry (terminal flags, another mode's scores, MCTS statistics) is recomputed by the fork's run."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import ReasoningSession
from reasoning.schemas import SessionIn
from tests.runs import act, rows

pytestmark = pytest.mark.django_db(transaction=True)

# A tax sequence: auto picks Reflexion for it, so auto's row is a mode of its own choosing, as a user would meet it.
PROBLEM = (
    "In which order should a retired client in Zurich realise gains across her CHF 2m taxable account and pillar 3a "
    "to minimise tax over 5 years?"
)
MODES = ["tot", "lats", "reflexion", "react", "trm", "auto"]
SMALL = {
    "tot": {"branching": 2, "depth": 3, "keep": 1},
    "lats": {"iterations": 3},
    "reflexion": {"max_attempts": 2, "steps": 3, "threshold": 0.99},
    "react": {"max_steps": 4},
    "trm": {"max_steps": 3},
    "auto": {},
}


async def solved(party, mode):
    data = SessionIn(problem_text=PROBLEM, mode=mode, params=SMALL[mode])
    session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
    await run_session(session.id)
    await session.arefresh_from_db()
    assert ended_honestly(session), (mode, session.error)
    return session


def ended_honestly(session):
    """Solved, or a LATS search that ran its iterations with no terminal line succeeding, which says so (issue 30)."""
    return session.status == "solved" or (session.mode == "lats" and session.termination_reason == "no_success")


async def finished(runner, session_id):
    """The fork once its run ended (its submit reaches the runner from the request's thread, maybe after a drain)."""
    for _ in range(600):
        await runner.drain()
        fork = await ReasoningSession.objects.aget(pk=session_id)
        if fork.status not in ("queued", "running"):
            return fork
        await asyncio.sleep(0.05)
    raise AssertionError(f"fork {session_id} still {fork.status}")


def mid_tree(nodes):
    """A node halfway down the tree that the search went on from: it has children, and it is in the search."""
    inner = [n for n in nodes if n.depth > 0 and not n.pruned and any(c.parent_id == n.id for c in nodes)]
    deepest = max(n.depth for n in inner)
    return min(inner, key=lambda n: (abs(n.depth - max(1, (deepest + 1) // 2)), n.created_at))


def lineage(by_id, node_id):
    ids = []
    while node_id is not None:
        ids.append(node_id)
        node_id = by_id[node_id].parent_id
    return ids


@pytest.mark.parametrize("source_mode", MODES)
async def test_a_fork_from_a_mid_tree_node_continues_under_it_in_every_mode(alice, runner, source_mode):
    source = await solved(alice, source_mode)
    node = mid_tree(await rows(source))
    for mode in MODES:
        fork = await act(services.fork_session, alice.tenant, source.id, "user:tester", str(node.id), mode=mode)
        fork = await finished(runner, fork.id)
        nodes = await rows(fork)
        by_id = {n.id: n for n in nodes}
        copy = next(n for n in nodes if n.source_node_id == node.id)
        new = [n for n in nodes if n.source_node_id is None and n.depth > 0]
        where = f"{source_mode} -> {mode} ({fork.mode}): {fork.status} {fork.termination_reason} {fork.error}"
        assert ended_honestly(fork), where
        assert new, f"{where}: no new node"
        assert all(copy.id in lineage(by_id, n.id) for n in new), f"{where}: a new node outside the fork's node"
        assert fork.final_node_id and copy.id in lineage(by_id, fork.final_node_id), f"{where}: answer off the node"
        above = [n for n in nodes if n.source_node_id and n.depth < copy.depth]
        assert not any(n.is_terminal for n in above), f"{where}: a copied node above the fork's ends a line"
        if fork.mode == "lats":
            root = next(n for n in nodes if n.depth == 0)
            assert root.visit_count >= 1, f"{where}: no iteration ran"  # the source's visits are not the fork's
