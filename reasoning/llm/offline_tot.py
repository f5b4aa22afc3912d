"""The offline model's replies to Tree of Thoughts' contracts: on wealth problems the bank's steps and the rubric's
judgement (offline_wealth.py), the categorical judgement (`tot.value`) being that judgement read as sure, likely or
impossible; on a Game of 24 the puzzle player's (puzzle_replies.py)."""

from reasoning.llm import offline_wealth, puzzle_replies


def value(p, rng):
    reply = offline_wealth.tot_evaluate(p, rng)
    verdict = "sure" if reply["score"] >= 0.75 else "likely" if reply["score"] >= 0.45 else "impossible"
    return {"verdict": verdict, "reason": reply["reason"]}


HANDLERS = {
    "tot.propose": offline_wealth.tot_propose,
    "tot.evaluate": offline_wealth.tot_evaluate,
    "tot.value": value,
    "tot.synthesize": offline_wealth.tot_synthesize,
}
PUZZLE_HANDLERS = {
    "tot.propose": puzzle_replies.proposals,
    "tot.evaluate": puzzle_replies.score,
    "tot.value": puzzle_replies.verdict,
    "tot.synthesize": puzzle_replies.synthesis,
}
