"""Providers plugged into litellm in this process (`litellm.custom_provider_map`): our own code answering, not a
server. The gateway and the prices ask here what they must know of one, without importing it: such a provider is
bounded by its code (no stream to close), keeps to `max_tokens`, takes `n`, counts its own tokens, and needs no key.
The offline model (reasoning/llm/offline/) registers itself when the app is ready (reasoning/apps.py).
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402


def handler_of(model):
    """The in-process handler serving this model, or None for a model a server answers."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    return next(
        (e["custom_handler"] for e in litellm.custom_provider_map if provider and e.get("provider") == provider), None
    )


def in_process(model):
    return handler_of(model) is not None


def count_tokens(model, text):
    """The tokens an in-process provider charges for a text (its own count), or None where it has none."""
    count = getattr(handler_of(model), "count_tokens", None)
    return count(text) if count else None


def in_process_models():
    """The models litellm's price map holds for in-process providers: offered to every tenant (priced by us)."""
    names = {e.get("provider") for e in litellm.custom_provider_map}
    return {name for name, info in litellm.model_cost.items() if info.get("litellm_provider") in names}
