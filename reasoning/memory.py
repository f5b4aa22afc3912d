"""The firm's memory of judgements (strategies.base.Memory): a state judged in one session is not paid for again in the
next, as the Tree of Thoughts reference keeps its value cache for its whole run, across puzzles.

Only a state the task defines whatever the problem is kept (a Game of 24 board's numbers left; CaseCheck.standalone),
and only for sessions that ask it alike: the same tenant (row-level security keeps it there on PostgreSQL too), the
same primary and fallback model, problem kind and rubric as shown to the judge, and the key the strategy gives (its
name, how it judges, how many samples, the state). A rubric edited in the admin starts a new memory. The admin lists
what is kept; deleting rows only costs calls.

A replay (reasoning/replay.py) answers from what its session recalled as recorded (RecordedMemory), never from the
memory as it stands, so a later session's judgement cannot change what the replay finds.
"""

import logging

from django.conf import settings
from django.db import IntegrityError

from .models import RememberedJudgement, sha256
from .strategies.base import judgement_marks, stored_judgement

log = logging.getLogger(__name__)

KEPT = ("eval_score", "eval_reason", "is_terminal")  # a judgement's own fields; its marks ride in `state`


def enabled():
    return settings.REASONING.get("SHARED_JUDGEMENTS", True)


def taken(fields):
    """What of a judge's fields is the judgement (not its cost, nor the node's other state, nor where it came from)."""
    marks = judgement_marks(fields.get("state") or {})
    marks.pop("remembered", None)
    return {name: fields[name] for name in KEPT if name in fields} | {"state": marks}


class FirmMemory:
    def __init__(self, session, rubric):
        self.tenant_id, self.session_id = session.tenant_id, session.id
        parts = (session.model_primary, session.model_fallback or "(no fallback)", session.problem_kind or "(no kind)")
        self.scope = " · ".join((*parts, f"rubric {sha256(rubric)[:16]}"))

    def digest(self, key):
        return sha256(f"{self.scope}\n{key}")

    async def recall(self, key):
        row = await (
            RememberedJudgement.objects.filter(tenant_id=self.tenant_id, digest=self.digest(key))
            .values("fields", "session_id", "node_id")
            .afirst()
        )
        if row is None:
            return None
        return f"{row['session_id'] or ''}/{row['node_id']}", row["fields"]

    async def keep(self, key, node, fields):
        try:
            await RememberedJudgement.objects.acreate(
                tenant_id=self.tenant_id,
                digest=self.digest(key),
                scope=self.scope[:600],
                key=key,
                fields=taken(fields),
                session_id=self.session_id,
                node_id=str(node.id),
            )
        except IntegrityError:  # another session kept this state meanwhile: the first one kept stands
            pass


class RecordedMemory:
    """What a session recalled, as its nodes recorded it: a replay's memory, which keeps nothing."""

    def __init__(self, recalled):
        self.recalled = recalled  # memory key -> (where, fields)

    @classmethod
    def of_nodes(cls, nodes):
        recalled = {}
        for node in nodes:
            remembered = (node.state or {}).get("remembered")
            if remembered and remembered.get("key"):
                where = f"{remembered.get('session', '')}/{remembered.get('node', '')}"
                recalled.setdefault(remembered["key"], (where, taken(stored_judgement(node))))
        return cls(recalled)

    async def recall(self, key):
        return self.recalled.get(key)

    async def keep(self, key, node, fields):
        pass
