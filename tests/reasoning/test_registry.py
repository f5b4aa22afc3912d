"""The strategies registry is the one list of modes (issue 22, item 6): the session's mode field, the API's enums, the
CLI, the explorer's labels and legends and the offline model's puzzle replies all read it, so they cannot drift."""

import json
import re

import pytest
from django.core.management import call_command

from reasoning import strategies
from reasoning.api import api
from reasoning.llm.offline import answers as offline_answers
from reasoning.models import ReasoningSession
from reasoning.modes import LABELS
from reasoning.strategies import AUTO, get_strategy, mode_choices, modes, page_registry
from reasoning.strategies.tot import TreeOfThoughts

pytestmark = pytest.mark.django_db


def test_the_mode_field_offers_the_registrys_modes_with_the_strategies_own_labels():
    for name in ("mode", "requested_mode"):
        field = ReasoningSession._meta.get_field(name)
        assert list(field.choices) == mode_choices()
    labels = dict(ReasoningSession._meta.get_field("mode").choices)
    assert labels["react"] == get_strategy("react").label == "ReAct with tools"  # the model once said "ReAct"
    assert [m for m, _ in mode_choices()] == modes() == [AUTO, *strategies.STRATEGIES]


def test_a_strategy_added_to_the_registry_is_a_choice_and_writes_no_migration(monkeypatch):
    class Planner(TreeOfThoughts):
        name, label = "plan", "A planner"

    # A strategy is its mode in reasoning/modes.py and its class in the registry.
    monkeypatch.setitem(LABELS, "plan", "A planner")
    monkeypatch.setitem(strategies.STRATEGIES, "plan", "tests.reasoning.test_registry.Planner")
    assert ("plan", "A planner") in list(ReasoningSession._meta.get_field("mode").choices)
    call_command("makemigrations", "reasoning", "--check", "--dry-run", verbosity=0)  # SystemExit(1) on a change


def test_the_api_enums_are_the_registrys_modes():
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    for name in ("SessionIn", "ForkIn"):
        mode = components[name]["properties"]["mode"]
        enums = mode.get("enum") or [e for option in mode.get("anyOf", []) for e in option.get("enum", [])]
        assert enums == modes(), name
    listing = next(p for p in schema["paths"]["/api/sessions"]["get"]["parameters"] if p["name"] == "mode")
    found = listing["schema"].get("enum") or [e for o in listing["schema"].get("anyOf", []) for e in o.get("enum", [])]
    assert found == modes()


def test_the_session_page_reads_each_modes_label_and_legend_from_the_registry(client, alice):
    session = ReasoningSession.objects.create(
        tenant=alice.tenant, problem_text="Rebalance a CHF 2m portfolio.", mode="lats", model_primary="offline/sim"
    )
    client.force_login(alice.user)
    html = client.get(f"/sessions/{session.id}/").content.decode()
    embedded = json.loads(re.search(r'<script id="strategies-data" type="application/json">(.*?)</script>', html)[1])
    assert embedded == page_registry()
    assert {e["mode"]: e["label"] for e in embedded} == dict(mode_choices())
    lats = next(e for e in embedded if e["mode"] == "lats")
    assert lats["scale"] == "value" and "visits" in lats["legend"]
    fork_select = html.split('id="fork-mode"', 1)[1].split("</select>")[0]
    offered = re.findall(r'<option value="(\w+)">([^<]+)</option>', fork_select)
    assert offered == mode_choices()
    marks = set(re.findall(r'data-mark="(\w+)"', html))
    assert {m for e in embedded for m in e["legend"]} <= marks  # every legend entry a strategy names is on the page
    assert '<strong id="session-mode">LATS (MCTS)</strong>' in html


def test_every_puzzle_reply_answers_a_contract_a_strategy_declares():
    assert offline_answers.PUZZLE_HANDLERS
    for name in offline_answers.PUZZLE_HANDLERS:
        assert strategies.contract_named(name).name == name
    for mode in ("tot", "lats", "reflexion", "trm"):  # the strategies that play Game of 24
        assert {c.name for c in get_strategy(mode).contracts} <= set(offline_answers.PUZZLE_HANDLERS), mode
