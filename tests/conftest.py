"""Shared fixtures: two tenants with a user and an API key each (to test who may see what), rubrics, the runner."""

import asyncio
import os
from dataclasses import dataclass

# Inherited by every server a test starts (it reads its settings afresh).
os.environ.setdefault("REASONING_FAST_PASSWORD_HASHER", "1")
# Browser tests log the same user in many times against one server: its login throttle would refuse them.
os.environ.setdefault("REASONING_LOGIN_RATE", "off")
os.environ.setdefault("REASONING_LOGIN_IP_RATE", "off")
# The chaos test starts the scaled profile and kills its processes: `make test-chaos` runs it, a plain pytest not.
collect_ignore = [] if os.environ.get("REASONING_CHAOS") else ["chaos"]


def _hash_passwords_fast():
    """This process read its settings before this file ran (pytest-django loads them first): switch it too."""
    from django.conf import settings
    from django.contrib.auth import hashers

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()


_hash_passwords_fast()

import pytest
from django.contrib.auth import get_user_model

from reasoning.fixtures import load_rubrics
from reasoning.models import ApiKey, Membership, Role, Scope, Tenant

# The problem kinds of the seed card, plus general: their shared rubrics come with every database.
SEEDED_KINDS = {
    "general",
    "investment-thesis",
    "allocation-rebalance",
    "tax-optim-sequence",
    "wealth-transfer",
    "data-driven-research",
}


@dataclass
class Party:
    tenant: Tenant
    user: object
    key: str

    @property
    def auth(self):
        return {"HTTP_AUTHORIZATION": f"Bearer {self.key}"}


def make_party(slug, admin=False):
    tenant = Tenant.objects.create(slug=slug, name=slug.title())
    user = get_user_model().objects.create_user(username=f"{slug}-advisor", password="pw-for-tests")
    Membership.objects.create(user=user, tenant=tenant, role=Role.ADMIN if admin else Role.ADVISOR)
    _, key = ApiKey.issue(tenant, name="tests", scopes=Scope.values if admin else None)
    return Party(tenant=tenant, user=user, key=key)


@pytest.fixture(autouse=True)
def healthy_models(settings):
    """Every test starts with no model resting, nothing learnt of which models take `n`, and retries that wait a
    blink (tests of the waits set their own). A scripted server that returned fewer samples than asked taught the
    gateway, for the whole process, to ask that model's samples apart, and a later test's one failing request then
    became one missing sample of three.

    Tests name any priced model they script (tests/reasoning/test_allowed_models.py tests the operator's list)."""
    from reasoning.llm.gateway import N_SUPPORT
    from reasoning.llm.health import HEALTH

    HEALTH.reset()
    N_SUPPORT.clear()
    settings.REASONING = {
        **settings.REASONING,
        "RETRY_BACKOFF_S": 0.01,
        "RETRY_BACKOFF_MAX_S": 0.05,
        "ALLOWED_MODELS": ("*",),
        # Scripted replies come in order: a model's reading of the facts first would take the first of them
        # (tests/reasoning/test_fact_reading.py turns it on).
        "MODEL_READS_FACTS": False,
    }
    yield
    HEALTH.reset()
    N_SUPPORT.clear()


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings):
    """Rate-limit counters live in the cache: each test starts with every caller's full allowance. A shared cache (the
    scale-out profile's Redis) is never flushed: the test counts under a key prefix of its own instead."""
    import uuid

    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()
    else:
        prefix = f"test-{uuid.uuid4().hex[:12]}"
        settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": prefix}}


@pytest.fixture(autouse=True)
def no_tenant_left_behind():
    """A test that authenticates outside a request (access.attach, the admin's tenant_admin on a bare request) names
    a tenant for the rest of its context (reasoning/rls.py): the next test starts with none again."""
    from reasoning import rls

    with rls.tenant(None):
        yield


@pytest.fixture
def rubrics(db):
    load_rubrics()


@pytest.fixture
def alice(db, rubrics):
    return make_party("alice")


@pytest.fixture
def bob(db, rubrics):
    return make_party("bob")


@pytest.fixture
def alice_admin(client, alice):
    """A test client logged in as alice made her tenant's admin (staff, not a superuser): the tenant admin's admin."""
    Membership.objects.filter(user=alice.user).update(role=Role.ADMIN)
    get_user_model().objects.filter(pk=alice.user.pk).update(is_staff=True)
    client.force_login(get_user_model().objects.get(pk=alice.user.pk))
    return client


@pytest.fixture
async def runner():
    """The in-process runner bound to this test's loop; waits for every submitted session at the end."""
    from reasoning.runner import get_runner

    the_runner = get_runner()
    the_runner.bind(asyncio.get_running_loop())
    yield the_runner
    await the_runner.drain()


@pytest.fixture(scope="session", autouse=True)
def close_worker_connections(django_db_setup):
    """Async tests run ORM calls on asgiref's worker thread; close its connection before the test database goes."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)


@pytest.fixture(autouse=True)
def channel_layer_per_test():
    """Each test runs on an event loop of its own, so each gets a channel layer of its own.

    A Redis layer keeps per-channel receive locks that a message's cleanup task releases later; a test whose
    loop closed before that task ran left the lock held, bound to the dead loop, and the next test's socket
    failed on it ("Lock is bound to a different event loop"). A server has one loop and never meets this.
    """
    yield
    from channels.layers import channel_layers

    channel_layers.backends.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """A session a sync test started over HTTP runs on the runner's background loop, in another thread: it must end
    before the test's database is flushed (before any fixture's teardown), or it reads a flushed database and, on
    PostgreSQL, waits on the flush's locks (tests/reasoning/test_facts_api.py hung or erred there)."""
    import concurrent.futures

    from reasoning import runner as runners

    the_runner = runners._runner
    loop = getattr(the_runner, "loop", None)
    if loop is None or loop.is_closed() or not loop.is_running() or not getattr(the_runner, "tasks", None):
        return  # an async test's loop is not running now: its `runner` fixture drains it
    ended = asyncio.run_coroutine_threadsafe(the_runner.drain(), loop)
    try:
        ended.result(timeout=30)
    except concurrent.futures.TimeoutError:  # a long search the test did not wait for: stopped, as at shutdown
        for task in list(the_runner.tasks):
            loop.call_soon_threadsafe(task.cancel)
        ended.result(timeout=30)
