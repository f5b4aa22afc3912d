"""The hand-written hot statements read and write exactly what the ORM would, on SQLite and PostgreSQL alike."""

import pytest
from django.utils import timezone

from reasoning import sql
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(alice):
    return ReasoningSession.objects.create(tenant=alice.tenant, problem_text="Plan it.", budget_usd=2.5)


def test_select_converts_as_the_orm_does(session):
    when = timezone.now()
    root = ReasoningNode.objects.create(
        tenant=session.tenant, session=session, depth=0, thought="r", pruned=True, pruned_at=when
    )
    names = ["id", "pruned", "pruned_at", "stale", "stale_mark", "thought"]
    connection = sql.connection_for(ReasoningNode)
    where = f"{connection.ops.quote_name('session_id')} = %s"
    rows = sql.select(ReasoningNode, names, where, [sql.prep(ReasoningNode, "session", session.id, connection)])
    assert rows == list(ReasoningNode.objects.filter(session=session).values_list(*names))
    assert rows[0][0] == root.id and rows[0][1] is True and rows[0][2] == when and rows[0][3] is False


def test_by_pk_reads_one_row_or_says_it_does_not_exist(session):
    names = ("budget_usd", "budget_used_usd", "budget_reserved_usd")
    assert sql.by_pk(ReasoningSession, names, session.id) == {
        "budget_usd": 2.5,
        "budget_used_usd": 0.0,
        "budget_reserved_usd": 0.0,
    }
    with pytest.raises(ReasoningSession.DoesNotExist):
        sql.by_pk(ReasoningSession, names, "00000000-0000-0000-0000-000000000000")


def test_insert_writes_what_bulk_create_would(session):
    def node(thought):
        return ReasoningNode(
            tenant=session.tenant, session=session, depth=1, thought=thought, state={"proposed": 2, "why": "€ ≥ 5%"}
        )

    def call(purpose):
        return LLMCall(
            tenant=session.tenant, session=session, purpose=purpose, model_requested="m", outcome="ok", cost_usd=0.25
        )

    by_hand, by_orm = [node("a"), node("b")], [node("c")]
    sql.insert(by_hand)
    ReasoningNode.objects.bulk_create(by_orm)
    assert all(not n._state.adding for n in by_hand)
    columns = [f.attname for f in ReasoningNode._meta.concrete_fields if f.attname not in ("id", "thought")]
    stored = {n.thought: n for n in ReasoningNode.objects.filter(session=session)}
    for thought in "ab":
        assert [getattr(stored[thought], c) for c in columns if c != "created_at"] == [
            getattr(stored["c"], c) for c in columns if c != "created_at"
        ]
        assert stored[thought].created_at == next(n.created_at for n in by_hand if n.thought == thought)
    sql.insert([call("tot.evaluate"), call("tot.propose")])
    assert list(LLMCall.objects.filter(session=session).order_by("id").values_list("purpose", "cost_usd")) == [
        ("tot.evaluate", 0.25),
        ("tot.propose", 0.25),
    ]
    assert LLMCall.objects.filter(session=session, id__gt=0).count() == 2  # the database numbered them
