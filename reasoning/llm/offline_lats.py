"""The offline model's replies to the LATS contracts: Game of 24 steps from the exact solver, wealth steps from
the ToT banks, a value that says when a line is complete, and reflections built from what a failed line missed.
"""

import importlib
import re

from reasoning.llm import game24


def base():
    # offline_answers loads this module at its end: read it when a reply is asked for, never at import.
    return importlib.import_module("reasoning.llm.offline_answers")


def expand(p, rng):
    if game24.puzzle_numbers(p.problem):
        return game24.propose(p, rng)
    return base().tot_propose(p, rng)


def evaluate(p, rng):
    if game24.puzzle_numbers(p.problem):
        return puzzle_value(p, rng)
    reply = base().tot_evaluate(p, rng)
    # A wealth line is complete once it reaches its last step (the controls that keep the plan on track).
    return reply | {"is_terminal": p.step >= p.depth}


def puzzle_value(p, rng):
    """game24's judgement, plus completeness: a line ends when one number is left or it states an answer."""
    numbers = game24.puzzle_numbers(p.problem)
    reply = game24.evaluate(p, rng)
    if game24.is_answer(p.last_step):
        ok = reply["reason"].startswith("sure")
        return reply | {"score": 1.0 if ok else reply["score"], "is_terminal": True}
    board = game24.replay(numbers, p.steps + [p.last_step])
    if len(board) > 1:
        return reply | {"is_terminal": False}
    expression = game24.strip_outer(board[0][1])
    if game24.check_answer(f"{expression} = 24", numbers)[0]:
        return {"score": 1.0, "reason": f"sure: {expression} = 24 uses every number once", "is_terminal": True}
    return reply | {"is_terminal": True}


def reflect(p, rng):
    if game24.puzzle_numbers(p.problem):
        return {"reflection": puzzle_reflection(p)}
    return {"reflection": wealth_reflection(p, rng)}


def puzzle_reflection(p):
    numbers = game24.puzzle_numbers(p.problem)
    board = game24.replay(numbers, p.steps + [p.last_step])
    first = p.steps[0] if p.steps else p.last_step
    return (
        f"The line ended at {game24.left_text(board)} without making 24. Its first step, {first.split(' (')[0]}, "
        "led nowhere; next time keep results that still combine with the remaining numbers, and check after "
        "every step that 24 can be reached from what is left."
    )


def wealth_reflection(p, rng):
    offline = base()
    f = offline.facts(p.problem, p.kind)
    line = " ".join(p.steps + [p.last_step])
    missed = [c for c in offline.rubric_criteria(p.rubric) if not offline.meets(c, line)]
    last = offline.title_of(p.last_step).lower()
    if missed:
        names = " and ".join(name for name, _, _, _ in missed[:2])
        fix = f"address {names} explicitly, with figures for {f['amount']}"
    else:
        fix = rng.choice(
            (
                f"put numbers on each step for {f['amount']} and say what would change the plan for {f['client']}",
                f"sequence the actions over {f['horizon']} and name the risk each one carries",
            )
        )
    figures = "" if re.search(r"\d", line) else " It also gave no figures."
    return f"The line ending with {last} fell short of the bar.{figures} The next attempt should {fix}."


def synthesize(p, rng):
    if game24.puzzle_numbers(p.problem):
        return game24.synthesize(p, rng)
    return base().tot_synthesize(p, rng)


HANDLERS = {
    "lats.expand": expand,
    "lats.evaluate": evaluate,
    "lats.reflect": reflect,
    "lats.synthesize": synthesize,
}
