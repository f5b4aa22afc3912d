"""What a model costs and how to ask it for structured output, decided once per model.

A price comes from the operator's REASONING_MODELS setting, from the model's registered deployment
(`input_cost_per_token` in its litellm params), or from litellm's model map, in that order. A model
with none is unpriced: refused, unless the operator allows unpriced models, which are then counted
at REASONING_DEFAULT_PRICE. litellm's map prices some models at 0 (local and free tiers): such a price counts
as none unless the operator names the model. Prices are USD per million tokens, the unit providers publish.

Which models tenants may use at all is the operator's list, REASONING_ALLOWED_MODELS; by default the
configured primary and fallback, the models REASONING_MODELS prices, and the offline models.
"""

import os
from dataclasses import asdict, dataclass

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning.models import UNMETERED  # noqa: E402

from . import providers  # noqa: E402

MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    input: float  # USD per million prompt tokens
    output: float  # USD per million reply tokens
    source: str  # setting, deployment, litellm or default

    def cost(self, tokens_in, tokens_out):
        return (tokens_in * self.input + tokens_out * self.output) / MILLION

    @property
    def unmetered(self):
        return not (self.input or self.output)

    def as_dict(self):
        """As a session stores it; a price of 0 says what it means, so nobody reads it as a budget kept."""
        return asdict(self) | ({"note": UNMETERED} if self.unmetered else {})

    @classmethod
    def from_dict(cls, data):
        return cls(float(data["input"]), float(data["output"]), str(data.get("source", "")))


class Unpriced(ValueError):
    """No price is known for a model and the operator has not allowed unpriced models."""


def known_price(model, deployment=None):
    """The model's price from the setting, its deployment or litellm's map; None when nobody prices it."""
    configured = settings.REASONING["MODELS"].get(model)
    if configured:
        return Price(float(configured["input"]), float(configured["output"]), "setting")
    deployment = deployment or {}
    if "input_cost_per_token" in deployment:
        per_token = deployment["input_cost_per_token"], deployment.get("output_cost_per_token", 0.0)
        return Price(per_token[0] * MILLION, per_token[1] * MILLION, "deployment")
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises a bare Exception for a model its map does not hold
        return None
    if info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None
    if not (info["input_cost_per_token"] or info["output_cost_per_token"]) and model not in named_models():
        return None  # free by the map: a tenant would use the operator's key (or a host) unmetered
    return Price(info["input_cost_per_token"] * MILLION, info["output_cost_per_token"] * MILLION, "litellm")


def price_of(model, deployment=None):
    """The price a session is charged for a model; raises Unpriced when there is none and none is allowed."""
    price = known_price(model, deployment)
    if price is not None:
        return price
    engine = settings.REASONING
    if not engine["ALLOW_UNPRICED"]:
        raise Unpriced(
            f"no price is known for '{model}': set it in REASONING_MODELS (USD per million tokens) "
            "or allow unpriced models with REASONING_ALLOW_UNPRICED=1"
        )
    default = engine["DEFAULT_PRICE"]
    return Price(float(default["input"]), float(default["output"]), "default")


def named_models():
    """The models the operator named: REASONING_ALLOWED_MODELS as given, else the configured primary and fallback,
    the models REASONING_MODELS prices, and the offline models."""
    engine = settings.REASONING
    listed = engine.get("ALLOWED_MODELS")
    if listed is not None:
        return set(listed) - {"*"}
    return {engine["MODEL_PRIMARY"], engine["MODEL_FALLBACK"], *engine["MODELS"], *providers.in_process_models()} - {""}


def is_allowed(model):
    """Whether tenants may ask for this model: the offline models always (no key, no host, priced by us); "*" in
    REASONING_ALLOWED_MODELS lets any priced model through."""
    listed = settings.REASONING.get("ALLOWED_MODELS")
    return providers.in_process(model) or model in named_models() or (listed is not None and "*" in listed)


def offline_fallback_allowed(primary, fallback):
    """Whether `fallback` may serve `primary`'s calls: any model may, but the simulator stands in for a real model
    only where the operator allows it (REASONING_ALLOW_OFFLINE_FALLBACK); else a session that seems to run on a
    real model would be written by the simulator while its server is down."""
    if not providers.in_process(fallback) or providers.in_process(primary):
        return True
    return bool(settings.REASONING.get("ALLOW_OFFLINE_FALLBACK"))


def response_format(model, schema, name, expect=None):
    """The `response_format` to send for a JSON reply, or None where the model cannot take one.

    The setting decides first (llama-cpp-python's server takes a json_object with a schema, not OpenAI's
    json_schema); otherwise litellm's model map says whether the provider supports a response schema.
    """
    schema = wire_schema(schema, expect)
    style = settings.REASONING["MODELS"].get(model, {}).get("response_format", "auto")
    if style == "auto":
        style = "json_schema" if supports_schema(model) else "none"
    if style == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if style == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


# Bounds the parser checks anyway; sent, a local server spells each out in its grammar (a 4,000-character limit
# became a grammar llama.cpp could not parse, and its server died).
LOOSE = {"maxLength", "maxItems"}


def wire_schema(schema, expect=None):
    """The reply's schema as sent to the model: its shape, without length bounds or open-ended objects (a
    grammar-bound small model fills an open object with invented keys until it runs out of tokens); a list
    the prompt asked `expect` items for holds exactly that many."""
    schema = _tight(schema)
    for prop in schema.get("properties", {}).values():
        if expect and prop.get("type") == "array":
            prop.update(minItems=expect, maxItems=expect)
    return schema


def _tight(schema):
    if isinstance(schema, dict):
        return {
            key: _tight(value)
            for key, value in schema.items()
            if key not in LOOSE and not (key == "additionalProperties" and value is True)
        }
    if isinstance(schema, list):
        return [_tight(item) for item in schema]
    return schema


def supports_schema(model):
    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:  # an unmapped model: litellm cannot say, so it is not asked
        return False
