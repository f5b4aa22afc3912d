"""Hardening (issue 14, item 14): the secret key, the security headers, login throttling, request bodies and idle
sockets."""

import json
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


# ---- request bodies and API errors: JSON, whatever the size or the way it came --------------------


async def asgi_request(method, path, body=b"", headers=(), chunks=None):
    """A request through the whole ASGI app (the body limit sits in front of Django), optionally in several chunks."""
    from channels.testing import ApplicationCommunicator

    from config.asgi import application

    parts = chunks or [body]
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5000),
        "headers": [(b"host", b"127.0.0.1"), *headers],
    }
    communicator = ApplicationCommunicator(application, scope)
    for index, part in enumerate(parts):
        await communicator.send_input({"type": "http.request", "body": part, "more_body": index < len(parts) - 1})
    start = await communicator.receive_output(timeout=20)
    body = b""
    while True:
        message = await communicator.receive_output(timeout=20)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait(timeout=5)
    return start["status"], dict(start["headers"]), body


CHUNKED_JSON = [(b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]


@pytest.mark.django_db(transaction=True)
async def test_a_chunked_body_over_the_limit_is_a_json_413(alice, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    auth = (b"authorization", f"Bearer {alice.key}".encode())
    chunks = [b'{"problem_text": "', *([b"x" * 4096] * 4), b'"}']  # no Content-Length, 16 KiB in six messages
    status, headers, body = await asgi_request("POST", "/api/sessions", headers=[*CHUNKED_JSON, auth], chunks=chunks)
    assert status == 413 and headers[b"content-type"] == b"application/json"
    assert "larger than the 10000 bytes" in json.loads(body)["detail"]


@pytest.mark.django_db(transaction=True)
async def test_a_chunked_body_within_the_limit_reaches_the_api(alice, monkeypatch):
    from reasoning import services

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    auth = (b"authorization", f"Bearer {alice.key}".encode())
    text = json.dumps({"problem_text": "Should the family sell the CHF 5m stake in the family firm?"}).encode()
    chunks = [text[:10], text[10:30], text[30:]]
    status, _, body = await asgi_request("POST", "/api/sessions", headers=[*CHUNKED_JSON, auth], chunks=chunks)
    assert status == 201, body


@pytest.mark.django_db(transaction=True)
async def test_a_page_post_over_the_limit_is_refused_before_django_reads_it(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    form = [(b"content-type", b"application/x-www-form-urlencoded")]
    status, _, _ = await asgi_request("POST", "/accounts/login/", headers=form, chunks=[b"username=" + b"a" * 2_000])
    assert status == 413


@pytest.mark.django_db
@pytest.mark.parametrize(
    "method, path, code",
    [("get", "/api/nowhere", 404), ("get", "/api/sessions/x/y/z", 404), ("put", "/api/sessions", 405)],
)
def test_api_errors_django_answers_are_json_too(client, alice, method, path, code):
    response = getattr(client, method)(path, **alice.auth)
    assert response.status_code == code and response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


@pytest.mark.django_db
def test_an_unexpected_api_error_is_a_json_500_without_a_traceback(client, alice, monkeypatch):
    from reasoning import selectors

    def broken(*args, **kwargs):
        raise RuntimeError("a bug, with a secret path /srv/app/reasoning/selectors.py")

    monkeypatch.setattr(selectors, "sessions_for", broken)
    client.raise_request_exception = False
    response = client.get("/api/sessions", **alice.auth)
    assert response.status_code == 500 and response["Content-Type"].startswith("application/json")
    assert "selectors.py" not in response.content.decode() and "Traceback" not in response.content.decode()


@pytest.mark.parametrize(
    "key", [" ", "   \t ", "short", "aaaaaaaaaaaaaaaaaaaaaaaa"], ids=["space", "blank", "short", "one-char"]
)
@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "offline/sim"], ids=["real", "demo"])
def test_a_weak_secret_key_refuses_to_start(key, model):
    """Issue 23, item 10: SECRET_KEY=" " was accepted, with a real model configured."""
    done = load_settings(REASONING_MODEL_PRIMARY=model, SECRET_KEY=key)
    assert done.returncode != 0 and "SECRET_KEY is set but too weak" in done.stderr
