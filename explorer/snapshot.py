"""The socket's snapshot in parts: the tree in the format the API and the page share, cut into messages of at most
PART_BYTES, so no message nears Daphne's 1 MB default limit however large the tree.

The first message is `{"type": "snapshot", "seq", "session", "node_count", "nodes", "edges", "critiques",
"actions", "last"}`; while `last` is false, `{"type": "snapshot.part", "seq", "nodes", "edges", "critiques",
"actions", "last"}` follow. Concatenating the lists of every part gives exactly `selectors.tree_snapshot`; a small
tree is one message with `"last": true`. Everything is read in one transaction, so no event falls between the
parts, and each part is sent while the next is read and serialised.
"""

import json

from django.db import transaction

from reasoning import selectors

PART_BYTES = 256 * 1024  # of JSON text (ASCII: send_json escapes the rest), well under Daphne's 1 MB per message
KINDS = ("nodes", "edges", "critiques", "actions")


def _records(session):
    """(kind, row) in the order and format of selectors.tree()."""
    for node in session.nodes.order_by("created_at", "depth").iterator(chunk_size=500):
        yield "nodes", node.to_dict()
    for edge in session.edges.all():
        yield "edges", edge.to_dict()
    for critique in session.critiques.all():
        yield "critiques", critique.to_dict()
    for action in selectors.actions_of(session):
        yield "actions", action.to_dict()


def _text(head, lists, last):
    body = ",".join(f'"{kind}":[{",".join(lists[kind])}]' for kind in KINDS)
    return f'{head[:-1]},{body},"last":{"true" if last else "false"}}}'


def snapshot_parts(tenant, session_id, emit, part_bytes=PART_BYTES):
    """Read the session's tree in one transaction and call emit(text) with each part's JSON text, in order.

    Returns the seq the snapshot reflects. ReasoningSession.DoesNotExist for another tenant's or a missing session.
    """
    with transaction.atomic():
        session = selectors.get_session(tenant, session_id)
        node_count = session.nodes.count()
        head = json.dumps(
            {
                "type": "snapshot",
                "seq": session.seq,
                "session": session.to_dict(with_forks=True),
                "node_count": node_count,
            }
        )
        following = json.dumps({"type": "snapshot.part", "seq": session.seq})
        empty = {kind: [] for kind in KINDS}
        lists, size = dict(empty), len(_text(head, empty, last=False))  # the part's keys and brackets count too
        for kind, row in _records(session):
            text = json.dumps(row)
            if size + len(text) > part_bytes and any(lists.values()):
                emit(_text(head, lists, last=False))
                head, lists, size = following, {k: [] for k in KINDS}, len(_text(following, empty, last=False))
            lists[kind].append(text)
            size += len(text) + 1
        emit(_text(head, lists, last=True))
        return session.seq
