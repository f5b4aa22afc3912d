"""The offline model's categorical judgement for Tree of Thoughts (`tot.value`) on wealth problems: the numeric
judgement (offline_answers.tot_evaluate) read as sure, likely or impossible."""

import importlib


def value(p, rng):
    reply = importlib.import_module("reasoning.llm.offline_answers").tot_evaluate(p, rng)
    verdict = "sure" if reply["score"] >= 0.75 else "likely" if reply["score"] >= 0.45 else "impossible"
    return {"verdict": verdict, "reason": reply["reason"]}


HANDLERS = {"tot.value": value}
