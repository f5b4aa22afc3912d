"""The offline model: a litellm custom provider answering with no key and no network.

Two models, the same contracts: `offline/sim` is exact (a Game of 24 oracle, consistent wealth text), for the
demo and the speed benchmarks; `offline/noisy` is wrong at rate REASONING_OFFLINE_NOISE (0.3) the ways real
models are (puzzle.py, noise.py), for measuring search quality and steering against a model that errs.
Both go through the same litellm call as a real model; only the model name differs. Replies are deterministic
for a seed and prompt, an `n` of several samples draws each on its own, priced per token so budgets are real
numbers, and delayed by REASONING_OFFLINE_LATENCY_MS so that concurrency is visible.

It is a provider plugged into litellm, not part of the gateway: the app registers it when it is ready
(reasoning/apps.py), and the gateway knows it only as an in-process provider (reasoning/llm/providers.py). Its
settings (latency, seed, noise) are read from REASONING at each call, so a changed setting holds at once.
"""

import asyncio
import os
import threading
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from litellm import CustomLLM, ModelResponse  # noqa: E402
from litellm.types.utils import Choices, Message, Usage  # noqa: E402

# Registering the price before the provider makes litellm look the models up and print its provider list to stdout.
litellm.suppress_debug_info = True

from .answers import answer  # noqa: E402

PROVIDER = "offline"
MODEL = "offline/sim"
NOISY = "offline/noisy"
MODELS = (MODEL, NOISY)
INPUT_USD_PER_TOKEN = 1.0e-6
OUTPUT_USD_PER_TOKEN = 4.0e-6


def count_tokens(text):
    # About four characters a token, like the common BPE tokenizers on English text.
    return max(1, len(text) // 4)


class OfflineModel(CustomLLM):
    """The handler litellm calls for `offline/...` models."""

    count_tokens = staticmethod(count_tokens)  # what it charges: the gateway reserves by this count (providers.py)

    def settings(self):
        """(latency in ms, seed, noise) from the REASONING settings as they are now; the defaults outside Django."""
        from django.conf import settings

        engine = settings.REASONING if settings.configured else {}
        return engine.get("OFFLINE_LATENCY_MS", 0), engine.get("OFFLINE_SEED", 7), engine.get("OFFLINE_NOISE", 0.3)

    # The latency is the whole time a model takes to answer: the time spent writing the reply here is part of it.
    async def acompletion(self, model, messages, model_response, **kwargs):
        started, (latency_ms, seed, noise) = time.monotonic(), self.settings()
        reply = self._reply(model, messages, model_response, kwargs.get("optional_params"), seed, noise)
        if latency_ms:
            await asyncio.sleep(max(0.0, latency_ms / 1000 - (time.monotonic() - started)))
        return reply

    def completion(self, model, messages, model_response, **kwargs):
        started, (latency_ms, seed, noise) = time.monotonic(), self.settings()
        reply = self._reply(model, messages, model_response, kwargs.get("optional_params"), seed, noise)
        if latency_ms:
            time.sleep(max(0.0, latency_ms / 1000 - (time.monotonic() - started)))
        return reply

    def _reply(self, model, messages, model_response: ModelResponse, optional_params, seed, noise):
        prompt = str(next((m["content"] for m in reversed(messages) if m.get("role") == "user"), ""))
        noise = noise if model.endswith("noisy") else 0.0
        samples = max(1, int((optional_params or {}).get("n") or 1))
        texts = [answer(prompt, seed, noise, sample) for sample in range(samples)]
        prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        completion_tokens = sum(count_tokens(text) for text in texts)
        model_response.choices = [
            Choices(index=i, finish_reason="stop", message=Message(role="assistant", content=text))
            for i, text in enumerate(texts)
        ]
        model_response.model = model
        model_response.usage = Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        return model_response


_handler = OfflineModel()
_registering = threading.Lock()
_registered = threading.Event()  # set once the price and the provider are both known to litellm


def is_offline(model):
    return model.startswith(PROVIDER + "/")


def register():
    """Make the offline models known to litellm (provider and price); safe to call again, and from many threads at
    once: the first caller registers the price, then the provider, under a lock, so no caller sees the provider
    without its price (a first create found it so and was refused a 422, issue 32)."""
    if _registered.is_set():
        return _handler
    with _registering:
        if not _registered.is_set():
            litellm.register_model(
                {
                    name: {
                        "input_cost_per_token": INPUT_USD_PER_TOKEN,
                        "output_cost_per_token": OUTPUT_USD_PER_TOKEN,
                        "litellm_provider": PROVIDER,
                        "mode": "chat",
                        "max_tokens": 8192,
                        "max_input_tokens": 32768,
                        "max_output_tokens": 8192,
                    }
                    for name in MODELS
                }
            )
            if not any(entry.get("provider") == PROVIDER for entry in litellm.custom_provider_map):
                entry = {"provider": PROVIDER, "custom_handler": _handler}
                litellm.custom_provider_map = [*litellm.custom_provider_map, entry]
            _registered.set()
    return _handler
