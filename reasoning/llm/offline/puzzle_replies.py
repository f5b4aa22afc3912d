"""The offline model's replies to every strategy's contracts when the problem is a Game of 24 puzzle.

Each reply reads the prompt (offline_prompt.Prompt) and asks the puzzle player (puzzle.py), which errs at the
model's noise rate; each strategy's offline module maps its contracts to these (its PUZZLE_HANDLERS). A line's answer
and its synthesis come from the board that line left, never from a fresh solve.
"""

import re
from dataclasses import replace
from fractions import Fraction

from reasoning.llm import game24
from .prompt import parse_steps
from .puzzle import judge_exactly

FINAL_STEP = 4  # three operations leave one number; the fourth step states the answer


def numbers(p):
    return game24.puzzle_numbers(p.problem)


def board_after(p):
    return game24.replay(numbers(p), p.steps)


def proposals(p, player):
    """k next steps, or at the last step (one number left, or step 4) k answer lines from the line's own board."""
    items = board_after(p)
    if len(items) == 1 or p.step >= FINAL_STEP:
        lines = player.answers(items, p.k)
    else:
        lines = player.next_steps(items, p.k, avoid=set(parse_steps(p.sections.get("ALREADY PROPOSED", ""))))
    return {"thoughts": [thought(line, p) for line in lines]}


def thought(text, p):
    after = game24.replay(numbers(p), p.steps + [text])
    left = [v.numerator if v.denominator == 1 else str(v) for v, _ in after]
    summary = text.removeprefix("Answer: ") if game24.is_answer(text) else game24.left_text(after)[1:-1]
    return {"thought": text, "state": {"left": left, "summary": summary}}


def score(p, player):
    judgement = player.judge(numbers(p), p.steps, p.last_step)
    return {"score": judgement.score(player.rng), "reason": judgement.reason}


def verdict(p, player):
    """The categorical judgement (sure / likely / impossible), as the Tree of Thoughts paper asks for it."""
    judgement = player.judge(numbers(p), p.steps, p.last_step)
    return {"verdict": judgement.verdict, "reason": judgement.reason}


def judged_state(p, player):
    """The judgement of a position alone (the POSITION section): an answer line against the cards, or the numbers
    left; the steps that led there are not shown, so a number a step made up is not seen."""
    state = p.sections.get("POSITION", "")
    if game24.is_answer(state):
        return player.judge(numbers(p), [], state)
    left = state.split(":", 1)[-1].split()
    try:
        return player.judge_board([(Fraction(n), n) for n in left])
    except (ValueError, ZeroDivisionError):
        return player.judge(numbers(p), [], state)


def state_score(p, player):
    judgement = judged_state(p, player)
    return {"score": judgement.score(player.rng), "reason": judgement.reason}


def state_verdict(p, player):
    judgement = judged_state(p, player)
    return {"verdict": judgement.verdict, "reason": judgement.reason}


def synthesis(p, player):
    """The line's own answer, restated; a line that did not reach 24 says so (no rescue)."""
    cards = numbers(p)
    for text in reversed(p.steps):
        if game24.is_answer(text):
            return {"answer": text if text.startswith("Answer:") else f"Answer: {text}"}
    items = board_after(p)
    if len(items) == 1 and items[0][0] == game24.TARGET:
        return {"answer": f"Answer: {game24.strip_outer(items[0][1])} = 24"}
    where = game24.left_text(items) if p.steps else f"the cards {' '.join(map(str, cards))}"
    return {"answer": f"No answer: the chosen steps do not reach 24 from {where}."}


# LATS: a value that also says whether the line is complete, and reflections on failed lines.


def lats_value(p, player):
    """A value, and whether the line is complete: only an answer line completes it (one number left is not yet an
    answer: the next step writes it, through the same noisy answers() as every other strategy's lines)."""
    return score(p, player) | {"is_terminal": game24.is_answer(p.last_step)}


def lats_state_value(p, player):
    """A position's value, and whether it is a complete solution: only an answer line is."""
    return state_score(p, player) | {"is_terminal": game24.is_answer(p.sections.get("POSITION", ""))}


def lats_reflection(p, player):
    after = game24.replay(numbers(p), p.steps + [p.last_step])
    first = (p.steps or [p.last_step])[0]
    return {
        "reflection": f"The line ended at {game24.left_text(after)} without making 24. Its first step, "
        f"{first.split(' (')[0]}, led nowhere; next time keep results that still combine with the remaining "
        "numbers, and check after every step that 24 can be reached from what is left."
    }


# Reflexion: whole attempts, judged by their answer, critiqued at the step where 24 became unreachable.


def attempt(p, player):
    """A whole attempt, or the rest of one from the steps so far (a fork's path): from the board they left."""
    count = max(1, min(6, _first_int(p.sections.get("STEPS"), 3)))
    avoid = failed_first_steps(p.sections.get("MEMORY", "")) if not p.steps else set()
    lines, final = player.attempt(numbers(p), avoid=avoid, start=board_after(p))
    steps = lines[: count - 1] + [final] if count < len(lines) + 1 else lines + [final]
    return {"steps": [{"thought": t} for t in steps]}


def failed_first_steps(memory):
    """Operations a review said led nowhere ("after '13 - 9 = 4' 24 can no longer be reached")."""
    return set(re.findall(r"after '([^']+)'", memory))


def attempt_score(p, player):
    steps = parse_steps(p.sections.get("ATTEMPT", ""))
    return score(replace(p, steps=steps[:-1], last_step=steps[-1] if steps else ""), player)


def critique(p, player):
    steps = parse_steps(p.sections.get("ATTEMPT", ""))
    num = _first_int(p.sections.get("ATTEMPT NUMBER"), 1)
    cards = numbers(p)
    listed = " ".join(map(str, cards))
    head = f"Attempt {num} scored {p.sections.get('SCORE', '?').split()[0]}"
    if game24.solve(game24.board(cards)) is None:
        return {"critique": f"{head}: 24 cannot be made from {listed} at all; the answer must say so."}
    final = steps[-1] if steps else ""
    if judge_exactly(cards, steps[:-1], final).verdict == "sure":
        return {"critique": f"{head}: its answer looks right; show each operation with the numbers left."}
    items = game24.board(cards)
    for step in [s for s in steps if not game24.is_answer(s)]:
        wrong = game24.step_error(step, items)
        if wrong:
            return {
                "critique": f"{head}: the step '{step.split(' (')[0]}' is wrong ({wrong}). Use only the numbers left."
            }
        items = game24.apply_step(items, step)
        if not game24.reachable(items):
            return {
                "critique": f"{head}: after '{step.split(' (')[0]}' 24 can no longer be reached from "
                f"{game24.left_text(items)}. Next attempt: choose each operation on {listed} so 24 stays reachable."
            }
    return {"critique": f"{head}: its answer does not make 24 from {listed}. Next attempt: check it first."}


def alternatives(p, player):
    return {"thoughts": [{"thought": t["thought"]} for t in proposals(p, player)["thoughts"]]}


# TRM: an analysis of the current answer in marked lines, and an improved answer.


def analysis(p, player):
    cards = numbers(p)
    current = p.last_step if p.step > 1 else ""
    listed = " ".join(map(str, cards))
    if not game24.is_answer(_answer_line(current)):
        lines = [
            f"INSIGHT: The answer must use each of {listed} exactly once with + - * / and make 24.",
            "SUGGESTION: Combine two numbers at a time, keeping 24 reachable from what is left.",
            "CONFIDENCE: 0.1",
        ]
        return {"analysis": "\n".join(lines)}
    judgement = player.judge(cards, [], _answer_line(current))
    confidence = judgement.score(player.rng)
    if judgement.verdict == "sure":
        lines = [f"INSIGHT: {judgement.reason.removeprefix('sure: ')}; keep it."]
    else:
        lines = [
            f"ISSUE: {judgement.reason.split(': ', 1)[-1]}.",
            f"SUGGESTION: Start again from {listed}, keeping 24 reachable after every operation.",
        ]
    return {"analysis": "\n".join([*lines, f"CONFIDENCE: {confidence:.2f}"])}


def improvement(p, player):
    """Keep an answer the analysis found right; otherwise a new attempt that starts elsewhere."""
    current = p.last_step if p.step > 1 else ""
    points = p.sections.get("KEY POINTS", "")
    if current and "issue:" not in points.lower() and game24.is_answer(_answer_line(current)):
        return {"answer": current}
    avoid = {current.split(";")[0].split(" (")[0]} if current else set()
    lines, final = player.attempt(numbers(p), avoid=avoid)
    return {"answer": "; ".join([*lines, final])}


def _answer_line(text):
    return next((part.strip() for part in text.split(";") if game24.is_answer(part)), text)


def _first_int(text, default):
    found = re.findall(r"\d+", text or "")
    return int(found[0]) if found else default
