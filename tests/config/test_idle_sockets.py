"""A socket whose client vanished (half-open: the handshake done, then silence, no answer to pings) is closed by the
server as `make run` starts it, within its ping interval and timeout (issue 14, item 14)."""

import base64
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasoning.models import ReasoningSession
from tests.test_restart import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def daphne_flags():
    from config.serving import DAPHNE_FLAGS

    return DAPHNE_FLAGS


def test_make_run_pings_sockets_and_drops_a_silent_one_within_15_s():
    flags = daphne_flags()
    assert int(flags[flags.index("--ping-interval") + 1]) + int(flags[flags.index("--ping-timeout") + 1]) <= 15
    assert "-m config.serving" in (ROOT / "Makefile").read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]


def test_both_profiles_start_daphne_with_the_same_flags():
    """Issue 23, item 9: `make run-scaled` started Daphne without `make run`'s flags (a half-open socket lived 51 s)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from scaled import Scaled

    scaled = Scaled("sqlite:///unused", "redis://127.0.0.1:1/0")
    spawned = {}
    scaled._spawn = lambda name, command: spawned.setdefault(name, command)
    scaled.start_server(8123)
    command = spawned["daphne-8123"]
    assert command[1:] == ["-b", "127.0.0.1", "-p", "8123", *daphne_flags(), "config.asgi:application"]


@pytest.fixture
def daphne(alice):
    """Daphne on this test database with the Makefile's flags."""
    from django.db import connection

    port = free_port()
    env = {**os.environ, "DATABASE_URL": _database_url(connection), "DJANGO_SETTINGS_MODULE": "config.settings"}
    daphne_bin = Path(sys.executable).parent / "daphne"
    server = subprocess.Popen(
        [str(daphne_bin), "-b", "127.0.0.1", "-p", str(port), *daphne_flags(), "config.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)


def _database_url(connection):
    settings = connection.settings_dict
    if settings["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings['NAME']}"
    return (
        f"postgres://{settings['USER']}:{settings['PASSWORD']}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"
    )


def test_a_half_open_socket_is_closed_by_the_server(alice, daphne):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan a gift of CHF 1m.", model_primary="offline/sim", status="paused"
    )
    sock = socket.create_connection(("127.0.0.1", daphne))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws/sessions/{session.id}/?token={alice.key} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    sock.settimeout(1)
    received, closed = b"", False
    deadline = time.monotonic() + 45  # a bound for a slow machine, not a timing assertion: 15 s are expected
    while time.monotonic() < deadline and not closed:
        try:
            data = sock.recv(65536)  # read, never answer: the client's end is gone
        except socket.timeout:
            continue
        except ConnectionResetError:
            closed = True
            break
        closed = not data
        received += data
    sock.close()
    assert b"101 Switching Protocols" in received and b"snapshot" in received  # it was a live socket
    assert closed, "the server kept a silent socket open"
