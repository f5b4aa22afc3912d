"""Redis down for a moment (issue 14, item 15): a retried create or fork makes one session (Idempotency-Key), a
dependency that is down answers 503 JSON with Retry-After, and pause and resume hold when the broker or the channel
layer is down (the change is committed; the sweeper dispatches the session, watchers re-sync on the seq)."""

import json
import uuid
from datetime import timedelta

import pytest
from channels.layers import channel_layers
from django.utils import timezone

from config import celery_app as app
from reasoning import services
from reasoning.models import IdempotencyKey, ReasoningNode, ReasoningSession
from reasoning.runner import CeleryRunner
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = {"problem_text": "Should the family sell the CHF 5m stake in the family firm to a strategic buyer?"}
NOBODY = "redis://127.0.0.1:9/0"  # a Redis that is down: nothing listens there


def post(client, path, body, party, key=None):
    headers = {**party.auth, **({"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {})}
    return client.post(path, data=json.dumps(body), content_type="application/json", **headers)


@pytest.fixture
def no_runner(monkeypatch):
    """Sessions made here stay queued: these tests are about the request, not the run."""
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)


def test_a_retry_with_the_same_key_returns_the_same_session(client, alice, no_runner):
    first = post(client, "/api/sessions", GOOD, alice, key="3f1c9a7e-create-1")
    again = post(client, "/api/sessions", GOOD, alice, key="3f1c9a7e-create-1")
    assert first.status_code == 201 and again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]
    assert ReasoningSession.objects.filter(tenant=alice.tenant).count() == 1
    assert post(client, "/api/sessions", GOOD, alice, key="another-key").status_code == 201
    assert post(client, "/api/sessions", GOOD, alice).status_code == 201  # no key: a new session each time
    assert ReasoningSession.objects.filter(tenant=alice.tenant).count() == 3


def test_keys_are_each_tenants_own(client, alice, bob, no_runner):
    mine = post(client, "/api/sessions", GOOD, alice, key="same-key")
    theirs = post(client, "/api/sessions", GOOD, bob, key="same-key")
    assert mine.status_code == theirs.status_code == 201
    assert mine.json()["id"] != theirs.json()["id"]


@pytest.mark.parametrize("key", ["", "with space", "x" * 201, "caf\u00e9", "tab\there"])
def test_a_bad_key_is_a_422_naming_the_header(client, alice, no_runner, key):
    response = post(client, "/api/sessions", GOOD, alice, key=key)
    assert response.status_code == 422
    assert response.json()["detail"][0]["field"] == "Idempotency-Key"
    assert not ReasoningSession.objects.exists()


def test_a_key_reused_for_another_request_is_a_422(client, alice, no_runner):
    assert post(client, "/api/sessions", GOOD, alice, key="k-1").status_code == 201
    other = post(client, "/api/sessions", {**GOOD, "budget_usd": 0.2}, alice, key="k-1")
    assert other.status_code == 422 and other.json()["detail"][0]["field"] == "Idempotency-Key"
    assert "another request" in other.json()["detail"][0]["message"]


def test_a_key_is_honoured_for_a_day_and_then_forgotten(client, alice, no_runner):
    first = post(client, "/api/sessions", GOOD, alice, key="k-day")
    IdempotencyKey.objects.filter(key="k-day").update(created_at=timezone.now() - timedelta(hours=25))
    later = post(client, "/api/sessions", {**GOOD, "budget_usd": 0.2}, alice, key="k-day")
    assert later.status_code == 201 and later.json()["id"] != first.json()["id"]  # a new request, not a retry
    assert IdempotencyKey.objects.filter(key="k-day").get().session_id == uuid.UUID(later.json()["id"])


def test_a_retried_fork_returns_the_same_fork(client, alice, no_runner):
    data = SessionIn(problem_text=GOOD["problem_text"], mode="tot")
    source = services.create_session(alice.tenant, data, submit=False)
    root = ReasoningNode.objects.create(tenant=alice.tenant, session=source, depth=0, thought="the problem")
    step = ReasoningNode.objects.create(tenant=alice.tenant, session=source, parent=root, depth=1, thought="a step")
    body = {"node_id": str(step.id)}
    first = post(client, f"/api/sessions/{source.id}/fork", body, alice, key="fork-retry-1")
    again = post(client, f"/api/sessions/{source.id}/fork", body, alice, key="fork-retry-1")
    assert first.status_code == 201 and again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]
    assert ReasoningSession.objects.filter(forked_from=source).count() == 1


def test_a_dependency_that_is_down_is_a_503_in_json_with_retry_after(client, alice, settings):
    # The create limit counts in the cache; with several servers that cache is Redis, and here it is down.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": NOBODY}}
    response = post(client, "/api/sessions", GOOD, alice)
    assert response.status_code == 503 and response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0 and "Redis" in response.json()["detail"]
    assert not ReasoningSession.objects.exists()


@pytest.fixture
def redis_down(settings, monkeypatch):
    """The channel layer and the Celery broker both point at a Redis that is down."""
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [NOBODY]}}
    }
    channel_layers.backends.clear()
    monkeypatch.setattr(services, "get_runner", CeleryRunner)
    saved = app.conf.broker_url, app.conf.broker_connection_timeout, app._pool, app.amqp._producer_pool
    app.conf.broker_url, app.conf.broker_connection_timeout, app._pool, app.amqp._producer_pool = (
        NOBODY,
        0.2,
        None,
        None,
    )
    yield
    app.conf.broker_url, app.conf.broker_connection_timeout, app._pool, app.amqp._producer_pool = saved
    app._local.__dict__.pop("backend", None)  # a later test's result backend is not this test's (none)
    channel_layers.backends.clear()


def test_pause_and_resume_answer_in_json_while_redis_is_down(client, alice, redis_down):
    data = SessionIn(problem_text=GOOD["problem_text"], mode="tot")
    session = services.create_session(alice.tenant, data, submit=False)
    paused = post(client, f"/api/sessions/{session.id}/pause", {}, alice)
    assert paused.status_code == 200, paused.content
    assert paused.json()["status"] == "paused"
    resumed = post(client, f"/api/sessions/{session.id}/resume", {}, alice)
    assert resumed.status_code == 200, resumed.content
    assert resumed.json()["status"] == "queued"  # its start waits for the broker: the sweeper dispatches it then


def test_a_session_made_while_the_broker_is_down_is_made_once_and_waits_for_the_sweeper(client, alice, redis_down):
    first = post(client, "/api/sessions", GOOD, alice, key="while-redis-restarts")
    assert first.status_code == 201, first.content
    again = post(client, "/api/sessions", GOOD, alice, key="while-redis-restarts")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert ReasoningSession.objects.get().status == "queued"
