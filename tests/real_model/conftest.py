"""Tests against a real model: SmolLM2-135M served by llama-cpp-python on loopback (`make test-real-model`, which
runs scripts/real_model.sh). Without REASONING_REAL_MODEL_BASE, as in plain `pytest` and `make test`, every test
here is skipped at once.

They run with exactly the settings the README's local-server recipe gives a user (read from that block), the
server's address aside: no longer timeouts, no more retries than a user gets."""

import importlib
import os

import pytest

from tests.real_model.recipe import settings_for

BASE = os.environ.get("REASONING_REAL_MODEL_BASE", "")
MODEL = os.environ.get("REASONING_REAL_MODEL", "openai/smollm2")


@pytest.fixture(autouse=True)
def _needs_the_real_model():
    if not BASE:
        pytest.skip("no real model: REASONING_REAL_MODEL_BASE is unset (`make test-real-model` serves one)")


@pytest.fixture
def real_model_base():
    """The server's OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1."""
    return BASE


@pytest.fixture
def real_model():
    """The litellm model name that reaches it: openai/<the server's --model_alias>."""
    return MODEL


@pytest.fixture(autouse=True)
def the_local_model(settings, monkeypatch, real_model, real_model_base):
    """The README's recipe, pointed at this server."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")  # litellm's OpenAI client wants a key; a local server reads none
    # The waits between retries a user gets, not the blink tests/conftest.py gives the scripted tests.
    configured = importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"]).REASONING
    waits = {name: configured[name] for name in ("RETRY_BACKOFF_S", "RETRY_BACKOFF_MAX_S")}
    settings.REASONING = {**settings.REASONING, **waits, **settings_for(real_model, real_model_base)}
