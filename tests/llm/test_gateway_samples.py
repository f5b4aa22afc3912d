"""Samples that are samples: a server that ignores `n` (llama.cpp's, and others) returns one choice where three were
asked; the gateway counts what came back, asks for the missing ones apart (each a ledger row), and from then on asks
that model for samples side by side. A judgement is never labelled with a count it did not get."""

import time

import pytest

from reasoning.llm.gateway import N_SUPPORT
from tests.fake_openai import FakeOpenAI, reply_json, status
from tests.llm.test_gateway_faults import EVALUATE, GOOD, PRICES, PROMPT, ask_once, gateway_for, ledger, session_on

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def forget_what_n_support_was_learnt():
    N_SUPPORT.pop("openai/primary", None)
    yield
    N_SUPPORT.pop("openai/primary", None)


async def test_a_server_that_ignores_n_is_asked_again_for_the_missing_samples(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="", budget_usd=1)
    with FakeOpenAI() as server:
        server.default = lambda body: reply_json(GOOD)  # one choice, whatever n says
        answer = await ask_once(session, gateway_for(session, server.base_url), samples=3)
        first = server.requests[0]
        later = server.requests[1:]
    assert first.get("n") == 3 and len(later) == 2 and all(body.get("n", 1) == 1 for body in later)
    assert len(answer.samples) == 3 and answer.cost_usd == pytest.approx(sum(c.cost_usd for c in await ledger(session)))
    assert len(await ledger(session)) == 3  # each sample a row of the ledger
    assert N_SUPPORT["openai/primary"] is False


async def test_once_learnt_the_samples_are_asked_side_by_side(alice, models):
    models(**{"openai/primary": PRICES})
    N_SUPPORT["openai/primary"] = False
    session = await session_on(alice, fallback="", budget_usd=1)
    with FakeOpenAI() as server:
        server.default = lambda body: reply_json(GOOD)
        answer = await ask_once(session, gateway_for(session, server.base_url), samples=3)
        assert len(server.requests) == 3 and all(body.get("n", 1) == 1 for body in server.requests)
    assert len(answer.samples) == 3


async def test_a_sample_that_cannot_be_had_is_left_out_and_the_count_says_so(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="", budget_usd=1)
    with FakeOpenAI() as server:
        server.script("primary", [reply_json(GOOD)])
        server.default = status(500)  # the server fails after the first reply, on every retry
        answer = await ask_once(session, gateway_for(session, server.base_url), samples=3)
    assert len(answer.samples) == 1


async def test_a_judgement_says_how_many_samples_it_really_holds():
    from reasoning.strategies.reflexion import Reflexion
    from tests.fakes import FakeStore, ScriptedGateway, context

    class OneChoice(ScriptedGateway):  # a model that answers one sample whatever is asked
        async def ask(self, contract, prompt, node_id=None, expect=None, samples=1):
            return await super().ask(contract, prompt, node_id, expect, samples=1)

    gateway = OneChoice({"reflexion.evaluate": {"score": 0.9, "reason": "Sound."}})
    store = FakeStore()
    strategy = Reflexion(context(Reflexion, gateway, store))
    root = await store.add_root("problem", {})
    [node] = await store.add_children(root, [{"thought": "a step"}], None)
    verified = await strategy.verify(node)
    assert verified.state["verified"] == 1 and "mean of" not in verified.eval_reason


def slow_reply(body):
    time.sleep(0.3)  # the siblings are still in flight when the budget refuses one of them
    return reply_json(GOOD, prompt_tokens=400, completion_tokens=80)


@pytest.mark.parametrize("learnt", [False, True])
async def test_samples_refused_by_the_budget_leave_no_money_reserved_once_the_gateway_closes(alice, models, learnt):
    # The CI failure: a sample refused by the budget raised at once while its siblings were still waiting for the
    # one-slot server; they finished after the gateway had closed, and their reservation stayed held for good.
    models(**{"openai/primary": {**PRICES, "max_parallel_requests": 1}})
    if learnt:
        N_SUPPORT["openai/primary"] = False
    session = await session_on(alice, fallback="", budget_usd=1)
    with FakeOpenAI(default=slow_reply) as server:
        gateway = gateway_for(session, server.base_url)
        _, model, price = gateway.routes[0]
        # A long prompt: the one request for three samples (its reply reserved at 4 bytes a token, the alias's
        # tokenizer unknown) is covered, and then only one of the two samples asked apart, not both.
        prompt = PROMPT + "\nContext: " + "the client's portfolio and its history. " * 1000
        messages = [{"role": "user", "content": prompt}]
        one = gateway.reservation_usd(EVALUATE, messages, price, 1, model)
        three = gateway.reservation_usd(EVALUATE, messages, price, 3, model)
        session.budget_usd = 2.5 * one if learnt else three + 0.5 * one  # room for two samples' worst, not three
        await session.asave(update_fields=["budget_usd"])
        answer = await ask_once(session, gateway, samples=3, prompt=prompt)
    await session.arefresh_from_db()
    rows = await ledger(session)
    assert 1 <= len(answer.samples) < 3 and any(row.outcome == "budget" for row in rows)
    assert session.budget_reserved_usd == pytest.approx(0, abs=1e-12)
    assert session.budget_used_usd == pytest.approx(sum(row.cost_usd for row in rows), abs=1e-12)
