"""Replies that are valid JSON but no answer break the contract: echoed placeholders, template text, empty
or wordless text, fewer thoughts than asked, scores off the scale."""

import pytest

from reasoning.llm.contracts import ParseError
from reasoning.prompts import format_path, render
from reasoning.strategies.tot import EVALUATE, PROPOSE, SYNTHESIZE


def propose_prompt(k=3):
    return render(
        "tot.propose",
        problem="Rebalance CHF 3m.",
        kind="general",
        rubric="R",
        path=format_path([]),
        k=k,
        step=1,
        depth=3,
    )


def thoughts(*texts):
    return '{"thoughts": [%s]}' % ", ".join('{"thought": "%s"}' % text for text in texts)


def test_an_echoed_placeholder_is_not_a_thought():
    # What a small model copied back from the prompts' earlier JSON examples (the prompts now describe the fields).
    prompt = propose_prompt(k=1) + '\n{"thoughts": [{"thought": "<one next step, at most 80 words>"}]}'
    with pytest.raises(ParseError, match="placeholder"):
        PROPOSE.parse(thoughts("<one next step, at most 80 words>"), {"prompt": prompt, "expect": 1})


@pytest.mark.parametrize("thought", ["...", "", "  "])
def test_a_thought_without_a_word_is_not_a_thought(thought):
    with pytest.raises(ParseError, match="thought"):
        PROPOSE.parse(thoughts(thought, "Sell bonds."), {"prompt": propose_prompt(k=2), "expect": 2})


def test_a_raw_line_break_inside_a_string_is_still_the_models_text():
    parsed, how = SYNTHESIZE.parse('{"answer": "Sell CHF 300,000 of equities,\nthen buy bonds."}')
    assert how == "extracted" and parsed.answer == "Sell CHF 300,000 of equities,\nthen buy bonds."


def test_a_placeholder_shape_is_refused_even_when_the_prompt_is_unknown():
    with pytest.raises(ParseError, match="placeholder"):
        PROPOSE.parse(thoughts("<a thought>"))


@pytest.mark.parametrize("answer", ["{{", "  ", "", "{{answer}}", "?!", "Sell."])
def test_a_final_answer_must_be_prose(answer):
    with pytest.raises(ParseError, match="answer"):
        SYNTHESIZE.parse('{"answer": "%s"}' % answer, {"prompt": "p"})


def test_a_real_answer_and_a_numeric_one_pass():
    assert SYNTHESIZE.parse('{"answer": "Sell CHF 300,000 of equities now."}')[0].answer.startswith("Sell")
    assert SYNTHESIZE.parse('{"answer": "(13 - 9) * (10 - 4) = 24"}')[0].answer == "(13 - 9) * (10 - 4) = 24"


def test_fewer_thoughts_than_asked_are_kept_and_more_are_fine():
    prompt = propose_prompt(k=3)
    fewer, _ = PROPOSE.parse(thoughts("Sell equities.", "Buy bonds."), {"prompt": prompt, "expect": 3})
    assert len(fewer.thoughts) == 2  # fewer children, not a broken reply
    parsed, _ = PROPOSE.parse(thoughts("a one", "b two", "c three", "d four"), {"prompt": prompt, "expect": 3})
    assert len(parsed.thoughts) == 4  # the strategy keeps the first k


@pytest.mark.parametrize("score", ["7", "-0.1", "1.5", "100"])
def test_a_score_off_the_scale_is_a_parse_failure_not_clamped(score):
    with pytest.raises(ParseError, match="score"):
        EVALUATE.parse('{"score": %s, "reason": "fine"}' % score)


def test_a_reason_may_be_empty_but_not_the_placeholder():
    assert EVALUATE.parse('{"score": 0.4}')[0].reason == ""
    prompt = '... {"score": <a number from 0 to 1>, "reason": "<one or two sentences naming the criteria>"}'
    with pytest.raises(ParseError, match="placeholder"):
        EVALUATE.parse('{"score": 0.4, "reason": "<one or two sentences naming the criteria>"}', {"prompt": prompt})
