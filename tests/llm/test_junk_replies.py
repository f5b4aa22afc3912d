"""A weak model's junk is refused, never taken for reasoning: the exact strings SmolLM2-135M wrote in a trial, each
served by the scripted OpenAI-compatible server on loopback through the whole gateway (litellm's client path, the
contract, the re-ask), and a sound reply to the same prompt still accepted."""

import json

import pytest

from reasoning.llm.contracts import Unparseable
from reasoning.prompts import format_path, render
from reasoning.strategies.tot import PROPOSE, SYNTHESIZE
from tests.fake_openai import FakeOpenAI, reply_json
from tests.llm.test_gateway_faults import PRICES, ask_once, gateway_for, session_on

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEM = (
    "Rebalance a CHF 12m portfolio that drifted to 72% equities against a 60/40 target, minimising realised gains."
)
RUBRIC = (
    "Allocation rebalance: a plan that restores the target.\n"
    "- Soundness (weight 3): Facts, arithmetic and rules are right.\n"
    "- Tax efficiency (weight 2): Realises as little gain as the target allows, using cash flows and losses first."
)
STEPS = ["Sell CHF 1.44m of equities, the lots with the smallest gains first."]
FIELDS = {"problem": PROBLEM, "kind": "allocation-rebalance", "rubric": RUBRIC}
PROPOSE_PROMPT = render(PROPOSE, **FIELDS, path=format_path(STEPS), k=2, step=2, depth=4, proposed="(none)")
SYNTHESIZE_PROMPT = render(SYNTHESIZE, **FIELDS, path=format_path(STEPS))
THOUGHT_JUNK = [
    "2.thought: Value error, is template text,",  # our own re-ask message, echoed
    "Your last response was refused.",  # our re-ask, in other words (the real-model bench)
    "Reply with JSON only, no prose around it",  # the prompt's output instructions
    "Realises as little gain as the target allows, using cash flows and losses first.",  # the rubric, copied
]
FORM_JUNK = [  # what SmolLM2-135M proposed as steps in the real-model bench (docs/BENCHMARKS.md)
    ",*.0,1,",
    ".1,047 },\n3 of 3\nThis is the first step.",
]
DRIFTED = ["The new employee has just been hired.", "They will have to wait another month to build a new office."]
ANSWER_JUNK = [
    ",.}, a JSON file ```json {",
    "]\n\n### CONTENTS\nThe code is ready to be used in the application.",
    "Meadowermoney_Selling. 10,872,654.39",
    "The 45-360 triangle is a mathematical concept used in geometry and trigonometry.",
    # The problem given back as its answer (SmolLM2's "empty" answers, docs/BENCHMARKS.md; issue 24).
    "Rebalance the CHF 12m portfolio that drifted to 72% equities against a 60/40 target, minimising realised gains.",
]


async def asked(alice, contract, prompt, replies, expect=None):
    session = await session_on(alice, fallback="")
    with FakeOpenAI() as server:
        server.script("primary", [reply_json(r) for r in replies])
        return await ask_once(
            session, gateway_for(session, server.base_url), contract=contract, prompt=prompt, expect=expect
        )


@pytest.mark.parametrize("junk", THOUGHT_JUNK)
async def test_a_thought_that_echoes_the_prompt_or_our_messages_is_refused(alice, models, junk):
    models(**{"openai/primary": PRICES})
    bad = {"thoughts": [{"thought": junk}, {"thought": junk}]}
    with pytest.raises(Unparseable, match="echoes"):
        await asked(alice, PROPOSE, PROPOSE_PROMPT, [bad, bad], expect=2)


@pytest.mark.parametrize("junk", ANSWER_JUNK)
async def test_an_answer_that_says_nothing_about_the_problem_is_refused(alice, models, junk):
    models(**{"openai/primary": PRICES})
    with pytest.raises(Unparseable, match="markup|says nothing about the problem|restates the problem"):
        await asked(alice, SYNTHESIZE, SYNTHESIZE_PROMPT, [{"answer": junk}] * 2)


@pytest.mark.parametrize("junk", FORM_JUNK)
async def test_a_step_of_punctuation_or_json_fragments_is_refused(alice, models, junk):
    models(**{"openai/primary": PRICES})
    bad = {"thoughts": [{"thought": junk}]}
    with pytest.raises(Unparseable, match="punctuation|markup"):
        await asked(alice, PROPOSE, PROPOSE_PROMPT, [bad, bad], expect=1)


async def test_an_answer_that_follows_steps_drifted_off_the_problem_is_refused(alice, models):
    # The steps share the answer's words, the problem none: a line that lost the thread does not carry its answer.
    models(**{"openai/primary": PRICES})
    prompt = render(SYNTHESIZE, **FIELDS, path=format_path(DRIFTED))
    junk = "The new employee has just been hired, they are to take 2 weeks off from work as a gift for their new boss."
    with pytest.raises(Unparseable, match="says nothing about the problem"):
        await asked(alice, SYNTHESIZE, prompt, [{"answer": junk}] * 2)


async def test_junk_then_a_sound_reply_is_one_answer_with_both_attempts_in_the_ledger(alice, models):
    models(**{"openai/primary": PRICES})
    good = "Rebalance back to 60/40 by selling CHF 1.44m of equities, the lots with the smallest gains first."
    answer = await asked(alice, SYNTHESIZE, SYNTHESIZE_PROMPT, [{"answer": ANSWER_JUNK[2]}, {"answer": good}])
    assert answer.parsed.answer == good and [r.parse_ok for r in answer.records] == [False, True]
    assert "says nothing about the problem" in answer.records[0].error


async def test_a_step_quoting_a_few_words_of_the_rubric_is_still_a_step(alice, models):
    models(**{"openai/primary": PRICES})
    quoted = {
        "thoughts": [
            {
                "thought": "Use cash flows and losses first: direct the CHF 400k of coupons and the harvested losses "
                "against the equity overweight before any sale, so realised gains stay near zero this year."
            },
            {"thought": "Sell the remaining CHF 1.04m of equities from the lots with the highest cost basis."},
        ]
    }
    answer = await asked(alice, PROPOSE, PROPOSE_PROMPT, [quoted], expect=2)
    assert len(answer.parsed.thoughts) == 2


def test_a_puzzle_answer_is_about_its_problem():
    from reasoning.strategies.replies import AnswerOut

    prompt = render(SYNTHESIZE, problem="Game of 24: use 4 9 10 13 to make 24.", kind="general", rubric="", path="")
    parsed = AnswerOut.model_validate(
        json.loads('{"answer": "Answer: (13 - 9) * (10 - 4) = 24"}'), context={"prompt": prompt}
    )
    assert parsed.answer.startswith("Answer")


async def test_a_refused_call_names_its_first_refusal_first_and_calls_the_last_the_last(alice, models, settings):
    """Issue 33: the error line's "first failure" named the last of the refusals."""
    models(**{"openai/primary": PRICES})
    settings.REASONING = {**settings.REASONING, "PARSE_RETRIES": 2}
    first = {"thoughts": [{"thought": "1"}]}
    echo = {"thoughts": [{"thought": "Your last response was refused."}]}
    with pytest.raises(Unparseable) as refused:
        await asked(alice, PROPOSE, PROPOSE_PROMPT, [first, echo, echo], expect=1)
    said = str(refused.value)
    assert "not prose" in said.split("(the first of")[0], said
    assert "(the first of 3 refused replies; the last: " in said and "echoes" in said.split("the last:")[1], said
