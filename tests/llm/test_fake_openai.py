"""tests/fake_openai.py driven by plain litellm.acompletion: each behaviour reaches litellm as its docstring says."""

import asyncio
import json
import time
import urllib.request

import litellm
import openai
import pytest

from tests.fake_openai import (
    FakeOpenAI,
    close,
    empty_choices,
    free_port,
    hang,
    malformed,
    reply,
    reply_json,
    status,
)

MESSAGES = [{"role": "user", "content": "Say ok."}]


async def ask(base_url, model="openai/fake", **kwargs):
    kwargs.setdefault("max_retries", 0)
    return await litellm.acompletion(model=model, api_base=base_url, api_key="x", messages=MESSAGES, **kwargs)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


async def test_reply_carries_text_usage_and_the_requested_model(server):
    server.script(None, [reply("hello", prompt_tokens=12, completion_tokens=3)])
    response = await ask(server.base_url)
    assert response.choices[0].message.content == "hello"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 3)
    assert response.model.endswith("fake")


async def test_reply_json_and_the_recorded_request_body(server):
    server.script(None, [reply_json({"answer": 24})])
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    response = await ask(server.base_url, response_format={"type": "json_object", "schema": schema})
    assert json.loads(response.choices[0].message.content) == {"answer": 24}
    await ask(server.base_url)
    first, second = server.requests
    assert first["model"] == "fake" and first["messages"] == MESSAGES
    assert first["response_format"] == {"type": "json_object", "schema": schema}
    assert "response_format" not in second


async def test_queues_per_model_then_global_then_default(server):
    server.script("openai/a", [reply("a1"), reply("a2")])  # the provider prefix is optional
    server.script(None, [reply("any")])
    server.default = lambda body: reply(f"default for {body['model']}")
    texts = [(await ask(server.base_url, model=f"openai/{m}")).choices[0].message.content for m in "abaa"]
    assert texts == ["a1", "any", "a2", "default for a"]


async def test_concurrent_requests_each_take_one_behaviour(server):
    server.script(None, [reply(str(i)) for i in range(10)])
    responses = await asyncio.gather(*(ask(server.base_url) for _ in range(10)))
    assert sorted(int(r.choices[0].message.content) for r in responses) == list(range(10))
    assert len(server.requests) == 10


async def test_empty_choices_is_not_an_exception(server):
    server.script(None, [empty_choices()])
    response = await ask(server.base_url)
    assert response.choices == []


async def test_malformed_body_is_an_internal_server_error(server):
    server.script(None, [malformed()])
    with pytest.raises(litellm.InternalServerError, match="Expecting value") as error:
        await ask(server.base_url)
    assert error.value.status_code == 500


async def test_429_is_a_rate_limit_error_with_retry_after(server):
    server.script(None, [status(429, retry_after=1.5)])
    with pytest.raises(litellm.RateLimitError) as error:
        await ask(server.base_url)
    assert error.value.response.headers["retry-after"] == "1.5"
    assert error.value.litellm_response_headers["retry-after"] == "1.5"


@pytest.mark.parametrize(
    ("code", "exception"), [(500, litellm.InternalServerError), (503, litellm.ServiceUnavailableError)]
)
async def test_server_errors(server, code, exception):
    server.script(None, [status(code)])
    with pytest.raises(exception) as error:
        await ask(server.base_url)
    assert error.value.status_code == code


async def test_hang_is_a_timeout(server):
    server.script(None, [hang(5)])
    started = time.monotonic()
    with pytest.raises(litellm.Timeout):
        await ask(server.base_url, timeout=0.3)
    assert time.monotonic() - started < 2


async def test_dropped_connection_and_down_server_are_connection_errors(server):
    """litellm reports both as InternalServerError('Connection error.'), not as litellm.APIConnectionError."""
    server.script(None, [close()])
    for base_url in (server.base_url, free_port()):
        with pytest.raises(litellm.InternalServerError, match="Connection error") as error:
            await ask(base_url)
        assert not isinstance(error.value, litellm.APIConnectionError)


async def test_the_client_retries_unless_told_not_to(server):
    server.script(None, [status(503, retry_after=0.01), status(429, retry_after=0.01), reply("third time")])
    response = await ask(server.base_url, max_retries=2)
    assert response.choices[0].message.content == "third time"
    assert len(server.requests) == 3


async def test_a_router_turns_the_client_retries_off_and_retries_itself(server):
    server.default = status(503, retry_after=0.01)
    params = {"model": "openai/fake", "api_base": server.base_url, "api_key": "x"}
    router = litellm.Router(model_list=[{"model_name": "m", "litellm_params": params}], num_retries=1, retry_after=0)
    with pytest.raises(litellm.ServiceUnavailableError):
        await router.acompletion(model="m", messages=MESSAGES)
    assert len(server.requests) == 2


def test_every_failure_is_an_openai_api_error():
    for exception in (litellm.Timeout, litellm.InternalServerError, litellm.RateLimitError):
        assert issubclass(exception, openai.APIError)
    assert issubclass(litellm.ServiceUnavailableError, openai.APIStatusError)


def test_models_endpoint(server):
    server.script("fake", [reply("x")])
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
        listing = json.load(response)
    assert [m["id"] for m in listing["data"]] == ["fake"]
