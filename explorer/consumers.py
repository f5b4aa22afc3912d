"""The live tree socket: a snapshot from the database on connect, then the session's events in seq order.

Clients may send overseer actions; a bad message gets an error message back, never a dropped socket. Rights are
checked again at each action (a key revoked or a member demoted since the socket opened loses them at once; a key
steers only with the `oversee` scope and signs off an answer (`review`) only with the `review` scope, and a member's key
only while their role allows it), and a
socket that sends faster than REASONING_SOCKET_RATE / REASONING_SOCKET_SNAPSHOT_RATE is closed with 4429.

A socket opened with a key also joins that key's group (keys.group_name): revoking the key sends the group a
`rights.changed` message, on whichever server process holds the socket, and each socket checks its rights at once and
closes with 4401; a key that expires closes its sockets from a timer set for the moment it expires. A socket that
only watches is so closed within a second, whether or not events flow (issue 32).
"""

import asyncio
import json
import math
import time
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from pydantic import ValidationError

from reasoning import access, events, keys, rls, selectors, services, throttles
from reasoning.models import ReasoningNode, ReasoningSession, Scope
from reasoning.schemas import EditIn, ExpandIn, PromoteIn, ReviewIn

from .snapshot import snapshot_parts

SESSION_ACTIONS = {
    "pause": services.pause_session,
    "resume": services.resume_session,
    "cancel": services.cancel_session,
}
NODE_ACTIONS = {
    "prune": lambda tenant, node_id, actor, _: services.set_pruned(tenant, node_id, actor, pruned=True),
    "unprune": lambda tenant, node_id, actor, _: services.set_pruned(tenant, node_id, actor, pruned=False),
    "expand": lambda tenant, node_id, actor, data: services.expand_node(tenant, node_id, actor, data.k),
    "edit": lambda tenant, node_id, actor, data: services.edit_node(tenant, node_id, actor, data.thought),
    "promote": lambda tenant, node_id, actor, data: services.promote_node(tenant, node_id, actor, data.note),
}
# The body each action takes besides node_id: the API's schema, so both doors validate alike.
BODIES = {"expand": ExpandIn, "edit": EditIn, "promote": PromoteIn, "review": ReviewIn}
# Four eyes: a reviewer's action, with a scope of its own (`review`), not a steering one.
REVIEW = "review"
ACTIONS = {"snapshot", REVIEW, *SESSION_ACTIONS, *NODE_ACTIONS}
MAX_MESSAGE_BYTES = 64 * 1024
MAX_DEPTH = 8  # an action is a flat object; deeper JSON is refused before anything walks it
GONE = 4401  # the socket's key or login no longer holds: the same code as a refused connect
RIGHTS_RECHECK_S = 30  # a socket that only watches has its login checked again this often, as events come
EXPIRY_MARGIN_S = 0.05  # a key's sockets are checked this long after it expires
FLOODING = 4429  # more messages than the socket's allowance: closed, so one client cannot slow everyone's reads


class Window:
    """A fixed-window counter for one socket: take() is False once `count` messages came within `period` seconds."""

    def __init__(self, rate):
        self.rate, self.started, self.used = rate, 0.0, 0

    def take(self):
        if self.rate is None:
            return True
        count, period = self.rate
        now = time.monotonic()
        if now - self.started >= period:
            self.started, self.used = now, 0
        self.used += 1
        return self.used <= count


class SessionConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        engine = settings.REASONING
        self.messages, self.snapshots = Window(engine["SOCKET_RATE"]), Window(engine["SOCKET_SNAPSHOT_RATE"])
        self.tenant, self.actor, self.can_act = await self.authenticate()
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        self.group = self.key_group = self.expiry = None
        self.rights_checked_at = time.monotonic()
        if self.tenant is None:
            await self.close(code=4401)
            return
        try:
            session_id = await self.find_session()
        except ReasoningSession.DoesNotExist:
            await self.close(code=4404)
            return
        self.group = events.group_name(session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        if self.key_id is not None:
            # Joined before the accept: a revoke from here on reaches this socket.
            self.key_group = keys.group_name(self.key_id)
            await self.channel_layer.group_add(self.key_group, self.channel_name)
        await self.accept()
        self.close_at_expiry()
        # The snapshot is read after joining the group, so no event can fall between it and the deltas.
        await self.send_snapshot()

    async def disconnect(self, code):
        if self.expiry is not None:
            self.expiry.cancel()
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.key_group:
            await self.channel_layer.group_discard(self.key_group, self.channel_name)

    async def rights_changed(self, message):
        """The key's group heard of a change (keys.revoke): check at once; a key that no longer holds closes it."""
        await self.rights()

    def close_at_expiry(self):
        """A key that expires closes this socket when it does, with or without events to send (checked just after
        the moment, so the database agrees it has passed)."""
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        if self.key_expires_at is None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, (self.key_expires_at - timezone.now()).total_seconds()) + EXPIRY_MARGIN_S
        self.expiry = loop.call_later(delay, lambda: asyncio.ensure_future(self.rights()))

    async def send_snapshot(self):
        """The tree in parts (snapshot.py), each sent while the database thread reads and serialises the next."""
        loop = asyncio.get_running_loop()
        parts = asyncio.Queue()

        def emit(text):
            loop.call_soon_threadsafe(parts.put_nowait, text)

        reading = asyncio.ensure_future(self.read_snapshot(emit))
        reading.add_done_callback(lambda _: loop.call_soon(parts.put_nowait, None))
        while (text := await parts.get()) is not None:
            await self.send(text_data=text)
        self.last_seq = await reading  # re-raises a failed read

    async def reasoning_events(self, message):
        if time.monotonic() - self.rights_checked_at > RIGHTS_RECHECK_S and await self.rights() is None:
            return  # a watcher whose key was revoked (or login closed) since stops receiving within RIGHTS_RECHECK_S
        for event in message["events"]:
            if event["seq"] <= self.last_seq:
                continue  # already in the snapshot this client holds
            self.last_seq = event["seq"]
            await self.send_json(event)

    async def receive(self, text_data=None, bytes_data=None):
        if not self.messages.take():
            await self.close_flooding("messages")
            return
        if text_data is None or len(text_data) > MAX_MESSAGE_BYTES:
            await self.send_error("send one JSON object as text, at most 64 KiB")
            return
        if nesting(text_data) > MAX_DEPTH:
            await self.send_error(f"the message nests deeper than {MAX_DEPTH} levels")
            return
        try:
            content = json.loads(text_data)
        except (ValueError, RecursionError):
            await self.send_error("malformed JSON")
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        action = content.get("action") if isinstance(content, dict) else None
        if not isinstance(action, str) or action not in ACTIONS:
            await self.send_error(f"'action' must be one of: {', '.join(sorted(ACTIONS))}", field="action")
            return
        if action == "snapshot":
            if not self.snapshots.take():
                await self.close_flooding("snapshots")
            elif await self.rights() is not None:
                await self.send_snapshot()
            return
        can_act = await self.rights()
        if can_act is None:
            return
        if action == REVIEW and not self.principal.may(Scope.REVIEW):
            detail = "this account may see the review but not give one: signing off needs the 'review' scope"
            await self.send_error(detail, action=action, scope=Scope.REVIEW.value)
            return
        if action != REVIEW and not can_act:
            # A viewer, or a key without the scope (a member's key narrowed by their role of now).
            detail = "this account may watch sessions but not act on them: steering needs the 'oversee' scope"
            await self.send_error(detail, action=action, scope="oversee")
            return
        if action in NODE_ACTIONS and not isinstance(content.get("node_id"), str):
            await self.send_error(f"'{action}' needs a node_id", action=action, field="node_id")
            return
        try:
            body = BODIES[action].model_validate(_without(content, "action", "node_id")) if action in BODIES else None
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "body"
            await self.send_error(f"{field}: {first['msg'].removeprefix('Value error, ')}", action=action, field=field)
            return
        error = await self.perform(action, content.get("node_id"), body)
        if error:
            await self.send_error(error, action=action)

    async def send_error(self, detail, **fields):
        await self.send_json({"type": "error", "detail": detail, **fields})

    async def close_flooding(self, what):
        count, period = (self.messages if what == "messages" else self.snapshots).rate
        await self.send_error(f"too many {what}: at most {count} in {period} s; closing (code {FLOODING})")
        await self.close(code=FLOODING)

    async def rights(self):
        """Whether the caller may act now (None, and the socket closed, when its key or login no longer holds)."""
        principal = await self.current_principal()
        self.rights_checked_at = time.monotonic()
        if principal is None:
            await self.send_error(f"this key or login is no longer valid; closing (code {GONE})")
            await self.close(code=GONE)
            return None
        self.principal, self.actor, self.can_act = principal, principal.actor, principal.can_act
        if principal.key_expires_at != self.key_expires_at:  # the key's expiry moved since the socket opened
            self.key_expires_at = principal.key_expires_at
            self.close_at_expiry()
        return principal.can_act

    @database_sync_to_async
    def current_principal(self):
        """The caller as the database has it now: the key unrevoked, the user active, logged in and still a member of
        this socket's tenant, with their role of now."""
        if self.user_pk is None:
            principal = access.for_key(self.token, self.address)
        else:
            session = self.scope.get("session")
            key = getattr(session, "session_key", None)
            if key is None or not session.exists(key):  # logged out (or the session expired) since
                return None
            principal = access.for_user(get_user_model().objects.filter(pk=self.user_pk).first())
        return principal if watches(principal) and principal.tenant.pk == self.tenant.pk else None

    @database_sync_to_async
    def perform(self, action, node_id, body):
        """Carry out an action through the same services as the API; a refusal comes back as its message."""
        wait = throttles.take("ACTION_RATE", self.rate_caller)  # the caller's allowance, shared with its API calls
        if wait is not None:
            return f"too many actions from this key or user: retry in {math.ceil(wait)} s"
        with rls.tenant(self.tenant.pk):
            return self.act(action, node_id, body)

    def act(self, action, node_id, body):
        try:
            if action == REVIEW:
                services.review_session(self.tenant, self.session_id, self.principal, body.decision, body.comment)
                return None
            if action in SESSION_ACTIONS:
                SESSION_ACTIONS[action](self.tenant, self.session_id, self.actor)
                return None
            node = selectors.get_node(self.tenant, node_id)
            if str(node.session_id) != str(self.session_id):
                raise ReasoningNode.DoesNotExist
            NODE_ACTIONS[action](self.tenant, node_id, self.actor, body)
        except (ReasoningNode.DoesNotExist, ReasoningSession.DoesNotExist):
            return "no such node in this session" if node_id else "no such session"
        except (services.Conflict, services.Forbidden) as refused:
            return str(refused)
        except services.InvalidInput as invalid:
            return str(invalid)
        return None

    @database_sync_to_async
    def find_session(self):
        with rls.tenant(self.tenant.pk):
            return str(selectors.get_session(self.tenant, self.session_id).id)

    @database_sync_to_async
    def read_snapshot(self, emit):
        with rls.tenant(self.tenant.pk):
            return snapshot_parts(self.tenant, self.session_id, emit)

    @database_sync_to_async
    def authenticate(self):
        """The tenant of the browser session's user, or of the `?token=` API key."""
        token = parse_qs(self.scope.get("query_string", b"").decode(errors="replace")).get("token", [""])[0]
        user = self.scope.get("user")
        principal = access.for_user(user)
        self.user_pk, self.token = (user.pk, None) if principal else (None, token)
        self.address = (self.scope.get("client") or [None])[0]
        principal = principal or access.for_key(token, self.address)
        principal = principal if watches(principal) else None
        self.key_id = principal.key_id if principal else None
        self.rate_caller = throttles.caller(principal)
        self.key_expires_at = principal.key_expires_at if principal else None
        return (principal.tenant, principal.actor, principal.can_act) if principal else (None, None, False)


def watches(principal):
    """A socket is for reading: a caller without the `read` scope (a key made only to run) is not let in."""
    return principal is not None and principal.may(Scope.READ)


def nesting(text):
    """How deep the JSON text's arrays and objects nest, brackets inside strings not counted; read before parsing, so
    a deeply nested message costs one pass over its characters, not a recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _without(content, *names):
    return {k: v for k, v in content.items() if k not in names}
