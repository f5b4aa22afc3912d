"""Retries that wait, models that rest, and a per-model limit on requests in flight (issue 15), through the scripted
OpenAI-compatible server on loopback; every attempt is still a ledger row."""

import asyncio
import logging
import threading
import time

import pytest

from reasoning.llm.gateway import ModelError, retry_wait
from reasoning.llm.health import HEALTH, ModelHealth
from reasoning.models import LLMCall
from reasoning.strategies.tot import EVALUATE
from tests.fake_openai import FakeOpenAI, free_port, reply_json, status
from tests.llm.test_gateway_faults import GOOD, PRICES, ask_once, gateway_for, session_on
from tests.reasoning.test_gateway import PROMPT

pytestmark = pytest.mark.django_db(transaction=True)


class Fault(Exception):
    response = None


def test_the_backoff_doubles_with_jitter_under_a_ceiling_and_retry_after_is_honoured(settings):
    settings.REASONING = {**settings.REASONING, "RETRY_BACKOFF_S": 1.0, "RETRY_BACKOFF_MAX_S": 8.0}
    lowest = [retry_wait(Fault(), retry, uniform=lambda a, b: a) for retry in range(5)]
    highest = [retry_wait(Fault(), retry, uniform=lambda a, b: b) for retry in range(5)]
    assert lowest == [0.5, 1.0, 2.0, 4.0, 8.0] and highest == [1.5, 3.0, 6.0, 8.0, 8.0]
    waits = {retry_wait(Fault(), 1) for _ in range(50)}
    assert len(waits) > 1 and all(1.0 <= w <= 3.0 for w in waits)  # jittered: sessions do not retry in step

    class Limited(Exception):
        class response:
            headers = {"retry-after": "2.5"}

    assert retry_wait(Limited(), 0) == 2.5


def test_a_model_rests_after_failures_in_a_row_and_a_success_resets_it():
    now = [0.0]
    health = ModelHealth(clock=lambda: now[0])
    assert not health.failed("m", 3, 30) and not health.failed("m", 3, 30)
    health.succeeded("m")
    assert not health.failed("m", 3, 30) and not health.failed("m", 3, 30) and health.failed("m", 3, 30)
    assert health.resting("m") == 30
    now[0] = 29.5
    assert health.resting("m") == 0.5
    now[0] = 31
    assert health.resting("m") == 0


async def test_a_dead_primary_is_set_aside_and_the_fallback_serves_without_trying_it(alice, models, settings):
    models(**{"openai/primary": PRICES, "openai/backup": PRICES})
    settings.REASONING = {**settings.REASONING, "LLM_RETRIES": 2, "COOLDOWN_AFTER": 3, "COOLDOWN_S": 60}
    session = await session_on(alice)
    with FakeOpenAI() as backup:
        backup.script("backup", [reply_json(GOOD)] * 3)
        dead = free_port()
        for _ in range(3):
            answer = await ask_once(session, gateway_for(session, dead, backup.base_url))
            assert answer.parsed.score == GOOD["score"]
    rows = [c async for c in LLMCall.objects.filter(session=session).order_by("created_at")]
    # The first call tries the primary three times (then it rests), the next two go straight to the fallback.
    assert [r.model_requested for r in rows] == ["openai/primary"] * 3 + ["openai/backup"] * 3
    assert HEALTH.resting("openai/primary") > 50


async def test_a_server_restarting_for_a_few_seconds_is_waited_for(alice, models, settings):
    models(**{"openai/primary": PRICES})
    settings.REASONING = {**settings.REASONING, "LLM_RETRIES": 3, "RETRY_BACKOFF_S": 1.0, "RETRY_BACKOFF_MAX_S": 8.0}
    session = await session_on(alice, fallback="")
    base = free_port()
    port = int(base.rsplit(":", 1)[1].split("/")[0])

    def come_back():
        time.sleep(2.0)  # down for two seconds, then the same address answers
        server = FakeOpenAI(port=port, default=lambda body: reply_json(GOOD)).__enter__()
        came_back.append(server)

    came_back = []
    threading.Thread(target=come_back, daemon=True).start()
    try:
        answer = await ask_once(session, gateway_for(session, base))
    finally:
        for server in came_back:
            server.__exit__(None, None, None)
    assert answer.parsed.score == GOOD["score"]
    outcomes = [c.outcome async for c in LLMCall.objects.filter(session=session).order_by("attempt")]
    assert outcomes[-1] == "ok" and set(outcomes[:-1]) == {"error"} and len(outcomes) >= 2


async def test_calls_beyond_a_models_limit_wait_in_line_and_their_wait_is_not_their_timeout(alice, models):
    models(**{"openai/primary": PRICES | {"max_parallel_requests": 1}})
    session = await session_on(alice, fallback="")
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def slow(body):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.3)
        with lock:
            in_flight[0] -= 1
        return reply_json(GOOD)

    with FakeOpenAI(default=slow) as server:
        gateway = gateway_for(session, server.base_url, timeout=0.6)  # four in a row take 1.2 s: only the wait does
        answers = await asyncio.gather(*(gateway.ask(EVALUATE, PROMPT) for _ in range(4)))
        await gateway.close()
    assert most[0] == 1 and all(a.parsed.score == GOOD["score"] for a in answers)
    assert await LLMCall.objects.filter(session=session, outcome="ok").acount() == 4


async def test_a_failed_attempt_is_one_log_line_without_a_traceback(alice, models, caplog):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    caplog.set_level(logging.INFO, logger="reasoning.llm.gateway")
    with FakeOpenAI() as server:
        server.script("primary", [status(503)] * 3)
        with pytest.raises(ModelError):
            await ask_once(session, gateway_for(session, server.base_url))
    failures = [r for r in caplog.records if r.getMessage().startswith("model call failed")]
    assert len(failures) == 3 and all(r.exc_info is None and "\n" not in r.getMessage() for r in failures)
    assert all("openai/primary" in r.getMessage() and "503" in r.getMessage() for r in failures)


async def test_a_single_slot_model_is_shared_between_sessions_in_turn(alice, models):
    """Issue 33: one single-slot server served sessions first come, first served, so a new session's first node waited
    behind another session's whole level. Now the slot goes to the sessions in turn."""
    models(**{"openai/primary": PRICES | {"max_parallel_requests": 1}})
    busy, newcomer = await session_on(alice, fallback=""), await session_on(alice, fallback="")
    order = []

    def slow(body):
        order.append("new" if "NEWCOMER" in body["messages"][-1]["content"] else "busy")
        time.sleep(0.4)
        return reply_json(GOOD)

    with FakeOpenAI(default=slow) as server:
        level = gateway_for(busy, server.base_url, timeout=10)
        first = gateway_for(newcomer, server.base_url, timeout=10)
        calls = [asyncio.ensure_future(level.ask(EVALUATE, PROMPT)) for _ in range(6)]  # a whole level of calls
        while not order:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.25)  # the level's first call is in flight, the five others wait for the slot
        await first.ask(EVALUATE, PROMPT + "\nNEWCOMER")
        await asyncio.gather(*calls)
        await level.close()
        await first.close()
    assert order.index("new") <= 2, order  # after the call in flight and at most one more, not after all six
    assert order.count("busy") == 6
