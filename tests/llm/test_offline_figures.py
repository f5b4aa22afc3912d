"""The offline model's declared figures (reasoning/llm/offline/figures.py): the exact model declares each amount it
derives with a derivation that checks out; a noisy one carries a slip of such an amount into its declaration, so the
derivation no longer gives the value written."""

import json

from reasoning.facts.derivation import evaluate
from reasoning.llm.offline.answers import answer
from tests.llm.offline_drive import CASES, Driver, facts_of

# a case with a share of one of its amounts: the exact model derives that amount and declares it
CASE = next(c for c in CASES if any(f["kind"] == "percent" and f.get("base") for f in c["facts"]))


def synthesis_prompt():
    driver = Driver(CASE["problem_text"], CASE["problem_kind"], facts_of(CASE))
    from reasoning.prompts import format_path, render

    return render("tot.synthesize", **driver.fields, path=format_path(["Rebalance the mandate to its targets."]))


def test_the_exact_model_declares_its_derived_figures_and_each_checks_out():
    reply = json.loads(answer(synthesis_prompt(), 7))
    figures = evaluate(reply["figures"], facts_of(CASE))
    assert figures and all(f.ok and f.facts for f in figures), [f.detail for f in figures]


def test_a_slip_of_a_derived_figure_is_carried_into_its_declaration():
    prompt, carried = synthesis_prompt(), []
    for seed in range(40):
        slips = []
        reply = json.loads(answer(prompt, seed, noise=1.0, log=slips))
        if any(s.kind in ("figure", "scale") for s in slips):
            carried += [f for f in evaluate(reply.get("figures") or [], facts_of(CASE)) if not f.ok]
    assert carried and all("declared" in f.detail for f in carried)
