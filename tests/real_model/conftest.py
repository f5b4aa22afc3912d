"""Tests against a real model: SmolLM2-135M served by llama-cpp-python on loopback (`make test-real-model`, which
runs scripts/real_model.sh). Without REASONING_REAL_MODEL_BASE, as in plain `pytest` and `make test`, every test
here is skipped at once."""

import os

import pytest

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
