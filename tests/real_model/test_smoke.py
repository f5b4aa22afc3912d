"""The plumbing, end to end: litellm reaches the local server and its grammar-constrained JSON mode parses.
(llama-cpp-python's server takes `{"type": "json_object", "schema": ...}`, not OpenAI's `json_schema` type.)"""

import json

import litellm

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
}


async def test_a_json_reply_through_litellm(real_model, real_model_base):
    response = await litellm.acompletion(
        model=real_model,
        api_base=real_model_base,
        api_key="dummy",
        messages=[{"role": "user", "content": "Name one city and its country, as JSON."}],
        response_format={"type": "json_object", "schema": SCHEMA},
        max_tokens=64,
        temperature=0,
        timeout=120,
        max_retries=0,
    )
    reply = json.loads(response.choices[0].message.content)
    assert set(reply) >= {"city", "country"} and all(isinstance(reply[k], str) for k in ("city", "country"))
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
