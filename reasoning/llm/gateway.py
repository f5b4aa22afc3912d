"""The one door to every model: litellm's Router with the session's primary and fallback models.

Before each call the gateway promises the call's worst-case cost out of budget it has reserved
in the database (an atomic conditional update, a few calls' worth at a time), so concurrent
calls can never spend past the budget. After the call it keeps one LLMCall row with the real
cost from litellm, whatever the outcome; rows and spend are written in batches (at step
boundaries, every few calls, and at the end), which the reservation keeps safe meanwhile.
"""

import asyncio
import functools
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import transaction  # noqa: E402
from django.db.models import F  # noqa: E402
from litellm import Router  # noqa: E402

from reasoning import events  # noqa: E402
from reasoning.llm.contracts import Answer, BudgetExhausted, ModelError, ParseError, Unparseable  # noqa: E402,F401
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession  # noqa: E402

from . import offline  # noqa: E402

litellm.drop_params = True  # a provider that lacks a parameter (e.g. max_tokens) ignores it instead of failing
litellm.suppress_debug_info = True
litellm.turn_off_message_logging = (
    True  # prompts hold client data; and copying them for logs costs a millisecond a call
)

PARSE_RETRIES = 1
EPSILON = 1e-12
LEASE_CALLS = 8  # budget is reserved for several calls at once, so most calls need no database round trip
FLUSH_EVERY_CALLS = 8
FLUSH_EVERY_S = 0.25  # the ledger and the budget bar need a few updates a second, not one per call


def prices(model):
    """(input, output) USD per token from litellm's price list; (0, 0) for a model it does not price."""
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises a bare Exception for unknown models
        return 0.0, 0.0
    return info.get("input_cost_per_token") or 0.0, info.get("output_cost_per_token") or 0.0


def provider_of(model):
    """The litellm provider a model name resolves to, or None when litellm knows no provider for it."""
    engine = settings.REASONING
    offline.register(engine["OFFLINE_LATENCY_MS"], engine["OFFLINE_SEED"])  # offline/sim is a provider too
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:  # litellm raises BadRequestError (and others) for a name it cannot place
        return None


def build_router(primary, fallback, retries, timeout, deployment_params=None):
    """litellm's Router over the primary and, when given, the fallback model."""
    deployment_params = deployment_params or {}
    model_list = [
        {"model_name": "primary", "litellm_params": {"model": primary, **deployment_params.get("primary", {})}}
    ]
    fallbacks = []
    if fallback:
        model_list.append(
            {"model_name": "fallback", "litellm_params": {"model": fallback, **deployment_params.get("fallback", {})}}
        )
        fallbacks = [{"primary": ["fallback"]}]
    return Router(model_list=model_list, fallbacks=fallbacks, num_retries=retries, timeout=timeout, retry_after=0)


@functools.lru_cache(maxsize=32)
def shared_router(primary, fallback, retries, timeout):
    """Sessions on the same models share a Router: building one costs milliseconds."""
    return build_router(primary, fallback, retries, timeout)


class ModelGateway:
    def __init__(self, session, deployment_params=None, retries=None, timeout=None):
        engine = settings.REASONING
        offline.register(engine["OFFLINE_LATENCY_MS"], engine["OFFLINE_SEED"])
        self.session_id, self.tenant_id = session.id, session.tenant_id
        self.primary, self.fallback = session.model_primary, session.model_fallback or ""
        self.router = self._router(deployment_params or {}, retries, timeout)
        self.prices = [prices(m) for m in (self.primary, self.fallback) if m]
        self.spent, self.calls = 0.0, 0
        self.flushed_at = time.monotonic()
        self.unwritten = []  # LLMCall rows of failed calls not yet in the database
        # Rows of answered calls: the store writes them with the node they produced, their cost reserved till then.
        self.answered = []
        self.published_spend = 0.0
        self.lease = 0.0  # USD reserved in the database for this gateway and not yet promised to a call
        self.lease_lock = asyncio.Lock()

    def _router(self, deployment_params, retries, timeout):
        engine = settings.REASONING
        retries = engine["LLM_RETRIES"] if retries is None else retries
        timeout = timeout or engine["LLM_TIMEOUT_S"]
        if deployment_params:
            return build_router(self.primary, self.fallback, retries, timeout, deployment_params)
        return shared_router(self.primary, self.fallback, retries, timeout)

    async def ask(self, contract, prompt, node_id=None):
        """One parsed answer for a prompt, by its Contract; a reply that breaks the contract is asked again once."""
        messages = [{"role": "user", "content": prompt}]
        cost, latency, model, records = 0.0, 0, "", []
        for _ in range(1 + PARSE_RETRIES):
            text, call = await self._call(contract, messages, node_id)
            cost, latency, model = cost + call.cost_usd, latency + call.latency_ms, call.model_used
            records.append(call)
            try:
                parsed, _how = contract.parse(text)
            except ParseError as error:
                call.parse_ok, call.error = False, str(error)[:2000]
                await self._flush_if_due()
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"Your reply broke the output contract ({error}). Reply again "
                        + ("with the JSON only." if contract.json else "in the format asked for."),
                    },
                ]
                last_error = error
                continue
            call.parse_ok = True
            await self._flush_if_due()
            return Answer(parsed=parsed, model=model, cost_usd=cost, latency_ms=latency, records=records)
        raise Unparseable(str(last_error), cost_usd=cost, latency_ms=latency, model=model, records=records)

    async def remaining_usd(self):
        """The budget not yet spent nor promised to a call in flight; writes the ledger first, in the same round trip."""
        rows, self.unwritten = self.unwritten, []
        self.flushed_at = time.monotonic()
        row = await sync_to_async(self._write_and_read)(rows)
        return row["budget_usd"] - row["budget_used_usd"] - row["budget_reserved_usd"] + self.lease

    def _write_and_read(self, rows):
        if rows:
            self._write(rows)
        return (
            ReasoningSession.objects.filter(pk=self.session_id)
            .values("budget_usd", "budget_used_usd", "budget_reserved_usd")
            .get()
        )

    async def close(self):
        """Write what is unwritten (answers a strategy never stored included) and give back the unspent lease."""
        orphans = [row for row in self.answered if row._state.adding]
        self.answered = []
        if orphans:
            await sync_to_async(self._write_orphans)(orphans)
        await self.flush()
        async with self.lease_lock:
            if self.lease:
                amount, self.lease = self.lease, 0.0
                await sync_to_async(self._settle)(amount, 0.0)

    async def _flush_if_due(self):
        if len(self.unwritten) >= FLUSH_EVERY_CALLS or time.monotonic() - self.flushed_at >= FLUSH_EVERY_S:
            await self.flush()

    async def flush(self):
        """Write the unwritten LLMCall rows, move their cost from reserved to used, publish the spend."""
        self.answered = [row for row in self.answered if row._state.adding]  # the store wrote the others
        if self.unwritten or self.spent != self.published_spend:
            rows, self.unwritten = self.unwritten, []
            self.flushed_at, self.published_spend = time.monotonic(), self.spent
            await sync_to_async(self._write)(rows)

    def _write(self, rows):
        rows = [row for row in rows if row._state.adding]
        spent = sum(row.cost_usd for row in rows)
        with transaction.atomic():
            LLMCall.objects.bulk_create(rows)
            self._settle(spent, spent)
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

    def typical_call_usd(self):
        return self.spent / self.calls if self.calls else 0.0

    def max_tokens(self, contract):
        """The contract's reply limit, capped by REASONING_MAX_TOKENS."""
        return min(contract.max_tokens, settings.REASONING["MAX_TOKENS"])

    def reservation_usd(self, contract, messages):
        """The most this call can cost: the whole prompt plus a full reply, at the dearer model's prices."""
        prompt_tokens = sum(len(m["content"]) for m in messages) // 3 + 16
        reply_tokens = self.max_tokens(contract)
        return max(i * prompt_tokens + o * reply_tokens for i, o in self.prices)

    async def _call(self, contract, messages, node_id):
        reserve = self.reservation_usd(contract, messages)
        if not await self._take(reserve):
            self._record(contract, node_id, outcome=LLMCall.Outcome.BUDGET, reserved=reserve)
            raise BudgetExhausted(f"{contract.name} needs up to {reserve:.6f} USD")
        started = time.perf_counter()
        try:
            response = await self.router.acompletion(
                model="primary", messages=messages, max_tokens=self.max_tokens(contract)
            )
        except Exception as error:  # any provider failure, after litellm's retries and fallbacks
            self.lease += reserve
            self._record(
                contract,
                node_id,
                outcome=LLMCall.Outcome.ERROR,
                reserved=reserve,
                latency_ms=_ms(started),
                error=f"{type(error).__name__}: {error}"[:2000],
            )
            raise ModelError(str(error)) from error
        latency_ms = _ms(started)
        cost = self._cost(response)
        self.spent, self.calls = self.spent + cost, self.calls + 1
        used = response._hidden_params.get("litellm_model_name") or self.primary
        self.lease += reserve - cost  # what the call did not spend stays leased to this gateway
        usage = getattr(response, "usage", None)
        call = self._record(
            contract,
            node_id,
            outcome=LLMCall.Outcome.OK if _same(used, self.primary) else LLMCall.Outcome.FALLBACK,
            reserved=reserve,
            cost=cost,
            model_used=used,
            latency_ms=latency_ms,
            tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
            tokens_out=getattr(usage, "completion_tokens", 0) or 0,
        )
        return response.choices[0].message.content or "", call

    def _cost(self, response):
        cost = response._hidden_params.get("response_cost")
        if cost is None:
            try:
                cost = litellm.completion_cost(completion_response=response)
            except Exception:  # an unpriced model costs what we can tell: nothing
                cost = 0.0
        return float(cost or 0.0)

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
        """Atomically reserve an amount; False if it would take the session past its budget."""
        return (
            ReasoningSession.objects.filter(
                pk=self.session_id,
                budget_used_usd__lte=F("budget_usd") - F("budget_reserved_usd") - amount + EPSILON,
            ).update(budget_reserved_usd=F("budget_reserved_usd") + amount)
            == 1
        )

    def _settle(self, released, cost):
        ReasoningSession.objects.filter(pk=self.session_id).update(
            budget_reserved_usd=F("budget_reserved_usd") - released, budget_used_usd=F("budget_used_usd") + cost
        )

    def _record(self, contract, node_id, outcome, reserved=0.0, cost=0.0, model_used="", latency_ms=0, **fields):
        """A ledger row: a failed call's waits for the next flush, an answered one travels with its answer."""
        row = LLMCall(
            tenant_id=self.tenant_id,
            session_id=self.session_id,
            node_id=node_id,
            purpose=contract.name,
            model_requested=self.primary,
            model_used=model_used,
            outcome=outcome,
            reserved_usd=reserved,
            cost_usd=cost,
            latency_ms=latency_ms,
            **fields,
        )
        answered = outcome in (LLMCall.Outcome.OK, LLMCall.Outcome.FALLBACK)
        (self.answered if answered else self.unwritten).append(row)
        return row


def _ms(started):
    return int((time.perf_counter() - started) * 1000)


def _same(used, model):
    return used in (model, model.split("/", 1)[-1])
