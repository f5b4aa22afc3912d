"""The offline model's replies to the LATS contracts on wealth problems: steps from the ToT banks, a value that says
when a line is complete, and reflections built from what a failed line missed (a Game of 24: the puzzle player's).
"""

import re
from dataclasses import replace

from reasoning.llm.offline import wealth as offline_wealth, puzzle_replies


def expand(p, rng):
    return offline_wealth.tot_propose(p, rng)


def evaluate(p, rng):
    # A wealth line is complete once it reaches its last step (the controls that keep the plan on track); a complete
    # line is judged whole, as the plan it is (LATS answers only from a terminal judged a success: issue 30).
    if p.step >= p.depth:
        return line_value(p, rng) | {"is_terminal": True}
    return offline_wealth.tot_evaluate(p, rng) | {"is_terminal": False}


def line_value(p, rng):
    """The rubric's judgement of a whole line: the criteria its steps meet together, its figures and the themes it
    covers (risk, tax, liquidity, cost); a step that repeats an earlier one still costs."""
    offline = offline_wealth
    line = " ".join([*p.steps, p.last_step])
    criteria = offline.rubric_criteria(p.rubric)
    met = [c for c in criteria if offline.meets(c, line)]
    missed = [c for c in criteria if c not in met]
    has_numbers = bool(re.search(r"\d", line))
    total = sum(c[1] for c in criteria)
    score = 0.3 + 0.12 * has_numbers + 0.05 * min(3, sum(t in line.lower() for t in offline.THEMES))
    score += 0.3 * sum(c[1] for c in met) / total if total else 0.1
    repeated = bool(p.steps) and offline.title_of(p.last_step).lower() in " ".join(p.steps).lower()
    score += 0.08 - (0.2 if repeated else 0)
    score = round(min(0.98, max(0.02, score + rng.uniform(-0.05, 0.05))), 3)
    return {"score": score, "reason": offline._reason(score, met, missed, has_numbers, repeated)}


def state_evaluate(p, rng):
    """A wealth position judged alone: the rubric's judgement of its own words; a position is no complete plan."""
    position = replace(p, steps=[], last_step=p.sections.get("POSITION", ""))
    return offline_wealth.tot_evaluate(position, rng) | {"is_terminal": False}


def reflect(p, rng):
    return {"reflection": wealth_reflection(p, rng)}


def wealth_reflection(p, rng):
    offline = offline_wealth
    f = offline.facts(p)
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
    return f"The line ending with {last} fell short of the bar.{figures}{checked(p)} The next attempt should {fix}."


def checked(p):
    """What the checks found in the line, cited as a reviewer who was shown them does (their first failure)."""
    found = [line[2:] for line in p.sections.get("CHECK FINDINGS", "").splitlines() if line.startswith("- ")]
    if not found:
        return ""
    return f" The checks of the client's facts failed it: {found[0]}; the next line must use the sheet's figure."


def synthesize(p, rng):
    return offline_wealth.tot_synthesize(p, rng)


HANDLERS = {
    "lats.expand": expand,
    "lats.evaluate": evaluate,
    "lats.state_evaluate": state_evaluate,
    "lats.reflect": reflect,
    "lats.synthesize": synthesize,
}
PUZZLE_HANDLERS = {
    "lats.expand": puzzle_replies.proposals,
    "lats.evaluate": puzzle_replies.lats_value,
    "lats.state_evaluate": puzzle_replies.lats_state_value,
    "lats.reflect": puzzle_replies.lats_reflection,
    "lats.synthesize": puzzle_replies.synthesis,
}
