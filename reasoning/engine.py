"""Running sessions: run_session() takes a queued session's claim and gives its strategy one turn.

A turn rebuilds the strategy from the stored tree, applies the overseers' commands, continues the
search unless it ended before, and finishes. Every status change goes through states.transition,
so a session finished by its strategy and cancelled by an overseer at the same moment ends once.
Every write of a run carries its fence (the claim's owner and epoch): a run that was taken over while
it stalled writes nothing more and ends quietly (RunLost), leaving the session to the run holding it.
"""

import asyncio
import logging
import uuid

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from . import events, factsheet, review, rls, selectors, states, usage
from . import memory as firm_memory
from .control import STOPS, GuardedGateway, SessionControl, refuse_pending, stamp
from .fence import RunLost
from .llm.contracts import one_line
from .models import OverseerAction, ReasoningNode, ReasoningSession, Status
from .store import DjangoStore
from .strategies import best_node_for, get_strategy
from .strategies.base import (
    ANSWER_FAILED,
    FACTS_FAILED,
    NO_SUCCESS,
    Context,
    Prior,
    StopRequested,
    best_line_text,
)

log = logging.getLogger(__name__)
REQUEUED = "requeued"
NOT_CLAIMED = "not_claimed"  # another run holds the session, or it wants no run (recovery.adopt tells which)
SYNTHESIS_FAILED = "synthesis_failed"
NO_ANSWER = {
    "no_thoughts": "the strategy ended without an answer (no_thoughts): no step could be proposed and scored",
    "no_live_line": "every line of reasoning is pruned: unprune a branch or expand a node to answer again",
}


async def run_session(session_id, gateway=None, owner=None):
    """Run a queued session to a resting status; never raises for the session's own failures.

    Returns REQUEUED when the session wants another turn at once (a command arrived as this one ended), and
    NOT_CLAIMED when this run could not claim it.
    """
    events.bind_loop(asyncio.get_running_loop())
    try:
        return await _run(session_id, gateway, owner or states.owner_id())
    finally:
        await events.flush()  # the last events leave before a short-lived loop (CLI, worker task) closes


async def _run(session_id, gateway, owner):
    # The run works for its session's tenant (this task's context): every write of it, behind the database's wall.
    rls.use_tenant(await sync_to_async(states.tenant_of)(session_id))
    fence = await sync_to_async(states.claim)(session_id, owner)
    if fence is None:
        return NOT_CLAIMED
    control = SessionControl(session_id, owner, fence)
    strategy = None
    try:
        control.start()
        strategy, session = await sync_to_async(start_turn)(session_id, gateway, control)
        if factsheet.model_reads(session, strategy.ctx.case):
            await factsheet.read_with_model(session, strategy.ctx)
        outcome = await strategy.run()
        await strategy.ctx.store.settled()  # the last children inserted before the session's ending is written
    except RunLost as lost:
        log.warning("%s: this run ends, the run holding it now continues", lost)
    except StopRequested as stop:
        log.info("session %s stopped: %s", session_id, stop.status)
        if control.turn is not None:  # the pause or cancel it met, where it met it (a replay stops there too)
            await sync_to_async(stamp)(session_id, control.turn, control.steps, STOPS)
        await as_owner(stopped, session_id, stop.status, strategy, fence)
    except asyncio.CancelledError:
        await as_owner(stopped, session_id, "interrupted", strategy, fence)
        raise
    except Exception as error:
        log.exception("session %s failed", session_id)
        await as_owner(failed, session_id, error, fence)
    else:
        await as_owner(finish, session_id, outcome, fence)
    finally:
        await control.stop()
        if strategy is not None:
            await settled_quietly(strategy.ctx.store)  # before the gateway writes the answers no node was made for
            await as_owner(strategy.ctx.gateway.close)
        status = await sync_to_async(end_turn)(session_id, fence)
    return REQUEUED if status == Status.QUEUED else None


async def as_owner(write, *args):
    """One of the run's own writes (sync or async); a run that lost its session writes nothing and ends quietly."""
    try:
        return await (write(*args) if asyncio.iscoroutinefunction(write) else sync_to_async(write)(*args))
    except RunLost as lost:
        log.warning("%s: its write was refused", lost)


async def settled_quietly(store):
    """The store's queued inserts, landed; on a path that is ending the run already, their error is only logged."""
    try:
        await store.settled()
    except RunLost as lost:
        log.warning("%s: its last insert was refused", lost)
    except Exception:
        log.exception("an insert of the run failed as it ended")


def build_strategy(session, gateway=None, control=None, store=None, prior=None, memory=None):
    """The session's strategy on its stored tree; a replay (reasoning/replay.py) brings its own store, prior and
    memory (what the session recalled from the firm's judgements, as recorded)."""
    from .llm.gateway import ModelGateway  # litellm loads only where a session actually runs

    strategy_class = get_strategy(session.mode)
    rubric = selectors.rubric_for(session.tenant, session.problem_kind)
    control = control or SessionControl(session.id, states.owner_id())
    gateway = gateway or ModelGateway(session)
    if getattr(gateway, "fence", False) is None:
        gateway.fence = control.fence  # the gateway's leases and settlements carry the run's fence too
    if getattr(gateway, "turn", False) is None:
        gateway.turn = control.turn  # and its ledger rows the run's turn
    # One object: the prompts show its facts and the store checks against them.
    case = store.case if store is not None else factsheet.case_of(session)
    shown = rubric.as_prompt() if rubric else "(no rubric: judge soundness, specificity and risk)"
    if memory is None and store is None and firm_memory.enabled():
        memory = firm_memory.FirmMemory(session, shown)
    ctx = Context(
        problem=session.problem_text,
        kind=session.problem_kind,
        rubric=shown,
        params=strategy_class.Params.model_validate(session.params),
        store=store if store is not None else DjangoStore(session, fence=control.fence, case=case),
        gateway=GuardedGateway(gateway, control),
        control=control,
        prior=prior or prior_of(session),
        case=case,
        memory=memory,
    )
    return strategy_class(ctx)


def prior_of(session):
    """What the session holds as a run starts: how its search ended, and its answer."""
    return Prior(
        search_done=session.search_done,
        final_node_id=str(session.final_node_id) if session.final_node_id else None,
        final_answer=session.final_answer,
        partial=session.answer_partial,
        chosen_by=session.answer_chosen_by,
        note=session.answer_note,
    )


# An answer a later turn writes (a promote, an expand) keeps how the search itself ended; a failed search gets one.
KEPT_ENDINGS = {Status.SOLVED, Status.CANCELLED, Status.EXHAUSTED}
# The outcomes whose answer is no answer to the problem as it stands: a line standing in for a synthesis that failed,
# an answer failing the client's facts or the task's own check, a LATS search no terminal of which succeeded.
FAILED_ANSWERS = {SYNTHESIS_FAILED, FACTS_FAILED, ANSWER_FAILED, NO_SUCCESS}


def start_turn(session_id, gateway, control):
    """The turn's start recorded and its strategy built from the stored tree, in one hand-over to the ORM's thread.
    The actions taken since the last run are met here, as the tree is loaded (step 0 of this turn)."""
    session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
    control.turn = session.turns
    stamp(session_id, control.turn, 0)
    return build_strategy(session, gateway, control), session


def end_turn(session_id, fence):
    """The session given back (its active time was banked as it left running, in states.transition); its status."""
    return states.release(fence)


def search_ended(session_id, status):
    """The search ended for the first time, with this status: recorded once, never rewritten by a later turn."""
    ReasoningSession.objects.filter(pk=session_id, ended_status="").update(ended_status=status, ended_at=timezone.now())


def ending_fields(ended, status, at):
    """The fields that record the search's first ending, for the status move that ends it (so its event carries
    them); nothing when it ended before. At: the move's own finished_at, so a session that ended once says one time."""
    return {} if ended else {"ended_status": status, "ended_at": at}


def ending_of(outcome, ended):
    """(status, termination reason or None to keep the stored one) for a turn's outcome.

    A turn after the search ended (`ended`: how it ended) only applied commands: its answer leaves the session as it
    ended (a promote after cancel stays cancelled, saying who chose the answer) unless it ran out of budget, the
    search had failed without an answer, or a solved session's answer, written again after an edit or a change of
    the client's facts, no longer passes: "solved" never outlives its answer.
    """
    if outcome.exhausted:
        return Status.EXHAUSTED, outcome.reason
    if not outcome.final_answer:
        return Status.FAILED, outcome.reason
    failed = outcome.reason in FAILED_ANSWERS or (outcome.partial and not outcome.chosen_by)
    if ended in KEPT_ENDINGS and not (ended == Status.SOLVED and failed):
        return ended, None
    if failed:
        # The best line so far stands as the partial answer of a failed search, or the answer that fails the fewest
        # fact checks stands with its findings.
        return Status.FAILED, outcome.reason if outcome.reason in FAILED_ANSWERS else None
    return Status.SOLVED, outcome.reason


def finish(session_id, outcome, fence=None):
    """The run's end. Solved only when the answer passed its contract: a synthesis that failed leaves the best line
    so far as a partial answer of a failed session (as budget exhaustion leaves one of an exhausted session)."""
    with transaction.atomic():
        # Locked as services.command locks it to save a command: a command saved meanwhile is seen below.
        ended = ReasoningSession.objects.select_for_update().filter(pk=session_id).values_list("ended_status").first()
        ended = ended[0] if ended else None
        status, reason = ending_of(outcome, ended)
        if reason == "budget" and usage.cap_stopped(session_id):
            reason = "monthly_cap"  # the session had budget left; its tenant's month had not
        elif reason == "budget" and usage.token_capped(session_id):
            reason = "token_cap"  # its tokens ran out, not its budget (an unmetered model's never binds)
        now = timezone.now()
        final_node_id = outcome.final_node.id if outcome.final_node else None
        signoff, step = review.on_answer(session_id, outcome.final_answer, final_node_id)
        moved = states.transition(
            session_id,
            status,
            [Status.RUNNING],
            finished_at=now,
            final_answer=outcome.final_answer,
            final_node_id=final_node_id,
            **signoff,
            **({"termination_reason": reason} if reason is not None else {}),
            **ending_fields(ended, status, now),
            # A failed or exhausted session's answer is the best so far, never a finished one (the error says why).
            answer_partial=outcome.partial or (status in PARTIAL_ENDINGS and bool(outcome.final_answer)),
            **answer_model(outcome),
            answer_chosen_by=outcome.chosen_by,
            answer_note=outcome.note,
            **answer_checks(outcome),
            search_done=True,
            error=no_answer(outcome) if status == Status.FAILED else ending_error(status, outcome),
            fence=fence,
        )
        if not moved and ReasoningSession.objects.filter(pk=session_id, status=Status.CANCELLED).exists():
            # Cancelled as it finished: keep what it found, as the partial answer of a cancelled session.
            write_owned(
                session_id,
                fence,
                final_answer=outcome.final_answer,
                final_node_id=final_node_id,
                answer_partial=True,
                **answer_checks(outcome),
                **signoff,
                search_done=True,
            )
            search_ended(session_id, Status.CANCELLED)
            session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
            events.publish(session_id, [events.session_updated(session)])
            review.record(session_id, step)
        elif moved:
            review.record(session_id, step)
        # A command that arrived after the last step boundary, or a prune of the answer's branch as it was written:
        # the session takes another turn, which writes the answer again from the best live line.
        pending = OverseerAction.objects.filter(session_id=session_id, state=OverseerAction.State.PENDING)
        if moved and (pending.exists() or in_pruned_branch(session_id, outcome.final_node)):
            states.transition(session_id, Status.QUEUED, [status], fence=fence)


PARTIAL_ENDINGS = {Status.EXHAUSTED, Status.FAILED}


def answer_checks(outcome):
    """The answer's findings, and whether it was checked at all (checks off: not checked, so no badge claims it); an
    answer kept as it was keeps its stored ones (a change of the client's facts checked it again)."""
    if outcome.checks is None:
        return {}
    return {
        "answer_checks": [f.to_dict() for f in outcome.checks],
        "answer_checked": bool(outcome.checked),
        "answer_figures": outcome.figures or [],
    }


def answer_model(outcome):
    """The model that wrote the answer, to label it: the synthesis's, else (a line standing in, a step's own answer,
    a promoted node) its final node's; an answer kept unchanged keeps its label."""
    if outcome.kept or not outcome.final_answer:
        return {}
    if outcome.model:
        return {"answer_model": outcome.model}
    node = outcome.final_node and ReasoningNode.objects.filter(pk=outcome.final_node.id).values_list("model_used")
    return {"answer_model": (node.first() or ("",))[0] if node else ""}


def in_pruned_branch(session_id, node):
    """True if the node or an ancestor is pruned in the database now (one query)."""
    if node is None:
        return False
    nodes = ReasoningNode.objects.filter(session_id=session_id).values_list("id", "parent_id", "pruned")
    rows = {i: (parent, pruned) for i, parent, pruned in nodes}
    current = uuid.UUID(str(node.id))
    while current in rows:
        current, pruned = rows[current]
        if pruned:
            return True
    return False


def write_owned(session_id, fence, **fields):
    """Write fields of the session's row as the run: only while the run holds it, in the statement (else RunLost)."""
    rows = fence.rows() if fence is not None else ReasoningSession.objects.filter(pk=session_id)
    if not rows.update(**fields) and fence is not None:
        raise fence.lost()


def failed(session_id, error, fence=None):
    ended, answer = ReasoningSession.objects.filter(pk=session_id).values_list("ended_status", "final_answer").first()
    with transaction.atomic():
        now = timezone.now()
        moved = states.transition(
            session_id,
            Status.FAILED,
            [Status.RUNNING],
            finished_at=now,
            termination_reason="error",
            error=describe(error),
            search_done=True,
            **({"answer_partial": True} if answer else {}),  # an answer a failed run leaves is the best so far
            **ending_fields(ended, Status.FAILED, now),
            fence=fence,
        )
        if moved:  # a command the run never applied gets its outcome (one saved after this reopens the session)
            refuse_pending(session_id, f"the run failed before applying it: {describe(error)}")


def ending_error(status, outcome):
    """An exhausted session says which call (or step) its budget could not cover and what it needed."""
    return outcome.exhausted_by[:2000] if status == Status.EXHAUSTED else ""


def no_answer(outcome):
    if outcome.reason == FACTS_FAILED:
        return f"no answer passed the checks of the client's facts ({outcome.detail})"[:2000]
    if outcome.reason == ANSWER_FAILED:
        return f"the answer does not pass the task's own check ({outcome.detail})"[:2000]
    if outcome.reason == SYNTHESIS_FAILED:
        return f"no answer passed its contract ({outcome.detail}); the answer shown is the best line so far"[:2000]
    if outcome.reason == NO_SUCCESS:
        return f"no terminal line succeeded ({outcome.detail}); the answer shown is from the best line so far"[:2000]
    if outcome.final_answer and outcome.partial:
        return f"the answer is the best line so far, not a finished one ({outcome.detail or outcome.reason})"[:2000]
    why = NO_ANSWER.get(outcome.reason, f"no answer ({outcome.reason})")
    return f"{why}; first failure: {outcome.detail}" if outcome.detail else why  # a node's refusal names its first


def stopped(session_id, status, strategy, fence=None):
    """A run stopped early: cancelled sessions keep their best line as a partial answer; a stopping server
    leaves its sessions interrupted, to be resumed from the stored tree."""
    if status == Status.CANCELLED:
        write_partial_answer(session_id, strategy, "cancelled", fence)
    elif status in ("interrupted", Status.RUNNING):
        states.transition(
            session_id, Status.INTERRUPTED, [Status.RUNNING], termination_reason="server_stopped", fence=fence
        )


def write_partial_answer(session_id, strategy, why, fence=None):
    """The best node so far, as the answer, without a model call (the session is ending: nothing more is spent)."""
    if strategy is None:
        session = ReasoningSession.objects.get(pk=session_id)
        store = DjangoStore(session)
        node = best_node_for(session.mode, store)
    else:
        store = strategy.ctx.store
        node = strategy.best_node(store)
    if node is None:
        write_owned(session_id, fence, search_done=True)
        return
    text = best_line_text(store.path(node), f"partial: {why}")
    with transaction.atomic():
        signoff, step = review.on_answer(session_id, text, node.id)
        # Not checked: a stopped session's line is no answer to check, and its badge claims nothing (answer_state).
        write_owned(
            session_id,
            fence,
            final_answer=text,
            final_node_id=node.id,
            answer_partial=True,
            answer_checks=[],
            answer_checked=False,
            answer_figures=[],
            search_done=True,
            **signoff,
        )
        session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
        events.publish(session_id, [events.session_updated(session)])
        review.record(session_id, step)


def describe(error):
    """The one plain line a person reads on the page and in the API (the caller logged the traceback)."""
    return one_line(error)
