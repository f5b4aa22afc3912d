"""currency: two currencies combined with no exchange rate stated.

Two currencies combined (an expression, "as a share of", "of", "plus", "a total of", a written sum or ratio of the
two) with no rate stated in the text ("EUR/CHF 0.94", "0.94 CHF per EUR", "an exchange rate of 0.94", "converted at
today's rate") or the facts. Amounts listed side by side, or talk of exchange rates, are fine. Runs after
arithmetic, which records the pairs it saw combined (doc.combined).

    fails:  "EUR 900k + CHF 1.2M = 2.1M"    passes: "EUR 900k and CHF 1.2M", "EUR 900k at EUR/CHF 0.94 is CHF 846k"
"""

from __future__ import annotations

import itertools
import re

from reasoning.facts.checks.bare import mixed
from reasoning.facts.checks.doc import Doc, fact_of, has_rate, in_currency, in_sentence, sentence_of
from reasoning.facts.quantities import format_amount
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
    pairs, one_to_one = list(doc.combined), []
    for start, end in doc.sentences:
        amounts, percents = in_sentence(doc, start, end, "amount"), in_sentence(doc, start, end, "percent")
        for a, b in zip(amounts, amounts[1:]):
            if a.unit != b.unit and _joined(doc, a, b, start, end):
                pairs.append((a, b))
        for a, b, c in _numerically_combined(doc, amounts, percents):
            pairs.append((a, b))
            if c.kind == "amount" and has_rate(doc, a.unit, b.unit):
                one_to_one.append((a, b, c))
    findings, seen = [], set()
    for a, b, c in one_to_one:  # "USD 500,000 exceeds CHF 240'000 by CHF 260'000" where a rate is known
        converted = _converted_sums(doc, [a, b], c, *sentence_of(doc, c.start))
        if converted and not any(abs(v - c.value) <= c.precision + SLACK * v for v in converted):
            seen.add(sentence_of(doc, c.start))
            detail = (f"{c.text} combines {a.text} ({a.unit}) and {b.text} ({b.unit}) one to one: converted at the "
                      f"rate it is about {format_amount(_nearest(converted, c.value), c.unit)}")  # fmt: skip
            findings.append(Finding("currency", False, c.text, detail, c.start, c.end))
    for a, b in sorted(pairs, key=lambda pair: min(q.start for q in pair)):
        a, b = sorted((a, b), key=lambda q: q.start)
        sentence = sentence_of(doc, a.start)
        if a.unit == b.unit or sentence in seen or has_rate(doc, a.unit, b.unit):
            continue
        seen.add(sentence)
        detail = f"{a.text} and {b.text} are combined with no exchange rate stated"
        findings.append(Finding("currency", False, doc.text[a.start : b.end], detail, a.start, b.end))
    for start, end in doc.sentences:  # "CHF 2.4M and EUR 850k make 3.25M": a bare sum of two currencies
        for parts, result in mixed(doc, start, end):
            a, b = parts[0], next(p for p in parts if p.unit != parts[0].unit)
            if (start, end) in seen:
                continue
            if has_rate(doc, a.unit, b.unit):
                converted = _converted_sums(doc, parts, result, start, end)
                slack = SLACK if APPROX.search(doc.text, max(start, result.start - 16), result.start) else RATE_SLACK
                if not converted or any(abs(v - result.value) <= result.precision + slack * v for v in converted):
                    continue  # converted, or converted and rounded, or a pair the rates do not convert
                seen.add((start, end))
                unit = result.unit or parts[0].unit
                detail = (f"{result.text} adds {a.text} ({a.unit}) and {b.text} ({b.unit}) one to one: converted at "
                          f"the rate it is about {format_amount(converted[0], unit)}")  # fmt: skip
                findings.append(Finding("currency", False, result.text, detail, result.start, result.end))
                continue
            seen.add((start, end))
            detail = f"{result.text} adds {a.text} ({a.unit}) and {b.text} ({b.unit}) with no exchange rate"
            findings.append(Finding("currency", False, result.text, detail, result.start, result.end))
    return findings


# A converted total is written to its precision, and the rate itself rounded (a quarter of a percent); one the text
# calls approximate ("about", "just over") may be 2% off.
SLACK, RATE_SLACK = 0.02, 0.0025
APPROX = re.compile(r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|some|circa|just\s+(?:over|under)|over|under|almost))\s*$", re.I)


def _converted_sums(doc, parts, result, start, end):
    """The sums (and, of two parts, the differences) of the parts converted into the result's currency, or into each
    part's currency when the result has none: [] when a rate does not convert them."""
    targets = [result.unit] if result.unit else list(dict.fromkeys(p.unit for p in parts))
    found = []
    for target in targets:
        values = [in_currency(doc, p.value, p.unit, target, start, end) for p in parts]
        if not all(values):
            continue
        for choice in itertools.product(*values):
            found.append(sum(choice))
            if len(choice) == 2:
                found.append(abs(choice[0] - choice[1]))
    return found


def _nearest(values, value):
    return min(values, key=lambda v: abs(v - value))


def _joined(doc, a, b, start, end):
    between = doc.text[a.end : b.start]
    if COMBINING.fullmatch(between + " ") or COMBINING.fullmatch(between):
        return True
    if LIST_BETWEEN.match(between):
        return bool(TOTAL_BEFORE.search(doc.text[start : a.start]) or TOTAL_AFTER.match(doc.text[b.end : end]))
    return False


def _numerically_combined(doc, amounts, percents):
    """(a, b, c): two currencies whose sum, difference or ratio c is written in the same sentence (that figure is
    then derived, wrongly, and the currency finding says so)."""
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
                    found.append((a, b, c))
                    doc.derived.setdefault((c.start, c.end), f"{a.text} and {b.text} combined")
    return found


