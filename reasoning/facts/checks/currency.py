"""currency: two currencies combined with no exchange rate stated.

Two currencies combined (an expression, "as a share of", "of", "plus", "a total of", a written sum or ratio of the
two) with no rate stated in the text ("EUR/CHF 0.94", "0.94 CHF per EUR", "an exchange rate of 0.94", "converted at
today's rate") or the facts. Amounts listed side by side, or talk of exchange rates, are fine. Runs after
arithmetic, which records the pairs it saw combined (doc.combined).

    fails:  "EUR 900k + CHF 1.2M = 2.1M"    passes: "EUR 900k and CHF 1.2M", "EUR 900k at EUR/CHF 0.94 is CHF 846k"
"""

from __future__ import annotations

import re

from reasoning.facts.checks.bare import mixed
from reasoning.facts.checks.doc import Doc, fact_of, has_rate, in_sentence, sentence_of
from reasoning.facts.sheet import Finding

KIND = "currency"
FINAL_ONLY = False

COMBINING = re.compile(
    r"\s*(?:\([^()]{0,40}\)\s*)?(?:[+×*÷/=−]|[-–]\s|plus|minus|less|times|divided by|"
    r"as an? (?:share|percentage|proportion|fraction|percent) of|out of|relative to|"
    r"(?:(?:is|are|represents?|makes? up|equals?)\s+)?(?:\d+(?:\.\d+)?\s?%\s+)?of)\s+"
    r"(?:(?:the|her|his|their|its|a|an|total|combined)\s+)*$",
    re.IGNORECASE,
)
TOTAL_BEFORE = re.compile(
    r"\b(?:total(?:s|ling|ing)?(?:\s+of)?|sum\s+of|combined|adds?\s+up\s+to|in\s+all)\s*:?\s*$", re.IGNORECASE
)
LIST_BETWEEN = re.compile(r"^\s*(?:,|\+|and|plus)\s*$")
TOTAL_AFTER = re.compile(r"^\s*(?:in total|combined|together|altogether|in all)\b", re.IGNORECASE)


def run(doc: Doc) -> list[Finding]:
    """One finding per sentence that combines two currencies with no rate stated."""
    pairs = list(doc.combined)
    for start, end in doc.sentences:
        amounts, percents = in_sentence(doc, start, end, "amount"), in_sentence(doc, start, end, "percent")
        for a, b in zip(amounts, amounts[1:]):
            if a.unit != b.unit and _joined(doc, a, b, start, end):
                pairs.append((a, b))
        pairs += _numerically_combined(doc, amounts, percents)
    findings, seen = [], set()
    for a, b in sorted(pairs, key=lambda pair: min(q.start for q in pair)):
        a, b = sorted((a, b), key=lambda q: q.start)
        sentence = sentence_of(doc, a.start)
        if a.unit == b.unit or sentence in seen or has_rate(doc, a.unit, b.unit):
            continue
        seen.add(sentence)
        detail = f"{a.text} and {b.text} are combined with no exchange rate stated"
        findings.append(Finding("currency", False, doc.text[a.start : b.end], detail, a.start, b.end))
    for start, end in doc.sentences:  # "CHF 2.4M and EUR 850k make 3.25M": a bare sum of two currencies
        for a, b, result in mixed(doc, start, end):
            if (start, end) in seen or has_rate(doc, a.unit, b.unit):
                continue
            seen.add((start, end))
            detail = f"{result.text} adds {a.text} ({a.unit}) and {b.text} ({b.unit}) with no exchange rate"
            findings.append(Finding("currency", False, result.text, detail, result.start, result.end))
    return findings


def _joined(doc, a, b, start, end):
    between = doc.text[a.end : b.start]
    if COMBINING.fullmatch(between + " ") or COMBINING.fullmatch(between):
        return True
    if LIST_BETWEEN.match(between):
        return bool(TOTAL_BEFORE.search(doc.text[start : a.start]) or TOTAL_AFTER.match(doc.text[b.end : end]))
    return False


def _numerically_combined(doc, amounts, percents):
    """Two currencies whose sum, difference or ratio is written in the same sentence (that figure is then derived,
    wrongly, and the currency finding says so)."""
    found = []
    for i, a in enumerate(amounts):
        for b in amounts[i + 1 :]:
            if a.unit == b.unit:
                continue
            sums = (a.value + b.value, abs(a.value - b.value))
            ratios = (100 * a.value / b.value, 100 * b.value / a.value) if a.value and b.value else ()
            for c in amounts + percents:
                values = sums if c.kind == "amount" else ratios
                coarse = c.precision > (0.005 * abs(c.value) if c.kind == "amount" else 0.05)
                if c is a or c is b or coarse or fact_of(c, doc.facts):
                    continue  # a coarse figure meets a sum by chance; a fact is not the text's own sum
                if any(abs(c.value - v) <= c.precision for v in values):
                    found.append((a, b))
                    doc.derived.setdefault((c.start, c.end), f"{a.text} and {b.text} combined")
    return found


