"""Models and migrations: the schema matches the code, keys are stored hashed, rows serialise one way."""

import pytest
from django.core.management import call_command

from reasoning.models import ApiKey, ReasoningNode, ReasoningSession, Rubric, Status
from tests.conftest import SEEDED_KINDS

pytestmark = pytest.mark.django_db


def test_migrations_match_the_models():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_migrations_seed_the_shared_rubrics():
    kinds = set(Rubric.objects.filter(tenant=None).values_list("problem_kind", flat=True))
    assert SEEDED_KINDS <= kinds
    general = Rubric.objects.get(tenant=None, problem_kind="general")
    assert general.criteria.count() >= 3 and "(weight 3)" in general.as_prompt()


def test_an_api_key_is_stored_only_as_a_hash(alice):
    row, plaintext = ApiKey.issue(alice.tenant)
    stored = ApiKey.objects.get(pk=row.pk)
    assert plaintext not in (stored.key_hash, stored.hint) and len(stored.key_hash) == 64
    assert ApiKey.find(plaintext) == stored
    assert ApiKey.find(plaintext + "x") is None and ApiKey.find("") is None
    stored.revoked_at = stored.created_at
    stored.save()
    assert ApiKey.find(plaintext) is None


def test_session_and_node_serialise_with_the_seed_card_fields(alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Plan a transfer.", model_primary="offline/sim"
    )
    node = ReasoningNode.objects.create(
        tenant=alice.tenant, session=session, depth=0, thought="root", model_used="offline/sim"
    )
    s, n = session.to_dict(), node.to_dict()
    assert s["status"] == "queued" and s["budget_usd"] == 0.5 and s["budget_used_usd"] == 0 and s["offline"]
    for field in [
        "problem_kind",
        "problem_text",
        "mode",
        "model_primary",
        "model_fallback",
        "root_node_id",
        "final_answer",
        "final_node_id",
        "started_at",
        "finished_at",
        "triggered_by",
    ]:
        assert field in s
    for field in [
        "parent_id",
        "depth",
        "thought",
        "state",
        "eval_score",
        "visit_count",
        "total_reward",
        "pruned",
        "is_terminal",
        "model_used",
        "latency_ms",
        "cost_usd",
        "created_at",
    ]:
        assert field in n
    assert n["offline"] is True and n["session_id"] == s["id"]


def test_a_final_status_is_left_only_to_reopen_for_a_command():
    for final in ReasoningSession.FINISHED:
        assert ReasoningSession.TRANSITIONS[final] == {Status.QUEUED}
    assert Status.INTERRUPTED in ReasoningSession.TRANSITIONS[Status.RUNNING]
    assert Status.QUEUED in ReasoningSession.TRANSITIONS[Status.INTERRUPTED]  # resumable


def test_the_seed_cards_indexes_exist_in_the_database():
    from django.db import connection

    from reasoning.models import ReasoningCritique, ReasoningEdge

    expected = {
        ReasoningSession: [["tenant_id", "problem_kind"], ["tenant_id", "started_at"]],
        ReasoningNode: [["session_id", "depth"], ["parent_id"]],
        ReasoningEdge: [["session_id"], ["from_node_id"]],
        ReasoningCritique: [["session_id", "attempt_num"]],
    }
    with connection.cursor() as cursor:
        for model, wanted in expected.items():
            constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
            indexed = [c["columns"] for c in constraints.values() if c["index"] or c["unique"]]
            for columns in wanted:
                # An index that starts with these columns serves them (the list's indexes add its ordering).
                assert any(have[: len(columns)] == columns for have in indexed), (
                    f"{model.__name__} lacks an index on {columns}"
                )


def test_every_row_a_user_can_reach_carries_its_tenant():
    from reasoning.models import LLMCall, OverseerAction, ReasoningCritique, ReasoningEdge

    for model in [ReasoningSession, ReasoningNode, ReasoningEdge, ReasoningCritique, LLMCall, OverseerAction, ApiKey]:
        assert model._meta.get_field("tenant").remote_field.model._meta.model_name == "tenant"
