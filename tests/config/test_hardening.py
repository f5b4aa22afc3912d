"""Hardening (issue 14, item 14): the secret key, the security headers, login throttling, request bodies and idle
sockets."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOAD_SETTINGS = "import django; from django.conf import settings; django.setup(); print(settings.SECRET_KEY[:8])"


def load_settings(**env):
    """The settings loaded in a fresh process with these variables (and no SECRET_KEY unless given)."""
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "REASONING_MODEL_PRIMARY"}}
    clean = {k: v for k, v in clean.items() if not k.startswith("REASONING_MODEL")}
    clean.pop("REASONING_ALLOWED_MODELS", None)
    env = {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    return subprocess.run([sys.executable, "-c", LOAD_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "env",
    [
        {"REASONING_MODEL_PRIMARY": "openai/gpt-4o-mini"},
        {"REASONING_MODEL_FALLBACK": "anthropic/claude-3-haiku-20240307"},
        {"REASONING_MODELS": '{"openai/smollm2": {"input": 0.1, "output": 0.2}}'},
        {"REASONING_ALLOWED_MODELS": "*"},
    ],
    ids=["primary", "fallback", "models", "allowed"],
)
def test_a_real_model_without_a_secret_key_refuses_to_start(env):
    done = load_settings(**env)
    assert done.returncode != 0 and "SECRET_KEY is required" in done.stderr


def test_a_real_model_with_a_secret_key_starts():
    done = load_settings(REASONING_MODEL_PRIMARY="openai/gpt-4o-mini", SECRET_KEY="s3cret-for-this-test")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "s3cret-f"


def test_the_offline_demo_starts_without_one():
    done = load_settings(REASONING_MODEL_PRIMARY="offline/noisy")
    assert done.returncode == 0, done.stderr
    assert load_settings().returncode == 0  # `make run` as shipped
