"""A revoked or expired key's sockets close within a second, watching or not (issue 32, section 3: a socket that only
watched kept streaming 25 s after its key was revoked). A plain websockets client with `?token=`, as integrators
connect, against a live Daphne in a fresh interpreter; the key revoked through the server's own API, so the close
travels the server's channel layer (in memory here, Redis on the scaled profile). This module is also imported by the
spawned server process, so it imports no Django models at the top."""

import json
import time
import urllib.request
from datetime import timedelta

from channels.testing import ChannelsLiveServerTestCase
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.e2e.live import SpawnedDaphneProcess

GONE = 4401
PROBLEM = "Plan a CHF 4m wealth transfer to two heirs in Vaud."


class KeySocketsCloseTest(ChannelsLiveServerTestCase):
    ProtocolServerProcess = SpawnedDaphneProcess

    def setUp(self):
        from reasoning import services
        from reasoning.fixtures import load_rubrics
        from reasoning.models import ApiKey, Scope, Tenant
        from reasoning.schemas import SessionIn

        load_rubrics()  # a live-server test case flushes the database after each test
        self.tenant = Tenant.objects.create(slug="sockets", name="Sockets")
        _, self.admin_key = ApiKey.issue(self.tenant, name="admin", scopes=Scope.values)
        self.session = services.create_session(self.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)

    def watch(self, plaintext):
        url = self.live_server_url.replace("http", "ws", 1) + f"/ws/sessions/{self.session.id}/?token={plaintext}"
        socket = self.enterContext(connect(url, open_timeout=30))
        assert json.loads(socket.recv(timeout=30))["type"] == "snapshot"
        return socket

    def closed_within(self, socket, bound_s):
        """The close code, and when it came, if the server closed the socket within bound_s seconds."""
        deadline = time.monotonic() + bound_s
        try:
            while (left := deadline - time.monotonic()) > 0:
                socket.recv(timeout=left)  # an error message comes before the close
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        except TimeoutError:
            return None

    def test_a_watching_socket_closes_within_a_second_of_its_key_being_revoked(self):
        from reasoning.models import ApiKey, Scope

        key, plaintext = ApiKey.issue(self.tenant, name="watcher", scopes=[Scope.READ])
        socket = self.watch(plaintext)
        request = urllib.request.Request(
            f"{self.live_server_url}/api/keys/{key.pk}",
            method="DELETE",
            headers={"Authorization": f"Bearer {self.admin_key}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 204
        assert self.closed_within(socket, 1.0) == GONE

    def test_a_watching_socket_closes_within_a_second_of_its_key_expiring(self):
        from django.utils import timezone

        from reasoning.models import ApiKey, Scope

        expires_at = timezone.now() + timedelta(seconds=4)
        _, plaintext = ApiKey.issue(self.tenant, name="watcher", scopes=[Scope.READ], expires_at=expires_at)
        socket = self.watch(plaintext)
        until_expiry = (expires_at - timezone.now()).total_seconds()
        assert until_expiry > 0.5, "the socket took too long to open for this test to mean anything"
        started = time.monotonic()
        assert self.closed_within(socket, until_expiry + 1.0) == GONE
        assert time.monotonic() - started >= until_expiry - 0.2  # not before it expired

    def test_a_plain_client_signs_off_an_answer_and_a_watcher_sees_each_review_step(self):
        """Four eyes (issue 34, section 3) as an integrator meets it: the review asked over HTTP, given over a socket."""
        from django.contrib.auth import get_user_model

        from reasoning.models import ApiKey, Membership, ReasoningSession, Role, Scope, Status

        rita = get_user_model().objects.create_user(username="rita", password="pw-for-tests")
        Membership.objects.create(user=rita, tenant=self.tenant, role=Role.REVIEWER)
        ReasoningSession.objects.filter(pk=self.session.pk).update(
            status=Status.SOLVED, final_answer="Give each heir CHF 2m now.", review_state="awaiting"
        )
        _, reviewer_key = ApiKey.issue(self.tenant, scopes=[Scope.READ, Scope.REVIEW], user=rita)
        _, watcher_key = ApiKey.issue(self.tenant, scopes=[Scope.READ])
        watcher, reviewer = self.watch(watcher_key), self.watch(reviewer_key)
        body = json.dumps({"decision": "request_changes", "comment": "Say why now."}).encode()
        request = urllib.request.Request(
            f"{self.live_server_url}/api/sessions/{self.session.id}/review",
            data=body,
            method="POST",
            headers={"Authorization": f"Bearer {reviewer_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.load(response)["review"]["state"] == "changes_requested"
        assert self.next_review(watcher)["comment"] == "Say why now."
        reviewer.send(json.dumps({"action": "review", "decision": "approve", "comment": "Clear now."}))
        approved = self.next_review(watcher)
        assert (approved["state"], approved["by"], approved["comment"]) == ("approved", "user:rita", "Clear now.")
        assert self.next_review(reviewer)["state"] == "changes_requested"  # the reviewer's socket saw both too

    def next_review(self, socket):
        for _ in range(10):
            message = json.loads(socket.recv(timeout=30))
            if message["type"] == "review.updated":
                return message["review"]
        raise AssertionError("no review.updated message")
