"""Declared figures through the whole engine: the offline model declares each amount it writes with its derivation,
the tree JSON (API and socket snapshot) gives each node and the answer its evaluated `figures`, a noisy model's slip
is carried into its declaration and caught there, and an answer with none declared says so in its badge."""

import json
import re
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import override_settings

from config.asgi import application
from reasoning import services
from reasoning.engine import run_session
from reasoning.facts.check import NOT_DECLARED
from reasoning.models import ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)

CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "wealth_cases.json").read_text())["cases"]
CASE = next(c for c in CASES if c["problem_kind"] == "allocation-rebalance")
# a case whose steps derive an amount from a share of another: the figures they declare
SHARED = next(c for c in CASES if any(f["kind"] == "percent" and f.get("base") for f in c["facts"]))
KEYS = {"label", "value", "unit", "derivation", "facts", "ok"}
# what the declared check says of a slip: a figure whose derivation gives another value, or an amount unaccounted for
DECLARED = re.compile(r"declared [\d,.]+, but|neither a declared figure|the wrong way|no rate converts|a share of the")


async def solved(party, model="offline/sim", noise=0.0, depth=2, case=CASE):
    with override_settings(REASONING={**settings.REASONING, "OFFLINE_NOISE": noise}):
        data = SessionIn(
            problem_text=case["problem_text"], problem_kind=case["problem_kind"], mode="tot", model_primary=model,
            params={"depth": depth, "branching": 2, "keep": 1, "value_samples": 1}, budget_usd=5.0,
        )  # fmt: skip
        session = await sync_to_async(services.create_session)(party.tenant, data, submit=False)
        await run_session(session.id)
    return await ReasoningSession.objects.aget(pk=session.id)


async def test_the_tree_and_the_session_carry_each_declared_figure_with_its_facts(alice, client):
    session = await solved(alice)
    tree = (await sync_to_async(client.get)(f"/api/sessions/{session.id}/tree", **alice.auth)).json()
    assert all(isinstance(node["figures"], list) for node in tree["nodes"])
    declared = [f for node in tree["nodes"] for f in node["figures"]]
    assert all(KEYS <= set(f) and f["ok"] for f in declared)
    answer = tree["session"]["figures"]
    assert answer and all(KEYS <= set(f) and f["ok"] for f in answer)
    fact_ids = {f["id"] for f in tree["session"]["facts"]}
    assert all(f["facts"] and set(f["facts"]) <= fact_ids for f in answer)  # each traced back to the client's facts
    assert NOT_DECLARED not in tree["session"]["answer_badge"]
    # the same through a plain websocket client, on its key
    ws = WebsocketCommunicator(application, f"/ws/sessions/{session.id}/?token={alice.key}")
    assert (await ws.connect())[0]
    snapshot = await ws.receive_json_from(timeout=10)
    await ws.disconnect()
    assert snapshot["session"]["figures"] == answer
    assert [f for node in snapshot["nodes"] for f in node["figures"]] == declared


async def test_a_noisy_model_s_slips_are_caught_by_the_declared_figures(alice):
    session = await solved(alice, "offline/noisy", noise=1.0, depth=3, case=SHARED)
    nodes = [n async for n in ReasoningNode.objects.filter(session=session, depth__gt=0)]
    caught = [c for n in nodes for c in n.checks if not c["ok"] and DECLARED.search(c["detail"])]
    assert caught, "every step slipped once, and the declared figures caught none"


async def test_an_answer_without_declared_figures_says_so_in_its_badge(alice):
    session = await solved(alice)
    await ReasoningSession.objects.filter(pk=session.id).aupdate(answer_figures=[])
    session = await ReasoningSession.objects.aget(pk=session.id)
    assert session.to_dict()["answer_badge"].endswith(NOT_DECLARED) or NOT_DECLARED in session.to_dict()["answer_badge"]

