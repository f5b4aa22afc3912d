"""Issue 32, item 1: the budget and the monthly cap hold against a server that ignores `max_tokens`.

Many sessions of one tenant run at once on a loopback server that writes 20,000 tokens whatever a call asked
(tests/fake_openai.py `runaway`). The gateway streams each call and closes it at its reservation, so no session
ends past its budget and the tenant never passes its monthly cap. It runs on whichever profile the environment
names: SQLite here, PostgreSQL + Redis in `make test-scale` (tests/reasoning is in SCALE_TESTS).
"""

import asyncio
import os
import time

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import LLMCall, ReasoningSession, Tenant
from reasoning.schemas import SessionIn
from reasoning.usage import month_of
from tests.fake_openai import FakeOpenAI, runaway

pytestmark = pytest.mark.django_db(transaction=True)

# The 100 at once, on both profiles in CI (about 35 s of CPU each: litellm reads a streamed chunk for about a
# millisecond); the cap binds at 30 sessions' budgets. REASONING_RUNAWAY_SESSIONS=40 for a quicker local run.
SESSIONS = int(os.environ.get("REASONING_RUNAWAY_SESSIONS", "100"))
PRICE = {"input": 0.1, "output": 0.5}  # USD per million tokens: a call's reservation is about 0.001-0.003 USD
BUDGET = 0.01  # a few calls each: every session ends on its budget or the tenant's cap
CAP = 0.30  # the issue's cap: three sessions' worth of runaway calls took it to 0.666
CHUNK_WORDS = 24  # a chunk of some 170 bytes: litellm reads a chunk for about a millisecond of CPU
MODES = ("tot", "lats", "reflexion", "react", "trm")
PROBLEM = "Rebalance a CHF 3m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."


@pytest.fixture
def runaway_model(settings, monkeypatch):
    """openai/local on the runaway server, priced, with its api_base in REASONING_MODELS."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-a-local-server")
    with FakeOpenAI(default=runaway, chunk_words=CHUNK_WORDS) as server:
        models = {"openai/local": {**PRICE, "api_base": server.base_url}}
        settings.REASONING = {**settings.REASONING, "MODELS": models, "LLM_RETRIES": 0, "MODEL_FALLBACK": ""}
        yield server


async def test_no_session_and_no_tenant_passes_its_cap_on_a_server_that_ignores_max_tokens(alice, runaway_model):
    await Tenant.objects.filter(pk=alice.tenant.pk).aupdate(monthly_cap_usd=CAP)
    sessions = []
    for index in range(SESSIONS):
        data = SessionIn(
            problem_text=PROBLEM, mode=MODES[index % len(MODES)], model_primary="openai/local", budget_usd=BUDGET
        )
        sessions.append(await sync_to_async(services.create_session)(alice.tenant, data, submit=False))
    cpu = time.process_time()
    await asyncio.gather(*(run_session(s.id) for s in sessions))
    cpu = time.process_time() - cpu

    ended = [s async for s in ReasoningSession.objects.filter(tenant=alice.tenant)]
    over = [s for s in ended if s.budget_used_usd > s.budget_usd + 1e-9]
    calls = [c async for c in LLMCall.objects.filter(tenant=alice.tenant).exclude(outcome="budget")]
    month = await sync_to_async(month_of)(alice.tenant)
    closed = sum(getattr(c, "stopped", 0) for c in calls)  # (the code before issue 32 had no such column)
    print(f"\n{SESSIONS} sessions: {len(over)} over their budget (worst {max_ratio(ended):.2f}x); tenant spent "
          f"{month['spent_usd']:.6f} of {CAP} USD; {closed} of {len(calls)} calls closed; {cpu:.1f} s of CPU")
    assert over == []
    assert month["spent_usd"] <= CAP + 1e-9 and month["reserved_usd"] == pytest.approx(0, abs=1e-9)
    assert all(c.cost_usd <= c.reserved_usd + 1e-12 for c in calls)
    assert all(s.status not in ("running", "queued") for s in ended)
    # The server wrote on past the reservations; the gateway closed those streams and paid what it counted.
    assert any(c.stopped for c in calls) and runaway_model.streams
    exhausted = [s for s in ended if s.status == "exhausted"]
    assert exhausted and all(s.error.startswith("the next") for s in exhausted)


def max_ratio(sessions):
    return max((s.budget_used_usd / s.budget_usd for s in sessions), default=0.0)
