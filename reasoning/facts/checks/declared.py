"""figure (declared): the figures a model declared with the text, each evaluated from its derivation, and every amount
of the text accounted for by one of them or by a fact.

A model that declares its figures (the contracts' `figures` list: label, value, unit, derivation) is not guessed at:
each derivation is computed exactly (reasoning/facts/derivation.py), and fails when it gives another value than the
one declared (beyond the declared value's rounding), when its units disagree (two currencies added, a rate applied
the wrong way, a percent applied to another amount than its base), or when it names no fact or earlier figure. Each
amount the text writes must then be a declared figure or a fact of the sheet, within the precision written
(quantities.matches); a law's amount (a threshold, an allowance) is the law's, left alone as the prose check leaves
it. With no figures declared this check says nothing and the prose checks (figures.py) read the text instead.

    fails:  "sell USD 320k" declared {"value": 320000, "derivation": "portfolio × (equity share − equity target)"}
            with portfolio USD 3.2M, 58% and 50% (it is USD 256k)
    passes: the same with "value": 256000 and "sell USD 256k"
"""

from __future__ import annotations

from reasoning.facts.checks.doc import Doc, amount_facts, fact_of, is_rate
from reasoning.facts.derivation import evaluate
from reasoning.facts.quantities import matches
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False


def run(doc: Doc) -> list[Finding]:
    if not doc.declared:
        return []
    doc.evaluated = evaluate(doc.declared, doc.facts)
    return [_declared(doc, figure) for figure in doc.evaluated] + _accounted(doc)


def _declared(doc, figure):
    """The figure's own finding, on the amount of the text that writes it (or on no span when the text does not)."""
    q = _written(doc, figure)
    if q is not None and figure.verified:
        doc.derived_by_model.add((q.start, q.end))
    kind = "figure" if _is_fact(doc, figure) else "arithmetic"
    text, start, end = (q.text, q.start, q.end) if q else (figure.label, -1, -1)
    return Finding(kind, figure.ok, text, figure.detail, start, end, verified=figure.verified)


def _is_fact(doc, figure):
    name = figure.derivation.lower()
    return any(name in (f.label.lower(), str(f.id).lower()) for f in doc.facts if f.label)


def _written(doc, figure):
    unit = "%" if figure.unit == "%" else figure.unit
    kind = "percent" if unit == "%" else "amount"
    return next((q for q in doc.quantities if q.kind == kind and matches(q, figure.value, unit)), None)


def _accounted(doc):
    """Each amount of the text not the law's: a declared figure, a fact, or a finding that it is neither."""
    found = []
    facts = amount_facts(doc)
    for q in doc.quantities:
        if q.kind != "amount" or (q.start, q.end) in doc.statutory:
            continue
        if any(f.value is not None and matches(q, f.value, f.unit) for f in doc.evaluated):
            continue  # its own finding says how it was derived; the model's own figure is read as prose
        doc.derived_by_model.add((q.start, q.end))  # decided here: a fact, or neither a fact nor declared
        fact = fact_of(q, facts) or next((f for f in doc.facts if is_rate(f) and matches(q, f.value, f.unit)), None)
        if fact is not None:  # a rate written as an amount of its quote ("USD 1.27" for GBP/USD 1.27) is the rate
            found.append(Finding("figure", True, q.text, f"{q.text} is the {fact.label}", q.start, q.end))
            continue
        detail = f"{q.text} is neither a declared figure nor one of the client's facts"
        found.append(Finding("figure", False, q.text, detail, q.start, q.end))
    return found
