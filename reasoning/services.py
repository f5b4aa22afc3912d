"""Writes: creating and forking sessions, and every overseer action. Each validates, saves, audits, then hands off.

Flags an overseer owns (pruned, an edited thought, stale marks) and status moves are written here
at once. Work only the session's running strategy may do (expand, rescore an edit, promote) is
saved as a pending command: a running session applies it at its next step boundary, a finished one
is reopened for it. Dependencies point one way: services -> runner -> engine -> states.
"""

import asyncio
import logging
import uuid

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from pydantic import ValidationError

from . import control, events, factsheet, meters, review, rls, selectors, states, usage
from .audit import audit
from .audit import row as audit_row
from .engine import ending_fields, run_session, write_partial_answer
from .facts.case import node_checks
from .models import (
    CHECKED,
    NEEDS_REVIEW,
    CaseFact,
    OverseerAction,
    ReasoningCritique,
    ReasoningEdge,
    ReasoningNode,
    ReasoningSession,
    Status,
)
from .money import usd
from .runner import get_runner
from .store import DjangoStore, view
from .strategies import AUTO, available_modes, get_strategy
from .strategies.auto import pick_mode

log = logging.getLogger(__name__)
transition = states.transition  # the one state move, here for callers that write through services
ACTIVE = {Status.QUEUED, Status.RUNNING}


class InvalidInput(Exception):
    """Input that names its bad fields: [{"field": ..., "message": ...}]."""

    def __init__(self, errors):
        super().__init__("; ".join(f"{e['field']}: {e['message']}" for e in errors))
        self.errors = errors


class Conflict(Exception):
    """The action does not fit the session's or the node's current state."""


class Forbidden(Exception):
    """This caller may not take this action on this session, whatever their scopes (403), saying why."""


def resolve_mode(requested, problem_kind, problem_text=""):
    """(mode, reason) for a requested mode; InvalidInput for a mode that is not built yet."""
    if requested == AUTO:
        return pick_mode(problem_kind, problem_text)
    if requested not in available_modes():
        available = ", ".join(sorted(available_modes()))
        raise InvalidInput(
            [{"field": "mode", "message": f"mode '{requested}' is not available yet; available: auto, {available}"}]
        )
    return requested, f"requested: {requested}"


def validate_params(mode, params):
    """The strategy's params with defaults filled in; unknown keys and out-of-range values are refused."""
    try:
        return get_strategy(mode).Params.model_validate(params or {}).model_dump()
    except ValidationError as error:
        raise InvalidInput(
            [{"field": ".".join(["params", *(str(p) for p in e["loc"])]), "message": e["msg"]} for e in error.errors()]
        ) from None


OFFLINE_FALLBACK_REFUSED = (
    "the offline model '{}' cannot stand in for the real model '{}': its text is no advice "
    "(the operator may allow it with REASONING_ALLOW_OFFLINE_FALLBACK=1)"
)


def price_models(primary, fallback):
    """The price of each model a session may call, as stored on it; a model litellm cannot place or nobody
    prices is refused now (422 naming the field), not failed or run uncounted later."""
    from .llm.gateway import provider_of  # litellm loads only where a model name is checked
    from .llm.prices import Unpriced, is_allowed, named_models, offline_fallback_allowed, price_of

    prices, errors = {}, []
    if fallback and not offline_fallback_allowed(primary, fallback):
        errors.append({"field": "model_fallback", "message": OFFLINE_FALLBACK_REFUSED.format(fallback, primary)})
        fallback = ""
    for field, name in (("model_primary", primary), ("model_fallback", fallback)):
        if not name:
            continue
        if not is_allowed(name):
            allowed = ", ".join(sorted(named_models())) or "none"
            errors.append(
                {
                    "field": field,
                    "message": f"the model '{name}' is not one this server offers (REASONING_ALLOWED_MODELS); "
                    f"allowed: {allowed}",
                }
            )
            continue
        if provider_of(name) is None:
            errors.append(
                {
                    "field": field,
                    "message": f"litellm knows no provider for the model '{name}' (try "
                    "'openai/<model>' for an OpenAI-compatible server)",
                }
            )
            continue
        try:
            prices[name] = price_of(name).as_dict()
        except Unpriced as error:
            errors.append({"field": field, "message": str(error)})
    if errors:
        raise InvalidInput(errors)
    return prices


def covers_worst_call(prices, budget):
    """InvalidInput (budget_usd) if a model of the session has a server that billed past its reservations, or cannot
    stream, and the budget cannot pay the dearest call it has billed: the gateway could not stop such a call, so a
    session that cannot afford one is not started."""
    from .llm.prices import Price

    records = meters.of(prices)
    for model, price in prices.items():
        worst = meters.worst_call(records.get(model), Price.from_dict(price))
        if worst > budget + 1e-12:
            meter = records[model]
            why = "cannot stream" if not meter.streams else f"has billed past its reservation ({meter.calls_over} calls)"
            message = (
                f"the server of '{model}' {why}, and one call on it has billed up to {meter.worst_tokens_out} reply "
                f"tokens: {usd(worst)} at this session's price; a budget of {usd(budget)} cannot cover it"
            )
            raise InvalidInput(
                [{"field": "budget_usd", "message": message, "model": model, "needs_usd": round(worst, 6)}]
            )


def within_cap(tenant, budget):
    """InvalidInput (budget_usd) if the budget would take the tenant past its monthly cap: the cap and what is left
    named. A check for the caller's sake: the reservation before each call (ledger.py) is what never lets it pass."""
    month = usage.month_of(tenant)
    if month["cap_usd"] is not None and budget > month["left_usd"] + 1e-9:
        message = (
            f"the tenant's monthly cap is {usd(month['cap_usd'])} and {usd(month['left_usd'])} of it is left this "
            f"month (UTC); a budget of {usd(budget)} would pass it"
        )
        raise InvalidInput(
            [{"field": "budget_usd", "message": message, "cap_usd": month["cap_usd"], "left_usd": month["left_usd"]}]
        )


def starter(by):
    """Who started a session, for the usage report: the person and the key of the caller's principal."""
    return {"created_by_id": by.user_id, "api_key_id": by.key_id} if by is not None else {}


def create_session(tenant, data, triggered_by="", submit=True, by=None):
    """Create a queued session from a validated SessionIn; submit it to the runner once committed. `by` is the
    caller's principal (access.Principal), recorded for the usage report."""
    kind = data.problem_kind or "general"
    if selectors.rubric_for(tenant, kind) is None:
        raise InvalidInput([{"field": "problem_kind", "message": f"no rubric for problem kind '{kind}'"}])
    mode, reason = resolve_mode(data.mode, kind, data.problem_text)
    params = validate_params(mode, data.params)
    engine = settings.REASONING
    primary = data.model_primary or engine["MODEL_PRIMARY"]
    fallback = data.model_fallback or engine["MODEL_FALLBACK"]
    prices = price_models(primary, fallback)
    budget = data.budget_usd if data.budget_usd is not None else engine["DEFAULT_BUDGET_USD"]
    within_cap(tenant, budget)
    covers_worst_call(prices, budget)
    with transaction.atomic():
        session = ReasoningSession.objects.create(
            tenant=tenant,
            problem_kind=kind,
            problem_text=data.problem_text,
            case_name=data.case_name,
            requested_mode=data.mode,
            mode=mode,
            mode_reason=reason,
            model_primary=primary,
            model_fallback=fallback,
            prices=prices,
            budget_usd=budget,
            token_cap=data.token_cap,
            params=params,
            triggered_by=selectors.person(triggered_by),  # one name per person, whatever the door (the key: api_key)
            **starter(by),
        )
        factsheet.read_problem(session)
        if submit:
            transaction.on_commit(lambda: submit_to_runner(session.id))
    return session


def solve(tenant, data, triggered_by="solve"):
    """Create a session and run it to its end in this process; returns the finished session."""
    session = create_session(tenant, data, triggered_by=triggered_by, submit=False)
    asyncio.run(run_session(session.id))
    return ReasoningSession.objects.select_related("tenant").get(pk=session.id)


def submit_to_runner(session_id):
    """Hand a committed session to the runner. A broker that is down now does not fail the request that made or
    resumed the session: the session rests queued and the sweeper dispatches it again (recovery.dispatch_waiting)."""
    try:
        get_runner().submit(session_id)
    except Exception:
        log.warning("could not dispatch session %s now; the sweeper will", session_id, exc_info=True)


# ---- session actions --------------------------------------------------------------------


def pause_session(tenant, session_id, actor):
    """A running session stops starting model calls at once and rests at its step boundary."""
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        if not transition(session.id, Status.PAUSED, [Status.RUNNING, Status.QUEUED], termination_reason="paused"):
            raise Conflict(f"a {session.status} session cannot be paused")
        audit(session, None, actor, "pause", before={"status": session.status}, after={"status": Status.PAUSED})
    control.stop(session.id, Status.PAUSED)  # a run in another process sees it at its next status poll
    return selectors.get_session(tenant, session_id)


def resume_session(tenant, session_id, actor):
    """A paused or interrupted session continues from its stored tree."""
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        if not transition(session.id, Status.QUEUED, [Status.PAUSED, Status.INTERRUPTED], termination_reason=""):
            raise Conflict(f"a {session.status} session cannot be resumed; only paused or interrupted ones can")
        audit(session, None, actor, "resume", before={"status": session.status}, after={"status": Status.QUEUED})
        transaction.on_commit(lambda: submit_to_runner(session.id))
    return selectors.get_session(tenant, session_id)


def cancel_session(tenant, session_id, actor):
    """End a session that has not finished; it keeps every node and its best line so far as a partial answer."""
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        now = timezone.now()
        ended = ending_fields(session.ended_status, Status.CANCELLED, now)
        if not transition(session.id, Status.CANCELLED, finished_at=now, termination_reason="cancelled", **ended):
            raise Conflict(f"a {session.status} session cannot be cancelled")
        audit(session, None, actor, "cancel", before={"status": session.status}, after={"status": Status.CANCELLED})
        control.refuse_pending(session.id, f"the session was cancelled by {actor} before it was applied")
    if session.status == Status.RUNNING:
        control.stop(session.id, Status.CANCELLED)  # its run writes the partial answer as it stops
    else:
        write_partial_answer(session.id, None, "cancelled")
    return selectors.get_session(tenant, session_id)


def fork_session(tenant, session_id, actor, node_id, mode=None, budget_usd=None, params=None, by=None):
    """A new session holding a copy of the path to a node, continuing with the same or another mode."""
    source = selectors.get_session(tenant, session_id)
    budget_usd = budget_usd if budget_usd is not None else source.budget_usd
    within_cap(tenant, budget_usd)
    covers_worst_call(source.prices or {}, budget_usd)
    node = _node_in(source, node_id, field="node_id")
    mode, reason = resolve_mode(mode or source.requested_mode, source.problem_kind, source.problem_text)
    params = validate_params(mode, source.params if params is None and mode == source.mode else params)
    path = DjangoStore(source).path(node)
    with transaction.atomic():
        fork = ReasoningSession.objects.create(
            tenant=tenant,
            problem_kind=source.problem_kind,
            problem_text=source.problem_text,
            case_name=source.case_name,  # a fork works on the same case
            requested_mode=mode,
            mode=mode,
            mode_reason=f"{reason}; forked from session {source.id}",
            model_primary=source.model_primary,
            model_fallback=source.model_fallback,
            prices=source.prices,  # a fork spends at the prices its parent was created with
            budget_usd=budget_usd,
            params=params,
            triggered_by=selectors.person(actor),
            **starter(by),
            forked_from=source,
            forked_from_node_id=node.id,
        )
        # Another mode's scores mean something else (a ToT score, a TRM confidence): its own run values the path.
        copies = _copy_path(fork, path, keep_judgements=mode == source.mode)
        ReasoningSession.objects.filter(pk=fork.pk).update(root_node=copies[0])
        factsheet.copy_sheet(source, fork)
        audit(source, node, actor, "fork", payload={"mode": mode}, after={"session_id": str(fork.id)})
        transaction.on_commit(lambda: submit_to_runner(fork.id))
    return selectors.get_session(tenant, fork.id)


# What a copied node keeps of its original: the thought as the search saw it, its scores (in a fork of the same mode),
# and what an overseer did to it (an edit, a stale mark), so the fork's strategy and its report read the same path.
# Never its terminal flag nor its MCTS statistics: the fork is a new search from its node, whose strategy recomputes
# where a line ends, and the visits of a tree the fork does not hold would only misguide it.
COPIED_FIELDS = (
    "depth",
    "thought",
    "eval_score",
    "eval_reason",
    "model_used",
    "stale",
    "stale_mark",
    "stale_reason",
    "original_thought",
    "edited_at",
    "checks",
)


# State a run wrote of how its search ended there (TRM's stop): the fork's own run decides that again.
ENDING_MARKS = ("stopped",)
# State that records a judgement: in a fork into another mode, the path is judged again in that mode's terms.
JUDGEMENT_MARKS = ("verified", "judged", "consistency", "success", "decided_by")


def _copy_path(fork, path, keep_judgements=True):
    """The path's nodes, copied into the fork with the edges between them (ReAct's actions and observations) and the
    critiques written on them (Reflexion's and LATS's memory); the fork spent nothing on them.

    Each copy's state says it was copied (`copied`: its original's id), so a strategy of another mode can take the path
    as its own start (Reflexion: attempt 1; ReAct: the steps so far). Without `keep_judgements` (a fork into another
    mode) the copies carry no score: the fork's strategy values what it needs of them first.
    """
    rows = {row.pk: row for row in ReasoningNode.objects.filter(pk__in=[step.id for step in path])}
    dropped = ENDING_MARKS + (() if keep_judgements else JUDGEMENT_MARKS)
    copies, parent, copy_of = [], None, {}
    for step in path:
        row = rows[uuid.UUID(str(step.id))]
        fields = {name: getattr(row, name) for name in COPIED_FIELDS}
        if not keep_judgements:
            fields.update(eval_score=None, eval_reason="")
        state = row.state if isinstance(row.state, dict) else {}
        if row.depth:
            state = {**{k: v for k, v in state.items() if k not in dropped}, "copied": str(row.pk)}
        parent = ReasoningNode.objects.create(
            tenant_id=fork.tenant_id,
            session=fork,
            parent=parent,
            state=state,
            source_node=row,
            **fields,
        )
        copies.append(parent)
        copy_of[row.pk] = parent
    edges = ReasoningEdge.objects.filter(to_node_id__in=copy_of, from_node_id__in=copy_of).order_by("created_at")
    ReasoningEdge.objects.bulk_create(
        ReasoningEdge(
            tenant_id=fork.tenant_id,
            session=fork,
            from_node=copy_of[e.from_node_id],
            to_node=copy_of[e.to_node_id],
            action=e.action,
            observation=e.observation,
        )
        for e in edges
    )
    critiques = ReasoningCritique.objects.filter(node_id__in=copy_of).order_by("attempt_num", "created_at")
    ReasoningCritique.objects.bulk_create(
        ReasoningCritique(
            tenant_id=fork.tenant_id,
            session=fork,
            node=copy_of[c.node_id],
            attempt_num=c.attempt_num,
            outcome_score=c.outcome_score,
            critique=c.critique,
            applied_to_next=c.applied_to_next,
        )
        for c in critiques
    )
    return copies


# ---- node actions -----------------------------------------------------------------------


def set_pruned(tenant, node_id, actor, pruned):
    """Prune or unprune a branch by hand; its subtree leaves (or rejoins) the search from this moment."""
    node = selectors.get_node(tenant, node_id)
    if node.depth == 0:
        raise Conflict("the root holds the problem and cannot be pruned")
    before = {"pruned": node.pruned, "pruned_by": node.pruned_by}
    fields = (
        {"pruned": True, "pruned_by": "overseer", "pruned_actor": actor, "pruned_at": timezone.now()}
        if pruned
        else {"pruned": False, "pruned_by": "", "pruned_actor": "", "pruned_at": None}
    )
    with transaction.atomic():
        # Two overseers at once: the first one changes the flag, the second is told it already stands.
        if not ReasoningNode.objects.filter(pk=node.pk, pruned=not pruned).update(**fields):
            raise Conflict(f"the branch is already {'pruned' if pruned else 'in the search'}")
        # Locked as a run's finish locks it (after the node, as every write that publishes): the finish either sees
        # this prune on its answer's branch, or has ended when this looks, and the answer is written again.
        session = lock_session(node.session_id)
        node.refresh_from_db()
        audit(session, node, actor, "prune" if pruned else "unprune", before=before, after=fields_after(node))
        events.publish(session.id, [events.node_event("node.updated", node)])
        if pruned and _answer_runs_through(session, node):
            review.withdraw(session.id, actor, f"{actor} pruned a branch holding the answer")
            command(session, node, actor, "resynthesize", audit=False)
    control.wake(session.id)
    return node


def expand_node(tenant, node_id, actor, k):
    """k new children, proposed and scored by the session's strategy."""
    node = selectors.get_node(tenant, node_id)
    if DjangoStore(node.session).is_pruned(view(node)):
        raise Conflict("the node is in a pruned branch; unprune it first")
    return command(node.session, node, actor, "expand", payload={"k": k})


def edit_node(tenant, node_id, actor, thought):
    """Replace a thought (the original is kept); it is rescored, and its descendants are stale until rescored."""
    node = selectors.get_node(tenant, node_id)
    if node.depth == 0:
        raise Conflict("the root holds the problem; start a new session to change it")
    session = node.session
    before = {"thought": node.thought, "eval_score": node.eval_score}
    with transaction.atomic():
        descendants = _descendant_ids(session, node)
        # The stale mark is the overseer's: each edit bumps it, so a judgement already in flight cannot clear it.
        ReasoningNode.objects.filter(pk=node.pk).update(
            thought=thought,
            checks=node_checks(factsheet.case_of(session), thought, node.state),
            original_thought=node.original_thought or node.thought,
            stale=True,
            stale_mark=F("stale_mark") + 1,
            stale_reason=f"its thought was edited by {actor} and is not rescored yet"[:300],
            edited_at=timezone.now(),
        )
        ReasoningNode.objects.filter(pk__in=descendants).update(
            stale=True,
            stale_mark=F("stale_mark") + 1,
            stale_reason=f"step {node.depth} above it was edited by {actor} after it was scored"[:300],
        )
        changed = ReasoningNode.objects.filter(pk__in=[node.pk, *descendants]).order_by("depth", "created_at")
        events.publish(session.id, [events.node_event("node.updated", row) for row in changed])
        action = command(session, node, actor, "edit", payload={"thought": thought}, before=before)
        if _on_answer_line(session, node):
            review.withdraw(session.id, actor, f"{actor} edited step {node.depth} of the answer's line")
    return action


def promote_node(tenant, node_id, actor, note):
    """The overseer chooses this node as the final answer; the answer says a person chose it."""
    node = selectors.get_node(tenant, node_id)
    if node.depth == 0:
        raise Conflict("the root holds the problem; promote a step below it")
    if DjangoStore(node.session).is_pruned(view(node)):
        raise Conflict("the node is in a pruned branch; unprune it first")
    with transaction.atomic():
        action = command(node.session, node, actor, "promote", payload={"note": note})
        review.withdraw(node.session_id, actor, f"{actor} promoted step {node.depth} as the answer")
    return action


def command(session, node, actor, action, payload=None, before=None, audit=True):
    """Save a command for the session's one writer; reopen a finished session for it.

    The session's row is locked while the command is saved, as engine.finish locks it to end a run: either the run
    sees the command (and takes another turn for it) or the command sees the ended session and reopens it.
    """
    with transaction.atomic():
        session = lock_session(session.pk)
        row = audit_row(session, node, actor, action, payload, before, state=OverseerAction.State.PENDING)
        if audit:
            events.publish(session.id, [events.action_event("action.created", row)])
        # The reason it ended stays: the turn that applies the command keeps how the search ended (engine.ending_of).
        if session.is_finished and transition(session.id, Status.QUEUED, [session.status]):
            transaction.on_commit(lambda: submit_to_runner(session.id))
    control.wake(session.id)
    return row


def lock_session(session_id):
    """The session's row, locked until the transaction ends (a no-op lock on SQLite, whose writes take turns)."""
    return ReasoningSession.objects.select_for_update().get(pk=session_id)


def fields_after(node):
    return {"pruned": node.pruned, "pruned_by": node.pruned_by, "pruned_actor": node.pruned_actor}


def _answer_runs_through(session, node):
    if session.status in ACTIVE:
        return False  # a run in progress picks its answer from the live branches anyway
    return _on_answer_line(session, node)


def _on_answer_line(session, node):
    """The node is the answer's node or one of the steps that lead to it."""
    if not session.final_node_id:
        return False
    store = DjangoStore(session)
    final = store.get(session.final_node_id)
    return final is not None and str(node.pk) in {n.id for n in store.path(final)}


def _descendant_ids(session, node):
    children = {}
    for node_id, parent_id in ReasoningNode.objects.filter(session=session).values_list("id", "parent_id"):
        children.setdefault(parent_id, []).append(node_id)
    found, queue = [], list(children.get(node.pk, []))
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def _node_in(session, node_id, field):
    try:
        node = selectors.get_node(session.tenant, node_id)
    except ReasoningNode.DoesNotExist:
        node = None
    if node is None or node.session_id != session.id:
        raise InvalidInput([{"field": field, "message": "no such node in this session"}])
    return node


# ---- four eyes ------------------------------------------------------------------------------------------------------


def review_session(tenant, session_id, principal, decision, comment=""):
    """A reviewer approves the session's answer or asks for changes (reasoning/review.py); audited and published."""
    session = selectors.get_session(tenant, session_id)
    if principal.user_id is None:
        raise Forbidden("a sign-off is a person's: a service key cannot give one; use a reviewer's login or own key")
    with transaction.atomic():
        session = lock_session(session.pk)
        if not session.final_answer:
            raise Conflict("the session has no answer to review yet")
        if session.status in ACTIVE:
            raise Conflict(f"the session is {session.status}: review its answer once it rests")
        reviewer = selectors.person(principal.actor)
        own = reviewer in review.authors(session) and not session.tenant.allow_self_approval
        if decision == review.APPROVE and own:
            raise Forbidden(
                f"{reviewer} ran this session or chose its answer, and this tenant requires a second person's "
                "approval: another reviewer or an admin must approve it"
            )
        before = session.review
        ReasoningSession.objects.filter(pk=session.pk).update(
            **review.decision_fields(decision, principal.actor, comment, session)
        )
        session.refresh_from_db()
        after = session.review
        action = f"review.{decision}"
        audit(session, session.final_node, principal.actor, action, before=before, after=after, detail=comment)
        review.announce(session)
    return selectors.get_session(tenant, session_id)


# ---- the client's fact sheet ---------------------------------------------------------------------------------------


def add_fact(tenant, session_id, actor, data):
    """An advisor adds a fact to the client's sheet; see fact_changed."""
    session = selectors.get_session(tenant, session_id)
    fact = factsheet.validated(data)
    with transaction.atomic():
        row = CaseFact.from_fact(session, fact, factsheet.next_position(session))
        row.save()
        fact_changed(session, actor, "fact.add", {}, row.to_dict())
    return row


def update_fact(tenant, session_id, fact_id, actor, data):
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        row = factsheet.fact_in(session, fact_id)
        before = row.to_dict()
        factsheet.apply_fields(row, factsheet.validated(data, current=row.as_fact())).save()
        fact_changed(session, actor, "fact.edit", before, row.to_dict())
    return row


def remove_fact(tenant, session_id, fact_id, actor):
    session = selectors.get_session(tenant, session_id)
    with transaction.atomic():
        row = factsheet.fact_in(session, fact_id)
        before = row.to_dict()
        row.delete()
        fact_changed(session, actor, "fact.remove", before, {})


def fact_changed(session, actor, action, before, after):
    """Audited like any action; the tree and the answer checked again, the steps it touches marked stale. A search
    under way gets the new sheet as a command at its next step boundary (that command is the audit's row)."""
    what = factsheet.describe(before, after)
    passed = session.answer_state == CHECKED
    factsheet.recheck(session, actor, what, [before, after])
    review.withdraw(session.id, actor, f"{what} by {actor}")
    if session.status in ACTIVE:
        sheet = factsheet.sheet_dicts(session)
        command(session, None, actor, action, payload={"fact": after or before, "facts": sheet}, before=before)
        return
    audit(session, None, actor, action, payload=after or before, before=before, after=after)
    session.refresh_from_db()
    if passed and session.answer_state == NEEDS_REVIEW and can_rewrite(session):
        # The answer no longer passes under the new sheet: written again as at the end of a run, from the best line
        # that passes (or the session fails saying so); where it cannot run, its answer says it needs review.
        command(session, None, actor, "resynthesize", audit=False)


def can_rewrite(session):
    """A resting session may write its answer again: nobody chose it by hand (a person's choice stands, under review
    when it fails a check), it is a finished answer (not a stopped session's best line) and budget is left."""
    return (
        session.status in ReasoningSession.FINISHED
        and not session.answer_chosen_by
        and not session.answer_partial
        and session.budget_used_usd < session.budget_usd
    )


@rls.all_tenants()  # every tenant's sessions a stopped server left running
def interrupt_running(reason="server_restarted"):
    """Mark sessions left running by a stopped process as interrupted (resumable); returns how many. Their active
    time ends at their last heartbeat: the process was gone after it."""
    running = ReasoningSession.objects.filter(status=Status.RUNNING).values_list("id", "heartbeat_at")
    return sum(
        transition(session_id, Status.INTERRUPTED, [Status.RUNNING], alive_until=beat, termination_reason=reason)
        for session_id, beat in list(running)
    )
