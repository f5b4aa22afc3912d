"""The doors Daphne lacks, on a real Daphne started as both profiles start it (`python -m config.serving`, issue 23
items 6, 7 and 8): a body counted as it streams (413 at the limit, nothing spooled), deadlines for a request's
headers and body (408 for a trickle), and a websocket message over 1 MiB closed with 1009 and a reason."""

import base64
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasoning.models import ReasoningSession
from tests.config.test_idle_sockets import _database_url
from tests.test_restart import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 1024 * 1024


@pytest.fixture
def server(alice):
    from django.db import connection

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "HTTP_HEADERS_TIMEOUT_S": "2",
        "HTTP_BODY_TIMEOUT_S": "3",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "config.serving", "-b", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, "the server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield process, port
    finally:
        process.terminate()
        process.wait(timeout=20)


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    return sock


def read_all(sock, bound_s=20):
    """What the server sent until it closed the connection (or the bound passed)."""
    sock.settimeout(0.5)
    received, deadline = b"", time.monotonic() + bound_s
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            break
        if not data:
            break
        received += data
    return received


def spooled_files(pid):
    """The deleted files a process holds open: where Twisted spools a request body it has no length for."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.endswith("(deleted)") and not target.startswith("/memfd:"):
            held.append(target)
    return held


def test_a_chunked_body_is_refused_at_the_limit_as_it_streams_with_nothing_spooled(server):
    process, port = server
    sock = connect(port)
    sock.sendall(
        b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"a" * 65536
    framed = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    for _ in range(8):  # half the limit: kept in memory, not in a file
        sock.sendall(framed)
    time.sleep(0.5)
    assert spooled_files(process.pid) == []
    sent, answer = 8 * len(chunk), b""
    try:
        while sent <= 4 * LIMIT and b"413" not in answer:
            sock.sendall(framed)
            sent += len(chunk)
            if sent > LIMIT:
                sock.settimeout(0.2)
                try:
                    answer += sock.recv(65536)
                except socket.timeout:
                    pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer += read_all(sock, 10)
    sock.close()
    # Answered without the body's end (the client never sent the last chunk), within a chunk of the limit.
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"detail"' in answer and sent <= LIMIT + 4 * len(chunk)
    assert spooled_files(process.pid) == []


def test_a_declared_length_over_the_limit_is_refused_before_the_body(server):
    _, port = server
    sock = connect(port)
    sock.sendall(b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 419430400\r\n\r\n")
    answer = read_all(sock, 10)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413")


def test_headers_trickled_a_byte_at_a_time_get_a_408(server):
    _, port = server
    sock = connect(port)
    sock.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    started, answer = time.monotonic(), b""
    sock.settimeout(0.3)
    try:
        while time.monotonic() - started < 20 and not answer:
            sock.sendall(b"X")  # a header that never ends, a byte every 0.3 s
            try:
                answer = sock.recv(65536)
            except socket.timeout:
                pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - started < 10  # 2 s allowed here, whatever the trickle


def test_a_body_trickled_a_byte_at_a_time_gets_a_408(server):
    _, port = server
    sock = connect(port)
    sock.sendall(b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    started, answer = time.monotonic(), b""
    sock.settimeout(0.3)
    try:
        while time.monotonic() - started < 20 and not answer:
            sock.sendall(b" ")
            try:
                answer = sock.recv(65536)
            except socket.timeout:
                pass
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408") and b'"detail"' in answer, answer[:200]


def test_a_request_on_time_and_a_second_on_the_same_connection_are_served(server):
    _, port = server
    sock = connect(port)
    for _ in range(2):
        sock.sendall(b"GET /api/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 200")
        length = int(head.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0]) if b"Content-Length" in head else 0
        body = head.split(b"\r\n\r\n", 1)[1]
        while len(body) < length:
            body += sock.recv(65536)
        time.sleep(2.5)  # idle between requests longer than the headers' deadline: only a request is timed
    sock.close()


def ws_frame(payload, opcode=0x1):
    mask = os.urandom(4)
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def close_frame(data):
    """(code, reason) of the first close frame the server sent in `data` after its handshake, or None."""
    data = data.split(b"\r\n\r\n", 1)[1]
    while len(data) >= 2:
        opcode, length = data[0] & 0x0F, data[1] & 0x7F
        offset = 2
        if length == 126:
            length, offset = struct.unpack("!H", data[2:4])[0], 4
        elif length == 127:
            length, offset = struct.unpack("!Q", data[2:10])[0], 10
        payload = data[offset : offset + length]
        if opcode == 0x8:
            return struct.unpack("!H", payload[:2])[0], payload[2:].decode()
        data = data[offset + length :]
    return None


def test_a_websocket_message_over_1_mib_is_closed_with_1009_and_a_reason(alice, server):
    _, port = server
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan a gift of CHF 1m.", model_primary="offline/sim", status="paused"
    )
    sock = connect(port)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws/sessions/{session.id}/?token={alice.key} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    received = b""
    while b"snapshot" not in received:
        received += sock.recv(65536)
    big = b'{"action": "prune", "node_id": "' + b"x" * (LIMIT + 1000) + b'"}'
    try:
        sock.sendall(ws_frame(big))
    except (BrokenPipeError, ConnectionResetError):
        pass
    received += read_all(sock, 15)
    sock.close()
    closed = close_frame(received)
    assert closed is not None, "dropped with no close frame (1006)"
    code, reason = closed
    assert code == 1009 and reason
