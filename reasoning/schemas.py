"""The API's input and output shapes; the input shapes are also what the web form validates against."""

import math
import re
from datetime import date, datetime
from typing import Annotated, Literal

from django.conf import settings
from django.utils import timezone
from ninja import Schema
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, PlainValidator, WithJsonSchema, field_validator

from .facts.sheet import CHECK_KINDS, KINDS
from .models import LLMCall, Scope
from .money import exact
from .modes import modes

MODEL_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$"
KIND = r"^[a-z0-9][a-z0-9_-]*$"
MAX_PROBLEM_CHARS = 20_000


def no_nul(value):
    # PostgreSQL text cannot hold NUL, and no client means to send one: refuse it on every database alike.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def not_a_bool(value):
    # JSON true is not the number 1: a budget or a count must be a number.
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


NO_NUL = r"^[^\u0000]*$"  # said in the schema too, so clients and schema-driven tests know it
Text = Annotated[str, AfterValidator(no_nul), Field(json_schema_extra={"pattern": NO_NUL})]
Written = Annotated[str, AfterValidator(no_nul), Field(json_schema_extra={"pattern": r"^[^\u0000]*\S[^\u0000]*$"})]
def whole_number(value):
    # 5.0 is the integer 5 to JSON Schema (and to any client that writes numbers as floats); 5.5 is not.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# Strict: "5" is not an amount nor a count (a JSON integer is still an amount). Constraint first: the schema says it.
Money = Annotated[float, Field(gt=0, strict=True), BeforeValidator(not_a_bool)]
# Money the API sends: a number of USD rounded to a millionth of a dollar (money.exact), never float noise.
Usd = Annotated[
    float,
    AfterValidator(exact),
    Field(description="USD, rounded to a millionth of a dollar (6 decimals at most): an exact decimal."),
]
Count = Annotated[int, Field(strict=True), BeforeValidator(whole_number), BeforeValidator(not_a_bool)]
TokenCap = Annotated[
    int, Field(strict=True, ge=1, le=10**9), BeforeValidator(whole_number), BeforeValidator(not_a_bool)
]


def budget_bound(schema):
    """The OpenAPI schema states the budget's maximum, REASONING_MAX_BUDGET_USD, as read when it is generated."""
    limit = settings.REASONING["MAX_BUDGET_USD"]
    for variant in schema.get("anyOf", [schema]):
        if variant.get("type") == "number":
            variant["maximum"] = limit


def params_schema_by_mode():
    """The OpenAPI shape of `params`: one object schema per strategy, each naming its mode."""
    from reasoning.strategies import get_strategy, strategy_labels  # strategies load when the schema is asked for

    variants = []
    for mode, label in strategy_labels():
        schema = get_strategy(mode).Params.model_json_schema()
        variants.append({**schema, "title": f"{mode}: {label}", "additionalProperties": False})
    return {"anyOf": variants}


def sane_budget(value):
    """A budget is finite and at most REASONING_MAX_BUDGET_USD."""
    if value is None:
        return value
    limit = settings.REASONING["MAX_BUDGET_USD"]
    if not math.isfinite(value) or value > limit:
        raise ValueError(f"must be a finite amount of at most {limit:g} USD")
    return value


class SessionIn(Schema):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not a silent default

    problem_text: Written = Field(min_length=10, max_length=MAX_PROBLEM_CHARS)
    problem_kind: str | None = Field(None, max_length=64, pattern=KIND)
    case_name: Text = Field(
        "", max_length=200, description='The case it belongs to, e.g. "Meier family – succession"; forks keep it.'
    )
    mode: Literal[tuple(modes())] = "auto"
    model_primary: str | None = Field(None, max_length=200, pattern=MODEL_NAME)
    model_fallback: str | None = Field(None, max_length=200, pattern=MODEL_NAME)
    budget_usd: Money | None = Field(
        None, description="USD; at most REASONING_MAX_BUDGET_USD.", json_schema_extra=budget_bound
    )
    token_cap: TokenCap | None = Field(
        None,
        description="Tokens (prompts and replies) the session may use at most, reserved before each call like the "
        "budget: the cap that binds a model priced at 0, where the USD budget does not.",
    )
    params: dict = Field(
        default_factory=dict,
        description="The strategy's parameters (see each mode's schema); unknown keys and out-of-range values are "
        "refused with a 422 naming the field. Empty: the strategy's defaults.",
        json_schema_extra=lambda schema: schema.update(params_schema_by_mode()),
    )

    @field_validator("problem_text")
    @classmethod
    def not_blank(cls, value):
        value = value.strip()
        if len(value) < 10:
            raise ValueError("describe the problem in at least 10 characters")
        return value

    @field_validator("case_name")
    @classmethod
    def one_line(cls, value):
        return " ".join(value.split())  # a name is one line: newlines and runs of spaces become one space

    check_budget = field_validator("budget_usd")(sane_budget)


class ExpandIn(Schema):
    model_config = ConfigDict(extra="forbid")

    k: Count = Field(3, ge=1, le=8, description="How many children to propose.")


class ReplayIn(Schema):
    """A replay takes no options: a body, if any, is an empty object (a misspelt option is refused, not ignored)."""

    model_config = ConfigDict(extra="forbid")


class DivergenceOut(Schema):
    node: str | None = Field(
        description="The recorded node's id; `answer` for the answer; null for a node only the replay made."
    )
    recorded: dict | None = Field(description="The recorded version: where it sits, its thought, score, pruning...")
    replayed: dict | None = Field(description="The replayed version, its parent named by the recorded id it matched.")


class ReplayOut(Schema):
    identical: bool = Field(description="The replayed tree and answer are the recorded ones, node for node.")
    nodes: int = Field(description="Nodes in the replayed tree.")
    recorded_nodes: int = Field(description="Nodes in the recorded tree.")
    first_divergence: DivergenceOut | None
    calls_replayed: int = Field(description="Recorded replies the replay used (no model was called, nothing charged).")
    calls_unused: int = Field(description="Recorded replies no replayed call asked for.")
    calls_missing: int = Field(description="Replayed calls the ledger held no reply for.")


class EditIn(Schema):
    model_config = ConfigDict(extra="forbid")

    thought: Written = Field(min_length=1, max_length=4000)

    @field_validator("thought")
    @classmethod
    def not_blank(cls, value):
        value = value.strip()
        if not value:
            raise ValueError("write the new thought")
        return value


class PromoteIn(Schema):
    model_config = ConfigDict(extra="forbid")

    note: Text = Field("", max_length=2000, description="Why this node is the answer; shown with it.")


class ReviewIn(Schema):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "request_changes"]
    comment: Text = Field(
        "",
        max_length=2000,
        validate_default=True,
        description="The reviewer's words: required to request changes (what to change, and why); optional to approve.",
    )

    @field_validator("comment")
    @classmethod
    def says_why(cls, value, info):
        value = value.strip()
        if not value and info.data.get("decision") == "request_changes":
            raise ValueError("say what should change: a request for changes needs a comment")
        return value


class ReviewOut(Schema):
    state: Literal["awaiting", "approved", "changes_requested"]
    by: str | None = Field(description="Who approved or asked for changes (null while it awaits review).")
    at: str | None = Field(description="When the state last changed.")
    comment: str | None = Field(description="The reviewer's words: why changes are asked, or a note on approval.")
    reason: str | None = Field(
        None, description="Why it awaits review again: the change (an edit, a fact, a promote) that withdrew one."
    )


class ForkIn(Schema):
    model_config = ConfigDict(extra="forbid")

    node_id: Text = Field(max_length=64, description="The node the fork continues from.")
    mode: Literal[tuple(modes())] | None = Field(None, description="Default: the session's mode.")
    budget_usd: Money | None = Field(
        None,
        description="Default: the session's budget; at most REASONING_MAX_BUDGET_USD.",
        json_schema_extra=budget_bound,
    )
    params: dict | None = Field(
        None,
        description="The mode's params; default: the session's (same mode) or defaults.",
        json_schema_extra=lambda schema: schema.update(anyOf=[*params_schema_by_mode()["anyOf"], {"type": "null"}]),
    )

    check_budget = field_validator("budget_usd")(sane_budget)


class ModelUseOut(Schema):
    model: str
    nodes: int
    role: Literal["primary", "fallback", "other"]
    offline: bool


class FindingOut(Schema):
    kind: Literal[CHECK_KINDS]
    ok: bool
    text: str = Field(description="The span of the checked text the finding is about ('' for coverage).")
    detail: str
    start: int = Field(-1, description="Where the span starts in the checked text (-1: no span).")
    end: int = -1
    verified: bool = Field(
        True, description="False: the check could not decide (ok is then true and the detail says why); not counted."
    )


class FigureOut(Schema):
    label: str
    value: float | None = Field(description="The figure as the model declared it (null: not a number).")
    unit: str = Field(description="An ISO currency code, '%' or ''.")
    derivation: str = Field(description="The fact it is, or the expression it was computed by ('' for the model's own).")
    facts: list[int | str] = Field(description="The ids of the client's facts it rests on (a label where unstored).")
    ok: bool = Field(description="The derivation gives the declared value, in the declared unit.")
    detail: str = ""
    computed: str = Field("", description="The derivation's exact value.")
    verified: bool = Field(True, description="False: the model's own figure, with no derivation to check.")
    span: list[int] | None = Field(None, description="[start, end] of the amount that writes it in the text.")


class FactOut(Schema):
    id: int
    label: str
    kind: Literal[KINDS]
    value: float | str | None = Field(
        description="An amount in base units (unit: ISO 4217), a percent (70 for 70%), an age, a year; a place as "
        "its ISO 3166 code or subdivision (US-CA); an account, instrument, goal or constraint by name."
    )
    unit: str
    base: str | None = Field(
        None, description="A percent's base (the label of the amount it is a share of); what a limit applies to."
    )
    role: str | None = Field(
        None, description="What it is for: a percent's share, target, spending, tax, growth; a person's client, "
        "spouse, child ...; a limit's floor, cap, minimum, maximum; a horizon's over, within, by, before, after.",
    )
    text: str = Field(description="The exact words of the problem it was read from ('' for an advisor's own).")
    start: int | None
    end: int | None
    source: Literal["extracted", "advisor"]


def fact_value(value):
    """A fact's value is a number within ±1e15 or a name of 1 to 300 characters: one error saying which, not one per
    branch of a union ('value.constrained-float', 'value.function-after[...]')."""
    not_a_bool(value)
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > 1e15:
            raise ValueError("a number within ±1e15")
        return float(value)
    if isinstance(value, str):
        if not 1 <= len(value) <= 300:
            raise ValueError("a name of 1 to 300 characters")
        return no_nul(value)
    raise ValueError("a number or a name")


FactValue = Annotated[
    float | str,
    PlainValidator(fact_value),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": -1e15, "maximum": 1e15},
                              {"type": "string", "minLength": 1, "maxLength": 300, "pattern": NO_NUL}]}),
]  # fmt: skip


class FactIn(Schema):
    model_config = ConfigDict(extra="forbid")

    label: Written = Field(min_length=1, max_length=120)
    kind: Literal[KINDS]
    value: FactValue = Field(
        description="A number (an amount in base units, a percent, an age, a year) or, for an amount, as written "
        "('$450k'); a place's ISO 3166 code (US-FL) or name; a name or clause for the other kinds."
    )
    unit: Text = Field("", max_length=16, description="An amount's ISO 4217 code (USD).")
    base: Text = Field("", max_length=120, description="A percent's base: the label of its amount; a limit's object.")
    role: Text = Field("", max_length=16, description="What it is for (a percent's target, a limit's floor ...).")
    text: Text = Field("", max_length=2000, description="The words the client used, if any.")


class FactPatch(Schema):
    model_config = ConfigDict(extra="forbid")

    label: Written | None = Field(None, min_length=1, max_length=120)
    kind: Literal[KINDS] | None = None
    value: FactValue | None = None
    unit: Text | None = Field(None, max_length=16)
    base: Text | None = Field(None, max_length=120)
    role: Text | None = Field(None, max_length=16)
    text: Text | None = Field(None, max_length=2000)


class SessionOut(Schema):
    id: str
    status: str
    problem_kind: str
    problem_text: str
    case_name: str = Field("", description="The case it belongs to; empty when none was given.")
    mode: str
    requested_mode: str
    mode_reason: str
    model_primary: str
    model_fallback: str | None
    offline: bool
    partly_offline: bool = Field(
        description="A real model's session in which the offline simulator wrote a node or the answer."
    )
    fallback_wrote_all: bool = Field(
        False,
        description="A real model's session whose every node (and answer) the offline simulator wrote, as its "
        "fallback: offline, not partly.",
    )
    budget_usd: Usd
    budget_used_usd: Usd
    unmetered: bool = Field(description="A model it may call is priced at 0: the USD budget cannot stop it.")
    budget_note: str | None = Field(None, description="'unmetered model: the budget does not bind' when unmetered.")
    token_cap: int | None = Field(None, description="Tokens the session may use at most (none: no cap).")
    answer_model: str | None = Field(None, description="The model that wrote the final answer.")
    answer_offline: bool = Field(False, description="The offline simulator wrote the final answer.")
    params: dict
    root_node_id: str | None
    final_answer: str | None
    final_node_id: str | None
    termination_reason: str | None
    error: str | None
    created_at: str
    started_at: str = Field(description="When it first ran (its creation until then); a resume never moves it.")
    resumed_at: str | None = Field(description="When its latest run began; null before its first run.")
    active_seconds: float = Field(description="Seconds spent running over all its runs, the current one included.")
    finished_at: str | None = Field(description="When it last came to rest (a later promote or expand moves it).")
    ended_at: str | None = Field(description="When the search itself first ended; a later promote keeps it.")
    ended_status: str | None = Field(description="How the search itself first ended.")
    triggered_by: str
    answer_partial: bool
    answer_chosen_by: str | None
    answer_note: str | None
    answer_checks: list[FindingOut] = Field(
        default_factory=list, description="What the fact checker found in the final answer's figures and places."
    )
    answer_badge: str | None = Field(
        None, description="What was checked and what was not ('12 figures checked, 1 unverified'), and the failures; "
        "none for an answer that was not checked."
    )
    figures: list[FigureOut] = Field(
        default_factory=list,
        description="The figures the model declared with the answer: each with its derivation, the facts it rests on "
        "and whether the derivation checks out (empty: none declared, the badge says so).",
    )
    answer_state: str | None = Field(
        None,
        description="checked (it passed its checks), needs_review (it fails one: see answer_checks; a person's "
        "promote stands so), not_checked (a partial answer written as the session stopped, or checks off); null "
        "without an answer.",
    )
    review: ReviewOut | None = Field(
        None,
        description="Four eyes: the answer's sign-off. Null when no review was asked (the tenant does not require one "
        "and nobody reviewed it, or there is no answer yet).",
    )
    facts: list[FactOut] = Field(
        default_factory=list, description="The client's fact sheet (session detail and tree only)."
    )
    forked_from_session_id: str | None
    forked_from_node_id: str | None
    forks: list[str] = []
    seq: int
    prices: dict = Field(
        default_factory=dict, description="USD per million tokens for each model, fixed at creation, with its source."
    )
    models_used: list[ModelUseOut] = Field(
        default_factory=list, description="Which models wrote the nodes (session detail only)."
    )


class CallOut(Schema):
    id: int
    session_id: str | None
    node_id: str | None
    purpose: str
    attempt: int
    model_requested: str
    model_used: str | None
    outcome: Literal[tuple(LLMCall.Outcome.values)]
    parse_ok: bool | None
    error: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: Usd
    reserved_usd: Usd
    latency_ms: int
    prompt: str
    reply: str
    created_at: str
    turn: int | None = Field(None, description="The run (turn) of the session that made the call.")
    asked: int | None = Field(None, description="Its place in the order that run asked its calls (a replay's key).")


class ActionOut(Schema):
    id: int
    session_id: str
    node_id: str | None
    actor: str
    action: str
    state: Literal["pending", "applied", "refused"]
    payload: dict
    before: dict
    after: dict
    detail: str | None
    created_at: str
    applied_at: str | None
    turn: int | None = Field(None, description="The run (turn) of the session that met it; none yet: null.")
    step: int | None = Field(None, description="That run's step boundary it took effect at (0: the run's start).")


class TreeOut(Schema):
    session: SessionOut
    nodes: list[dict]
    edges: list[dict]
    critiques: list[dict]
    actions: list[ActionOut]


class CriterionIn(Schema):
    model_config = ConfigDict(extra="forbid")

    name: Written = Field(min_length=1, max_length=100)
    description: Text = Field("", max_length=2000)
    weight: Annotated[float, BeforeValidator(not_a_bool)] = Field(1.0, gt=0, le=100, strict=True)


class RubricIn(Schema):
    model_config = ConfigDict(extra="forbid")

    problem_kind: str = Field(min_length=1, max_length=64, pattern=KIND)
    name: Written = Field(min_length=1, max_length=200)
    description: Text = Field("", max_length=4000)
    criteria: list[CriterionIn] = Field(min_length=1, max_length=20)


class ErrorOut(Schema):
    detail: str | list[dict]
    scope: str | None = Field(None, description="On a 403: the scope the call needs.")


ScopeName = Literal[tuple(Scope.values)]


class KeyIn(Schema):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field("", max_length=100)
    scopes: list[ScopeName] = Field(
        min_length=1, max_length=len(Scope.values), description="Never more than the member's role allows."
    )
    user: str | None = Field(
        None, max_length=150, pattern=NO_NUL, description="The member's login name; absent: a service key."
    )
    expires_at: datetime | None = Field(None, description="When it stops working (ISO 8601, with its offset).")

    @field_validator("expires_at")
    @classmethod
    def in_the_future(cls, value):
        if value is not None and (value.tzinfo is None or value <= timezone.now()):
            raise ValueError("must be a time in the future, with its UTC offset")
        return value


class KeyOut(Schema):
    id: int
    name: str
    hint: str
    user: str | None
    scopes: list[str]
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    last_used_ip: str | None
    revoked_at: datetime | None


class KeyIssuedOut(KeyOut):
    secret: str = Field(description="The key itself: shown this once, only its hash is kept.")


GroupBy = Literal["day", "model", "mode", "user", "key"]


def iso_day(value):
    # A day as YYYY-MM-DD only: pydantic would also take a number as a Unix time ("0" is 1970-01-01).
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("must be a day written YYYY-MM-DD")
    return value


Day = Annotated[date, BeforeValidator(iso_day)]


class UsageIn(Schema):
    model_config = ConfigDict(populate_by_name=True)

    start: Day | None = Field(None, alias="from", description="The first day counted (UTC); default: the 1st.")
    end: Day | None = Field(None, alias="to", description="The last day counted (UTC), inclusive; default: today.")
    group_by: GroupBy = "day"


class UsageRowOut(Schema):
    group: str | None = Field(description="The day, model, mode, login or key hint; null: no person or key.")
    label: str
    cost_usd: Usd
    calls: int
    tokens_in: int
    tokens_out: int
    sessions: int
    solved: int
    solved_share: float | None = Field(description="Solved sessions over sessions with calls in the range.")


class MonthOut(Schema):
    month: date
    cap_usd: Usd | None
    spent_usd: Usd
    reserved_usd: Usd
    left_usd: Usd | None
    written_off_usd: Usd = Field(
        0.0,
        description="The part of spent_usd no call in the ledger costs: what runs that died had reserved for calls "
        "in flight, counted as spent.",
    )


class ModelOverrunOut(Schema):
    model: str
    calls_over: int = Field(description="Calls billed past their reservation (the server wrote or billed on).")
    over_usd: Usd = Field(description="What those calls cost past their reservations.")
    stopped: int = Field(description="Replies the gateway closed at their reservation, the server still writing.")
    streams: bool = Field(description="False: the model's server cannot stream, so no call on it can be closed.")
    marked: bool = Field(
        description="Its server cannot stream or has billed past a reservation (any tenant's call): its calls are "
        "reserved at worst_usd, and a session that cannot afford that is refused."
    )
    worst_tokens_out: int = Field(description="The most reply tokens one call on it has billed (any tenant's).")
    worst_usd: Usd = Field(description="The dearest call on it yet (any tenant's).")


class UsageOut(Schema):
    model_config = ConfigDict(populate_by_name=True)

    start: date = Field(alias="from")
    end: date = Field(alias="to")
    group_by: GroupBy
    rows: list[UsageRowOut]
    total: UsageRowOut
    month: MonthOut
    models: list[ModelOverrunOut] = Field(
        default_factory=list, description="Per model called in these days: the calls billed past their reservation."
    )
