"""Issue 32, item 1: every real model's call is streamed, counted as it arrives and closed at its reservation; what a
server bills past a reservation anyway is settled, recorded per model and shown; a model so marked is reserved at its
worst, and a session that cannot afford that is refused."""

from types import SimpleNamespace

import pytest
from asgiref.sync import sync_to_async

from reasoning.llm.gateway import REPLY_BYTES_PER_TOKEN, Tally, reply_piece_tokens
from reasoning.models import LLMCall, ModelMeter
from reasoning.strategies.tot import EVALUATE
from tests.fake_openai import FakeOpenAI, reply_json, runaway
from tests.llm.test_gateway_faults import GOOD, PRICES, ask_once, gateway_for, ledger, session_on

pytestmark = pytest.mark.django_db(transaction=True)

HIDDEN = 19_859  # the call: reserved for 1,500 tokens, billed this many


def chunk(text=None, index=0, usage=None):
    delta = SimpleNamespace(content=text)
    return SimpleNamespace(choices=[SimpleNamespace(index=index, delta=delta)] if text is not None else [], usage=usage)


def test_an_unknown_tokenizer_is_counted_a_token_a_byte_and_the_piece_past_the_allowance_is_refused():
    tally = Tally("openai/local-alias", allowance=10, exact=False)
    assert tally.take(chunk("abcd")) and tally.take(chunk("éé"))  # 4 + 4 bytes
    assert not tally.take(chunk("xyz"))  # 8 + 3 > 10: the stream is closed here
    got = tally.got()
    assert (got.texts, got.counted, got.stopped, got.reported) == (["abcdéé"], 8, True, False)


def test_a_known_tokenizer_counts_by_the_model_s_own_tokens():
    assert reply_piece_tokens("gpt-4o-mini", " portfolio rebalancing", exact=True) < len(" portfolio rebalancing")
    assert reply_piece_tokens("openai/local", " portfolio rebalancing", exact=False) == len(" portfolio rebalancing")


def test_a_finished_stream_settles_what_the_server_reported_never_less_than_the_pieces_it_sent():
    tally = Tally("openai/local", allowance=1000)
    for piece in ("a", "b", "c"):
        tally.take(chunk(piece))
    tally.take(chunk(usage=SimpleNamespace(prompt_tokens=12, completion_tokens=1)))
    got = tally.got()
    assert (got.texts, got.tokens_in, got.tokens_out, got.reported) == (["abc"], 12, 3, True)


def test_a_stream_of_nothing_is_told_from_an_empty_reply():
    assert Tally("openai/local", 10).got() is None  # no text, no usage: a server that may not stream


def test_samples_are_gathered_by_their_choice_index():
    tally = Tally("openai/local", allowance=100)
    for text, index in (("x", 0), ("y", 1), ("z", 0)):
        tally.take(chunk(text, index))
    assert tally.got(n=2).texts == ["xz", "y"]


async def test_a_server_that_ignores_max_tokens_is_closed_at_the_reservation(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with FakeOpenAI(default=runaway) as server:
        await ask_once(session, gateway_for(session, server.base_url), contract=EVALUATE)
        sent = server.requests[0]
    (call,) = await ledger(session)
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert call.stopped and "closed at its reservation" in call.error
    assert 0 < call.cost_usd <= call.reserved_usd
    # Its tokenizer unknown, the reply is counted a token a byte, and closed at REPLY_BYTES_PER_TOKEN bytes a token.
    most = sent["max_tokens"] * REPLY_BYTES_PER_TOKEN
    written = runaway(sent).payload["choices"][0]["message"]["content"]
    assert call.tokens_out <= most and len(call.reply.encode()) <= most < len(written.encode())
    assert not await ModelMeter.objects.filter(calls_over__gt=0).aexists()


async def test_a_server_billing_hidden_tokens_is_settled_as_billed_recorded_and_reserved_at_its_worst_after(
    alice, models, client
):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="", budget_usd=1.0)
    with FakeOpenAI() as server:
        server.script("primary", [reply_json(GOOD, completion_tokens=HIDDEN), reply_json(GOOD)])
        gateway = gateway_for(session, server.base_url)
        await gateway.ask(EVALUATE, "Score this plan.")
        await gateway.ask(EVALUATE, "Score this plan.")
        await gateway.close()
    first, second = await ledger(session)
    assert first.tokens_out == HIDDEN and first.cost_usd > first.reserved_usd  # what the server reported is paid
    assert "past its reservation" in first.error
    meter = await ModelMeter.objects.aget(model="openai/primary")
    assert (meter.calls_over, meter.worst_tokens_out, meter.marked) == (1, HIDDEN, True)
    assert second.reserved_usd >= first.cost_usd - 1e-12  # the next call reserves the worst the server has shown

    # The API and the page show it; a session that cannot afford the worst call is refused, naming the field.
    await sync_to_async(client.force_login)(alice.user)
    body = (await sync_to_async(client.get)("/api/usage?group_by=model")).json()
    (row,) = body["models"]
    assert (row["model"], row["calls_over"], row["marked"], row["worst_tokens_out"]) == (
        "openai/primary",
        1,
        True,
        HIDDEN,
    )
    assert row["over_usd"] == pytest.approx(first.cost_usd - first.reserved_usd, abs=1e-6)
    refused = await sync_to_async(client.post)(
        "/api/sessions",
        {"problem_text": "Rebalance.", "model_primary": "openai/primary", "budget_usd": 0.01},
        content_type="application/json",
    )
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["field"] == "budget_usd" and error["needs_usd"] == pytest.approx(meter.worst_usd, rel=0.05)
    assert str(HIDDEN) in error["message"]
    taken = await sync_to_async(client.post)(
        "/api/sessions",
        {"problem_text": "Rebalance.", "model_primary": "openai/primary", "budget_usd": 0.5, "mode": "tot"},
        content_type="application/json",
    )
    assert taken.status_code == 201


async def test_a_server_that_cannot_stream_is_asked_again_without_a_stream_and_marked(alice, models):
    models(**{"openai/primary": PRICES})
    session = await session_on(alice, fallback="")
    with FakeOpenAI(streams=False) as server:
        server.default = lambda body: reply_json(GOOD)
        result = await ask_once(session, gateway_for(session, server.base_url))
        assert [r.get("stream", False) for r in server.requests] == [True, False]
    empty, answered = await ledger(session)
    assert result.parsed.score == 0.7 and "NoStream" in empty.error and answered.outcome == "ok"
    meter = await ModelMeter.objects.aget(model="openai/primary")
    assert not meter.streams and meter.marked
    assert await LLMCall.objects.filter(session=session, stopped=True).acount() == 0
