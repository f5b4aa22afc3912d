"""The one door to every model: litellm, with the session's primary and fallback models.

Before each attempt the gateway promises the attempt's worst-case cost, at the price of the model it
is about to call, out of budget it has reserved in the database (an atomic conditional update, a few
calls' worth at a time), so concurrent calls can never spend past the budget. It drives the attempts
itself (litellm's Router names the deployments but neither retries nor falls back) because each
attempt must be reserved at its own model's price and kept as its own ledger row: the rendered
prompt, the raw reply, tokens, cost, latency, model, outcome and error. Rows and spend are written
in batches (at step boundaries, every few calls, and at the end), which the reservation keeps safe.

A reservation is only a bound if the client stops paying at it: a server may ignore `max_tokens` (several local ones
do) or bill tokens it never sends. So every call to a real model is streamed and its reply counted as it arrives (by
the model's tokenizer where litellm knows it, else a token per UTF-8 byte, which can only over-count), and the
stream is closed when the next piece would pass the reply's share of the reservation. What the server reports is
settled when it finished; a server that billed past a reservation all the same, or cannot stream, is marked
(reasoning/meters.py): its calls are reserved at the dearest it has billed, and a session that cannot afford one is
refused when it is created.
"""

import asyncio
import contextlib
import dataclasses
import email.utils
import functools
import itertools
import logging
import os
import random
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import transaction  # noqa: E402
from django.db.models import F, Sum  # noqa: E402
from django.db.models.functions import Coalesce  # noqa: E402
from litellm import Router  # noqa: E402
from litellm._internal_context import internal_sub_call  # noqa: E402

from reasoning import events, ledger, meters, sql  # noqa: E402
from reasoning.fence import RunLost  # noqa: E402
from reasoning.llm.contracts import Answer, BudgetExhausted, ModelError, ParseError, Unparseable, one_line  # noqa: E402,F401
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession  # noqa: E402

from . import providers  # noqa: E402
from .health import HEALTH, LIMITS  # noqa: E402
from .prices import Price, offline_fallback_allowed, price_of, response_format  # noqa: E402

litellm.drop_params = True  # a provider that lacks a parameter (e.g. max_tokens) ignores it instead of failing
litellm.suppress_debug_info = True
litellm.turn_off_message_logging = True  # the ledger keeps prompts, under the tenant's access rules; logs need not

log = logging.getLogger(__name__)

EPSILON = 1e-12
AFTER_TAKEOVER = "after takeover: paid after this run"  # how a ledger row written by a run taken over begins
LEASE_CALLS = 8  # budget is reserved for several calls at once, so most calls need no database round trip
FLUSH_EVERY_CALLS = 8
FLUSH_EVERY_S = 0.25  # the ledger and the budget bar need a few updates a second, not one per call
PROMPT_OVERHEAD_TOKENS = 64  # a chat template's role markers and the like, on top of the counted messages
# A reply counted a token a byte (a tokenizer litellm does not know) is reserved and closed at this many bytes for
# each token of its `max_tokens`: about what a token of English or CJK text takes, so a server that keeps to the
# limit is not cut short, while one that writes on is closed at 4x the limit's bytes at most.
REPLY_BYTES_PER_TOKEN = 4
# Failures worth another try on the same model; any other (a bad request, a refused key) goes to the fallback.
TRANSIENT = (
    litellm.RateLimitError,
    litellm.Timeout,
    litellm.APIConnectionError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
)


# litellm's logging callbacks, as an operator would configure them (Langfuse, a custom logger...).
CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
)


def litellm_logging():
    """The context a model call runs in: litellm's own per-call logging only where someone configured a litellm
    callback to receive it. With none (the default) the ledger is the one log and bill of every call, and litellm's
    logging task, which builds a payload nobody reads after each call, is skipped: it cost about 0.7 ms of CPU a node
    (docs/BENCHMARKS.md). `internal_sub_call` is litellm's switch for "the caller logs and bills this call"; the
    reply's usage and `response_cost` are still set (tests/llm/test_gateway_logging.py)."""
    if any(getattr(litellm, name, None) for name in CALLBACK_LISTS):
        return contextlib.nullcontext()
    return internal_sub_call()


N_SUPPORT = {}  # model -> whether its requests take `n` (several samples in one request)


class EmptyReply(Exception):
    """A provider answered without a message (no choices, or a choice with no content)."""


class NoStream(EmptyReply):
    """A stream request came back with neither text nor usage: retried once without a stream."""


def provider_of(model):
    """The litellm provider a model name resolves to, or None when litellm knows no provider for it."""
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:  # litellm raises BadRequestError (and others) for a name it cannot place
        return None


def build_router(primary, fallback, timeout, deployment_params=None):
    """litellm's Router naming the primary and, when given, the fallback deployment; the gateway retries."""
    deployment_params = deployment_params or {}
    model_list = [
        {"model_name": role, "litellm_params": {"model": model, **deployment_params.get(role, {})}}
        for role, model in (("primary", primary), ("fallback", fallback))
        if model
    ]
    return Router(model_list=model_list, num_retries=0, timeout=timeout, retry_after=0, disable_cooldowns=True)


@functools.lru_cache(maxsize=32)
def shared_router(primary, fallback, timeout):
    """Sessions on the same models share a Router: building one costs milliseconds."""
    return build_router(primary, fallback, timeout)


class ModelGateway:
    def __init__(self, session, deployment_params=None, retries=None, timeout=None):
        engine = settings.REASONING
        self.session_id, self.tenant_id = session.id, session.tenant_id
        self.primary, self.fallback = session.model_primary, session.model_fallback or ""
        if self.fallback and not offline_fallback_allowed(self.primary, self.fallback):
            log.warning("session %s: offline fallback %s not allowed for %s", session.id, self.fallback, self.primary)
            self.fallback = ""  # a session created before the operator withdrew it: its real model alone answers
        deployment_params = deployment_params or configured_deployments(self.primary, self.fallback)
        self.retries = engine["LLM_RETRIES"] if retries is None else retries
        self.parse_retries = engine["PARSE_RETRIES"]
        timeout = timeout or engine["LLM_TIMEOUT_S"]
        if deployment_params:
            self.router = build_router(self.primary, self.fallback, timeout, deployment_params)
        else:
            self.router = shared_router(self.primary, self.fallback, timeout)
        # (role, model, price) in the order they are tried; the price is the one fixed at the session's creation.
        self.routes = [
            (role, model, session_price(session, model, deployment_params.get(role)))
            for role, model in (("primary", self.primary), ("fallback", self.fallback))
            if model
        ]
        self.formats = {}  # (contract, model, count asked) -> the response_format sent, or None
        # Models served where their name does not say (an api_base of the caller's): their tokenizer is not known.
        self.hosted_elsewhere = {
            model
            for role, model in (("primary", self.primary), ("fallback", self.fallback))
            if (deployment_params.get(role) or {}).get("api_base")
        }
        models = engine["MODELS"]
        self.parallel = {m: models.get(m, {}).get("max_parallel_requests") for _, m, _ in self.routes}
        self.spent, self.calls = 0.0, 0
        self.flushed_at = time.monotonic()
        self.unwritten = []  # LLMCall rows of failed attempts not yet in the database
        # Rows of answered calls: the store writes them with the node they produced, their cost reserved till then.
        self.answered = []
        self.published_spend = 0.0
        self.lease = 0.0  # USD reserved in the database for this gateway and not yet promised to a call
        self.lease_lock = asyncio.Lock()
        self.fence = None  # the run's token (the engine sets it): leases and settlements only while the run holds it
        self.asking = itertools.count(1)
        self.turn = None  # the run's turn (the engine sets it), on its ledger rows: a replay answers each turn so
        # The session's token cap, the budget of a model priced at 0: each call's most (its prompt and a full reply)
        # is reserved before it is sent, out of what earlier runs left; one run writes a session, so memory holds it.
        self.token_cap, self.tokens_held = session.token_cap, 0
        self.tokens_used = session_tokens(session.id) if self.token_cap else 0
        self.meters = None  # model -> ModelMeter, read before the first call (the gateway may be built on a loop)
        self.unstreamed = set()  # models whose last stream came back empty: asked once without a stream
        self.refusal = ""  # the first call the budget could not cover: which, how much it needed, how much was left

    async def ask(self, contract, prompt, node_id=None, expect=None, samples=1):
        """One parsed answer for a prompt, by its Contract; a reply that breaks the contract is asked again
        (REASONING_PARSE_RETRIES times, once by default).

        `expect` is how many items the prompt asked for, where it asked for a list. `samples` > 1 asks for that
        many independent replies (`Answer.samples`): in one request where the model takes `n`, else side by side.
        """
        if samples > 1 and not self._takes_n(self.routes[0][1]):
            answers, records = await self._apart(contract, prompt, node_id, expect, samples)
            parsed = [a.parsed for a in answers]
            return Answer(parsed[0], answers[0].model, _sum_cost(records), _sum_latency(records), records, parsed)
        messages = [{"role": "user", "content": prompt}]
        context = {"prompt": prompt, "expect": expect}
        records, refusals = [], []
        for _ in range(1 + self.parse_retries):
            first_attempt = records[-1].attempt + 1 if records else 1
            texts, call = await self._complete(contract, messages, node_id, first_attempt, expect, samples)
            records.append(call)
            parsed, errors = [], []
            for text in texts:
                try:
                    parsed.append(contract.parse(text, context)[0])
                except ParseError as error:
                    errors.append(error)
            if parsed:
                call.parse_ok = True
                if errors:  # some samples of several broke the contract: the others stand, the ledger says which
                    call.error = f"{len(errors)} of {len(texts)} samples refused; first: {errors[0]}"[:2000]
                await self._flush_if_due()
                answer = Answer(
                    parsed=parsed[0],
                    model=call.model_used,
                    cost_usd=_sum_cost(records),
                    latency_ms=_sum_latency(records),
                    records=records,
                    samples=parsed,
                )
                if len(texts) < samples:  # the server ignored `n` (llama.cpp, many others): ask for the rest apart
                    return await self._the_rest(answer, contract, prompt, node_id, expect, samples - len(texts))
                return answer
            error = errors[0]
            call.parse_ok, call.error = False, str(error)[:2000]
            await self._flush_if_due()
            # The prompt again with what was wrong, not the broken reply: a small model shown its own reply
            # copies it (SmolLM2 repeated one four times); the ledger keeps every reply anyway.
            again = "with JSON only, as described above." if contract.json else "in the format asked for above."
            messages = [
                {
                    "role": "user",
                    "content": f"{prompt}\n### YOUR LAST REPLY WAS REFUSED\n"
                    f"It broke the output contract: {error}. Reply again, {again}",
                }
            ]
            refusals.append(error)
        raise Unparseable(
            refused_replies(refusals),
            cost_usd=_sum_cost(records),
            latency_ms=_sum_latency(records),
            model=records[-1].model_used,
            records=records,
        )

    async def _the_rest(self, answer, contract, prompt, node_id, expect, missing):
        """A reply with fewer samples than `n` asked: the model is known from now on not to take `n` (its samples are
        asked side by side), and the missing ones are asked now, each recorded; a sample that cannot be had (the budget,
        a failure) is left out, so the answer says how many it really holds."""
        N_SUPPORT[answer.model] = False
        log.info("%s returned fewer samples than asked (n): asking for them one by one from now on", answer.model)
        try:
            more, extra = await self._apart(contract, prompt, node_id, expect, missing)
        except Exception as error:  # none of the rest came: the answer holds the samples it has
            more, extra = [], getattr(error, "records", [])
        records = answer.records + extra
        samples = answer.samples + [a.parsed for a in more]
        return Answer(answer.parsed, answer.model, _sum_cost(records), _sum_latency(records), records, samples)

    async def _apart(self, contract, prompt, node_id, expect, count):
        """`count` samples asked side by side, each its own request and ledger row: the answers, and the records of
        them all. Every request finishes before this returns: a sibling still in flight when its session ends would
        spend after the gateway closed, its reservation never given back. A sample that cannot be had (the budget, a
        failure) is left out; with none at all, the first error is raised, carrying every record."""
        results = await asyncio.gather(
            *(self.ask(contract, prompt, node_id, expect) for _ in range(count)), return_exceptions=True
        )
        answers = [a for a in results if isinstance(a, Answer)]
        errors = [e for e in results if not isinstance(e, Answer)]
        records = [r for a in answers for r in a.records] + [r for e in errors for r in getattr(e, "records", [])]
        if not answers and errors:
            if isinstance(errors[0], Unparseable):
                errors[0].records = records
            raise errors[0]  # rows not on the error stay the gateway's own, written when it closes
        return answers, records

    def _takes_n(self, model):
        """Whether one request can carry several samples (`n`); asked of litellm once per model."""
        if model not in N_SUPPORT:
            try:
                supported = litellm.get_supported_openai_params(model=model) or []
            except Exception:  # a model litellm cannot place takes no extras
                supported = []
            N_SUPPORT[model] = providers.in_process(model) or "n" in supported
        return N_SUPPORT[model]

    async def remaining_usd(self):
        """The budget not yet spent nor promised to a call in flight, and never more than the tenant's month has left
        under its cap (this gateway's lease counts as its own in both); writes the ledger first."""
        rows, self.unwritten = self.unwritten, []
        self.flushed_at = time.monotonic()
        try:
            row, month_left = await sync_to_async(self._write_and_read)(rows)
        except RunLost:
            self.unwritten = rows + self.unwritten
            raise
        left = row["budget_usd"] - row["budget_used_usd"] - row["budget_reserved_usd"]
        return (left if month_left is None else min(left, month_left)) + self.lease

    def _write_and_read(self, rows):
        if rows:
            self._write(rows)
        row = sql.by_pk(ReasoningSession, ("budget_usd", "budget_used_usd", "budget_reserved_usd"), self.session_id)
        return row, ledger.month_left(self.tenant_id)

    async def close(self):
        """Write what is unwritten (answers a strategy never stored included) and give back the unspent lease.

        A run that lost its session (RunLost: it was taken over) writes no node and no lease, but what its finished
        calls cost was paid all the same: those rows are written marked as after the take-over, and their cost counts
        in the session's budget used."""
        try:
            orphans = [row for row in self.answered if row._state.adding]
            if orphans:
                await sync_to_async(self._write_orphans)(orphans)
            self.answered = []
            await self.flush()
            async with self.lease_lock:
                if self.lease:
                    amount, self.lease = self.lease, 0.0
                    await sync_to_async(self._settle)(amount, 0.0)
        except RunLost:
            await sync_to_async(self._write_late)()
            raise

    async def _flush_if_due(self):
        if len(self.unwritten) >= FLUSH_EVERY_CALLS or time.monotonic() - self.flushed_at >= FLUSH_EVERY_S:
            await self.flush()

    async def flush(self):
        """Write the unwritten LLMCall rows, move their cost from reserved to used, publish the spend."""
        self.answered = [row for row in self.answered if row._state.adding]  # the store wrote the others
        if self.unwritten or self.spent != self.published_spend:
            rows, self.unwritten = self.unwritten, []
            self.flushed_at, self.published_spend = time.monotonic(), self.spent
            try:
                await sync_to_async(self._write)(rows)
            except RunLost:
                self.unwritten = rows + self.unwritten  # for close() to write as after the take-over
                raise

    def _write(self, rows):
        rows = [row for row in rows if row._state.adding]
        spent = sum(row.cost_usd for row in rows)
        with transaction.atomic():
            self._settle(spent, spent)  # first: a run that lost its session leaves its rows unwritten, for close()
            LLMCall.objects.bulk_create(rows)
            session = ReasoningSession.objects.select_related("tenant").get(pk=self.session_id)
            events.publish(self.session_id, [events.session_updated(session)])

    def _write_orphans(self, rows):
        """Answers no node was written for (the run stopped first): charged to the node each call was about,
        so the ledger and the nodes' costs still agree."""
        with transaction.atomic():
            self._write(rows)
            for row in rows:
                if row.node_id and row.cost_usd:
                    ReasoningNode.objects.filter(pk=row.node_id).update(cost_usd=F("cost_usd") + row.cost_usd)

    def _write_late(self):
        """The rows of calls this run made but could not write (it lost its session while they were in flight): a
        cost is a fact, not a tree write, so they are written unfenced, marked AFTER_TAKEOVER, with no node (the run's
        nodes were refused), and their cost moves into the session's budget used (its reservation went with the
        take-over, which recorded it as unaccounted)."""
        rows = [row for row in [*self.answered, *self.unwritten] if row._state.adding]
        self.answered, self.unwritten = [], []
        if not rows:
            return
        epoch = self.fence.epoch if self.fence else "?"
        for row in rows:
            about = f"its node {row.node_id} was not written; " if row.node_id else ""
            row.error = f"{AFTER_TAKEOVER} (epoch {epoch}) lost the session; {about}{row.error}"[:2000]
            row.node_id = None
        cost = sum(row.cost_usd for row in rows)
        with transaction.atomic():
            LLMCall.objects.bulk_create(rows)
            ledger.settle(self.session_id, cost, released=0.0)  # unfenced: the run's claim is gone, its bill is not
            session = ReasoningSession.objects.select_related("tenant").get(pk=self.session_id)
            events.publish(self.session_id, [events.session_updated(session)])
        log.warning(
            "session %s: %d call(s) costing %.6f USD finished after the take-over", self.session_id, len(rows), cost
        )

    def typical_call_usd(self):
        return self.spent / self.calls if self.calls else 0.0

    def max_tokens(self, contract, model):
        """The reply limit a call to this model is capped at: the contract's, capped by REASONING_MAX_TOKENS and by
        the most the model can write."""
        limit = min(contract.max_tokens, settings.REASONING["MAX_TOKENS"])
        most = reply_ceiling(model)[1]
        return min(limit, most) if most else limit

    def reservation_usd(self, contract, messages, price, samples=1, model=None):
        """The most one attempt can cost at a model's price: the prompt as the model's tokenizer counts it, plus a
        full reply per sample, at the limit the call sends (or the most the model can write, where a request would
        lose `max_tokens`: litellm drops a parameter its provider lacks)."""
        model = model or self.routes[0][1]
        prompt, reply = prompt_tokens(model, messages), self.reply_tokens(contract, model, samples)
        meter = (self.meters or {}).get(model)
        if meter is not None and meter.marked:  # a server that billed past its reservations: its worst, at least
            prompt, reply = max(prompt, meter.worst_tokens_in), max(reply, meter.worst_tokens_out)
        return price.cost(prompt, reply)

    def reply_tokens(self, contract, model, samples=1):
        """The reply tokens a call reserves (and its stream is closed at), as its stream counts them: the limit it
        sends per sample, or the most the model can write where a request would lose `max_tokens`. Where the model's
        tokenizer is not known its reply is counted a token a byte, so the limit is reserved at REPLY_BYTES_PER_TOKEN
        bytes a token: a reply the server ends at `max_tokens` is not cut short by the count."""
        takes_limit, most = reply_ceiling(model)
        reply = (self.max_tokens(contract, model) if takes_limit or not most else most) * samples
        return reply if self.counts_exactly(model) else reply * REPLY_BYTES_PER_TOKEN

    def counts_exactly(self, model):
        """Whether a reply of this model is counted by its own tokenizer (else a token a byte)."""
        return providers.in_process(model) or (tokenizer_known(model) and model not in self.hosted_elsewhere)

    async def _complete(self, contract, messages, node_id, first_attempt, expect=None, samples=1):
        """(reply texts, ledger row) from the first model that answers: the primary with its retries, then the
        fallback with its own; every attempt is reserved at its model's price and kept as a row."""
        attempt, failures, engine = first_attempt, [], settings.REASONING
        asked = next(self.asking)  # before any wait: the order the run asked its calls in, not the order they ended
        if self.meters is None:
            self.meters = await sync_to_async(meters.of)([m for _, m, _ in self.routes])
        for index, (role, model, price) in enumerate(self.routes):
            if HEALTH.resting(model) and index < len(self.routes) - 1:
                # Set aside after failing again and again: the next model serves until the rest is over.
                failures.append(f"{model}: resting {HEALTH.resting(model):.0f} s after repeated failures")
                continue
            for retry in range(1 + self.retries):
                if retry and HEALTH.resting(model) and index < len(self.routes) - 1:
                    break  # it was set aside while this call waited to retry: the next model serves now
                n = samples if self._takes_n(model) else 1
                reserve = self.reservation_usd(contract, messages, price, n, model)
                tokens = self._hold_tokens(contract, messages, n, model)
                if tokens is None or not await self._take(reserve):
                    self.tokens_held -= tokens or 0
                    budget = LLMCall.Outcome.BUDGET
                    self._record(contract, node_id, budget, model, messages, attempt, reserved_usd=reserve, asked=asked)
                    why = await self._over_budget(contract, model, reserve, tokens)
                    self.refusal = self.refusal or why
                    raise BudgetExhausted(why, limit="token_cap" if tokens is None else "budget")
                started = time.perf_counter()
                try:
                    async with LIMITS.slot(model, self.parallel.get(model), self.session_id):  # a wait here is not part of the timeout
                        started = time.perf_counter()
                        with litellm_logging():
                            options = self._call_options(contract, model, expect, n)
                            allowance = self.reply_tokens(contract, model, n)
                            got = await self._call(role, model, messages, options, n, allowance)
                except Exception as error:  # any provider failure: recorded, then retried or passed on
                    self.lease += reserve
                    self.tokens_held -= tokens
                    line = one_line(error)
                    # One line per attempt; the traceback only for those who ask for debug logs.
                    log.warning("model call failed: %s (%s, attempt %d)", line, model, attempt)
                    log.debug("model call failed on %s", model, exc_info=error)
                    if HEALTH.failed(model, engine["COOLDOWN_AFTER"], engine["COOLDOWN_S"]):
                        self._log_rest(model, index, engine)
                    self._record(
                        contract,
                        node_id,
                        LLMCall.Outcome.ERROR,
                        model,
                        messages,
                        attempt,
                        reserved_usd=reserve,
                        latency_ms=_ms(started),
                        error=line,
                        asked=asked,
                    )
                    failures.append(f"{model}: {line}")
                    attempt += 1
                    if not isinstance(error, (*TRANSIENT, EmptyReply)) or retry == self.retries:
                        break
                    wait = retry_wait(error, retry)
                    if wait is None:  # the provider asks for a longer pause than a session should sit idle
                        break
                    await asyncio.sleep(wait)
                    continue
                HEALTH.succeeded(model)
                self.tokens_held -= tokens
                latency = _ms(started)
                row = self._answered(contract, node_id, role, model, price, messages, attempt, reserve, got, latency)
                row.asked = asked
                if row.cost_usd > reserve + EPSILON:
                    await self._overran(model, row, reserve)
                return got.texts, row
        raise ModelError(f"every model failed ({len(failures)} attempts); last: {failures[-1]}"[:500])

    def _log_rest(self, model, index, engine):
        """Say what a model's rest means for this session: its fallback serves, or (none) it is tried again anyway."""
        failed, seconds = engine["COOLDOWN_AFTER"], engine["COOLDOWN_S"]
        if index < len(self.routes) - 1:
            log.warning(
                "%s failed %d times in a row: it rests %.0f s, %s serves",
                model,
                failed,
                seconds,
                self.routes[index + 1][1],
            )
        else:
            log.warning(
                "%s failed %d times in a row; this session has no other model, so it is tried again", model, failed
            )

    def _hold_tokens(self, contract, messages, n, model):
        """The tokens a call may use at most, held against the token cap; None when the cap cannot cover them."""
        if not self.token_cap:
            return 0
        most = prompt_tokens(model, messages) + self.max_tokens(contract, model) * n
        if self.tokens_used + self.tokens_held + most > self.token_cap:
            return None
        self.tokens_held += most
        return most

    async def _over_budget(self, contract, model, reserve, tokens):
        """Which call could not be afforded, what it needed, and what was left (of the budget, or under the tenant's
        monthly cap where that is less)."""
        if tokens is None:
            left = max(0, self.token_cap - self.tokens_used - self.tokens_held)
            return f"{contract.name} on {model} may use more than the {left} tokens left of the session's token cap"
        try:
            left = f"; {max(await self.remaining_usd(), 0.0):.6f} USD was left"
        except RunLost:
            left = ""
        return f"the next call, {contract.name} on {model}, needs up to {reserve:.6f} USD{left}"

    async def _call(self, role, model, messages, options, n, allowance):
        """One request: streamed and closed at the reply's share of the reservation, unless the model is the offline
        one (our own code, bounded) or its server cannot stream."""
        meter = self.meters.get(model)
        if providers.in_process(model) or (meter is not None and not meter.streams) or model in self.unstreamed:
            got = Got.of(await self.router.acompletion(model=role, messages=messages, **options), n)
            if model in self.unstreamed and (meter is None or meter.streams):
                # An empty stream, then a whole reply: the server cannot stream. Marked so for every session.
                log.warning("%s answers in one body, not as a stream: marked so", model)
                await sync_to_async(meters.cannot_stream)(model)
                self.meters.update(await sync_to_async(meters.of)([model]))
            return got
        tally = Tally(model, allowance, self.counts_exactly(model))
        got = await streamed(self.router, role, model, messages, options, n, tally)
        if got is None:  # a stream of nothing: a server that answered in one body litellm could not read, or a fault
            self.unstreamed.add(model)  # the retry asks without a stream, which tells the two apart
            raise NoStream("the server sent no stream (it may answer only in one body)")
        return got

    async def _overran(self, model, row, reserve):
        """A call billed past its reservation: logged, recorded for the model, and this gateway's later calls on it
        reserved at the worst it has now shown."""
        over = row.cost_usd - reserve
        log.warning("%s cost %.6f USD, %.6f USD over the %.6f USD reserved for it", model, row.cost_usd, over, reserve)
        row.error = (f"billed {over:.6f} USD past its reservation; " + row.error)[:2000]
        await sync_to_async(meters.overran)(model, row.tokens_in, row.tokens_out, row.cost_usd, over)
        self.meters.update(await sync_to_async(meters.of)([model]))

    def _call_options(self, contract, model, expect, n=1):
        options = {"max_tokens": self.max_tokens(contract, model), "max_retries": 0}  # the SDK's own retries stay off
        if n > 1:
            options["n"] = n
        key = (contract.name, model, expect)
        if key not in self.formats:  # a schema and litellm's model lookup cost a millisecond or two: once a session
            schema = contract.structured.model_json_schema() if contract.structured else None
            self.formats[key] = schema and response_format(model, schema, contract.template[:-4], expect)
        if self.formats[key]:
            options["response_format"] = self.formats[key]
        return options

    def _answered(self, contract, node_id, role, model, price, messages, attempt, reserve, got, latency):
        """The ledger row of an answered call, at what it cost: what the server reported when it finished (never less
        than the pieces it sent), or, for a stream closed at its reservation, what was counted up to the close."""
        texts = got.texts
        if got.reported:
            tokens_in = got.tokens_in or estimate_tokens(messages)
            tokens_out = got.tokens_out or estimate_tokens([{"content": t} for t in texts])
        else:  # closed, or no usage sent: the prompt as reserved, the reply as counted (both can only over-count)
            tokens_in, tokens_out = prompt_tokens(model, messages), got.counted
        cost = response_cost(got.response, price, tokens_in, tokens_out)
        self.spent, self.calls = self.spent + cost, self.calls + 1
        self.tokens_used += tokens_in + tokens_out
        self.lease += reserve - cost  # what the call did not spend stays leased to this gateway
        outcome = LLMCall.Outcome.OK if role == "primary" else LLMCall.Outcome.FALLBACK
        return self._record(
            contract,
            node_id,
            outcome,
            model,
            messages,
            attempt,
            reserved_usd=reserve,
            cost_usd=cost,
            model_used=model,
            latency_ms=latency,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            reply=SAMPLE_BREAK.join(texts),
            stopped=got.stopped,
            error=f"closed at its reservation: {got.counted} reply tokens counted" if got.stopped else "",
        )

    async def _take(self, amount):
        """Promise an amount to one call, from the lease or by leasing more; False if the budget cannot cover it."""
        async with self.lease_lock:
            if self.lease < amount:
                for wanted in (amount * LEASE_CALLS - self.lease, amount - self.lease):
                    if await sync_to_async(self._reserve)(wanted):
                        self.lease += wanted
                        break
                else:
                    return False
            self.lease -= amount
            return True

    def _reserve(self, amount):
        """Atomically reserve an amount; False if it would take the session past its budget (RunLost if the run
        lost the session)."""
        return ledger.reserve(self.session_id, amount, fence=self.fence)

    def _settle(self, released, cost):
        ledger.settle(self.session_id, cost, released, fence=self.fence)

    def _record(self, contract, node_id, outcome, model, messages, attempt, **fields):
        """A ledger row: a failed attempt's waits for the next flush, an answered one travels with its answer."""
        row = LLMCall(
            tenant_id=self.tenant_id,
            session_id=self.session_id,
            node_id=node_id,
            purpose=contract.name,
            model_requested=model,
            outcome=outcome,
            attempt=attempt,
            prompt=messages[-1]["content"],  # one user message: the prompt as sent, a retry's note included
            turn=self.turn,
            **fields,
        )
        answered = outcome in (LLMCall.Outcome.OK, LLMCall.Outcome.FALLBACK)
        (self.answered if answered else self.unwritten).append(row)
        return row


def configured_deployments(primary, fallback):
    """Where REASONING_MODELS puts a model's server (a local one, say): litellm's api_base per deployment."""
    models = settings.REASONING["MODELS"]
    return {
        role: {"api_base": models[model]["api_base"]}
        for role, model in (("primary", primary), ("fallback", fallback))
        if model and models.get(model, {}).get("api_base")
    }


def session_price(session, model, deployment=None):
    """The price fixed for a model when the session was created; resolved now for a session made before prices."""
    fixed = (session.prices or {}).get(model)
    return Price.from_dict(fixed) if fixed else price_of(model, deployment)


@dataclasses.dataclass
class Got:
    """A call's reply: its texts, the usage the server reported (if it did), what was counted as it streamed, and
    whether the stream was closed at its reservation."""

    texts: list
    tokens_in: int = 0
    tokens_out: int = 0
    reported: bool = False
    counted: int = 0
    stopped: bool = False
    response: object = None

    @classmethod
    def of(cls, response, n=1):
        """A whole (unstreamed) reply."""
        usage = getattr(response, "usage", None)
        tokens_in, tokens_out = getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0
        return cls(reply_texts(response, n), tokens_in, tokens_out, reported=True, response=response)


class Tally:
    """A stream's reply as it arrives: the text per choice, its tokens counted piece by piece, the usage the server
    reports at the end. `take` refuses the piece that would pass `allowance` tokens: the stream is closed there."""

    def __init__(self, model, allowance, exact=False):
        self.model, self.allowance, self.exact = model, allowance, exact
        self.texts, self.counted, self.pieces, self.usage, self.stopped = {}, 0, 0, None, False

    def take(self, chunk):
        """Add a chunk; False once the reply reached its allowance (the chunk's piece past it is dropped)."""
        self.usage = getattr(chunk, "usage", None) or self.usage
        for choice in getattr(chunk, "choices", None) or []:
            piece = getattr(getattr(choice, "delta", None), "content", None)
            if not piece:
                continue
            tokens = reply_piece_tokens(self.model, piece, self.exact)
            if self.counted + tokens > self.allowance:
                self.stopped = True
                return False
            self.counted, self.pieces = self.counted + tokens, self.pieces + 1
            self.texts.setdefault(getattr(choice, "index", 0) or 0, []).append(piece)
        return True

    def got(self, n=1):
        """The reply, or None when the stream brought neither text nor usage (a server that cannot stream)."""
        if not self.texts and self.usage is None and not self.stopped:
            return None
        texts = ["".join(self.texts[i]) for i in sorted(self.texts)][:n]
        if not texts and not self.stopped:
            raise EmptyReply("the provider streamed no message")
        usage = self.usage if not self.stopped else None
        reported = usage is not None
        tokens_out = max(getattr(usage, "completion_tokens", 0) or 0, self.pieces) if reported else 0
        return Got(
            texts or [""],
            tokens_in=getattr(usage, "prompt_tokens", 0) or 0 if reported else 0,
            tokens_out=tokens_out,
            reported=reported,
            counted=self.counted,
            stopped=self.stopped,
        )


async def streamed(router, role, model, messages, options, n, tally):
    """A call streamed through the Router with its usage asked for, closed when the tally reaches its allowance;
    None when the server answered without a stream."""
    stream = await router.acompletion(
        model=role, messages=messages, stream=True, stream_options={"include_usage": True}, **options
    )
    try:
        async for chunk in stream:
            if not tally.take(chunk):
                break  # closing the stream below drops the connection: the server has nobody left to bill
    finally:
        await stream.aclose()
    return tally.got(n)


def reply_piece_tokens(model, piece, exact):
    """A streamed piece's tokens: by the model's tokenizer where litellm knows it exactly, else its UTF-8 bytes (no
    byte-level tokenizer takes more)."""
    if exact and not providers.in_process(model):
        try:
            return max(1, litellm.token_counter(model=model, text=piece))
        except Exception:  # a tokenizer that cannot load: the bytes bound
            pass
    return max(1, len(piece.encode()))


SAMPLE_BREAK = "\n\n--- next sample ---\n\n"  # between the samples of one request in its ledger row


def reply_texts(response, n=1):
    """The replies' texts (n of them at most); a reply with no message is a provider fault, not an empty answer."""
    choices = (getattr(response, "choices", None) or [])[:n]
    contents = [getattr(getattr(choice, "message", None), "content", None) for choice in choices]
    if not contents or contents[0] is None:
        raise EmptyReply("the provider returned no message" if choices else "the provider returned no choices")
    return [c for c in contents if c is not None]


def response_cost(response, price, tokens_in, tokens_out):
    """litellm's own cost where its map priced the call (it knows tiers and caching); else tokens at our price."""
    if price.source == "litellm":
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if cost:
            return float(cost)
    return price.cost(tokens_in, tokens_out)


def prompt_tokens(model, messages):
    """The most tokens the prompt can take on the model, plus a chat template's overhead: as the model's own tokenizer
    counts it where litellm knows that tokenizer exactly (OpenAI's hosted models, counted with tiktoken), else at least
    one token per UTF-8 byte, the most any byte-level tokenizer takes. litellm counts an unknown model (`openai/<alias>`
    on a local server, say) with OpenAI's cl100k, which a local model's tokenizer can outnumber twice over on CJK text.
    Dense text (emoji, mathematical letters, CJK) takes a token or more a character, which no characters-per-token
    rule can promise."""
    exact = tokenizer_known(model)
    return (
        sum(_counted(model, m.get("role") or "user", m.get("content") or "", exact) for m in messages)
        + PROMPT_OVERHEAD_TOKENS
    )


# The providers whose models litellm counts with their own tokenizer (tiktoken) when its map holds the model.
EXACT_TOKENIZER_PROVIDERS = {"openai", "azure", "text-completion-openai"}


def tokenizer_known(model):
    """Whether litellm counts this model's prompt with the model's own tokenizer: a hosted OpenAI model its map holds,
    served where OpenAI serves it (not an `api_base` of the operator's, which may serve anything under the name)."""
    if providers.in_process(model):
        return True  # the offline model charges its own count, which _counted reserves
    if (settings.REASONING["MODELS"].get(model) or {}).get("api_base"):
        return False
    if model.startswith("openai/") and os.environ.get("OPENAI_API_BASE", os.environ.get("OPENAI_BASE_URL")):
        return False
    return _mapped_to_tiktoken(model)


@functools.lru_cache(maxsize=256)
def _mapped_to_tiktoken(model):
    try:
        info = litellm.get_model_info(model)
    except Exception:  # a name the map does not hold: a local server's alias, whatever its tokenizer
        return False
    return info.get("litellm_provider") in EXACT_TOKENIZER_PROVIDERS


@functools.lru_cache(maxsize=256)  # prompts of at most some tens of kB each: a few MB at most
def _counted(model, role, content, exact=True):
    """One message's tokens, remembered: a retry, a re-ask and the fallback count the same prompt again."""
    size = len(content.encode())
    try:
        counted = litellm.token_counter(model=model, messages=[{"role": role, "content": content}])
    except Exception:  # a tokenizer that cannot load: every UTF-8 byte a token is the most any byte-level BPE takes
        log.warning("no tokenizer for %s: counting the prompt's bytes", model, exc_info=True)
        counted = size
    if not exact:  # a tokenizer we cannot name: a byte-level one takes at most a token per byte
        counted = max(counted, size)
    own = providers.count_tokens(model, content)
    if own is not None:  # an in-process provider (the offline model) charges its own count: reserve whichever is more
        counted = max(counted, own)
    return counted


@functools.lru_cache(maxsize=256)
def reply_ceiling(model):
    """(whether a request to this model keeps `max_tokens`, the most it can write or None): from litellm's map.

    A provider that lacks the parameter has it dropped (`drop_params`), so its reply is bounded only by the model.
    """
    try:
        info = litellm.get_model_info(model)
    except Exception:  # a model the map does not hold (a local server's alias): nothing known of its ceiling
        info = {}
    most = info.get("max_output_tokens") or info.get("max_tokens")
    if providers.in_process(model):
        return True, most
    try:
        supported = litellm.get_supported_openai_params(model=model) or []
    except Exception:
        supported = []
    return bool({"max_tokens", "max_completion_tokens"} & set(supported)), most


def estimate_tokens(messages):
    # A provider that reports no usage is still charged: about four characters a token.
    return max(1, sum(len(m.get("content") or "") for m in messages) // 4)


def retry_wait(error, retry, uniform=random.uniform):
    """Seconds to wait before retrying: the provider's Retry-After when it sends one (None: too long to wait), else
    an exponential backoff with a ceiling, jittered so sessions that failed together do not retry together."""
    response = getattr(error, "response", None)
    header = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    if header:
        try:
            wait = float(header)
        except ValueError:  # an HTTP date rather than seconds
            when = email.utils.parsedate_to_datetime(header)
            wait = when.timestamp() - time.time() if when else 0.0
        return max(0.0, wait) if wait <= settings.REASONING["RETRY_AFTER_MAX_S"] else None
    engine = settings.REASONING
    return min(engine["RETRY_BACKOFF_MAX_S"], engine["RETRY_BACKOFF_S"] * 2**retry * uniform(0.5, 1.5))


def session_tokens(session_id):
    """The tokens a session's calls have used so far, by its ledger."""
    used = LLMCall.objects.filter(session_id=session_id).aggregate(
        total=Coalesce(Sum(F("tokens_in") + F("tokens_out")), 0)
    )
    return used["total"]


def refused_replies(refusals):
    """Why the replies were refused, the first refusal first (the ledger has each): "<first> (the first of 3
    refused replies; the last: <last>)"."""
    first, last = str(refusals[0]), str(refusals[-1])
    if len(refusals) == 1:
        return first
    if last == first:
        return f"{first} ({len(refusals)} replies, each refused so)"
    return f"{first} (the first of {len(refusals)} refused replies; the last: {last})"


def _sum_cost(records):
    return sum(r.cost_usd for r in records)


def _sum_latency(records):
    return sum(r.latency_ms for r in records)


def _ms(started):
    return int((time.perf_counter() - started) * 1000)
