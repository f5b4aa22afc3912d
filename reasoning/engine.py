"""Running sessions: solve() for callers that wait, run_session() for runners, and the status moves between.

Every status change is an atomic claim through services.transition, so a session finished by
its strategy and cancelled by an overseer at the same moment ends once.
"""

import asyncio
import logging
import traceback

from asgiref.sync import sync_to_async
from django.utils import timezone

from . import events, selectors, services
from .models import ReasoningSession, Status
from .schemas import SessionIn
from .store import DjangoStore
from .strategies import get_strategy
from .strategies.base import Context, StopRequested

log = logging.getLogger(__name__)


def solve(problem, mode="auto", kind=None, tenant=None, triggered_by="solve", **fields):
    """Create a session and run it to its end in this process; returns the finished session."""
    data = SessionIn(problem_text=problem, mode=mode, problem_kind=kind, **fields)
    session = services.create_session(tenant, data, triggered_by=triggered_by, submit=False)
    asyncio.run(run_session(session.id))
    return ReasoningSession.objects.select_related("tenant").get(pk=session.id)


class SessionControl:
    """The strategy's step boundary: a paused or cancelled session stops here."""

    def __init__(self, session_id):
        self.session_id = session_id

    async def checkpoint(self):
        status = await ReasoningSession.objects.filter(pk=self.session_id).values_list("status", flat=True).aget()
        if status != Status.RUNNING:
            raise StopRequested(status)


async def run_session(session_id, gateway=None):
    """Run a queued session to a final status; never raises for the session's own failures."""
    events.bind_loop(asyncio.get_running_loop())
    try:
        await _run(session_id, gateway)
    finally:
        await events.flush()  # the last events leave before a short-lived loop (CLI, worker task) closes


async def _run(session_id, gateway):
    # One run at a time per session: budget reserved by a run that died is free again.
    claimed = await sync_to_async(services.transition)(
        session_id, Status.RUNNING, [Status.QUEUED], started_at=timezone.now(), budget_reserved_usd=0.0
    )
    if not claimed:
        return
    strategy = None
    try:
        session = await ReasoningSession.objects.select_related("tenant").aget(pk=session_id)
        strategy = await sync_to_async(build_strategy)(session, gateway)
        outcome = await strategy.run()
    except StopRequested as stop:
        log.info("session %s stopped at a step boundary: %s", session_id, stop.status)
    except asyncio.CancelledError:
        await sync_to_async(services.transition)(
            session_id, Status.INTERRUPTED, [Status.RUNNING], termination_reason="worker_stopped"
        )
        raise
    except Exception as error:
        log.exception("session %s failed", session_id)
        await sync_to_async(services.transition)(
            session_id,
            Status.FAILED,
            [Status.RUNNING],
            finished_at=timezone.now(),
            termination_reason="error",
            error=_describe(error),
        )
    else:
        await sync_to_async(finish)(session_id, outcome)
    finally:
        if strategy is not None:
            await strategy.ctx.gateway.close()


def build_strategy(session, gateway=None):
    from .llm.gateway import ModelGateway  # litellm loads only where a session actually runs

    strategy_class = get_strategy(session.mode)
    rubric = selectors.rubric_for(session.tenant, session.problem_kind)
    ctx = Context(
        problem=session.problem_text,
        kind=session.problem_kind,
        rubric=rubric.as_prompt() if rubric else "(no rubric: judge soundness, specificity and risk)",
        params=strategy_class.Params.model_validate(session.params),
        store=DjangoStore(session),
        gateway=gateway or ModelGateway(session),
        control=SessionControl(session.id),
    )
    return strategy_class(ctx)


def finish(session_id, outcome):
    status = Status.EXHAUSTED if outcome.exhausted else Status.SOLVED
    if not outcome.final_answer and not outcome.exhausted:
        status = Status.FAILED
    services.transition(
        session_id,
        status,
        [Status.RUNNING],
        finished_at=timezone.now(),
        final_answer=outcome.final_answer,
        final_node_id=outcome.final_node.id if outcome.final_node else None,
        termination_reason=outcome.reason,
        error="" if status != Status.FAILED else f"the strategy ended without an answer ({outcome.reason})",
    )


def _describe(error):
    frames = traceback.format_exception(error, limit=-3)
    return f"{type(error).__name__}: {error}\n{''.join(frames)[-3000:]}"
