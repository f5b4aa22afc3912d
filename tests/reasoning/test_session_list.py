"""Listing sessions: a page costs the same queries whatever the tenant holds, and only its rows are serialised."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from reasoning.models import ReasoningSession

pytestmark = pytest.mark.django_db


def add_sessions(party, n, same_time=False, **fields):
    start = timezone.now()
    ReasoningSession.objects.bulk_create(
        ReasoningSession(
            tenant=party.tenant,
            problem_text=f"Session {i}: rebalance a CHF 2m portfolio.",
            mode="tot",
            model_primary="offline/sim",
            started_at=start if same_time else start - timedelta(seconds=i),
            **fields,
        )
        for i in range(n)
    )


@pytest.fixture
def serialised(monkeypatch):
    """The ids of the sessions whose to_dict() ran."""
    ids, to_dict = [], ReasoningSession.to_dict

    def counting(self, *args, **kwargs):
        ids.append(str(self.pk))
        return to_dict(self, *args, **kwargs)

    monkeypatch.setattr(ReasoningSession, "to_dict", counting)
    return ids


def queries_for(client, party, query):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/sessions", query, **party.auth)
    assert response.status_code == 200, response.content
    rows = [q["sql"] for q in queries if q["sql"].startswith('SELECT "reasoning_reasoningsession"."id"')]
    assert len(rows) == 1 and "LIMIT" in rows[0]  # the page is sliced by the database
    return len(queries), response.json()


def test_a_page_costs_the_same_queries_for_3_sessions_as_for_60(client, alice, serialised):
    add_sessions(alice, 3)
    queries_for(client, alice, {"limit": 2})  # the key's first use is stamped (a write); the next minute's are not
    few, body = queries_for(client, alice, {"limit": 2})
    assert body["count"] == 3 and len(body["items"]) == 2
    add_sessions(alice, 57)
    serialised.clear()
    many, body = queries_for(client, alice, {"limit": 2})
    assert body["count"] == 60 and len(body["items"]) == 2
    assert many == few
    assert serialised == [item["id"] for item in body["items"]]  # no row outside the page became a dict


def test_filters_and_offsets_are_applied_in_the_database(client, alice, bob, serialised):
    add_sessions(alice, 30, status="solved")
    add_sessions(alice, 30, status="queued", problem_kind="wealth-transfer")
    add_sessions(bob, 5, status="solved")
    _, body = queries_for(client, alice, {"status": "solved", "limit": 10, "offset": 25})
    assert body["count"] == 30 and len(body["items"]) == 5
    assert {item["status"] for item in body["items"]} == {"solved"}
    _, body = queries_for(client, alice, {"problem_kind": "wealth-transfer", "limit": 100})
    assert body["count"] == 30 and len(serialised) == 5 + 30
    started = [item["started_at"] for item in body["items"]]
    assert started == sorted(started, reverse=True)  # newest first


def test_pages_of_sessions_started_at_the_same_moment_neither_overlap_nor_skip(client, alice):
    add_sessions(alice, 7, same_time=True)
    seen = [
        item["id"]
        for offset in range(7)
        for item in client.get("/api/sessions", {"limit": 1, "offset": offset}, **alice.auth).json()["items"]
    ]
    assert sorted(seen) == sorted(str(pk) for pk in ReasoningSession.objects.values_list("pk", flat=True))


def test_the_session_page_costs_the_same_queries_whatever_the_tenant_holds(client, alice):
    client.force_login(alice.user)
    url = reverse("explorer:session_list")
    add_sessions(alice, 3)
    with CaptureQueriesContext(connection) as few:
        assert client.get(url).status_code == 200
    add_sessions(alice, 60)
    with CaptureQueriesContext(connection) as many:
        response = client.get(url, {"page": 2})
    assert response.status_code == 200 and response.context["page_obj"].paginator.count == 63
    assert len(many) == len(few)
    rows = [q["sql"] for q in many if q["sql"].startswith('SELECT "reasoning_reasoningsession"."id"')]
    assert len(rows) == 1 and "LIMIT" in rows[0]


@pytest.mark.parametrize("q", ["Meier succession", "succession meier", "  MEIER   Succession ", "family plan"])
def test_a_search_matches_every_word_in_any_order_across_the_case_name_and_the_problem(client, alice, q):
    """Issue 33: "Meier succession" found nothing where the case is "Meier family" and the problem says succession."""
    meier = ReasoningSession.objects.create(
        tenant=alice.tenant, case_name="Meier family", problem_text="Plan the succession of the family business.",
        mode="tot", model_primary="offline/sim",
    )
    ReasoningSession.objects.create(  # one word only: not a match
        tenant=alice.tenant, case_name="Keller", problem_text="Plan the succession of a farm.", mode="tot",
        model_primary="offline/sim",
    )
    found = client.get("/api/sessions", {"q": q}, **alice.auth).json()["items"]
    assert [s["id"] for s in found] == [str(meier.id)]
    client.force_login(alice.user)
    page = client.get(reverse("explorer:session_list"), {"q": q}).content.decode()
    assert "Meier family" in page and "Keller" not in page
