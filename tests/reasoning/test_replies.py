"""Replies that are valid JSON but no answer break the contract: echoed placeholders, template text, empty
or wordless text, fewer thoughts than asked, scores off the scale."""

import json

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


def react_prompt():
    from reasoning.strategies.react import STEP

    return render(STEP.name, problem="Rebalance CHF 3m.", kind="general", rubric="R", facts="(none)", tools="-",
                  trajectory="(none)", tried="(none)", step=2, max_steps=6, k=1)


@pytest.mark.parametrize("thought", ["1", "3,5", "2", "thoughts", "1. thoughts", "3.5 %"])
def test_a_thought_with_no_word_of_prose_is_always_refused(thought):
    """Issue 33: "1", "3,5" and "thoughts" were kept (one scored 0.83) while "2" was refused."""
    with pytest.raises(ParseError, match="not prose"):
        PROPOSE.parse(thoughts(thought), {"prompt": propose_prompt(k=1), "expect": 1})


@pytest.mark.parametrize("thought", ["1. TRIED FROM HERE", "TRIED FROM HERE", "2) STEPS SO FAR", "### CLIENT FACTS"])
def test_a_thought_that_is_the_prompt_s_own_heading_is_refused(thought):
    """Issue 33: a ReAct thought "1. TRIED FROM HERE" was kept as a node, twice."""
    from reasoning.strategies.react import STEP

    reply = json.dumps({"thought": thought, "action": {"tool": "calculate", "args": {"expression": "1+1"}}})
    with pytest.raises(ParseError, match="section header|not prose|markup"):
        STEP.parse(reply, {"prompt": react_prompt()})


def test_short_steps_and_worked_figures_still_pass():
    for text in ("Sell bonds.", "13 - 9 = 4", "Harvest losses from here first.", "Tried: sell"):
        assert PROPOSE.parse(thoughts(text), {"prompt": propose_prompt(k=1), "expect": 1})[0].thoughts[0].thought
