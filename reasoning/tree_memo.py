"""A 304 for an unchanged tree from memory: no database query and no thread hop.

Pollers of a live tree send back its ETag (If-None-Match) over and over, and most of the time nothing changed. The
full answer (reasoning/api.py get_tree) asks the database who the key belongs to and what the session looks like,
on a request thread. Each full answer leaves two facts here, and the ASGI application (config/asgi.py) answers a
matching request on the event loop from them alone:

- `trees`: session id -> (its ETag, its tenant), as the full answer computed it;
- `keys`: a bearer key's SHA-256 -> (its tenant, when the key expires), kept once the key read a tree.

A request is answered here only when the key is known, the session is known, both belong to the same tenant, the
key has not expired and the ETag it sends back is the session's. Anything else (no If-None-Match, a cookie instead
of a key, an unknown key or session, another tenant's session, a changed tree) goes the full way, so this can only
say "not modified", never show or refuse anything.

How it stays true:
- a change this process writes forgets its tree once it commits (events.publish and every save of a session; a bare
  `.update()` of sessions forgets every tree, SessionQuerySet), and a full answer that began before the change
  does not store its older ETag after it (`generation`). The ETag itself follows the seq and the session's row
  (selectors.tree_etag), so these are all the changes it can see;
- a key, member, user or tenant saved or deleted in this process forgets every key;
- what another process writes (the scaled profile's workers and other servers) is seen once the entry is older than
  REASONING["READ_MEMO_S"] (1 s by default): a poller is told of such a change at most that late, and a key
  revoked or a member demoted there is refused at most that late by this door. 0 turns the memo off.
"""

import collections
import hashlib
import re
import threading
import time

from django.conf import settings

TREE_PATH = re.compile(r"^/api/sessions/([0-9a-fA-F-]{32,36})/tree/?$")
MAX_ENTRIES = 20_000  # of each kind: a few MB at most; the oldest go first
# Beside the ETag, the headers a 304 carries for caches (RFC 9110 15.4.5) as the full answer's 304 sends them
# (tests/reasoning/test_tree_memo.py compares the two). The page's security headers are for bodies; a 304 has none.
HEADERS = [(b"cache-control", b"private, no-cache"), (b"vary", b"Cookie")]


class Memo:
    """A bounded map whose entries are believed for READ_MEMO_S after they were stored."""

    def __init__(self):
        self.items = collections.OrderedDict()
        self.lock = threading.Lock()

    def put(self, key, value):
        with self.lock:
            self.items[key] = (time.monotonic(), value)
            self.items.move_to_end(key)
            while len(self.items) > MAX_ENTRIES:
                self.items.popitem(last=False)

    def get(self, key):
        entry = self.items.get(key)
        if entry is None or time.monotonic() - entry[0] >= fresh_for():
            return None
        return entry[1]

    def forget(self, key=None):
        with self.lock:
            if key is None:
                self.items.clear()
            else:
                self.items.pop(key, None)


trees, keys = Memo(), Memo()
_generations = collections.defaultdict(int)  # session id -> how many times its tree was forgotten
_epoch = [0]  # how many times every tree was forgotten


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def fresh_for():
    return float(settings.REASONING.get("READ_MEMO_S", 1.0))


def generation(session_id):
    """Read before a full answer reads the database, handed back to remember(): a change in between wins."""
    return _epoch[0], _generations.get(_canonical(str(session_id)), 0)


def remember(session_id, tenant_id, etag, seen_generation, token=None, key_expires_at=None):
    """What a full answer learnt: the session's ETag, and the key that read it (when a bearer key did)."""
    session_id = str(session_id)
    if seen_generation == (_epoch[0], _generations.get(session_id, 0)):
        trees.put(session_id, (etag, tenant_id))
    if token:
        keys.put(sha256(token), (tenant_id, key_expires_at))


def changed(session_id):
    """The session's tree changed (called once the change is committed)."""
    session_id = str(session_id)
    if len(_generations) > MAX_ENTRIES:  # only trees read in the last moments need theirs; the TTL bounds the rest
        _generations.clear()
    _generations[session_id] += 1
    trees.forget(session_id)


def all_changed():
    """Some sessions' rows changed, which is not known (a bare `.update()`): every tree is asked again."""
    _epoch[0] += 1
    trees.forget()


def keys_changed():
    """Someone's rights may have changed: every key is asked of the database again."""
    keys.forget()


def connect():
    """Saves and deletes in this process forget what they may change, once they commit (ReasoningConfig.ready)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.db.models.signals import post_delete, post_save

    from .models import ApiKey, Membership, ReasoningSession, Tenant

    def session_saved(sender, instance, **kwargs):
        transaction.on_commit(lambda: changed(instance.pk))

    def rights_saved(sender, **kwargs):
        transaction.on_commit(keys_changed)

    for signal in (post_save, post_delete):
        signal.connect(session_saved, sender=ReasoningSession, weak=False, dispatch_uid=f"tree_memo.session.{signal}")
        for model in (ApiKey, Membership, Tenant, get_user_model()):
            signal.connect(rights_saved, sender=model, weak=False, dispatch_uid=f"tree_memo.{model}.{signal}")


def not_modified_headers(scope):
    """The headers of a 304 for this ASGI request, when memory alone can say its tree is unchanged; else None."""
    if scope.get("type") != "http" or scope.get("method") != "GET" or fresh_for() <= 0:
        return None
    match = TREE_PATH.match(scope.get("path", ""))
    if match is None:
        return None
    headers = dict(scope.get("headers") or ())
    token = bearer(headers.get(b"authorization", b"").decode("latin-1"))
    sent = headers.get(b"if-none-match", b"").decode("latin-1")
    if token is None or not sent:
        return None
    key, tree = keys.get(sha256(token)), trees.get(_canonical(match.group(1)))
    if key is None or tree is None:
        return None
    (key_tenant, expires_at), (etag, tree_tenant) = key, tree
    if key_tenant != tree_tenant or (expires_at is not None and expires_at <= time.time()):
        return None
    if not etag_matches(sent, etag):
        return None
    return [(b"etag", etag.encode("latin-1")), *HEADERS]


async def answer(scope, send):
    """Send the 304 when memory can; True when it did (the request is then done)."""
    headers = not_modified_headers(scope)
    if headers is None:
        return False
    await send({"type": "http.response.start", "status": 304, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
    return True


def etag_matches(header, etag):
    """If-None-Match's weak comparison: any listed tag (or *) equal to ours, W/ prefixes ignored."""
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


def bearer(header):
    """The token of an `Authorization: Bearer <token>` header's value, else None (the full answer reads it too)."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _canonical(session_id):
    """The session id as the full answer stores it (a UUID's str): dashes and lower case."""
    hexes = session_id.replace("-", "").lower()
    if len(hexes) != 32:
        return session_id
    return f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"
