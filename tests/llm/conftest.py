"""Fixtures for the model layer's tests against the scripted OpenAI-compatible server."""

import pytest


@pytest.fixture
def models(settings):
    """Configure REASONING_MODELS (prices, api_base, limits) for the test, with two retries a model."""

    def configure(**entries):
        settings.REASONING = {**settings.REASONING, "MODELS": entries, "LLM_RETRIES": 2}

    return configure


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    """litellm's OpenAI client wants a key; a local server ignores it."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-a-local-server")
