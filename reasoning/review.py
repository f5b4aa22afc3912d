"""Four eyes on every answer: a second person's sign-off, and its loss when the answer changes.

A session's review (models.ReviewState) is none (no review asked: `review` is null), `awaiting`, `approved` or
`changes_requested`. Where the tenant requires review, a session that comes to rest with an answer awaits it. A
reviewer (or an admin) approves the answer or asks for changes, saying why (services.review_session); who ran the
session or chose its answer approves it only where the tenant allows self-approval.

A decision stands on the answer it was made on (its fingerprint). A change to the answer's ground withdraws it at
once: an edit on the answer's line, a change of the client's facts, a promote, a prune of the answer's branch; and a
run that writes a different answer withdraws it as it writes. The answer then awaits review again, the reason stored
and shown. Every step is an audit row (`review.awaiting`, `review.approve`, `review.request_changes`,
`review.withdrawn`) and a `review.updated` event to the session's watchers.
"""

from django.utils import timezone

from . import events, selectors
from .audit import audit
from .models import ReasoningSession, ReviewState, sha256

APPROVE, REQUEST_CHANGES = "approve", "request_changes"
DECISIONS = {APPROVE: ReviewState.APPROVED, REQUEST_CHANGES: ReviewState.CHANGES_REQUESTED}
DECIDED = {ReviewState.APPROVED, ReviewState.CHANGES_REQUESTED}
ENGINE = "engine"  # the actor of the steps no person took: an answer written by a run awaits review, or loses it
REQUIRED = "the tenant requires a second person's sign-off on every answer"


def fingerprint(answer, node_id):
    """What a decision was made on: the answer's text and the node it stands on."""
    return sha256(f"{node_id or ''}\n{answer or ''}")


def authors(session):
    """The people whose answer it is: who ran the session, and who chose its answer by hand."""
    return {selectors.person(who) for who in (session.triggered_by, session.answer_chosen_by) if who}


def decision_fields(decision, actor, comment, session):
    return {
        "review_state": DECISIONS[decision],
        "review_by": selectors.person(actor),
        "review_at": timezone.now(),
        "review_comment": comment,
        "review_reason": "",
        "review_answer": fingerprint(session.final_answer, session.final_node_id),
    }


def awaiting_fields(reason=""):
    return {
        "review_state": ReviewState.AWAITING,
        "review_by": "",
        "review_at": timezone.now(),
        "review_comment": "",
        "review_reason": reason[:500],
        "review_answer": "",
    }


def decision_words(review):
    """'approval by user:rita' or 'changes requested by user:rita': the decision a change withdraws."""
    what = "approval" if review["state"] == ReviewState.APPROVED else "changes requested"
    return f"{what} by {review['by']}"


def withdraw(session_id, actor, why):
    """The answer's ground changed (`why`, said by `actor`'s action): a decision made on it no longer stands, and the
    answer awaits review again, saying why. Call inside the change's transaction. True if a decision was withdrawn."""
    session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
    before = session.review
    if before is None or before["state"] not in DECIDED:
        return False
    reason = f"{decision_words(before)} withdrawn: {why}"
    ReasoningSession.objects.filter(pk=session_id).update(**awaiting_fields(reason))
    session.refresh_from_db()
    audit(session, None, actor, "review.withdrawn", before=before, after=session.review, detail=reason)
    announce(session)
    return True


def on_answer(session_id, answer, node_id):
    """What a run writes with the session's answer: (the review fields to write with it, the step to record once
    written or None). A new answer under a decision withdraws it; an answer in a tenant that requires review awaits
    one."""
    row = ReasoningSession.objects.filter(pk=session_id).values(
        "review_state", "review_by", "review_answer", "tenant__require_review"
    )
    row = row.first()
    if row is None:
        return {}, None
    state = row["review_state"]
    if state in DECIDED and row["review_answer"] != fingerprint(answer, node_id):
        before = {"state": state, "by": row["review_by"]}
        reason = f"{decision_words(before)} withdrawn: the answer was written again"
        return awaiting_fields(reason), ("review.withdrawn", before, reason)
    if not state and answer and row["tenant__require_review"]:
        return awaiting_fields(), ("review.awaiting", {}, REQUIRED)
    return {}, None


def record(session_id, step):
    """The step on_answer foresaw, recorded once the answer is written: audited and told to the watchers."""
    if step is None:
        return
    action, before, detail = step
    session = ReasoningSession.objects.select_related("tenant").get(pk=session_id)
    audit(session, None, ENGINE, action, before=before, after=session.review, detail=detail)
    announce(session)


def announce(session):
    events.publish(session.id, [("review.updated", {"session_id": str(session.id), "review": session.review})])
