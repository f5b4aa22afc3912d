"""The engine's data: tenants and keys, sessions and their trees, rubrics, the LLM ledger, the audit log.

Field names follow the seed card's Prisma models in snake_case; every row a user can
reach carries its tenant so that every query can be scoped by it.
"""

import hashlib
import secrets
import uuid
import zoneinfo
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.utils import timezone

from .facts.sheet import Fact, Finding
from .money import exact
from .modes import AUTO, mode_choices


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def validate_time_zone(name):
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"'{name}' is not a time zone (try Europe/Zurich or UTC).") from None


def time_zone_choices():
    """The IANA zones (Area/City and UTC), by name: the admin offers these and accepts no other."""
    zones = {z for z in zoneinfo.available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/"))}
    return [(z, z.replace("_", " ")) for z in sorted(zones | {"UTC"})]


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        choices=time_zone_choices,
        validators=[validate_time_zone],
        help_text="The IANA zone (Europe/Zurich, America/Los_Angeles) the admin shows its members' times in.",
    )
    monthly_cap_usd = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="The most the tenant's sessions may spend in a calendar month (UTC), in USD; empty: no cap.",
    )
    require_review = models.BooleanField(
        default=False,
        help_text="Four eyes: every answer awaits a reviewer's (or an admin's) sign-off before it counts as approved.",
    )
    allow_self_approval = models.BooleanField(
        default=False,
        help_text="The person who ran a session (or chose its answer) may approve it themselves; off: a second person "
        "must.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return self.slug


class TenantSpend(models.Model):
    """What a tenant's sessions spent this month (UTC) and hold reserved for calls in flight: the cap's counter.

    Written only by ledger.py in the statements that move a session's money, never by a form: a tenant saved in
    the admin cannot write back a stale count. A new month starts from nothing spent; reservations carry over,
    since the calls they cover have not been paid yet."""

    tenant = models.OneToOneField(Tenant, primary_key=True, on_delete=models.CASCADE, related_name="spend")
    month = models.DateField(help_text="The first day of the month used_usd counts.")
    used_usd = models.FloatField(default=0.0)
    reserved_usd = models.FloatField(default=0.0)


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer (watch only)"
    ADVISOR = "advisor", "Advisor (run and oversee sessions)"
    REVIEWER = "reviewer", "Reviewer (signs off answers)"
    ADMIN = "admin", "Admin (also rubrics and keys)"


class Scope(models.TextChoices):
    READ = "read", "read: sessions, trees, ledgers, rubrics, usage"
    RUN = "run", "run: create and fork sessions (spends)"
    OVERSEE = "oversee", "oversee: steer sessions and their facts"
    REVIEW = "review", "review: approve answers or request changes (four eyes)"
    ADMIN = "admin", "admin: rubrics, keys, members"


# What each role may do: a member's key never holds more, whatever scopes it was given.
ROLE_SCOPES = {
    Role.VIEWER: frozenset({Scope.READ}),
    Role.ADVISOR: frozenset({Scope.READ, Scope.RUN, Scope.OVERSEE}),
    Role.REVIEWER: frozenset({Scope.READ, Scope.REVIEW}),
    Role.ADMIN: frozenset(Scope.values),
}


class Membership(models.Model):
    """Which tenant a user works in, and in which role."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ADVISOR)

    def __str__(self):
        return f"{self.user} @ {self.tenant} ({self.role})"

    @property
    def is_admin(self):
        return self.role == Role.ADMIN

    @property
    def can_act(self):
        """May steer sessions: a viewer only watches, a reviewer only signs off."""
        return Scope.OVERSEE in self.scopes

    @property
    def scopes(self):
        return ROLE_SCOPES[self.role]


def validate_scopes(value):
    if not isinstance(value, list) or not value or any(scope not in Scope.values for scope in value):
        raise ValidationError(f"Scopes are a non-empty list of: {', '.join(Scope.values)}.")


class ApiKey(models.Model):
    """A bearer key: a member's (never more than their role allows) or the tenant's service key; only its SHA-256
    is stored."""

    PREFIX = "rk_"
    SERVICE_SCOPES = [Scope.READ, Scope.RUN, Scope.OVERSEE]  # a key given no scopes: everything but admin

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="api_keys",
        help_text="The member it acts for (its rights end with their membership); empty: a service key of the tenant.",
    )
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=16, help_text="The first characters of the key, to recognise it.")
    scopes = models.JSONField(default=list, validators=[validate_scopes])
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on; empty: never expires.")
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_ip = models.GenericIPAddressField(null=True, blank=True, help_text="The address it was last used from.")
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.hint}… ({self.tenant})"

    @property
    def is_admin(self):
        return Scope.ADMIN in self.scopes

    @classmethod
    def issue(cls, tenant, name="", scopes=None, user=None, expires_at=None):
        """Create a key and return (row, plaintext); the plaintext is never stored."""
        scopes = [s for s in Scope.values if s in (scopes or cls.SERVICE_SCOPES)]  # in the one order, once each
        row = cls(tenant=tenant, name=name, scopes=scopes, user=user, expires_at=expires_at)
        plaintext = row.set_secret()
        row.save()
        return row, plaintext

    def to_dict(self):
        return {
            "id": self.id,
            "name": self.name,
            "hint": self.hint,
            "user": self.user.get_username() if self.user_id else None,
            "scopes": list(self.scopes),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "last_used_at": self.last_used_at,
            "last_used_ip": self.last_used_ip,
            "revoked_at": self.revoked_at,
        }

    def set_secret(self):
        """Give this (unsaved) key a fresh secret and return its plaintext: the caller shows it once."""
        plaintext = self.PREFIX + secrets.token_urlsafe(32)
        self.key_hash, self.hint = sha256(plaintext), plaintext[:10]
        return plaintext

    @classmethod
    def find(cls, plaintext):
        if not plaintext or not plaintext.startswith(cls.PREFIX) or len(plaintext) > 200:
            return None
        keys = cls.objects.select_related("tenant", "user__membership")
        live = keys.filter(key_hash=sha256(plaintext), revoked_at=None)
        return live.filter(models.Q(expires_at=None) | models.Q(expires_at__gt=timezone.now())).first()


class Status(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    SOLVED = "solved"
    FAILED = "failed"
    EXHAUSTED = "exhausted"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class ReviewState(models.TextChoices):
    """Four eyes on an answer (reasoning/review.py); a session whose review no one asked for has none (null)."""

    AWAITING = "awaiting", "Awaiting review"
    APPROVED = "approved", "Approved"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"


class SessionQuerySet(models.QuerySet):
    def update(self, **fields):
        """A bare update moves no event: the trees a poller is told are unchanged (reasoning/tree_memo.py) are asked of
        the database again once it commits. Which rows it touched is not known without a query, so all of them."""
        from . import tree_memo

        count = super().update(**fields)
        if count:
            transaction.on_commit(tree_memo.all_changed, using=self.db)
        return count


class ReasoningSession(models.Model):
    objects = SessionQuerySet.as_manager()

    FINISHED = {Status.SOLVED, Status.FAILED, Status.EXHAUSTED, Status.CANCELLED}
    # The state machine: which statuses a session may move to from each status.
    TRANSITIONS = {
        Status.QUEUED: {Status.RUNNING, Status.PAUSED, Status.CANCELLED, Status.FAILED},
        Status.RUNNING: {
            Status.PAUSED,
            Status.SOLVED,
            Status.FAILED,
            Status.EXHAUSTED,
            Status.CANCELLED,
            Status.INTERRUPTED,
        },
        Status.PAUSED: {Status.QUEUED, Status.CANCELLED},
        Status.INTERRUPTED: {Status.QUEUED, Status.CANCELLED},
        # A finished session is reopened (queued) only to apply an overseer's command: expand, edit, promote.
        Status.SOLVED: {Status.QUEUED},
        Status.FAILED: {Status.QUEUED},
        Status.EXHAUSTED: {Status.QUEUED},
        Status.CANCELLED: {Status.QUEUED},
    }

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="sessions")
    problem_kind = models.CharField(max_length=64, default="general")
    problem_text = models.TextField()
    case_name = models.CharField(
        max_length=200, blank=True, help_text='The case it belongs to, e.g. "Meier family – succession" (forks keep it).'
    )
    # The strategies' registry is the one list of modes: a callable, so a new strategy writes no migration.
    mode = models.CharField(max_length=16, choices=mode_choices, default=AUTO)
    requested_mode = models.CharField(max_length=16, choices=mode_choices, default=AUTO)
    mode_reason = models.CharField(max_length=300, blank=True)
    model_primary = models.CharField(max_length=200)
    model_fallback = models.CharField(max_length=200, blank=True)
    budget_usd = models.FloatField(default=0.50)
    budget_used_usd = models.FloatField(default=0.0)
    budget_reserved_usd = models.FloatField(default=0.0)
    params = models.JSONField(default=dict, blank=True)
    root_node = models.ForeignKey("ReasoningNode", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    termination_reason = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    final_answer = models.TextField(blank=True)
    final_node = models.ForeignKey("ReasoningNode", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    # The timeline a resume or an overseer's command never rewrites: the first start, the time spent running
    # over all its runs, and how and when the search itself ended (a later promote or expand keeps these).
    started_at = models.DateTimeField(
        default=timezone.now, help_text="When it first ran (its creation until then); it never moves."
    )
    resumed_at = models.DateTimeField(null=True, blank=True, help_text="When its latest run began (a resume).")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it last came to rest.")
    active_seconds = models.FloatField(
        default=0.0, help_text="Seconds spent running over all its runs, banked each time it stops running."
    )
    ended_status = models.CharField(max_length=16, choices=Status.choices, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    triggered_by = models.CharField(max_length=200, blank=True)
    # Who started it, for the usage report by person and by key (triggered_by is the words the pages show).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    meta = models.JSONField(default=dict, blank=True)
    seq = models.BigIntegerField(default=0, help_text="The last event sequence number published.")
    search_done = models.BooleanField(
        default=False, help_text="The strategy's search has ended once; a reopened session only applies commands."
    )
    answer_partial = models.BooleanField(default=False, help_text="The answer is the best so far, not a finished one.")
    answer_model = models.CharField(max_length=200, blank=True, help_text="The model that wrote the final answer.")
    wrote_offline = models.BooleanField(
        default=False, help_text="An offline (simulated) model wrote at least one of its nodes."
    )
    token_cap = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Tokens (prompt and reply) the session may use at most; none: no cap."
    )
    answer_chosen_by = models.CharField(
        max_length=200, blank=True, help_text="Who promoted the final node, if a person did."
    )
    answer_note = models.TextField(blank=True)
    answer_checks = models.JSONField(
        default=list, blank=True, help_text="What the fact checker found in the final answer's figures and places."
    )
    answer_checked = models.BooleanField(
        default=True, help_text="The answer went through the checks (a partial answer a cancel wrote did not)."
    )
    # Four eyes (reasoning/review.py). Empty: no review was asked (the tenant does not require one, or no answer yet).
    review_state = models.CharField(max_length=20, choices=ReviewState.choices, blank=True)
    review_by = models.CharField(max_length=200, blank=True, help_text="Who approved the answer or asked for changes.")
    review_at = models.DateTimeField(null=True, blank=True, help_text="When the review state last changed.")
    review_comment = models.TextField(blank=True, help_text="The reviewer's words: why changes, or a note on approval.")
    review_reason = models.CharField(
        max_length=500, blank=True, help_text="Why it awaits review again: the change that withdrew the last decision."
    )
    review_answer = models.CharField(
        max_length=64, blank=True, help_text="The digest of the answer the decision was made on (review.fingerprint)."
    )
    answer_figures = models.JSONField(
        default=list, blank=True, help_text="The figures the model declared with the answer, each with its derivation."
    )
    forked_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    forked_from_node = models.ForeignKey(
        "ReasoningNode", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The claim: which run holds the session, and when it last said it was alive.
    run_owner = models.CharField(max_length=120, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Written on the database's clock.")
    # The fencing token's epoch: bumped at each claim and take-over; a run's writes carry (run_owner, run_epoch).
    run_epoch = models.BigIntegerField(default=0)
    # Runs begun (one per claim, a take-over's included): a replay runs the strategy as many turns (replay.py).
    turns = models.PositiveIntegerField(default=0, help_text="How many runs (turns) of the session have begun.")
    # When a sweep last found it queued with no run (first sight), or dispatched it again: a start message lost
    # with the broker is sent again a while later (REASONING_REDISPATCH_S). Cleared by a claim. Database clock.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # The price of each model the session may call, fixed at creation: {model: {input, output, source}} in USD
    # per million tokens; `source` says where it came from (litellm, setting, deployment, default).
    prices = models.JSONField(default=dict, blank=True)

    class Meta:
        # The list's order (tenant, newest first, id breaking ties) after each filter, so a page is an index range.
        indexes = [
            models.Index(fields=["tenant", "-started_at", "-id"]),
            models.Index(fields=["tenant", "status", "-started_at", "-id"]),
            models.Index(fields=["tenant", "problem_kind", "-started_at", "-id"]),
            models.Index(fields=["tenant", "mode", "-started_at", "-id"]),
            models.Index(fields=["tenant", "review_state", "-started_at", "-id"]),
        ]
        ordering = ["-started_at"]

    def __str__(self):
        about = self.case_name or self.problem_text[:60]
        return f"{self.get_mode_display()} · {about}"

    @property
    def is_finished(self):
        return self.status in self.FINISHED

    def active_time(self, now=None):
        """Seconds spent running over all its runs, the one running now included (a pause, or the wait before a
        promote, does not count). A run whose heartbeat went stale counts up to its last heartbeat: it may be dead."""
        if self.status != Status.RUNNING or self.resumed_at is None:
            return self.active_seconds
        until = now or timezone.now()
        stale = timedelta(seconds=settings.REASONING["HEARTBEAT_STALE_S"])
        if self.heartbeat_at is not None and until - self.heartbeat_at > stale:
            until = self.heartbeat_at
        return self.active_seconds + max(0.0, (until - self.resumed_at).total_seconds())

    @property
    def offline(self):
        """It runs on the simulator; which models actually wrote its nodes is `models_used` (selectors)."""
        return is_offline(self.model_primary)

    @property
    def unmetered(self):
        """A model it may call is priced at 0: its calls cost nothing, so the USD budget cannot stop them."""
        return any(not (p.get("input") or p.get("output")) for p in (self.prices or {}).values())

    @property
    def partly_offline(self):
        """A real model's session in which the simulator wrote a node or the answer (its fallback, where allowed)."""
        return not self.offline and (self.wrote_offline or is_offline(self.answer_model))

    @property
    def answer_state(self):
        """What the answer's checks say of it, in one word the API, the socket and the pages show: `checked` (it passed
        them), `needs_review` (it fails one: its findings say which; a person's promote stands so), `not_checked` (a
        partial answer written as the session stopped, or checks off), None without an answer."""
        if not self.final_answer:
            return None
        if not self.answer_checked:
            return NOT_CHECKED
        return NEEDS_REVIEW if any(not c.get("ok", True) for c in self.answer_checks or []) else CHECKED

    @property
    def review(self):
        """The answer's sign-off as the API, the socket and the pages show it; None when no review was asked."""
        if not self.review_state:
            return None
        return {
            "state": self.review_state,
            "by": self.review_by or None,
            "at": self.review_at.isoformat() if self.review_at else None,
            "comment": self.review_comment or None,
            "reason": self.review_reason or None,
        }

    @property
    def fallback_wrote_all(self):
        """A real model's session whose every written node (and its answer, if any) the simulator wrote, as the allowed
        fallback: "offline (the fallback wrote every node)", not "partly offline". One query, only when partly
        offline."""
        if not self.partly_offline or (self.answer_model and not is_offline(self.answer_model)):
            return False
        written = self.nodes.filter(depth__gt=0).exclude(model_used="")
        return written.exists() and not written.exclude(model_used__startswith="offline/").exists()

    @property
    def offline_words(self):
        """How its badge names who wrote it: "offline", "offline (the fallback wrote every node)", "partly offline",
        or "" for a real model's own session."""
        if self.offline:
            return "offline"
        if not self.partly_offline:
            return ""
        return "offline (the fallback wrote every node)" if self.fallback_wrote_all else "partly offline"

    def fork_ids(self):
        """The ids of the sessions forked from this one; no query when the row was read knowing it has none
        (selectors.get_session annotates has_forks)."""
        if getattr(self, "has_forks", True) is False:
            return []
        return [str(pk) for pk in self.forks.values_list("pk", flat=True)]

    def to_dict(self, with_forks=False):
        """The session as the API, the socket and the page read it; with_forks (the detail): its forks and facts."""
        detail = {"forks": self.fork_ids(), "facts": [f.to_dict() for f in self.facts.all()]} if with_forks else {}
        return {
            **detail,
            "id": str(self.id),
            "status": self.status,
            "problem_kind": self.problem_kind,
            "problem_text": self.problem_text,
            "case_name": self.case_name,
            "mode": self.mode,
            "requested_mode": self.requested_mode,
            "mode_reason": self.mode_reason,
            "model_primary": self.model_primary,
            "model_fallback": self.model_fallback or None,
            "offline": self.offline,
            "partly_offline": self.partly_offline,
            "fallback_wrote_all": self.fallback_wrote_all,
            "budget_usd": self.budget_usd,
            "budget_used_usd": exact(self.budget_used_usd),
            "unmetered": self.unmetered,
            "budget_note": UNMETERED if self.unmetered else None,
            "params": self.params,
            "root_node_id": _str_or_none(self.root_node_id),
            "final_answer": self.final_answer or None,
            "final_node_id": _str_or_none(self.final_node_id),
            "termination_reason": self.termination_reason or None,
            "error": self.error or None,
            "created_at": self.created_at.isoformat(),
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "resumed_at": self.resumed_at.isoformat() if self.resumed_at else None,
            "active_seconds": round(self.active_time(), 3),
            "ended_status": self.ended_status or None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "triggered_by": self.triggered_by,
            "answer_partial": self.answer_partial,
            "answer_model": self.answer_model or None,
            "answer_offline": is_offline(self.answer_model),
            "token_cap": self.token_cap,
            "answer_chosen_by": self.answer_chosen_by or None,
            "answer_note": self.answer_note or None,
            "answer_checks": self.answer_checks or [],
            "answer_badge": (
                answer_badge(self.answer_checks, figures=self.answer_figures)
                if self.final_answer and self.answer_checked else None
            ),
            "figures": self.answer_figures or [],
            "answer_state": self.answer_state,
            "review": self.review,
            "forked_from_session_id": _str_or_none(self.forked_from_id),
            "forked_from_node_id": _str_or_none(self.forked_from_node_id),
            "seq": self.seq,
            "prices": self.prices,
        }


class ReasoningNode(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="nodes")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    depth = models.PositiveIntegerField()
    thought = models.TextField()
    state = models.JSONField(default=dict, blank=True)
    eval_score = models.FloatField(null=True, blank=True)
    eval_reason = models.TextField(blank=True)
    parse_error = models.TextField(blank=True, help_text="Why the model's output for this node could not be parsed.")
    visit_count = models.PositiveIntegerField(default=0)
    total_reward = models.FloatField(default=0.0)
    pruned = models.BooleanField(
        default=False, help_text="This node's own flag; its whole subtree is out of the search."
    )
    pruned_by = models.CharField(max_length=16, blank=True, help_text="strategy (beam drop) or overseer")
    pruned_actor = models.CharField(max_length=200, blank=True)
    pruned_at = models.DateTimeField(null=True, blank=True)
    stale = models.BooleanField(default=False, help_text="An ancestor was edited after this node was scored.")
    # The overseer's: an edit bumps the mark and says why; a rescoring clears `stale` only if it began after the bump.
    stale_mark = models.PositiveIntegerField(default=0, help_text="How many edits have made this node stale.")
    stale_reason = models.CharField(max_length=300, blank=True, help_text="Why the node is stale, while it is.")
    original_thought = models.TextField(blank=True, help_text="The model's text, kept when a person edits the thought.")
    edited_at = models.DateTimeField(null=True, blank=True)
    source_node = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="Copied by a fork."
    )
    is_terminal = models.BooleanField(default=False)
    model_used = models.CharField(max_length=200, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    checks = models.JSONField(
        default=list, blank=True, help_text="What the fact checker found in the thought's figures and places."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["session", "depth"]), models.Index(fields=["parent"])]
        ordering = ["created_at"]

    def __str__(self):
        return f"d{self.depth}: {self.thought[:60]}"

    def to_dict(self):
        return {
            "id": str(self.id),
            "session_id": str(self.session_id),
            "parent_id": _str_or_none(self.parent_id),
            "depth": self.depth,
            "thought": self.thought,
            "state": self.state,
            "eval_score": self.eval_score,
            "eval_reason": self.eval_reason or None,
            "parse_error": self.parse_error or None,
            "visit_count": self.visit_count,
            "total_reward": self.total_reward,
            "pruned": self.pruned,
            "pruned_by": self.pruned_by or None,
            "pruned_actor": self.pruned_actor or None,
            "pruned_at": self.pruned_at.isoformat() if self.pruned_at else None,
            "stale": self.stale,
            "stale_reason": (self.stale_reason or None) if self.stale else None,
            "original_thought": self.original_thought or None,
            "edited_at": self.edited_at.isoformat() if self.edited_at else None,
            "source_node_id": _str_or_none(self.source_node_id),
            "is_terminal": self.is_terminal,
            "model_used": self.model_used,
            "offline": is_offline(self.model_used),
            "latency_ms": self.latency_ms,
            "cost_usd": round(self.cost_usd, 8),
            "checks": self.checks or [],
            "figures": (self.state or {}).get("figures") or [],
            "created_at": self.created_at.isoformat(),
        }


class ReasoningEdge(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="edges")
    from_node = models.ForeignKey(ReasoningNode, on_delete=models.CASCADE, related_name="out_edges")
    to_node = models.ForeignKey(ReasoningNode, on_delete=models.CASCADE, related_name="in_edges")
    action = models.CharField(max_length=500, blank=True)
    observation = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["session"]), models.Index(fields=["from_node"])]
        ordering = ["created_at"]

    def to_dict(self):
        return {
            "id": str(self.id),
            "session_id": str(self.session_id),
            "from_node_id": str(self.from_node_id),
            "to_node_id": str(self.to_node_id),
            "action": self.action,
            "observation": self.observation or None,
            "created_at": self.created_at.isoformat(),
        }


class ReasoningCritique(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="critiques")
    node = models.ForeignKey(ReasoningNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="critiques")
    attempt_num = models.PositiveIntegerField()
    outcome_score = models.FloatField()
    critique = models.TextField()
    applied_to_next = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["session", "attempt_num"])]
        ordering = ["attempt_num"]

    def to_dict(self):
        return {
            "id": str(self.id),
            "session_id": str(self.session_id),
            "node_id": _str_or_none(self.node_id),
            "attempt_num": self.attempt_num,
            "outcome_score": self.outcome_score,
            "critique": self.critique,
            "applied_to_next": self.applied_to_next,
            "created_at": self.created_at.isoformat(),
        }


class Rubric(models.Model):
    """How an evaluator scores thoughts for one problem kind; a tenant's own rubric overrides the shared one."""

    tenant = models.ForeignKey(
        Tenant,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="rubrics",
        help_text="Empty for a rubric shared by every tenant.",
    )
    problem_kind = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "problem_kind"], name="rubric_unique_per_tenant"),
            models.UniqueConstraint(
                fields=["problem_kind"], condition=models.Q(tenant=None), name="rubric_unique_shared"
            ),
        ]
        ordering = ["problem_kind"]

    def __str__(self):
        return f"{self.problem_kind} ({self.tenant or 'shared'})"

    def to_dict(self):
        return {
            "id": self.id,
            "problem_kind": self.problem_kind,
            "name": self.name,
            "description": self.description,
            "shared": self.tenant_id is None,
            "is_active": self.is_active,
            "criteria": [c.to_dict() for c in self.criteria.all()],
        }

    def as_prompt(self):
        """The rubric as the evaluator prompt reads it."""
        lines = [f"{self.name}: {self.description}".strip()]
        for c in self.criteria.all():
            lines.append(f"- {c.name} (weight {c.weight:g}): {c.description}")
        return "\n".join(lines)


class RubricCriterion(models.Model):
    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="criteria")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    weight = models.FloatField(default=1.0)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self):
        return self.name

    def to_dict(self):
        return {"name": self.name, "description": self.description, "weight": self.weight}


class CaseFact(models.Model):
    """One fact of the client's fact sheet: read from the problem when the session was created, or an advisor's."""

    class Kind(models.TextChoices):
        AMOUNT = "amount"
        PERCENT = "percent"
        AGE = "age"
        YEAR = "year"
        PLACE = "place"
        ACCOUNT = "account"
        INSTRUMENT = "instrument"
        GOAL = "goal"
        CONSTRAINT = "constraint"
        PERSON = "person"
        LIMIT = "limit"
        HORIZON = "horizon"

    class Source(models.TextChoices):
        EXTRACTED = "extracted"
        ADVISOR = "advisor"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="facts")
    position = models.PositiveIntegerField(default=0, help_text="Its place in the sheet: the problem's order.")
    label = models.CharField(max_length=120)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # A number (an amount in base units, a percent, an age, a year) or a name (a place's ISO 3166 code, an account).
    number = models.FloatField(null=True, blank=True)
    name = models.CharField(max_length=300, blank=True)
    unit = models.CharField(max_length=16, blank=True, help_text="ISO 4217 code, %, years or ISO 3166.")
    base = models.CharField(
        max_length=120, blank=True, help_text="A percent's base (the label of its amount); what a limit applies to."
    )
    role = models.CharField(
        max_length=16, blank=True, help_text="What it is for: a percent's target or share, a person's spouse, a floor."
    )
    text = models.TextField(blank=True, help_text="The exact words of the problem it was read from.")
    start = models.IntegerField(default=-1)
    end = models.IntegerField(default=-1)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.EXTRACTED)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["session", "position"])]
        ordering = ["position", "id"]

    def __str__(self):
        return f"{self.label}: {self.value}"

    @property
    def value(self):
        if self.number is None:
            return self.name
        return int(self.number) if float(self.number).is_integer() else self.number

    def as_fact(self):
        return Fact(
            label=self.label,
            kind=self.kind,
            value=self.value,
            unit=self.unit,
            text=self.text,
            start=self.start,
            end=self.end,
            source=self.source,
            base=self.base,
            role=self.role,
            id=str(self.pk or ""),
        )

    @classmethod
    def from_fact(cls, session, fact, position):
        number = isinstance(fact.value, int | float) and not isinstance(fact.value, bool)
        return cls(
            tenant_id=session.tenant_id,
            session=session,
            position=position,
            label=fact.label[:120],
            kind=fact.kind,
            number=float(fact.value) if number else None,
            name="" if number else str(fact.value or "")[:300],
            unit=fact.unit[:16],
            base=fact.base[:120],
            role=fact.role[:16],
            text=fact.text,
            start=fact.start,
            end=fact.end,
            source=fact.source,
        )

    def to_dict(self):
        return {
            "id": self.pk,
            "label": self.label,
            "kind": self.kind,
            "value": self.value,
            "unit": self.unit,
            "base": self.base or None,
            "role": self.role or None,
            "text": self.text,
            "start": self.start if self.start >= 0 else None,
            "end": self.end if self.end >= 0 else None,
            "source": self.source,
        }


class ModelMeter(models.Model):
    """What the gateway has seen of a model's server, whichever tenant's session called it: whether it streams (a
    stream is what the gateway closes at a call's reservation), and the calls it billed past their reservation (it
    wrote past `max_tokens` where the gateway could not stop it, or billed tokens it never sent). A model marked so
    (`marked`) is reserved at the dearest call it has billed, and a session whose budget cannot cover that call is
    refused at its creation."""

    model = models.CharField(max_length=200, primary_key=True)
    streams = models.BooleanField(default=True, help_text="False: its server answered a stream request in one body.")
    calls_over = models.PositiveIntegerField(default=0, help_text="Calls billed past their reservation.")
    over_usd = models.FloatField(default=0.0, help_text="What those calls cost past their reservations, in all.")
    worst_tokens_in = models.PositiveIntegerField(default=0)
    worst_tokens_out = models.PositiveIntegerField(default=0, help_text="The most reply tokens one call billed.")
    worst_usd = models.FloatField(default=0.0, help_text="The dearest call, at its session's price.")
    last_over_at = models.DateTimeField(null=True, blank=True)

    @property
    def marked(self):
        return not self.streams or self.calls_over > 0

    def to_dict(self):
        return {
            "model": self.model,
            "streams": self.streams,
            "marked": self.marked,
            "calls_over": self.calls_over,
            "over_usd": self.over_usd,
            "worst_tokens_in": self.worst_tokens_in,
            "worst_tokens_out": self.worst_tokens_out,
            "worst_usd": self.worst_usd,
            "last_over_at": self.last_over_at,
        }


class RememberedJudgement(models.Model):
    """A judgement of a state the task defines whatever the problem (a Game of 24 board's numbers left), kept for the
    firm's later sessions on the same models, problem kind and rubric (reasoning/memory.py): as the reference's value
    cache lives for its whole run, a board judged once is not paid for again. Deleting rows only costs calls."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="remembered_judgements")
    digest = models.CharField(max_length=64, help_text="sha256 of the scope and the key: what a lookup matches.")
    scope = models.CharField(max_length=600, help_text="The models, the problem kind and the rubric's digest.")
    key = models.TextField(help_text="The strategy, how it judged, and the state.")
    fields = models.JSONField(help_text="The judgement: its score, reason and marks, as the node took it.")
    session = models.ForeignKey(
        "ReasoningSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The session whose node was judged.",
    )
    node_id = models.CharField(max_length=36, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "digest"], name="one_judgement_per_state")]

    def __str__(self):
        return self.key[:80]


class LLMCall(models.Model):
    """The ledger: one row per model call, whatever its outcome."""

    class Outcome(models.TextChoices):
        OK = "ok"
        FALLBACK = "fallback"
        ERROR = "error"
        BUDGET = "budget", "refused: budget"
        UNACCOUNTED = "unaccounted", "unaccounted: the run stopped with budget reserved"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(
        ReasoningSession, null=True, blank=True, on_delete=models.CASCADE, related_name="llm_calls"
    )
    node = models.ForeignKey(ReasoningNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls")
    purpose = models.CharField(max_length=64)
    model_requested = models.CharField(max_length=200)
    model_used = models.CharField(max_length=200, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    reserved_usd = models.FloatField(default=0.0)
    latency_ms = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    parse_ok = models.BooleanField(null=True)
    error = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(default=1, help_text="1 for a call's first try; retries count up.")
    prompt = models.TextField(blank=True, help_text="The messages sent, as rendered.")
    reply = models.TextField(blank=True, help_text="The model's raw reply, before any parsing.")
    turn = models.PositiveIntegerField(null=True, blank=True, help_text="The run (turn) of the session that made it.")
    asked = models.PositiveIntegerField(
        null=True, blank=True, help_text="Its place in the order that run asked its calls (not the order they ended)."
    )
    stopped = models.BooleanField(
        default=False, help_text="The gateway closed the reply's stream at its reservation: the server wrote on."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["session", "created_at"]), models.Index(fields=["tenant", "-created_at"])]
        ordering = ["created_at"]

    def __str__(self):
        # Which call: its purpose and try, the model, and the session it was for ("LLMCall object (1688)" says none).
        model = self.model_used or self.model_requested
        of = f" · session {str(self.session_id)[:8]}" if self.session_id else ""
        return f"Call {self.pk}: {self.purpose} (try {self.attempt}) · {model} · {self.outcome}{of}"

    def to_dict(self):
        return {
            "id": self.id,
            "session_id": _str_or_none(self.session_id),
            "node_id": _str_or_none(self.node_id),
            "purpose": self.purpose,
            "attempt": self.attempt,
            "model_requested": self.model_requested,
            "model_used": self.model_used or None,
            "outcome": self.outcome,
            "parse_ok": self.parse_ok,
            "error": self.error or None,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": round(self.cost_usd, 10),
            "reserved_usd": round(self.reserved_usd, 10),
            "latency_ms": self.latency_ms,
            "prompt": self.prompt,
            "reply": self.reply,
            "created_at": self.created_at.isoformat(),
            "turn": self.turn,
            "asked": self.asked,
        }


class OverseerAction(models.Model):
    """The audit log: every change a human makes to a session or its tree.

    Commands that need the session's one writer (expand, edit's rescore, promote) wait here as
    pending until the run that holds the session applies them at a step boundary.
    """

    class State(models.TextChoices):
        PENDING = "pending"
        APPLIED = "applied"
        REFUSED = "refused"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="overseer_actions")
    node = models.ForeignKey(ReasoningNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=32)
    payload = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.APPLIED)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    detail = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)
    # Where the search met it, so a replay applies it at the same place: the run (its turn, 1 for the first) and the
    # step boundary of that run (0: before its first, as the run loaded the tree). None: no run has met it yet.
    turn = models.PositiveIntegerField(null=True, blank=True, help_text="The run (turn) that met it.")
    step = models.PositiveIntegerField(null=True, blank=True, help_text="That run's step boundary (0: its start).")

    class Meta:
        indexes = [models.Index(fields=["session", "created_at"]), models.Index(fields=["session", "state"])]
        ordering = ["created_at", "id"]

    def to_dict(self):
        return {
            "id": self.id,
            "session_id": str(self.session_id),
            "node_id": _str_or_none(self.node_id),
            "actor": self.actor,
            "action": self.action,
            "state": self.state,
            "payload": self.payload,
            "before": self.before,
            "after": self.after,
            "detail": self.detail or None,
            "created_at": self.created_at.isoformat(),
            "applied_at": self.applied_at.isoformat() if self.applied_at else None,
            "turn": self.turn,
            "step": self.step,
        }


class IdempotencyKey(models.Model):
    """A client's Idempotency-Key on a request that makes a session (create, fork): a retry gets the same session.

    Keys are the tenant's own (two tenants may use the same key); the request's fingerprint (method, path, body)
    tells a retry from another request reusing the key.
    """

    MAX_LENGTH = 200

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=MAX_LENGTH)
    fingerprint = models.CharField(max_length=64)
    session = models.ForeignKey(ReasoningSession, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "key"], name="idempotency_key_per_tenant")]


def answer_badge(checks, facts=None, figures=None):
    """The answer's badge; with the session's facts (Fact objects) it also says what the sheet lacks, and with its
    declared `figures` ([]: none declared) whether its figures were declared or read from the prose."""
    from .facts.check import badge  # the checker's patterns compile only where a badge is shown

    declared = None if figures is None else bool(figures)
    return badge([Finding.from_dict(c) for c in checks], facts, declared)


CHECKED, NEEDS_REVIEW, NOT_CHECKED = "checked", "needs_review", "not_checked"  # a session's answer_state
UNMETERED = "unmetered model: the budget does not bind"  # said wherever a budget of a model priced at 0 is shown


def is_offline(model_name):
    return bool(model_name) and model_name.startswith("offline/")


def _str_or_none(value):
    return str(value) if value is not None else None
