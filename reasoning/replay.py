"""A session replayed from its ledger: its strategy run again, the ledger's replies in place of the model, the
advisors' actions applied where the runs met them, and the tree that comes out compared node for node.

The replay runs the session's strategy turn by turn, as its runs did (ReasoningSession.turns), on a throwaway store in
memory: no row is written, no event published, no model asked and nothing charged. Its gateway (llm/replay.py)
answers each call from the ledger by contract and prompt. Each recorded action carries where a run met it (its
turn, and the step boundary of that turn: 0 when the run loaded the tree); the replay's control hands it to the
strategy there, and writes an overseer's change of the tree (a prune, an edit) into the store there first, as the
database held it when the run re-read it. Actions no run met (a prune after the last turn) are applied at the end.

Nodes are matched by their place, not their ids (a replay makes new ones): a recorded node and a replayed one match
when their parents match and they hold the same thought as the model wrote it (siblings with the same thought in
the order they were made). The first recorded node, in the order they were made, that has no match or whose match
differs in its thought, score, judgement, pruning or terminal mark is the first divergence; then a replayed node with
no recorded one; then the answer.
"""

import asyncio
import logging
import math
import uuid

from asgiref.sync import async_to_sync, sync_to_async

from . import engine, factsheet
from .control import RUN_COMMANDS, STOPS
from .facts.case import node_checks
from .memory import RecordedMemory
from .facts.sheet import Fact
from .models import CaseFact, LLMCall, OverseerAction, ReasoningNode, ReasoningSession, Status
from .store import DjangoStore, view
from .strategies import best_node_for
from .strategies.base import Command, Critique, Edge, Prior, StopRequested, best_line_text

log = logging.getLogger(__name__)

# What a node must hold alike in the record and the replay (an overseer's stale marks and the checker's findings
# follow from these; costs and latencies are the ledger's, ids and times the run's own).
COMPARED = (
    "thought",
    "eval_score",
    "eval_reason",
    "parse_error",
    "pruned",
    "pruned_by",
    "is_terminal",
    "visit_count",
    "total_reward",
)
FACT_ACTIONS = ("fact.add", "fact.edit", "fact.remove")


class MemoryStore(DjangoStore):
    """The store's own logic (checks of new thoughts, scores capped by failed checks, stale marks cleared only by the
    judgement that saw them) over rows kept in memory only: nothing is saved, nothing published."""

    def __init__(self, session, case):  # noqa: super().__init__ would load the stored tree; a replay starts empty
        self.session_id, self.tenant_id, self.case, self.fence = session.id, session.tenant_id, case, None
        self.wrote_offline, self.queued = True, []
        self.rows, self.kids, self.edge_views, self.critique_views = {}, {}, [], []

    async def _write(self, work, *args):
        await asyncio.sleep(0)  # a write hands over to the database's thread in a run: the siblings go on meanwhile
        return work(*args)

    def _settle(self, spent=0.0):
        pass

    def _add_root(self, thought, state):
        row = ReasoningNode(tenant_id=self.tenant_id, session_id=self.session_id, depth=0, thought=thought, state=state)
        self._remember([row])
        return view(row)

    async def add_children(self, parent, items, answer):
        rows, edges = self._new_children(parent, items, answer)
        self._remember(rows)
        self.edge_views += [Edge(str(e.from_node_id), str(e.to_node_id), e.action, e.observation) for e in edges]
        return [view(row) for row in rows]

    def _update_many(self, changes):
        copies = {}
        staged = [self._apply(node_id, fields, copies) for node_id, fields, _ in changes]
        for (row, _, _), (_, fields, seen) in zip(staged, changes, strict=True):
            if fields.get("stale") is False and seen is not None and row.stale_mark <= seen:
                row.stale, row.stale_reason = False, ""
            self.rows[row.id] = row

    def _prune(self, node_ids):
        for node_id in node_ids:
            row = self.rows[node_id]
            row.pruned, row.pruned_by = True, row.pruned_by or "strategy"

    def _refresh(self):
        pass  # the replay's control writes the overseers' changes at the step boundary they were met at

    def _add_critique(self, node, attempt_num, outcome_score, critique, spent):
        memory = Critique(node.id if node else None, attempt_num, outcome_score, critique, False, str(uuid.uuid4()))
        self.critique_views.append(memory)
        return memory

    def _mark_applied(self, critiques):
        for critique in critiques:
            critique.applied_to_next = True

    # ---- an overseer's change, as services writes it ----

    def overseer_prune(self, node_id, pruned):
        row = self.rows[node_id]
        row.pruned, row.pruned_by = pruned, "overseer" if pruned else ""

    def overseer_edit(self, node_id, thought, actor):
        row = self.rows[node_id]
        row.original_thought = row.original_thought or row.thought
        row.thought, row.checks = thought, node_checks(self.case, thought, row.state)
        for marked in [row, *self.descendants(node_id)]:
            marked.stale, marked.stale_mark = True, marked.stale_mark + 1
            marked.stale_reason = f"edited by {actor}"

    def descendants(self, node_id):
        found, queue = [], list(self.kids.get(node_id, []))
        while queue:
            current = queue.pop()
            found.append(self.rows[current])
            queue.extend(self.kids.get(current, []))
        return found


class ReplayControl:
    """The overseers of one replayed turn: at each step boundary, the recorded actions this turn met there.

    A pause or cancel its run met at step boundary k stopped it there, or during step k: at boundary k the replay
    stops if the run made no call after it, else goes on into step k, and the first call the run never made is the
    stop (ReplayGateway raises it)."""

    def __init__(self, replay, turn):
        self.replay, self.turn, self.steps, self.fence = replay, turn, 0, None
        stops = [a for a in replay.actions if a.turn == turn and a.action in STOPS]
        self.stop = stops[0] if stops else None

    def check(self):
        pass  # a recorded stop is met at its step boundary or at a call the run never made

    def lost(self):
        """Whether this turn's run was lost (a server killed under it: a later turn took the session over with no
        recorded stop here). Its ledger ends where the run did, so the first call it lacks is where the run stopped."""
        return self.stop is None and self.turn < self.replay.session.turns

    def stopping(self):
        """The recorded stop's status once the replay is past where it was met; else None."""
        if self.stop is None or self.steps < self.stop.step:
            return None
        return Status.PAUSED if self.stop.action == "pause" else Status.CANCELLED

    async def checkpoint(self):
        self.steps += 1
        status = self.stopping()
        if status is not None and (self.steps > self.stop.step or not self.replay.book.has_left(self.turn)):
            raise StopRequested(status)
        return self.replay.meet(self.replay.met(self.turn, self.steps))

    async def done(self, command, applied, detail="", after=None):
        self.replay.outcomes.append((command.id, applied, detail))


class Replay:
    """One session's replay: the record, read once, and the replayed tree and answer."""

    def __init__(self, session, calls, actions, sheet):
        from .llm.replay import Book  # litellm loads only where a replay runs, as where a session runs

        self.session, self.actions, self.outcomes = session, actions, []
        self.book = Book(calls)
        self.store = MemoryStore(session, factsheet.case_of(session, [Fact.from_dict(f) for f in sheet]))
        self.sheet = sheet
        self.recorded = []  # the recorded tree's rows, in the order they were made (set by the caller)
        self.prior, self.ended = Prior(), ""

    def met(self, turn, step):
        return [a for a in self.actions if a.turn == turn and a.step == step]

    def meet(self, actions):
        """Write the overseers' changes of these actions into the store; the commands among them, for the strategy."""
        commands = []
        for action in actions:
            node_id = self.replayed_id(action.node_id) if action.node_id else None
            self.change(action, node_id)
            if action.action in RUN_COMMANDS:
                # A node the replay never made stands as a name no node has: the strategy refuses it, as it would.
                node = str(node_id) if node_id else (f"unmatched:{action.node_id}" if action.node_id else None)
                commands.append(Command(action.id, action.action, node, action.payload, action.actor))
        return commands

    def change(self, action, node_id):
        """What services wrote to the tree for an action, written into the replay's store."""
        if node_id is None and action.node_id:
            return  # its node was never made in the replay: the divergence shows where
        if action.action in ("prune", "unprune"):
            self.store.overseer_prune(node_id, action.action == "prune")
        elif action.action == "edit":
            self.store.overseer_edit(node_id, action.payload.get("thought", ""), action.actor)
        elif action.action in FACT_ACTIONS:
            self.sheet = changed_sheet(self.sheet, action, forward=True)
            self.store.case.facts = [Fact.from_dict(f) for f in self.sheet]

    def replayed_id(self, recorded_id):
        return match(self.recorded, list(self.store.rows.values())).get(recorded_id)

    async def run(self, build):
        """Every turn the session ran, then the actions no run met."""
        from .llm.replay import ReplayGateway
        for turn in range(1, max(self.session.turns, 1) + 1):
            self.meet_quietly(self.met(turn, 0))
            control = ReplayControl(self, turn)
            gateway = ReplayGateway(self.session, self.book, turn, control.stopping, control.lost)
            strategy = await build(self.session, gateway, control, self.store, self.prior)
            try:
                outcome = await strategy.run()
            except StopRequested as stop:
                self.stopped(stop.status, strategy)
                continue
            except Exception:  # the run failed, as engine.failed records it: the search is over, its answer partial
                # Said in the log: a replay that fails where the recorded run did not is a divergence to explain.
                log.warning("replay of session %s: turn %d failed", self.session.pk, turn, exc_info=True)
                prior = self.prior
                self.prior = Prior(True, prior.final_node_id, prior.final_answer, bool(prior.final_answer))
                continue
            self.finished(outcome)
        for action in [a for a in self.actions if a.turn is None]:
            if action.action == "cancel":
                self.stopped(Status.CANCELLED, None)
            else:
                self.meet_quietly([action])

    def meet_quietly(self, actions):
        """Actions met where no strategy runs (a turn's start, or after the last): their changes; no command runs."""
        self.meet(actions)

    def finished(self, outcome):
        """The answer the engine writes at a turn's end (engine.finish), as the next turn's prior."""
        status, _ = engine.ending_of(outcome, self.ended)
        self.ended = self.ended or status
        answer = outcome.final_answer
        partial = outcome.partial or (status in engine.PARTIAL_ENDINGS and bool(answer))
        final = outcome.final_node.id if outcome.final_node else None
        self.prior = Prior(True, final, answer, partial, outcome.chosen_by, outcome.note)

    def stopped(self, status, strategy):
        """A pause leaves the search to continue; a cancel leaves the best line as a partial answer (engine.stopped)."""
        if status != Status.CANCELLED:
            return
        node = strategy.best_node(self.store) if strategy else best_node_for(self.session.mode, self.store)
        if node is None:
            self.prior = Prior(True, self.prior.final_node_id, self.prior.final_answer, self.prior.partial)
            return
        text = best_line_text(self.store.path(node), "partial: cancelled")
        self.prior = Prior(True, node.id, text, True)


def changed_sheet(sheet, action, forward):
    """The client's sheet (fact dicts with ids) after an advisor's fact change, or before it (forward=False)."""
    before = action.before or {}
    after = (action.payload.get("fact") if "facts" in action.payload else action.after) or {}
    if action.action == "fact.edit":
        old, new = (before, after) if forward else (after, before)
    elif (action.action == "fact.add") == forward:
        old, new = {}, after or before
    else:
        old, new = before or after, {}
    gone = {str(old.get("id")), str(new.get("id"))} - {"None"}
    kept = [f for f in sheet if str(f.get("id")) not in gone]
    return kept + ([new] if new else [])


def sheet_at_start(session, actions):
    """The client's sheet as the first run read it: today's, with every advisor's change of it undone."""
    rows = CaseFact.objects.filter(session=session).order_by("position", "id")
    sheet = [row.to_dict() for row in rows]
    for action in reversed([a for a in actions if a.action in FACT_ACTIONS and a.state != "refused"]):
        sheet = changed_sheet(sheet, action, forward=False)
    return sheet


# ---- comparing --------------------------------------------------------------------------------------------------


def model_text(row):
    return row.original_thought or row.thought


def match(recorded, replayed):
    """{recorded node id: replayed node id}: roots with roots, then children of matched parents with the same model
    text, the ones that agree in every compared field first, then in the order they were made."""
    pairs = {}
    taken = set()
    by_parent = {}
    for row in replayed:
        by_parent.setdefault(row.parent_id, []).append(row)
    for exact in (True, False):
        for row in recorded:
            if row.id in pairs:
                continue
            parent = pairs.get(row.parent_id) if row.parent_id else None
            if row.parent_id and parent is None:
                continue
            for candidate in by_parent.get(parent, []):
                same_text = model_text(candidate) == model_text(row)
                if candidate.id not in taken and same_text and (not exact or described(candidate) == described(row)):
                    pairs[row.id] = candidate.id
                    taken.add(candidate.id)
                    break
    return pairs


def described(row):
    """A node as the comparison sees it."""
    fields = {name: getattr(row, name) for name in COMPARED}
    fields["eval_score"] = rounded(fields["eval_score"])
    fields["total_reward"] = rounded(fields["total_reward"])
    return fields


def rounded(value):
    """A score to 9 places: a float summed in another order is the same score."""
    return None if value is None or not math.isfinite(value) else round(value, 9)


def shown(row, recorded_parent=None):
    """A node's version in the report: where it sits, then its compared fields."""
    parent = recorded_parent if recorded_parent is not None else row.parent_id
    return {"depth": row.depth, "parent_id": str(parent) if parent else None, **described(row)}


def first_divergence(recorded, replayed, pairs):
    """The first node (in the order the recorded run made them) whose replay differs or is missing; then the first
    replayed node with no recorded one; None when the trees are the same."""
    by_id = {row.id: row for row in replayed}
    back = {mine: theirs for theirs, mine in pairs.items()}
    for row in recorded:
        twin = by_id.get(pairs.get(row.id))
        if twin is None:
            twin = stand_in(row, replayed, pairs, set(back))
            return divergence(row.id, shown(row), twin and shown(twin, back.get(twin.parent_id)))
        if described(twin) != described(row):
            return divergence(row.id, shown(row), shown(twin, back.get(twin.parent_id)))
    for row in replayed:
        if row.id not in back:
            return divergence(None, None, shown(row, back.get(row.parent_id)))
    return None


def stand_in(row, replayed, pairs, taken):
    """The replayed node in a missing recorded node's place: an unmatched child of its parent's match, if any."""
    parent = pairs.get(row.parent_id)
    return next((r for r in replayed if r.parent_id == parent and r.id not in taken and parent), None)


def divergence(node_id, recorded, replayed):
    return {"node": str(node_id) if node_id else None, "recorded": recorded, "replayed": replayed}


def answer_divergence(session, replay, pairs):
    """The answer as recorded against the replay's: its text, the node it came from, whether it is partial."""
    prior = replay.prior
    final = str(pairs.get(session.final_node_id)) if session.final_node_id in pairs else None
    recorded = {
        "final_answer": session.final_answer,
        "final_node_id": str(session.final_node_id) if session.final_node_id else None,
        "partial": session.answer_partial,
    }
    replayed = {
        "final_answer": prior.final_answer,
        "final_node_id": recorded["final_node_id"] if final == prior.final_node_id and final else None,
        "partial": prior.partial,
    }
    if not prior.final_node_id:
        replayed["final_node_id"] = None
    elif replayed["final_node_id"] is None:
        replayed["final_node_id"] = f"replayed:{prior.final_node_id}"  # a node the record has no match for
    return None if recorded == replayed else {"node": "answer", "recorded": recorded, "replayed": replayed}


# ---- the door ---------------------------------------------------------------------------------------------------


class NotReplayable(Exception):
    """The session is running or waiting to run: its record is not finished."""


def read_record(session):
    """The ledger (oldest first), the actions and the recorded tree, read once."""
    session = ReasoningSession.objects.select_related("tenant").get(pk=session.pk)
    if session.status in (Status.QUEUED, Status.RUNNING):
        raise NotReplayable(f"a {session.status} session is still being written; replay it once it rests")
    calls = list(LLMCall.objects.filter(session=session).order_by("created_at", "id"))
    actions = list(OverseerAction.objects.filter(session=session).order_by("created_at", "id"))
    tree = list(ReasoningNode.objects.filter(session=session).order_by("created_at", "depth"))
    sheet = sheet_at_start(session, actions)
    return session, calls, actions, tree, sheet


async def replay(session):
    """Replay a resting session from its ledger: {"identical", "nodes", "first_divergence"} and what it used."""
    session, calls, actions, tree, sheet = await sync_to_async(read_record)(session)
    run = Replay(session, calls, actions, sheet)
    run.recorded = tree
    recalled = RecordedMemory.of_nodes(tree)
    await run.run(sync_to_async(lambda *args: engine.build_strategy(*args, memory=recalled)))
    replayed = list(run.store.rows.values())
    pairs = match(tree, replayed)
    first = first_divergence(tree, replayed, pairs) or answer_divergence(session, run, pairs)
    return {
        "identical": first is None,
        "nodes": len(replayed),
        "recorded_nodes": len(tree),
        "first_divergence": first,
        "calls_replayed": run.book.used,
        "calls_unused": run.book.unused(),
        "calls_missing": len(run.book.missed),
    }


def replay_now(session):
    """replay() from sync code (the API, the command): its reads on this thread, its run on a loop of its own."""
    return async_to_sync(replay)(session)

