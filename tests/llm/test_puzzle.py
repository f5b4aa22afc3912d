"""The offline model on Game of 24: exact at noise 0, wrong at rate ε the ways real models are, and never a rescue.

Replies go through the real contract prompts and parsers (offline_answers.answer); no Django and no network.
"""

import csv
import json
from pathlib import Path
from random import Random

import pytest

from reasoning.llm import game24
from reasoning.llm.offline.answers import answer
from reasoning.llm.offline.puzzle import Player, judge_exactly
from reasoning.prompts import format_path, parse, render

ROOT = Path(__file__).resolve().parents[2]
PUZZLE = "Game of 24: use 4 9 10 13 to make 24."
CARDS = [4, 9, 10, 13]
GOOD_LINE = ["13 - 9 = 4 (left: 4 4 10)", "10 - 4 = 6 (left: 4 6)", "6 * 4 = 24 (left: 24)"]
DEAD_LINE = ["13 + 10 = 23 (left: 4 9 23)", "23 - 9 = 14 (left: 4 14)", "14 + 4 = 18 (left: 18)"]


def reply(contract, noise=0.0, seed=7, sample=0, **fields):
    fields = {"problem": PUZZLE, "kind": "general", "rubric": "", "path": format_path(fields.pop("steps", []))} | fields
    text = answer(render(contract, **fields), seed, noise, sample)
    parsed, how = parse(contract, text)
    assert how == "strict"
    return parsed


def proposals(steps=(), k=3, noise=0.0, seed=7, step=None):
    step = step or len(steps) + 1
    parsed = reply("tot.propose", noise, seed, steps=list(steps), k=k, step=step, depth=4, proposed="(none)")
    return [t.thought for t in parsed.thoughts]


def puzzles(count):
    with (ROOT / "fixtures" / "game24.csv").open() as handle:
        return [[int(n) for n in row["Puzzles"].split()] for row in csv.DictReader(handle)][900 : 900 + count]


# ---- exact at noise 0 ---------------------------------------------------------------------------------------


def test_the_exact_model_proposes_moves_that_keep_24_reachable_first():
    for cards in puzzles(20):
        problem = f"Game of 24: use {' '.join(map(str, cards))} to make 24."
        first = reply("tot.propose", problem=problem, steps=[], k=3, step=1, depth=4, proposed="(none)").thoughts[0]
        assert game24.reachable(game24.apply_step(game24.board(cards), first.thought)), (cards, first.thought)


def test_fewer_distinct_moves_than_asked_give_fewer_proposals():
    two_left = GOOD_LINE[:2]  # the board is 4 6: four distinct operations
    assert len(set(proposals(two_left, k=8))) == len(proposals(two_left, k=8)) < 8


def test_the_last_step_answers_from_the_lines_own_board():
    assert set(proposals(GOOD_LINE, step=4)) == {"Answer: (10 - (13 - 9)) * 4 = 24"}
    # A line that left 18 has no answer to give: the model says so instead of solving the puzzle afresh.
    assert all("no solution reached" in t for t in proposals(DEAD_LINE, step=4))


def test_the_synthesis_restates_the_line_and_never_rescues_it():
    good = reply("tot.synthesize", steps=GOOD_LINE + ["Answer: (10 - (13 - 9)) * 4 = 24"]).answer
    assert game24.check_answer(good, CARDS)[0]
    dead = reply("tot.synthesize", steps=DEAD_LINE).answer
    assert dead.startswith("No answer") and "18" in dead and "= 24" not in dead
    wrong = reply("tot.synthesize", steps=[*GOOD_LINE, "Answer: (10 + (13 - 9)) * 4 = 24"]).answer
    assert not game24.check_answer(wrong, CARDS)[0]  # the line's own wrong answer, not a fresh correct one


@pytest.mark.parametrize(
    "steps, thought, verdict",
    [
        ([], "13 - 9 = 4 (left: 4 4 10)", "sure"),
        ([], "13 + 10 = 23 (left: 4 9 23)", "impossible"),
        (["13 - 9 = 4 (left: 4 4 10)"], "4 * 6 = 24 (left: 24)", "impossible"),  # 6 is not on the board
        ([], "13 - 9 = 5 (left: 4 5 10)", "impossible"),  # wrong arithmetic
        ([], "Answer: (13 - 9) * (10 - 4) = 24", "sure"),
        ([], "Answer: (13 - 9) * 10 - 4 = 24", "impossible"),
    ],
)
def test_the_exact_judge(steps, thought, verdict):
    assert judge_exactly(CARDS, steps, thought).verdict == verdict
    score = reply("tot.evaluate", steps=steps, thought=thought).score
    assert score > 0.9 if verdict == "sure" else score < 0.1
    assert reply("tot.value", steps=steps, thought=thought).verdict == verdict


# ---- wrong at rate ε, each mistake on its own ---------------------------------------------------------------------


def rate(events):
    events = list(events)
    return sum(events) / len(events)


def test_the_same_prompt_seed_and_sample_give_the_same_reply_and_samples_differ():
    prompt = render("tot.evaluate", problem=PUZZLE, kind="general", rubric="", path="(none)", thought=GOOD_LINE[0])
    assert answer(prompt, 7, 0.5, 1) == answer(prompt, 7, 0.5, 1)
    assert len({answer(prompt, 7, 0.9, s) for s in range(6)}) > 1


def test_judgements_are_guesses_at_the_noise_rate_each_sample_on_its_own():
    guesses = [Player(Random(i), 0.3).judge(CARDS, [], GOOD_LINE[0]).guessed for i in range(2000)]
    assert 0.25 < rate(guesses) < 0.35
    assert rate(Player(Random(i), 0.0).judge(CARDS, [], GOOD_LINE[0]).guessed for i in range(200)) == 0


def test_answers_are_wrong_at_the_noise_rate_and_a_wrong_one_never_checks():
    board = game24.replay(CARDS, GOOD_LINE)
    lines = [line for i in range(500) for line in Player(Random(i), 0.3).answers(board, 3)]
    wrong = [not game24.check_answer(line, CARDS)[0] for line in lines]
    assert 0.25 < rate(wrong) < 0.35


def test_invented_steps_use_a_number_the_board_does_not_hold():
    board = game24.board(CARDS)
    for i in range(200):
        step = Player(Random(i), 1.0).invented_step(board)
        assert judge_exactly(CARDS, [], step).verdict == "impossible", step


def test_proposals_lose_their_order_at_the_noise_rate():
    board = game24.board(CARDS)

    def best_first(noise, seed):
        first = Player(Random(seed), noise).next_steps(board, 1)[0]
        return game24.reachable(game24.apply_step(board, first)) and not game24.step_error(first, board)

    assert rate(best_first(0.0, i) for i in range(200)) == 1
    # Kept in order half the time, not invented half the time: a quarter, plus the lucky shuffles.
    assert 0.2 < rate(best_first(0.5, i) for i in range(1000)) < 0.45


def test_noise_makes_the_search_matter():
    """The exact model's greedy line always reaches 24; at 0.5 the model's own greedy line often does not."""

    def greedy(noise, cards, seed):
        problem = f"Game of 24: use {' '.join(map(str, cards))} to make 24."
        steps = []
        for step in range(1, 5):
            steps.append(
                reply("tot.propose", noise, seed, problem=problem, steps=steps, k=1, step=step, depth=4, proposed="")
                .thoughts[0]
                .thought
            )
        return game24.check_answer(steps[-1], cards)[0]

    cards = puzzles(30)
    assert all(greedy(0.0, c, 7) for c in cards)
    assert rate(greedy(0.5, c, 7) for c in cards) < 0.6


def test_the_noisy_model_is_served_by_litellm_with_several_samples_per_request(settings):
    import asyncio
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    settings.REASONING = {**settings.REASONING, "OFFLINE_LATENCY_MS": 0, "OFFLINE_SEED": 7, "OFFLINE_NOISE": 0.5}
    prompt = render("tot.evaluate", problem=PUZZLE, kind="general", rubric="", path="(none)", thought=GOOD_LINE[0])
    response = asyncio.run(
        litellm.acompletion(model="offline/noisy", messages=[{"role": "user", "content": prompt}], n=3)
    )
    texts = [c.message.content for c in response.choices]
    assert len(texts) == 3 and [json.loads(t)["score"] for t in texts]
    assert texts == [answer(prompt, 7, 0.5, s) for s in range(3)]


# ---- LATS's lines through the same noise as every other strategy's (issue 22, item 4) ---------------------------


def test_a_lats_line_is_complete_only_with_its_answer_line_and_that_line_is_written_noisily():
    value = reply("lats.evaluate", steps=GOOD_LINE[:2], thought=GOOD_LINE[2], step=3, depth=5, reflections="(none)")
    assert not value.is_terminal  # one number left is no answer yet: the next step writes it
    answer_value = reply(
        "lats.evaluate", steps=GOOD_LINE, thought="Answer: (10 - (13 - 9)) * 4 = 24", step=4, depth=5,
        reflections="(none)",
    )
    assert answer_value.is_terminal
    lines = []
    for seed in range(40):
        expanded = reply("lats.expand", noise=0.5, seed=seed, steps=GOOD_LINE, k=2, step=4, depth=5,
                         reflections="(none)", proposed="(none)")
        lines += [t.thought for t in expanded.thoughts]
    assert all(game24.is_answer(line) for line in lines)
    wrong = [line for line in lines if not game24.check_answer(line, CARDS)[0]]
    assert 0.3 < len(wrong) / len(lines) < 0.7  # wrong at the noise rate, as ToT's and the reference's answers are
