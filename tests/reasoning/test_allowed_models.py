"""Which models tenants may use is the operator's choice: an allow-list (default: the configured primary and fallback,
the models REASONING_MODELS prices, the offline models), and a model litellm prices at 0 counts as unpriced."""

import json

import pytest

from reasoning import services
from reasoning.llm.prices import named_models
from reasoning.models import ReasoningSession

pytestmark = pytest.mark.django_db

PROBLEM = "Rebalance a CHF 3m portfolio drifted to 70% equities back to 60/40 within a year, tax-aware."


@pytest.fixture(autouse=True)
def not_run(monkeypatch):
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)


@pytest.fixture
def default_list(settings):
    """No REASONING_ALLOWED_MODELS: the default list, on a primary and fallback the operator configured."""
    settings.REASONING = {
        **settings.REASONING,
        "ALLOWED_MODELS": None,
        "MODEL_PRIMARY": "openai/gpt-4o-mini",
        "MODEL_FALLBACK": "offline/sim",
        "ALLOW_OFFLINE_FALLBACK": True,  # the simulator stands in for the real primary only as the operator allows
        "MODELS": {"openai/smollm2": {"input": 0.1, "output": 0.2, "api_base": "http://127.0.0.1:8080/v1"}},
    }


def post(client, party, **fields):
    body = {"problem_text": PROBLEM, **fields}
    return client.post("/api/sessions", data=json.dumps(body), content_type="application/json", **party.auth)


def test_the_default_list_is_the_configured_models_the_priced_ones_and_the_offline_ones(default_list):
    assert named_models() == {"openai/gpt-4o-mini", "offline/sim", "offline/noisy", "openai/smollm2"}


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "offline/sim", "offline/noisy", "openai/smollm2"])
def test_a_model_on_the_list_is_accepted(client, alice, default_list, model):
    response = post(client, alice, model_primary=model)
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("field", ["model_primary", "model_fallback"])
@pytest.mark.parametrize("model", ["anthropic/claude-3-haiku-20240307", "gpt-4o", "ollama/llama3"])
def test_a_model_off_the_list_is_refused_naming_its_field(client, alice, default_list, field, model):
    response = post(client, alice, **{field: model})
    assert response.status_code == 422, response.content
    detail = response.json()["detail"][0]
    assert detail["field"] == field and "REASONING_ALLOWED_MODELS" in detail["message"]
    assert not ReasoningSession.objects.exists()


def test_the_operator_names_the_list(client, alice, settings):
    settings.REASONING = {**settings.REASONING, "ALLOWED_MODELS": ("gpt-4o", "offline/sim")}
    assert post(client, alice, model_primary="gpt-4o").status_code == 201
    assert post(client, alice, model_primary="openai/gpt-4o-mini").status_code == 422


@pytest.mark.parametrize("listed", [("*",), ("ollama/llama3", "offline/sim")])
def test_a_model_litellm_prices_at_zero_counts_as_unpriced_unless_named(client, alice, settings, listed):
    settings.REASONING = {**settings.REASONING, "ALLOWED_MODELS": listed}
    response = post(client, alice, model_primary="ollama/llama3")
    if "*" in listed:  # allowed by the wildcard, but its 0 is not a price anyone chose
        assert response.status_code == 422, response.content
        assert "no price is known for 'ollama/llama3'" in response.json()["detail"][0]["message"]
    else:
        assert response.status_code == 201, response.content
        assert response.json()["prices"]["ollama/llama3"]["input"] == 0


def test_a_zero_priced_model_allowed_unpriced_is_counted_at_the_default_price(client, alice, settings):
    settings.REASONING = {**settings.REASONING, "ALLOW_UNPRICED": True, "DEFAULT_PRICE": {"input": 3.0, "output": 5.0}}
    response = post(client, alice, model_primary="ollama/llama3")
    assert response.status_code == 201, response.content
    assert response.json()["prices"]["ollama/llama3"] == {"input": 3.0, "output": 5.0, "source": "default"}
