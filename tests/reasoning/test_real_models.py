"""Sessions on real (OpenAI-compatible) models: priced or refused at creation, labelled by the models that actually
wrote their nodes, their whole ledger readable through the API, and failures shown as one plain line."""

import itertools
import json

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession
from reasoning.schemas import SessionIn
from tests.fake_openai import FakeOpenAI, free_port, offline_reply, status

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = "Rebalance a CHF 3m portfolio drifted to 70% equities back to 60/40 within a year, tax-aware."
PRICES = {"input": 1.0, "output": 2.0}
SMALL_TOT = {"depth": 2, "branching": 2, "keep": 1}


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-a-local-server")


def configure(settings, **models):
    settings.REASONING = {**settings.REASONING, "MODELS": models, "LLM_RETRIES": 0}


async def start(party, **fields):
    data = SessionIn(problem_text=PROBLEM, mode="tot", params=fields.pop("params", SMALL_TOT), **fields)
    return await sync_to_async(services.create_session)(party.tenant, data, submit=False)


def post(client, party, body):
    return client.post("/api/sessions", data=json.dumps(body), content_type="application/json", **party.auth)


# ---- prices at creation --------------------------------------------------------------------


def test_a_model_nobody_prices_is_refused_naming_its_field(client, alice):
    for field in ("model_primary", "model_fallback"):
        response = post(client, alice, {"problem_text": PROBLEM, field: "openai/my-local-model"})
        assert response.status_code == 422, response.content
        detail = response.json()["detail"][0]
        assert detail["field"] == field and "no price is known for 'openai/my-local-model'" in detail["message"]
        assert "REASONING_MODELS" in detail["message"]
    assert not ReasoningSession.objects.exists()


@pytest.mark.parametrize("name", ["0", "nonsense-model", "openai"])
def test_a_fallback_litellm_cannot_place_is_refused_at_creation_not_failed_later(client, alice, name):
    response = post(client, alice, {"problem_text": PROBLEM, "model_fallback": name})
    assert response.status_code == 422, response.content
    assert response.json()["detail"][0]["field"] == "model_fallback"


def test_a_configured_default_model_without_a_price_is_refused_too(client, alice, settings):
    settings.REASONING = {**settings.REASONING, "MODEL_PRIMARY": "openai/unpriced"}
    response = post(client, alice, {"problem_text": PROBLEM})
    assert response.status_code == 422 and response.json()["detail"][0]["field"] == "model_primary"


def test_a_session_keeps_the_prices_it_was_created_with_and_says_where_they_came_from(
    client, alice, settings, monkeypatch
):
    # Created, not run: a run in the background would call models no test serves and outlive the test's database.
    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)
    configure(settings, **{"openai/local": PRICES})
    body = post(
        client, alice, {"problem_text": PROBLEM, "model_primary": "openai/local", "model_fallback": "gpt-4o-mini"}
    )
    assert body.status_code == 201, body.content
    prices = body.json()["prices"]
    assert prices["openai/local"] == {"input": 1.0, "output": 2.0, "source": "setting"}
    assert prices["gpt-4o-mini"] == {"input": 0.15, "output": 0.6, "source": "litellm"}


async def test_allowed_unpriced_models_are_counted_at_the_stated_default_price(alice, settings, monkeypatch):
    settings.REASONING = {**settings.REASONING, "ALLOW_UNPRICED": True, "DEFAULT_PRICE": {"input": 3.0, "output": 5.0}}
    with FakeOpenAI(default=offline_reply) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.base_url)
        session = await start(alice, model_primary="openai/unpriced", params={"depth": 1, "branching": 2, "keep": 1})
        assert session.prices == {"openai/unpriced": {"input": 3.0, "output": 5.0, "source": "default"}}
        await run_session(session.id)
    await session.arefresh_from_db()
    calls = [c async for c in LLMCall.objects.filter(session=session)]
    assert session.status == "solved", session.error
    assert all(c.cost_usd == pytest.approx((c.tokens_in * 3.0 + c.tokens_out * 5.0) / 1e6) for c in calls)
    assert session.budget_used_usd == pytest.approx(sum(c.cost_usd for c in calls)) and session.budget_used_usd > 0


# ---- labels: which models wrote the nodes --------------------------------------------------


async def test_a_mixed_session_labels_each_node_with_the_model_that_wrote_it(alice, settings, client):
    configure(settings, **{"openai/primary": PRICES})
    settings.REASONING["ALLOW_OFFLINE_FALLBACK"] = True  # the operator allows the simulator to stand in
    proposals = itertools.count()

    def flaky(body):  # a bad request is not retried: every second proposal goes to the fallback at once
        if "tot.propose" in body["messages"][-1]["content"] and next(proposals) % 2 == 1:
            return status(400, message="context too long")
        return offline_reply(body)

    with FakeOpenAI(default=flaky) as server:
        settings.REASONING["MODELS"]["openai/primary"]["api_base"] = server.base_url
        session = await start(alice, model_primary="openai/primary", model_fallback="offline/sim")
        await run_session(session.id)
    await session.arefresh_from_db()
    nodes = [n async for n in ReasoningNode.objects.filter(session=session, depth__gt=0)]
    by_model = {m: sum(n.model_used == m for n in nodes) for m in ("openai/primary", "offline/sim")}
    assert session.status == "solved", session.error
    assert by_model["openai/primary"] and by_model["offline/sim"] and sum(by_model.values()) == len(nodes)

    body = await sync_to_async(client.get)(f"/api/sessions/{session.id}", **alice.auth)
    used = {u["model"]: u for u in body.json()["models_used"]}
    assert used["openai/primary"] == {
        "model": "openai/primary",
        "nodes": by_model["openai/primary"],
        "role": "primary",
        "offline": False,
    }
    assert used["offline/sim"]["role"] == "fallback" and used["offline/sim"]["offline"] is True
    assert body.json()["offline"] is False  # the session runs on a real model; some nodes came from the simulator
    assert body.json()["partly_offline"] is True  # ...and says so (issue 24: the page hid its offline note)
    assert body.json()["answer_model"] in {"openai/primary", "offline/sim"}
    assert body.json()["answer_offline"] == (body.json()["answer_model"] == "offline/sim")
    await sync_to_async(client.force_login)(alice.user)
    page = (await sync_to_async(client.get)(f"/sessions/{session.id}/")).content.decode()
    note = page.split('id="answer-offline"', 1)[1].split("</p>", 1)[0]
    assert " hidden" not in note.split(">", 1)[0] and "Written in part by the offline model" in note
    assert ">partly offline</span>" in page and body.json()["fallback_wrote_all"] is False
    tree = (await sync_to_async(client.get)(f"/api/sessions/{session.id}/tree", **alice.auth)).json()
    assert {n["model_used"] for n in tree["nodes"] if n["depth"]} == {"openai/primary", "offline/sim"}
    assert all(n["offline"] == (n["model_used"] == "offline/sim") for n in tree["nodes"] if n["depth"])


async def test_the_simulator_stands_in_for_a_real_model_only_where_the_operator_allows_it(alice, settings, client):
    configure(settings, **{"openai/primary": {**PRICES, "api_base": free_port()}})
    body = {"problem_text": PROBLEM, "model_primary": "openai/primary", "model_fallback": "offline/sim"}
    refused = await sync_to_async(post)(client, alice, body)
    assert refused.status_code == 422, refused.content
    detail = refused.json()["detail"][0]
    assert detail["field"] == "model_fallback" and "REASONING_ALLOW_OFFLINE_FALLBACK" in detail["message"]
    # A session made before the operator withdrew it: its real model alone answers, and the server is down.
    session = await ReasoningSession.objects.acreate(
        tenant=alice.tenant,
        problem_text=PROBLEM,
        mode="tot",
        params=SMALL_TOT,
        model_primary="openai/primary",
        model_fallback="offline/sim",
        prices={"openai/primary": {**PRICES, "source": "setting"}, "offline/sim": {"input": 0.15, "output": 0.6}},
    )
    await run_session(session.id)
    await session.arefresh_from_db()
    assert session.status == "failed" and not session.partly_offline
    assert not await ReasoningNode.objects.filter(session=session, model_used="offline/sim").aexists()
    assert not await LLMCall.objects.filter(session=session, model_used="offline/sim").aexists()


async def test_a_refused_connection_is_reported_as_what_it_is(alice, settings):
    down = free_port()
    configure(settings, **{"openai/primary": {**PRICES, "api_base": down}})
    session = await start(alice, model_primary="openai/primary")
    await run_session(session.id)
    await session.arefresh_from_db()
    errors = {c.error async for c in LLMCall.objects.filter(session=session, outcome="error")}
    port = down.rsplit(":", 1)[1].split("/")[0]
    assert errors and all(e.startswith(f"ConnectionRefused: nothing answers at 127.0.0.1:{port}") for e in errors)
    assert "InternalServerError" not in session.error and "(500)" not in session.error


# ---- failures: marked on the node, one plain line, the search goes on ----------------------


async def test_a_call_that_fails_for_good_marks_its_node_and_the_search_goes_on(alice, settings, client):
    configure(settings, **{"openai/primary": PRICES})
    evaluations = itertools.count()

    def one_evaluation_fails(body):
        prompt = body["messages"][-1]["content"]
        if "tot.evaluate" in prompt and next(evaluations) == 0:
            return status(400, message="the first evaluation is refused")
        return offline_reply(body)

    with FakeOpenAI(default=one_evaluation_fails) as server:
        settings.REASONING["MODELS"]["openai/primary"]["api_base"] = server.base_url
        session = await start(alice, model_primary="openai/primary")
        await run_session(session.id)
    await session.arefresh_from_db()
    marked = [n async for n in ReasoningNode.objects.filter(session=session).exclude(parse_error="")]
    assert session.status == "solved", session.error
    assert len(marked) == 1 and marked[0].parse_error.startswith("model failed on the evaluation: every model failed (1 attempts)")
    assert "first evaluation is refused" in marked[0].parse_error and "\n" not in marked[0].parse_error


async def test_a_session_whose_models_all_fail_ends_failed_with_one_plain_line(alice, settings, client):
    configure(settings, **{"openai/primary": {**PRICES, "api_base": free_port()}})
    session = await start(alice, model_primary="openai/primary")
    await run_session(session.id)
    await session.arefresh_from_db()
    assert session.status == "failed"
    for path in (
        f"/api/sessions/{session.id}",
        f"/api/sessions/{session.id}/tree",
        f"/api/sessions/{session.id}/calls",
    ):
        text = (await sync_to_async(client.get)(path, **alice.auth)).content.decode()
        assert "Traceback" not in text and 'File \\"' not in text and "site-packages" not in text, path
    await sync_to_async(client.force_login)(alice.user)
    page = (await sync_to_async(client.get)(f"/sessions/{session.id}/")).content.decode()
    assert "Traceback" not in page and "site-packages" not in page
    assert "\n" not in session.error and len(session.error) < 600


# ---- the ledger through the API --------------------------------------------------------------


def test_the_ledger_is_paged_filtered_by_node_and_scoped_to_the_tenant(client, alice, bob):
    session = services.solve(
        alice.tenant, SessionIn(problem_text=PROBLEM, mode="tot", params={"depth": 1, "branching": 2, "keep": 1})
    )
    url = f"/api/sessions/{session.id}/calls"
    first = client.get(url, {"limit": 2}, **alice.auth).json()
    assert first["count"] == LLMCall.objects.filter(session=session).count() == 4  # propose, 2 evaluations, answer
    assert len(first["items"]) == 2 and first["items"][0]["purpose"] == "tot.propose"
    call = first["items"][0]
    assert call["prompt"].startswith("### CONTRACT\ntot.propose") and json.loads(call["reply"])["thoughts"]
    assert call["model_used"] == "offline/sim" and call["outcome"] == "ok" and call["attempt"] == 1
    node = ReasoningNode.objects.filter(session=session, depth=1).first()
    mine = client.get(url, {"node_id": str(node.id)}, **alice.auth).json()
    assert "tot.evaluate" in [c["purpose"] for c in mine["items"]]
    assert {c["node_id"] for c in mine["items"]} == {str(node.id)}
    assert client.get(url, **bob.auth).status_code == 404
    bad = client.get(url, {"node_id": "not-a-uuid"}, **alice.auth)
    assert bad.status_code == 422 and "node_id" in json.dumps(bad.json())
    assert client.get(url, {"limit": 1000}, **alice.auth).status_code == 422


# ---- the simulator's answer from a real model's steps (issue 30) ---------------------------------------------------

JUNK = "I am proud of my family and of everything we have built together over the years."
REAL = "Sell CHF 300k of equities to bring the CHF 3m portfolio back to 60/40, the smallest gains first."


def a_real_model_that_dies_at_the_answer(steps):
    """Proposes `steps` one per level, scores each 0.8, and is gone when the answer is asked for (a bad request goes to
    the fallback at once)."""
    from tests.fake_openai import reply_json

    def serve(body):
        prompt = body["messages"][-1]["content"]
        if "tot.synthesize" in prompt:
            return status(400, message="the server was killed")
        if "tot.propose" in prompt:
            step = int(prompt.split("### STEP NUMBER\n", 1)[1].split()[0])
            return reply_json({"thoughts": [{"thought": steps[step - 1]}]})
        return reply_json({"score": 0.8, "reason": "Sound."})

    return serve


async def fallback_answer(alice, settings, steps):
    configure(settings, **{"openai/primary": PRICES})
    settings.REASONING["ALLOW_OFFLINE_FALLBACK"] = True
    with FakeOpenAI(default=a_real_model_that_dies_at_the_answer(steps)) as server:
        settings.REASONING["MODELS"]["openai/primary"]["api_base"] = server.base_url
        params = {"depth": len(steps), "branching": 1, "keep": 1, "value_samples": 1}
        session = await start(alice, model_primary="openai/primary", model_fallback="offline/sim", params=params)
        await run_session(session.id)
    await session.arefresh_from_db()
    return session


async def test_the_offline_fallback_never_writes_a_junk_step_into_its_plan(alice, settings):
    session = await fallback_answer(alice, settings, [REAL, JUNK])
    assert session.answer_model == "offline/sim" and session.partly_offline
    plan = session.final_answer.split("Sequence of actions:", 1)[1].split("Key numbers:", 1)[0]
    assert "CHF 300k of equities" in plan and "proud" not in session.final_answer
    assert session.status == "solved" and session.answer_state == "checked", session.error


async def test_a_line_of_junk_gets_no_plan_from_the_offline_fallback_and_the_session_is_not_solved(alice, settings):
    session = await fallback_answer(alice, settings, [JUNK, JUNK.replace("proud", "glad")])
    assert session.status == "failed" and session.termination_reason == "synthesis_failed"
    assert session.answer_partial and "Sequence of actions" not in session.final_answer
    assert session.to_dict()["answer_state"] != "checked"  # no green badge on the line standing in


async def test_a_session_whose_every_node_the_fallback_wrote_is_called_offline_not_partly(alice, settings, client):
    """Issue 33: a session whose every node came from the offline fallback was called "partly offline"."""
    configure(settings, **{"openai/primary": PRICES})
    settings.REASONING["ALLOW_OFFLINE_FALLBACK"] = True
    with FakeOpenAI(default=lambda body: status(400, message="context too long")) as server:
        settings.REASONING["MODELS"]["openai/primary"]["api_base"] = server.base_url
        session = await start(alice, model_primary="openai/primary", model_fallback="offline/sim")
        await run_session(session.id)
    body = (await sync_to_async(client.get)(f"/api/sessions/{session.id}", **alice.auth)).json()
    assert body["partly_offline"] is True and body["fallback_wrote_all"] is True, body["status"]
    await sync_to_async(client.force_login)(alice.user)
    page = (await sync_to_async(client.get)(f"/sessions/{session.id}/")).content.decode()
    assert ">offline (the fallback wrote every node)</span>" in page and ">partly offline</span>" not in page
    note = page.split('id="answer-offline"', 1)[1].split("</p>", 1)[0]
    assert "Written by the offline model" in note
