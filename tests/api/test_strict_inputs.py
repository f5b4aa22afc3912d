"""Strict types at every door (issue 14, item 12): a count is a JSON integer and an amount a JSON number, never a
string or true, in the top-level fields, in `params`, in a fork and on the socket; and the OpenAPI document states
every bound, the budget's maximum included."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from reasoning import services
from reasoning.models import ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db

PROBLEM = "Should the family sell the CHF 5m stake in the family firm to a strategic buyer?"


def post(client, party, path, body):
    return client.post(path, data=json.dumps(body), content_type="application/json", **party.auth)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"params": {"branching": True}}, "params.branching"),
        ({"params": {"depth": "3"}}, "params.depth"),
        ({"params": {"depth": 3.0}}, "params.depth"),
        ({"mode": "lats", "params": {"exploration": "1.5"}}, "params.exploration"),
        ({"mode": "lats", "params": {"threshold": False}}, "params.threshold"),
        ({"budget_usd": "5"}, "budget_usd"),
        ({"budget_usd": True}, "budget_usd"),
        ({"budget_usd": 50.01}, "budget_usd"),
    ],
)
def test_a_loosely_typed_value_is_a_422_naming_its_field(client, alice, body, field):
    response = post(client, alice, "/api/sessions", {"problem_text": PROBLEM, "mode": "tot", **body})
    assert response.status_code == 422, response.content
    assert field in [e["field"] for e in response.json()["detail"]]
    assert not ReasoningSession.objects.exists()


def test_numbers_written_as_json_numbers_are_accepted(client, alice, monkeypatch):
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    body = {"problem_text": PROBLEM, "mode": "lats", "budget_usd": 5, "params": {"exploration": 2, "iterations": 3}}
    response = post(client, alice, "/api/sessions", body)
    assert response.status_code == 201, response.content
    assert response.json()["budget_usd"] == 5 and response.json()["params"]["exploration"] == 2


@pytest.mark.parametrize(
    "body, field",
    [({"budget_usd": "1"}, "budget_usd"), ({"params": {"depth": "2"}}, "params.depth")],
)
def test_a_fork_is_as_strict(client, alice, body, field):
    session = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    response = post(client, alice, f"/api/sessions/{session.id}/fork", {"node_id": str(root.id), **body})
    assert response.status_code == 422, response.content
    assert field in [e["field"] for e in response.json()["detail"]]


@pytest.mark.parametrize("k", ["3", True, 3.5])
def test_expand_takes_k_as_an_integer_only(client, alice, k):
    session = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    response = post(client, alice, f"/api/nodes/{root.id}/expand", {"k": k})
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "k"


def test_expand_takes_a_whole_float_as_the_integer_json_schema_says_it_is(client, alice, monkeypatch):
    """Issue 23, item 10: {"k": 5.0} is a valid JSON Schema integer, and got a 422."""
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    session = services.create_session(alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    ReasoningSession.objects.filter(pk=session.pk).update(root_node=root, status="solved")
    response = post(client, alice, f"/api/nodes/{root.id}/expand", {"k": 5.0})
    assert response.status_code == 202, response.content
    schema = client.get("/api/openapi.json").json()["components"]["schemas"]["ExpandIn"]["properties"]["k"]
    assert schema["type"] == "integer"


@pytest.mark.django_db(transaction=True)
async def test_the_socket_takes_k_as_an_integer_only(alice):
    from tests.explorer.test_consumers import connect

    data = SessionIn(problem_text=PROBLEM, mode="tot")
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    root = await ReasoningNode.objects.acreate(session=session, tenant=alice.tenant, depth=0, thought=PROBLEM)
    ws = connect(session.id, token=alice.key)
    assert (await ws.connect())[0]
    await ws.receive_json_from()
    await ws.send_json_to({"action": "expand", "node_id": str(root.id), "k": "3"})
    reply = await ws.receive_json_from()
    assert reply["type"] == "error" and reply["field"] == "k"
    await ws.disconnect()


# ---- the OpenAPI document states every bound ---------------------------------------------------


def bounds_missing(schema, where, components):
    """Where a number or integer lacks a minimum and a maximum, or a string both a length limit and a set of values."""
    if "$ref" in schema:
        return bounds_missing(components[schema["$ref"].rsplit("/", 1)[1]], where, components)
    missing = []
    for key in ("anyOf", "oneOf", "allOf"):
        for variant in schema.get(key, []):
            missing += bounds_missing(variant, where, components)
    kind = schema.get("type")
    if kind in ("number", "integer"):
        if not ({"minimum", "exclusiveMinimum"} & set(schema) and {"maximum", "exclusiveMaximum"} & set(schema)):
            missing.append(where)
    elif kind == "string" and not ({"maxLength", "enum", "format", "const"} & set(schema)):
        missing.append(where)
    elif kind == "array":
        missing += bounds_missing(schema.get("items", {}), f"{where}[]", components)
        if "maxItems" not in schema:
            missing.append(where)
    for name, prop in schema.get("properties", {}).items():
        missing += bounds_missing(prop, f"{where}.{name}", components)
    return missing


def test_every_input_the_openapi_document_describes_states_its_bounds(client):
    doc = client.get("/api/openapi.json").json()
    components = doc["components"]["schemas"]
    missing = []
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    missing += bounds_missing(parameter["schema"], f"{method} {path} ?{parameter['name']}", components)
            for content in operation.get("requestBody", {}).get("content", {}).values():
                missing += bounds_missing(content["schema"], f"{method} {path}", components)
    assert missing == []


def test_the_budget_maximum_is_in_the_document(client):
    components = client.get("/api/openapi.json").json()["components"]["schemas"]
    for name in ("SessionIn", "ForkIn"):
        number = next(v for v in components[name]["properties"]["budget_usd"]["anyOf"] if v.get("type") == "number")
        assert number["maximum"] == settings.REASONING["MAX_BUDGET_USD"] == 50
