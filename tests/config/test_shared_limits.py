"""Limits that hold across processes (issue 23, item 3): two Daphne servers on the scale-out profile's Redis count
each limit once, whichever server a request reaches. Run on PostgreSQL + Redis (`make test-scale`); skipped without
REDIS_URL (the embedded profile counts in the process, and has one)."""

import contextlib
import http.cookiejar
import json
import os
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

from tests.test_restart import DAPHNE, ROOT, database_url, free_port, wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="the scale-out profile's Redis (REDIS_URL)"),
]

PROBLEM = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."


class Pair:
    """Two servers as the scaled profile runs them, sharing the test's database and Redis."""

    def __init__(self, **env):
        self.prefix = f"test-{uuid.uuid4().hex[:12]}"  # this test's counters only, in a Redis others share
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CACHE_KEY_PREFIX": self.prefix,
            "REASONING_OFFLINE_LATENCY_MS": "0",
            **env,
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.ports = [free_port(), free_port()]
        self.processes = [
            subprocess.Popen(
                [DAPHNE, "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for port in self.ports
        ]
        try:
            for port, process in zip(self.ports, self.processes, strict=True):
                wait_for(lambda p=port, pr=process: pr.poll() is None and _listening(p), 180, f"the server on {port}")
        except BaseException:
            self.stop()  # never leave a server behind holding the test's database
            raise

    def url(self, index, path):
        return f"http://127.0.0.1:{self.ports[index % 2]}{path}"

    def stop(self):
        for process in self.processes:
            process.kill()
            process.wait(timeout=10)


def _listening(port):
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def pair():
    started = []

    def start(**env):
        started.append(Pair(**env))
        return started[-1]

    yield start
    for servers in started:
        servers.stop()


def status_of(request):
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_creation_limit_holds_across_two_servers(alice, pair):
    servers = pair(REASONING_CREATE_RATE="5/minute")
    body = json.dumps({"problem_text": PROBLEM, "mode": "tot", "params": {"branching": 1, "depth": 1}}).encode()
    headers = {"Authorization": f"Bearer {alice.key}", "Content-Type": "application/json"}
    codes = [
        status_of(urllib.request.Request(servers.url(i, "/api/sessions"), data=body, headers=headers))
        for i in range(12)
    ]
    assert codes == [201] * 5 + [429] * 7  # per process, each server let 5 through: 10


def test_the_login_limit_holds_across_two_servers(alice, pair):
    servers = pair(REASONING_LOGIN_RATE="4/5minutes", REASONING_LOGIN_IP_RATE="50/5minutes")
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with browser.open(servers.url(0, "/accounts/login/"), timeout=30) as page:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())[1]

    def guess(index, password):
        form = {"csrfmiddlewaretoken": token, "username": alice.user.username, "password": password}
        request = urllib.request.Request(servers.url(index, "/accounts/login/"), urllib.parse.urlencode(form).encode())
        try:
            with browser.open(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    codes = [guess(i, f"guess-{i}") for i in range(10)]
    assert codes == [200] * 4 + [429] * 6  # each wrong password checked 4 times in all, not 4 times a server


def test_the_action_limit_holds_across_two_servers(alice, pair):
    from reasoning import services
    from reasoning.models import ReasoningNode, ReasoningSession
    from reasoning.schemas import SessionIn

    servers = pair(REASONING_ACTION_RATE="3/minute")
    session = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=root, status="solved")
    headers = {"Authorization": f"Bearer {alice.key}", "Content-Type": "application/json"}
    codes = [
        status_of(
            urllib.request.Request(
                servers.url(i, f"/api/nodes/{root.id}/{'prune' if i % 2 == 0 else 'unprune'}"), data=b"{}", headers=headers
            )
        )
        for i in range(8)
    ]
    assert [c for c in codes if c != 429] == codes[:3] and codes[3:] == [429] * 5


def test_the_action_limit_holds_for_sockets_across_two_servers(alice, pair):
    """A token client (no Origin header) with a socket on each server: its actions share one allowance."""
    from websockets.sync.client import connect

    from reasoning import services
    from reasoning.models import ReasoningNode, ReasoningSession
    from reasoning.schemas import SessionIn

    servers = pair(REASONING_ACTION_RATE="3/minute")
    session = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=root, status="solved")
    path = f"/ws/sessions/{session.id}/?token={alice.key}"  # a token client: no Origin header, no cookie
    with contextlib.ExitStack() as stack:
        sockets = [
            stack.enter_context(connect(servers.url(i, path).replace("http", "ws", 1)))
            for i in range(2)
        ]
        for socket in sockets:
            assert json.loads(socket.recv(timeout=30))["type"] == "snapshot"
        refused = []
        for i in range(8):
            sockets[i % 2].send(json.dumps({"action": "prune" if i % 2 == 0 else "unprune", "node_id": str(root.id)}))
            refused.append(_refused(sockets[i % 2]))
    assert refused == [False] * 3 + [True] * 5  # 3 a minute in all, not 3 a server


def _refused(socket):
    """Whether the socket answered its last action with the limit's error (events of the action itself pass by)."""
    while True:
        try:
            message = json.loads(socket.recv(timeout=3))
        except TimeoutError:
            return False
        if message["type"] == "error":
            return "too many actions" in message["detail"]
        if message["type"] == "node.updated":
            return False

