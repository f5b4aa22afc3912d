"""The checker's checks: one module per kind, each behind the same small interface.

A check module exposes
    KIND: str            the Finding kind it reports (sheet.CHECK_KINDS)
    FINAL_ONLY: bool     True when it reads final answers only (coverage)
    run(doc) -> list[Finding]
and reads the text through the shared Doc (doc.py). CHECKS lists them in the order they run: arithmetic first,
because it marks the results it recomputed as derived (the figure check accepts them) and records the currencies
it saw combined (the currency check flags them). Adding a check is one line here.
"""

from __future__ import annotations

from reasoning.facts.checks import arithmetic, coverage, currency, figures, jurisdiction, labels, shares
from reasoning.facts.checks import ages, bare, constraints, declared, impossible, lawfigures, lawperiods, prohibitions
from reasoning.facts.checks import taxes, trades
from reasoning.facts.checks.doc import Doc, read

CHECKS = [
    arithmetic, currency, lawfigures, lawperiods, declared, figures, trades, shares, bare, ages, impossible, labels,
    jurisdiction, taxes, constraints, prohibitions, coverage,
]  # fmt: skip

__all__ = ["CHECKS", "Doc", "read"]
