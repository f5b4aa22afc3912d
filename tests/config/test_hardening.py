"""Hardening (issue 14, item 14): the secret key, the security headers, login throttling, request bodies and idle
sockets."""

import os
import re
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


# ---- CSP without inline script, HSTS and Secure cookies over HTTPS ------------------------------

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)


@pytest.fixture
def pages(client, alice):
    from reasoning.models import ReasoningNode, ReasoningSession

    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan a CHF 2m gift to two heirs.", model_primary="offline/sim"
    )
    ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought="Root")
    client.force_login(alice.user)
    return [
        "/",
        "/sessions/new/",
        f"/sessions/{session.id}/",
        f"/sessions/{session.id}/report/",
        "/api/docs",
    ]


@pytest.mark.django_db
def test_every_page_has_a_csp_without_inline_script_and_no_inline_script(client, pages):
    for url in [*pages, "/accounts/login/"]:
        response = client.get(url)
        assert response.status_code == 200, url
        csp = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
        assert csp["script-src"] == "'self'" and "unsafe" not in csp["script-src"], url
        assert csp["frame-ancestors"] == "'none'" and csp["object-src"] == "'none'"
        html = response.content.decode()
        assert not INLINE_SCRIPT.search(html), (url, INLINE_SCRIPT.search(html))
        assert not INLINE_HANDLER.search(html), (url, INLINE_HANDLER.search(html))


@pytest.mark.django_db
def test_over_https_cookies_are_secure_and_hsts_is_sent(client, alice):
    response = client.post(
        "/accounts/login/", {"username": alice.user.username, "password": "pw-for-tests"}, secure=True
    )
    assert response.status_code == 302
    assert response.cookies["sessionid"]["secure"] is True and response.cookies["sessionid"]["httponly"] is True
    page = client.get("/", secure=True)
    assert page["Strict-Transport-Security"].startswith("max-age=31536000")
    assert client.get("/accounts/login/", secure=True).cookies["csrftoken"]["secure"] is True


@pytest.mark.django_db
def test_plain_http_gets_neither_so_the_local_demo_still_works(client, alice):
    response = client.post("/accounts/login/", {"username": alice.user.username, "password": "pw-for-tests"})
    assert response.status_code == 302 and not response.cookies["sessionid"]["secure"]
    assert "Strict-Transport-Security" not in client.get("/")


# ---- login throttling ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_password_guessing_is_throttled_per_username(client, alice, settings, login_url):
    settings.REASONING = {**settings.REASONING, "LOGIN_RATE": (5, 300)}
    guesses = [
        client.post(login_url, {"username": alice.user.username, "password": f"guess-{i}"}).status_code
        for i in range(8)
    ]
    assert guesses == [200] * 5 + [429] * 3
    refused = client.post(login_url, {"username": alice.user.username, "password": "pw-for-tests"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0  # even the right password waits
    assert b"Too many login attempts" in refused.content
    other = client.post("/accounts/login/", {"username": "someone-else", "password": "x"})
    assert other.status_code == 200  # another username has its own allowance


@pytest.mark.django_db
def test_one_address_guessing_many_usernames_is_throttled(client, alice, settings):
    settings.REASONING = {**settings.REASONING, "LOGIN_IP_RATE": (5, 300)}
    codes = [client.post("/accounts/login/", {"username": f"user{i}", "password": "x"}).status_code for i in range(7)]
    assert codes == [200] * 5 + [429] * 2


@pytest.mark.django_db
def test_a_login_within_the_allowance_works(client, alice):
    response = client.post("/accounts/login/", {"username": alice.user.username, "password": "pw-for-tests"})
    assert response.status_code == 302
