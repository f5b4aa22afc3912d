"""constraint: the client's limits, horizons and commitments (reasoning/facts/constraints.py) against the text.

On every text: a statement that contradicts a limit (a cash reserve under the floor, a position over the cap), a
horizon (three steps over six weeks where the client wants four years), or that splits an amount that is not the
one to be moved; a statement that keeps one is a kept finding ("4 constraints kept"). On a final answer also: each
commitment or liability on the sheet is provided for by a sentence that acts on it.

    fails:  "keep 6 months of expenses in cash" under an 18-month floor
    passes: "keep 24 months of expenses (CHF 360k) in the money-market fund" under an 18-month floor
"""

from __future__ import annotations

from reasoning.facts import constraints
from reasoning.facts.checks.doc import Doc
from reasoning.facts.sheet import Finding

KIND = "constraint"
FINAL_ONLY = False  # reads doc.final itself: the commitments are an answer's to provide for, not a step's


def run(doc: Doc) -> list[Finding]:
    return constraints.findings(doc.text, doc.facts, final=doc.final)
