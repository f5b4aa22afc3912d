"""The offline model's replies to Tree of Thoughts' contracts: on wealth problems the bank's steps and the rubric's
judgement (wealth.py), the categorical judgement (`tot.value`) being that judgement read as sure, likely or
impossible; on a Game of 24 the puzzle player's (puzzle_replies.py)."""

from dataclasses import replace

from reasoning.llm.offline import wealth as offline_wealth, puzzle_replies


def value(p, rng):
    reply = offline_wealth.tot_evaluate(p, rng)
    verdict = "sure" if reply["score"] >= 0.75 else "likely" if reply["score"] >= 0.45 else "impossible"
    return {"verdict": verdict, "reason": reply["reason"]}


def state_evaluate(p, rng):
    """A wealth position judged alone: the rubric's judgement of the position's own words."""
    return offline_wealth.tot_evaluate(replace(p, steps=[], last_step=p.sections.get("POSITION", "")), rng)


def state_value(p, rng):
    return value(replace(p, steps=[], last_step=p.sections.get("POSITION", "")), rng)


HANDLERS = {
    "tot.propose": offline_wealth.tot_propose,
    "tot.evaluate": offline_wealth.tot_evaluate,
    "tot.value": value,
    "tot.state_evaluate": state_evaluate,
    "tot.state_value": state_value,
    "tot.synthesize": offline_wealth.tot_synthesize,
}
PUZZLE_HANDLERS = {
    "tot.propose": puzzle_replies.proposals,
    "tot.evaluate": puzzle_replies.score,
    "tot.value": puzzle_replies.verdict,
    "tot.state_evaluate": puzzle_replies.state_score,
    "tot.state_value": puzzle_replies.state_verdict,
    "tot.synthesize": puzzle_replies.synthesis,
}
