"""The offline model: a litellm custom provider answering `offline/sim` with no key and no network.

It goes through the same litellm call as a real model; only the model name differs. Replies
are deterministic for a seed and prompt, priced per token so budgets are real numbers, and
delayed by REASONING_OFFLINE_LATENCY_MS so that concurrency is visible.
"""

import asyncio
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from litellm import CustomLLM, ModelResponse  # noqa: E402
from litellm.types.utils import Usage  # noqa: E402

from .offline_answers import answer  # noqa: E402

PROVIDER = "offline"
MODEL = "offline/sim"
INPUT_USD_PER_TOKEN = 1.0e-6
OUTPUT_USD_PER_TOKEN = 4.0e-6


def count_tokens(text):
    # About four characters a token, like the common BPE tokenizers on English text.
    return max(1, len(text) // 4)


class OfflineModel(CustomLLM):
    def __init__(self, latency_ms=0, seed=7):
        super().__init__()
        self.latency_ms = latency_ms
        self.seed = seed

    async def acompletion(self, model, messages, model_response, **kwargs):
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        return self._reply(model, messages, model_response)

    def completion(self, model, messages, model_response, **kwargs):
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        return self._reply(model, messages, model_response)

    def _reply(self, model, messages, model_response: ModelResponse):
        prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        text = answer(str(prompt), self.seed)
        prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        completion_tokens = count_tokens(text)
        model_response.choices[0].message.content = text
        model_response.model = model
        model_response.usage = Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        return model_response


_handler = OfflineModel()


def register(latency_ms=0, seed=7):
    """Make `offline/sim` known to litellm (provider and price); safe to call again with new settings."""
    _handler.latency_ms, _handler.seed = latency_ms, seed
    if not any(entry.get("provider") == PROVIDER for entry in litellm.custom_provider_map):
        litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": PROVIDER, "custom_handler": _handler}]
        litellm.register_model(
            {
                MODEL: {
                    "input_cost_per_token": INPUT_USD_PER_TOKEN,
                    "output_cost_per_token": OUTPUT_USD_PER_TOKEN,
                    "litellm_provider": PROVIDER,
                    "mode": "chat",
                    "max_tokens": 8192,
                    "max_input_tokens": 32768,
                    "max_output_tokens": 8192,
                }
            }
        )
    return _handler
