"""figure (bare numbers): a number written with no unit ("a minimum of 17,500 returns", "3.25M of liquid assets").

A bare number of 1,000 or more, or written with a scale ("3.25M", "600k"), outside the arithmetic the text writes
out, is read as a figure: it passes when it is one of the client's amounts (in any currency: "the 400k in the US"),
or a sum or difference of two of them in one currency; otherwise it is unverified (the checker cannot tell what it
counts, so it neither passes nor fails it). A bare number that is a sum or difference of amounts in two currencies
is the currency check's (currency.py: combined with no rate).

    unverified:  "a minimum of 17,500 returns"    passes: "the 600k at the US broker" (the US broker account)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from reasoning.facts.checks.derive import SUM_WORDS, numbers
from reasoning.facts.checks.doc import Doc, amount_facts, fact_of, in_sentence
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

YEAR = re.compile(r"(?:19|20)\d\d")


@dataclass(frozen=True)
class Bare:
    """A bare number read as a figure: its value, the currency of the fact it matches ("" when none), its span."""

    value: float
    unit: str
    text: str
    start: int
    end: int
    precision: float


def bare_figures(doc, start, end):
    """The bare numbers of a sentence that read as money: 1,000 or more, or scaled; not a year; not in arithmetic
    the text writes out (doc.consumed)."""
    found = []
    for value, scaled, s, e in numbers(doc, start, end):
        text = doc.text[s:e]
        if not scaled and (value < 1000 or YEAR.fullmatch(text)):
            continue
        if any(a <= s < b for a, b in doc.consumed):
            continue
        digits = re.sub(r"[^\d.]", "", text)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        scale = value / float(digits) if float(digits) else 1
        precision = 0.5 * 10**-decimals * scale if scaled else 0.5
        unit = next((f.unit for f in amount_facts(doc) if abs(f.value - value) <= precision), "")
        found.append(Bare(value, unit, text, s, e, precision))
    return found


def mixed(doc, start, end):
    """((a, b[, c]), result): amounts in two currencies that a figure of the sentence adds or subtracts one to one
    ("CHF 2.4M and EUR 850k make 3.25M"; "400k + 600k" for USD 400k and EUR 600k). The result is a bare figure, or
    an amount where the sentence speaks of a total; the parts are the sentence's amounts and the client's amounts
    it names, or all the client's holdings when it speaks of a total."""
    bare = bare_figures(doc, start, end)
    amounts = in_sentence(doc, start, end, "amount")
    total = SUM_WORDS.search(doc.text, start, end)
    money = [x for x in amounts] + [b for b in bare if b.unit]
    money += [_fact_figure(f) for f in amount_facts(doc) if _named(doc, f, start, end) or (total and f.role == "holding")]
    results = bare + ([x for x in amounts if not fact_of(x, amount_facts(doc))] if total else [])
    found = []
    for result in results:
        others = [m for m in money if not _same(m, result)]
        for a, b in itertools.combinations(others, 2):
            if a.unit == b.unit or _same(a, b):
                continue
            if abs(a.value + b.value - result.value) <= result.precision or (
                abs(abs(a.value - b.value) - result.value) <= result.precision
            ):
                found.append(((a, b), result))
        for parts in itertools.combinations(others, 3):
            if any(_same(a, b) for a, b in itertools.combinations(parts, 2)):
                continue  # "250.000 EUR" and the gift of 250.000 EUR are one figure, not two to add
            if len({p.unit for p in parts}) > 1 and abs(sum(p.value for p in parts) - result.value) <= result.precision:
                found.append((parts, result))
    return found


def _same(a, b):
    """One figure twice: as written and as the fact it is ("the 400k in the US" and the US account)."""
    return a is b or (a.unit == b.unit and a.value == b.value)


def _fact_figure(fact):
    return Bare(fact.value, fact.unit, f"the {fact.label}", -1, -1, 0.0)


def _named(doc, fact, start, end):
    """The sentence names the fact by its label's last word ("the US account", "her bonds")."""
    words = fact.label.lower().split()
    return bool(words) and re.search(rf"\b{re.escape(words[-1])}\b", doc.text[start:end].lower()) is not None


def run(doc: Doc) -> list[Finding]:
    findings = []
    for start, end in doc.sentences:
        combined = {result for _parts, result in mixed(doc, start, end)}
        for b in bare_figures(doc, start, end):
            if b in combined:
                continue  # the currency check's
            facts = amount_facts(doc)
            if b.unit:
                fact = next(f for f in facts if abs(f.value - b.value) <= b.precision)
                findings.append(Finding(KIND, True, b.text, f"{b.text} is the {fact.label}", b.start, b.end))
                continue
            same = [(f, g) for f, g in itertools.combinations(facts, 2) if f.unit == g.unit]
            if any(abs(f.value + g.value - b.value) <= b.precision for f, g in same):
                findings.append(Finding(KIND, True, b.text, f"{b.text} is a sum of two of the client's amounts",
                                        b.start, b.end))  # fmt: skip
                continue
            detail = f"unverified: {b.text} has no unit and is neither on the fact sheet nor derived in the text"
            findings.append(Finding(KIND, True, b.text, detail, b.start, b.end, verified=False))
    return findings
