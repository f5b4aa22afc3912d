"""litellm's own per-call logging runs only for a litellm callback someone configured: the ledger is the log and the
bill, and litellm's logging task costs CPU after every call. Its cost figure and usage still reach the ledger."""

import asyncio

import litellm
import pytest
from litellm.integrations.custom_logger import CustomLogger
from litellm.litellm_core_utils.litellm_logging import Logging

from reasoning.models import LLMCall
from tests.fake_openai import FakeOpenAI, reply_json
from tests.llm.test_gateway_faults import GOOD, ask_once, gateway_for, session_on

pytestmark = pytest.mark.django_db(transaction=True)
PRICED = "openai/gpt-4o-mini"  # priced by litellm's own map: the ledger takes litellm's response_cost


@pytest.fixture
def success_logs(monkeypatch):
    """How often litellm ran its async success logging for a call."""
    runs = []
    original = Logging.async_success_handler

    async def counted(self, *args, **kwargs):
        runs.append(self)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Logging, "async_success_handler", counted)
    return runs


async def ask_priced(alice):
    session = await session_on(alice, primary=PRICED, fallback="")
    with FakeOpenAI() as server:
        server.default = lambda body: reply_json(GOOD, prompt_tokens=1000, completion_tokens=200)
        await ask_once(session, gateway_for(session, server.base_url))
    await asyncio.sleep(0.05)  # litellm's logging worker runs what was queued on the next turns of the loop
    return await LLMCall.objects.aget(session=session)


async def test_with_no_litellm_callback_an_offline_call_is_not_logged_by_litellm(alice, success_logs):
    from reasoning.llm.gateway import ModelGateway

    session = await session_on(alice, primary="offline/sim", fallback="")
    await ask_once(session, ModelGateway(session))
    await asyncio.sleep(0.05)
    assert await LLMCall.objects.filter(session=session, outcome="ok").aexists()
    assert success_logs == []


async def test_a_streamed_call_is_costed_from_the_usage_its_server_reported(alice, success_logs):
    # A real model's call is streamed (closed at its reservation): litellm assembles the stream and logs it at its
    # end whatever the context says, once a call; the offline model's calls, the speed benchmarks', are not streamed.
    call = await ask_priced(alice)
    assert len(success_logs) <= 1
    prompt_usd, reply_usd = litellm.cost_per_token(model=PRICED, prompt_tokens=1000, completion_tokens=200)
    assert (call.tokens_in, call.tokens_out) == (1000, 200)
    assert call.cost_usd == pytest.approx(prompt_usd + reply_usd) and call.cost_usd > 0


async def test_a_configured_litellm_callback_still_receives_every_call(alice, success_logs, monkeypatch):
    class Receiver(CustomLogger):
        def __init__(self):
            super().__init__()
            self.seen = []

        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            self.seen.append(kwargs.get("model"))

    receiver = Receiver()
    monkeypatch.setattr(litellm, "callbacks", [receiver])
    await ask_priced(alice)
    assert len(success_logs) == 1
    for _ in range(50):  # the callback itself runs in litellm's logging worker
        if receiver.seen:
            break
        await asyncio.sleep(0.02)
    assert receiver.seen
