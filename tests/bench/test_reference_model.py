"""The offline model behind the Tree of Thoughts reference code's prompts (bench/reference_model.py) answers the
prompt's own question: the last-step judgement of the answer the prompt ends with, not of its first few-shot
example (a judge that called every right answer impossible made the reference's ranking of its five outputs
random: its own one answer scored 8% where its best of five scored 63%)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from reference_model import reply  # noqa: E402

# The shape of the reference's last-step value prompt: a few judged examples, then the answer to judge.
EXAMPLES = (
    "Use numbers and basic arithmetic operations (+ - * /) to obtain 24. Given an input and an answer, give a "
    "judgement (sure/impossible) if the answer is correct.\n"
    "Input: 4 4 6 8\nAnswer: (4 + 8) * (6 - 4) = 24\nJudge: \nsure\n"
    "Input: 4 4 6 8\nAnswer: (4 + 8) * 6 - 4 = 24\nJudge: \nimpossible\n"
)


def last_step(answer, cards="1 2 4 7"):
    return f"{EXAMPLES}Input: {cards}\nAnswer: {answer}\nJudge:"


def test_the_last_step_judgement_is_of_the_answer_the_prompt_ends_with():
    assert reply(last_step("(7 + (4 + 1)) * 2 = 24"), seed=7, noise=0.0) == "sure"
    assert reply(last_step("((7 + 1) + 4) * 3 = 24"), seed=7, noise=0.0) == "impossible"  # 3 is not a card


def test_the_value_prompt_judges_the_numbers_left():
    prompt = "Evaluate if given numbers can reach 24 (sure/likely/impossible)\n10 14\n10 + 14 = 24\nsure\n4 6"
    assert reply(prompt, seed=7, noise=0.0).splitlines()[-1] == "sure"
    assert reply(prompt[:-3] + "1 1", seed=7, noise=0.0).splitlines()[-1] == "impossible"
