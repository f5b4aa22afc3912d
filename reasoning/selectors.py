"""Reads, always scoped to a tenant: another tenant's rows are simply not there."""

import hashlib
import json
import uuid

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q

from . import rls
from .models import LLMCall, Membership, OverseerAction, ReasoningNode, ReasoningSession, Rubric, is_offline

# A test-only switch: False drops the tenant filter from the session and node reads below, to show that on
# PostgreSQL the database's own wall (reasoning/rls.py) still hides another tenant's rows. Never False in code.
TENANT_FILTER = True


def of_tenant(tenant):
    """The filter that scopes a read to its tenant (none while a test has turned TENANT_FILTER off)."""
    return {"tenant": tenant} if TENANT_FILTER else {}


def membership_for(user):
    """The user's membership (with its tenant), or None for anonymous users and users without one."""
    if not user or not user.is_authenticated:
        return None
    with rls.all_tenants():  # the membership names the user's tenant: until it is read, no tenant is known
        return Membership.objects.select_related("tenant").filter(user=user).first()


def tenant_for_user(user):
    membership = membership_for(user)
    return membership.tenant if membership else None


# The list's model filter: the simulator, the simulator that errs, or any real model.
MODEL_GROUPS = {
    "offline": Q(model_primary="offline/sim"),
    "noisy": Q(model_primary="offline/noisy"),
    "real": ~Q(model_primary__startswith="offline/"),
}
ORIGINS = {"fork": Q(forked_from__isnull=False), "original": Q(forked_from__isnull=True)}
# The list's review filter: a state of four eyes, or none (no review asked).
REVIEW_FILTERS = {"awaiting": "awaiting", "approved": "approved", "changes_requested": "changes_requested", "none": ""}


def sessions_for(
    tenant, status=None, problem_kind=None, mode=None, model=None, origin=None, by=None, q=None, review=None
):
    """The tenant's sessions, newest first, narrowed by each filter given: status, kind, mode, model group
    (MODEL_GROUPS), fork or original, who started it (triggered_by, exactly), its review (REVIEW_FILTERS) and words
    (q): each word of it in the case name or the problem, in any order."""
    qs = ReasoningSession.objects.filter(**of_tenant(tenant)).select_related("tenant")
    if status:
        qs = qs.filter(status=status)
    if problem_kind:
        qs = qs.filter(problem_kind=problem_kind)
    if mode:
        qs = qs.filter(mode=mode)
    if model:
        qs = qs.filter(MODEL_GROUPS[model])
    if origin:
        qs = qs.filter(ORIGINS[origin])
    if review:
        qs = qs.filter(review_state=REVIEW_FILTERS[review])
    if by:
        qs = qs.filter(triggered_by=person(by))  # an old name ("web:ana") finds the person's sessions too
    for word in search_words(q):  # every word, in any order, in the case name or the problem
        qs = qs.filter(Q(problem_text__icontains=word) | Q(case_name__icontains=word))
    return qs.order_by("-started_at", "-id")  # the id makes the order total, so offset pages never overlap


MAX_SEARCH_WORDS = 12


def search_words(q):
    """The words of a search, each once, at most MAX_SEARCH_WORDS of them ("Meier succession": two words)."""
    return list(dict.fromkeys(w.casefold() for w in (q or "").split()))[:MAX_SEARCH_WORDS]


def person(actor):
    """The one name a session's starter goes by, whatever the door: "user:<login>" for a person (the web form's old
    "web:<login>", a member's key's "user:<login>/key:<hint>", the terminal's "cli:user:<login>"); a service key's
    "key:<hint>" and the system's names ("cli", "seed_demo") as they are. Migration 0016 renamed the old rows so."""
    actor = actor or ""
    for door in ("web:", "cli:user:"):
        if actor.startswith(door) and len(actor) > len(door):
            return "user:" + actor[len(door):]
    if actor.startswith("user:"):
        return actor.split("/key:", 1)[0]
    return actor


def session_starters(tenant, limit=50):
    """Who started the tenant's sessions (triggered_by values), most sessions first: the list's "By" filter."""
    rows = (
        ReasoningSession.objects.filter(tenant=tenant)
        .exclude(triggered_by="")
        .values("triggered_by")
        .annotate(n=Count("pk"))
        .order_by("-n", "triggered_by")[:limit]
    )
    return [row["triggered_by"] for row in rows]


def get_session(tenant, session_id):
    """The tenant's session, or ReasoningSession.DoesNotExist (also for a malformed id)."""
    try:
        pk = uuid.UUID(str(session_id))
    except ValueError:
        raise ReasoningSession.DoesNotExist from None
    # Whether it has forks comes with the row: most sessions have none, and then to_dict(with_forks=True) asks no more.
    forked = Exists(ReasoningSession.objects.filter(forked_from=OuterRef("pk")))
    return ReasoningSession.objects.select_related("tenant").annotate(has_forks=forked).get(pk=pk, **of_tenant(tenant))


def get_node(tenant, node_id):
    """The tenant's node, or ReasoningNode.DoesNotExist (also for a malformed id)."""
    try:
        pk = uuid.UUID(str(node_id))
    except ValueError:
        raise ReasoningNode.DoesNotExist from None
    return ReasoningNode.objects.select_related("session", "session__tenant").get(pk=pk, **of_tenant(tenant))


def tree_snapshot(tenant, session_id):
    """The tree and the seq it reflects, read in one transaction so no event falls between them."""
    with transaction.atomic():
        session = get_session(tenant, session_id)
        return {"seq": session.seq, **tree(session)}


def tree(session, head=None):
    """The whole tree in the one format the API, the websocket snapshot and the page share (head: the session's
    to_dict(with_forks=True), when the caller has it already). Each kind of row is one query, whatever the size."""
    return {
        "session": head or session.to_dict(with_forks=True),
        "nodes": [n.to_dict() for n in session.nodes.order_by("created_at", "depth")],
        "edges": [e.to_dict() for e in session.edges.all()],
        "critiques": [c.to_dict() for c in session.critiques.all()],
        "actions": [a.to_dict() for a in actions_of(session)],
    }


def tree_etag(head):
    """The tree's version, from the session's to_dict(with_forks=True): its seq moves with every node, edge, critique
    and action written (each is published), and a digest of the row covers what changes with no event (the budget
    settled, a heartbeat's status, a fork). Weak: active_seconds, which grows while it runs, is left out."""
    stable = json.dumps({k: v for k, v in head.items() if k != "active_seconds"}, sort_keys=True, default=str)
    return f'W/"{head["seq"]}-{hashlib.blake2b(stable.encode(), digest_size=8).hexdigest()}"'


def models_used(session):
    """Which models wrote the session's nodes, most first: the truth, whatever the session was configured with."""
    counts = session.nodes.exclude(model_used="").values("model_used").annotate(nodes=Count("id")).order_by("-nodes")
    roles = {session.model_primary: "primary", session.model_fallback: "fallback"}
    return [
        {
            "model": row["model_used"],
            "nodes": row["nodes"],
            "role": roles.get(row["model_used"], "other"),
            "offline": is_offline(row["model_used"]),
        }
        for row in counts
    ]


def calls_of(session, node_id=None):
    """The session's ledger, oldest first; one node's calls when a node is named."""
    calls = LLMCall.objects.filter(session=session)
    if node_id:
        calls = calls.filter(node_id=node_id)
    return calls.order_by("created_at", "id")


def actions_of(session):
    """The audit trail, oldest first."""
    return OverseerAction.objects.filter(session=session).order_by("created_at", "id")


def rubrics_for(tenant):
    """Active rubrics the tenant can use: its own, and the shared ones it has not overridden."""
    own = Rubric.objects.filter(tenant=tenant, is_active=True)
    shared = Rubric.objects.filter(tenant=None, is_active=True).exclude(problem_kind__in=own.values("problem_kind"))
    return Rubric.objects.filter(Q(pk__in=own.values("pk")) | Q(pk__in=shared.values("pk"))).prefetch_related(
        "criteria"
    )


def rubric_for(tenant, problem_kind):
    """The rubric a session of this kind is scored by: the tenant's own active one, else the shared one (as
    rubrics_for lists them, in a plainer query than its subqueries: every run starts with this)."""
    rubrics = Rubric.objects.filter(Q(tenant=tenant) | Q(tenant=None), problem_kind=problem_kind, is_active=True)
    return rubrics.order_by(F("tenant").asc(nulls_last=True)).prefetch_related("criteria").first()
