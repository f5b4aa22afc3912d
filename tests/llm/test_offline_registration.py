"""The offline models are known to litellm, provider and price together, before a server serves its first request
(issue 32, section 2): on a fresh start 1 of 6 and 2 of 6 concurrent first creates were refused with 422 "no price is
known for 'offline/sim'", the provider seen registered by one request while another was still registering its price.
Each check runs in a fresh interpreter, as a server starts."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVED = """
import config.asgi  # what Daphne imports before it serves
import litellm
from reasoning.llm import offline
providers = [entry["provider"] for entry in litellm.custom_provider_map]
assert providers.count(offline.PROVIDER) == 1, providers
assert all(litellm.model_cost[name]["input_cost_per_token"] > 0 for name in offline.MODELS)
print("ok")
"""

CONCURRENT = """
import os, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
import litellm
from reasoning.llm import prices

# What a first create does per request, from many threads at once, each slowed where the race lives.
from reasoning.llm import offline
register_model = litellm.register_model
def slow_register_model(*args, **kwargs):
    threading.Event().wait(0.2)
    return register_model(*args, **kwargs)
litellm.register_model = slow_register_model

start, refused = threading.Barrier(6), []
def first_create():
    start.wait()
    try:
        prices.price_of(offline.MODEL)
    except prices.Unpriced as error:
        refused.append(str(error))
threads = [threading.Thread(target=first_create) for _ in range(6)]
for thread in threads: thread.start()
for thread in threads: thread.join(30)
assert not refused, refused
print("ok")
"""


def run(code):
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180, env=env
    )
    return result.returncode, result.stdout + result.stderr


def test_the_offline_models_are_registered_before_the_first_request_is_served():
    code, output = run(SERVED)
    assert code == 0, output[-2000:]


def test_six_concurrent_first_creates_all_find_the_offline_price():
    code, output = run(CONCURRENT)
    assert code == 0, output[-2000:]
