"""The JSON API: who may call it, what it stores, and a clear 4xx for everything a client can get wrong."""

import json

import pytest

from reasoning.models import ReasoningSession, Rubric
from tests.conftest import SEEDED_KINDS

pytestmark = pytest.mark.django_db

GOOD = {"problem_text": "Should the family sell the CHF 5m stake in the family firm to a strategic buyer?"}


def post(client, path, body, party=None, raw=False):
    headers = party.auth if party else {}
    data = body if raw else json.dumps(body)
    return client.post(path, data=data, content_type="application/json", **headers)


def test_it_creates_a_queued_session_with_defaults(client, alice):
    response = post(client, "/api/sessions", GOOD, alice)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "queued" and body["problem_kind"] == "general"
    assert body["mode"] == "tot" and body["requested_mode"] == "auto" and "auto" in body["mode_reason"]
    assert body["budget_usd"] == 0.5 and body["model_primary"] == "offline/sim" and body["offline"] is True
    assert body["params"] == {
        "branching": 3,
        "depth": 4,
        "keep": 2,
        "value_samples": 3,
        "value_mode": "score",
        "answer_width": 0,
        "value_by": "line",
        "answer_checker": False,
        "check_facts": True,
    }
    assert ReasoningSession.objects.get(pk=body["id"]).tenant == alice.tenant


def test_auto_mode_stores_its_reason(client, alice):
    body = post(client, "/api/sessions", {**GOOD, "problem_kind": "investment-thesis"}, alice).json()
    assert body["mode"] == "tot" and body["mode_reason"].startswith("auto: tot for investment-thesis, because")


def test_it_requires_a_key(client, alice):
    assert post(client, "/api/sessions", GOOD).status_code == 401
    assert client.get("/api/sessions").status_code == 401
    bad = client.get("/api/sessions", HTTP_AUTHORIZATION="Bearer rk_not-a-real-key")
    assert bad.status_code == 401 and "detail" in bad.json()
    assert ReasoningSession.objects.count() == 0


def test_it_answers_401_not_a_csrf_error_to_clients_that_enforce_csrf(alice):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert post(strict, "/api/sessions", GOOD).status_code == 401
    assert post(strict, "/api/sessions", GOOD, alice).status_code == 201


def test_it_accepts_the_browser_session_with_its_csrf_token(alice):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice.user)
    assert browser.get("/api/sessions").status_code == 200
    assert post(browser, "/api/sessions", GOOD).status_code == 403  # a cookie without the CSRF token
    browser.get("/accounts/login/")  # sets the csrftoken cookie
    token = browser.cookies["csrftoken"].value
    response = browser.post(
        "/api/sessions", data=json.dumps(GOOD), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201


def test_it_hides_another_tenants_session(client, alice, bob):
    session_id = post(client, "/api/sessions", GOOD, alice).json()["id"]
    assert client.get(f"/api/sessions/{session_id}", **bob.auth).status_code == 404
    assert client.get(f"/api/sessions/{session_id}/tree", **bob.auth).status_code == 404
    assert client.get(f"/api/sessions/{session_id}", **alice.auth).status_code == 200
    assert client.get("/api/sessions", **bob.auth).json()["count"] == 0
    assert client.get("/api/sessions/not-a-uuid", **alice.auth).status_code == 404


def test_it_lists_and_filters(client, alice):
    post(client, "/api/sessions", GOOD, alice)
    post(client, "/api/sessions", {**GOOD, "problem_kind": "wealth-transfer"}, alice)
    listing = client.get("/api/sessions?problem_kind=wealth-transfer", **alice.auth).json()
    assert listing["count"] == 1 and listing["items"][0]["problem_kind"] == "wealth-transfer"
    assert client.get("/api/sessions?status=queued&limit=1", **alice.auth).json()["count"] == 2
    assert client.get("/api/sessions?status=bogus", **alice.auth).status_code == 422


def test_the_tree_of_a_new_session_is_empty(client, alice):
    session_id = post(client, "/api/sessions", GOOD, alice).json()["id"]
    tree = client.get(f"/api/sessions/{session_id}/tree", **alice.auth).json()
    assert tree["session"]["id"] == session_id and tree["nodes"] == [] and tree["edges"] == []


def test_the_tree_lists_forks_and_asks_for_them_only_when_there_are_some(client, alice, django_assert_num_queries):
    source = ReasoningSession.objects.get(pk=post(client, "/api/sessions", GOOD, alice).json()["id"])
    path = f"/api/sessions/{source.id}/tree"
    client.get(path, **alice.auth)  # the key's last use is stamped, and this version of the tree rendered once
    with django_assert_num_queries(3):  # the key, the session with whether it has forks (none, so no more), its facts
        assert client.get(path, **alice.auth).json()["session"]["forks"] == []
    fork = post(client, "/api/sessions", {**GOOD, "problem_text": "The same, forked."}, alice).json()["id"]
    ReasoningSession.objects.filter(pk=fork).update(forked_from=source)
    assert client.get(path, **alice.auth).json()["session"]["forks"] == [fork]
    with django_assert_num_queries(4):  # and the forks' ids, now that there are some
        assert client.get(path, **alice.auth).json()["session"]["forks"] == [fork]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"problem_text": ""}, "problem_text"),
        ({"problem_text": "   \n  "}, "problem_text"),
        ({"problem_text": "x" * 100_000}, "problem_text"),
        ({}, "problem_text"),
        ({**GOOD, "mode": "magic"}, "mode"),
        ({**GOOD, "problem_kind": "horoscopes"}, "problem_kind"),
        ({**GOOD, "problem_kind": "../etc"}, "problem_kind"),
        ({**GOOD, "budget_usd": -1}, "budget_usd"),
        ({**GOOD, "budget_usd": 0}, "budget_usd"),
        ({**GOOD, "budget_usd": 1e9}, "budget_usd"),
        ({**GOOD, "budget_usd": "lots"}, "budget_usd"),
        ({**GOOD, "params": {"branching": 1000}}, "params.branching"),
        ({**GOOD, "params": {"depth": -2}}, "params.depth"),
        ({**GOOD, "params": {"temperature": 2}}, "params.temperature"),
        ({**GOOD, "params": "deep"}, "params"),
        ({**GOOD, "model_primary": "gpt 4; rm -rf"}, "model_primary"),
        ({**GOOD, "budget": 1}, "budget"),
    ],
)
def test_bad_bodies_get_a_422_naming_the_field_and_store_nothing(client, alice, body, field):
    response = post(client, "/api/sessions", body, alice)
    assert response.status_code == 422, response.content
    assert field in [e["field"] for e in response.json()["detail"]]
    assert ReasoningSession.objects.count() == 0


@pytest.mark.parametrize("raw", ["{not json", "", "[1, 2]", "null", '"text"'])
def test_malformed_json_gets_a_4xx(client, alice, raw):
    response = post(client, "/api/sessions", raw, alice, raw=True)
    assert 400 <= response.status_code < 500
    assert "detail" in response.json()
    assert ReasoningSession.objects.count() == 0


def test_rubrics_are_readable_by_all_and_writable_by_admins(client, alice, db):
    from tests.conftest import make_party

    admin = make_party("carol", admin=True)
    kinds = {r["problem_kind"] for r in client.get("/api/rubrics", **alice.auth).json()}
    assert SEEDED_KINDS <= kinds
    rubric = {"problem_kind": "pension-gap", "name": "Pension gap", "criteria": [{"name": "Gap closed", "weight": 2}]}
    assert post(client, "/api/rubrics", rubric, alice).status_code == 403
    assert post(client, "/api/rubrics", rubric, admin).status_code == 201
    assert post(client, "/api/rubrics", rubric, admin).status_code == 409
    assert post(client, "/api/rubrics", {**rubric, "criteria": []}, admin).status_code == 422
    assert Rubric.objects.filter(problem_kind="pension-gap", tenant=admin.tenant).count() == 1
    # the new kind is usable by its tenant only
    assert post(client, "/api/sessions", {**GOOD, "problem_kind": "pension-gap"}, admin).status_code == 201
    assert post(client, "/api/sessions", {**GOOD, "problem_kind": "pension-gap"}, alice).status_code == 422


def test_the_openapi_docs_are_served(client):
    assert client.get("/api/docs").status_code == 200
    schema = client.get("/api/openapi.json").json()
    assert "/api/sessions" in schema["paths"] and "/api/sessions/{session_id}/tree" in schema["paths"]


def test_the_openapi_document_gives_params_a_schema_per_mode(client, alice):
    from reasoning.strategies import strategy_labels

    schema = client.get("/api/openapi.json", **alice.auth).json()
    params = schema["components"]["schemas"]["SessionIn"]["properties"]["params"]
    titles = [variant["title"] for variant in params["anyOf"]]
    assert titles == [f"{mode}: {label}" for mode, label in strategy_labels()]
    tot = params["anyOf"][0]["properties"]
    assert tot["branching"]["maximum"] == 8 and tot["branching"]["default"] == 3
    variants = {v["title"].split(":")[0]: v["properties"] for v in params["anyOf"]}
    assert tot["value_samples"]["maximum"] == 5 and tot["value_mode"]["enum"] == ["score", "categorical"]
    assert {"consistency", "rollout_samples", "rollout_depth", "value_samples"} <= set(variants["lats"])
    assert variants["reflexion"]["memory"]["default"] == 3


@pytest.mark.parametrize(
    "body, field",
    [
        ({**GOOD, "problem_text": "Plan the sale\x00 of CHF 2m of shares."}, "problem_text"),
        ({**GOOD, "budget_usd": True}, "budget_usd"),
        ({**GOOD, "budget_usd": "0.5"}, "budget_usd"),  # strict: a number is a JSON number (issue 14, item 12)
    ],
)
def test_nul_characters_and_booleans_are_refused_by_name(client, alice, body, field):
    response = post(client, "/api/sessions", body, alice)
    if field is None:
        assert response.status_code == 201
        return
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == field
    assert ReasoningSession.objects.count() == 0


def test_a_nul_in_a_list_filter_is_a_422_naming_it(client, alice):
    response = client.get("/api/sessions", {"problem_kind": "general\x00"}, **alice.auth)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "problem_kind"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_that_is_not_json_is_a_415(client, alice, content_type):
    response = client.post("/api/sessions", json.dumps(GOOD), content_type=content_type, **alice.auth)
    assert response.status_code == 415 and "application/json" in response.json()["detail"]
    assert ReasoningSession.objects.count() == 0


def test_an_oversized_body_is_a_json_413(client, alice):
    body = json.dumps({**GOOD, "problem_text": "x" * 2_000_000})
    response = client.post("/api/sessions", body, content_type="application/json", **alice.auth)
    assert response.status_code == 413 and "larger than" in response.json()["detail"]


def test_pages_have_a_documented_maximum(client, alice):
    assert client.get("/api/sessions", {"limit": 100}, **alice.auth).status_code == 200
    response = client.get("/api/sessions", {"limit": 101}, **alice.auth)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "limit"


def test_the_openapi_document_says_what_the_server_does(client, alice):
    schema = client.get("/api/openapi.json", **alice.auth).json()
    problem = schema["components"]["schemas"]["SessionIn"]["properties"]["problem_text"]
    assert problem["minLength"] == 10
    create = schema["paths"]["/api/sessions"]["post"]["responses"]
    assert {"201", "400", "401", "413", "415", "422"} <= set(create)


def test_the_api_docs_need_no_internet(client, alice):
    client.force_login(alice.user)
    html = client.get("/api/docs").content.decode()
    assert "cdn." not in html and "swagger-ui-bundle.js" in html


def test_an_offset_past_any_list_is_a_422_not_a_500(client, alice):
    response = client.get("/api/sessions", {"offset": 378060992295065026560}, **alice.auth)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "offset"


@pytest.mark.parametrize("field", ["model_primary", "model_fallback"])
def test_a_model_litellm_cannot_place_is_refused_at_creation(client, alice, field, monkeypatch):
    # Created, not run: a background run would call a hosted model this machine cannot reach, past the test's end.
    monkeypatch.setattr("reasoning.services.submit_to_runner", lambda session_id: None)
    response = post(client, "/api/sessions", {**GOOD, field: "0"}, alice)
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == field
    assert "no provider" in response.json()["detail"][0]["message"]
    assert ReasoningSession.objects.count() == 0
    ok = post(client, "/api/sessions", {**GOOD, field: "openai/gpt-4o-mini"}, alice)
    assert ok.status_code == 201
