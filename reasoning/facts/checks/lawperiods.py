"""figure (a period of the law): a window or holding time fixed by statute, checked against data/periods.toml.

"Never rebuy the same security within 90 days, or the wash-sale rule disallows the loss" misstates the wash-sale
window (30 days) whatever the client's figures are. A duration is the rule's where its sentence names the rule and
one of the rule's cues ("same security", "of a loss sale") stands within CUE_REACH words of it; other durations are
left to the constraint checks.

    fails:  "the wash-sale rule: no purchases of the same securities within 90 days of a loss sale"
    passes: "the wash-sale rule: no purchases of the same securities within 30 days of a loss sale"
"""

from __future__ import annotations

import re
from functools import lru_cache

from reasoning.facts import phrases as timelib
from reasoning.facts import places as placelib
from reasoning.facts.checks.doc import Doc, sentence_of
from reasoning.facts.checks.words import any_of, table
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False
CUE_REACH = 6  # words between a duration and its rule's cue
DAYS = {"day": 1, "week": 7, "month": 365.25 / 12, "mo": 365.25 / 12, "quarter": 365.25 / 4, "year": 365.25, "yr": 365.25}
HALF_UNIT = {unit: days / 2 for unit, days in DAYS.items()}  # "a month" is 15-46 days: near a 30-day window
UNIT_NAMES = {"day": "days", "week": "weeks", "month": "months", "mo": "months", "year": "years", "yr": "years"}
WORD = re.compile(r"\S+")
UNIT = re.compile(r"(day|week|month|mo|quarter|year|yr)s?\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def entries():
    return table("periods").get("periods", [])


def run(doc: Doc) -> list[Finding]:
    countries = {placelib.country_of(f.value) for f in doc.facts if f.kind == "place" and isinstance(f.value, str)}
    rules = [e for e in entries() if e["place"] in countries]
    if not rules:
        return []
    found = []
    for span in timelib.durations(doc.text):
        rule = next((e for e in rules if _names(doc, span, e)), None)
        if rule:
            found.append(_judge(span, rule))
    return found


def _names(doc, span, entry):
    """The duration's sentence names the rule, and one of its cues is within CUE_REACH words of the duration."""
    start, end = sentence_of(doc, span.start)
    if not any_of(tuple(entry["topic"])).search(doc.text[start:end]):
        return False
    before = " ".join(WORD.findall(doc.text[start : span.start])[-CUE_REACH:])
    after = " ".join(WORD.findall(doc.text[span.end : end])[:CUE_REACH])
    cue = any_of(tuple(entry["cues"]))
    return bool(cue.search(before) or cue.search(after))


def _judge(span, entry):
    """Exact: the entry's period in its own unit; near (unverified): within half a unit of the unit written."""
    days = entry["period"] * DAYS[entry["unit"].rstrip("s")]
    low, high = span.low * DAYS["month"], span.high * DAYS["month"]
    written = UNIT.search(span.text)
    unit = written[1].lower() if written else "day"
    said = f"{entry['period']} {entry['unit']}"
    if not (low - HALF_UNIT[unit] <= days <= high + HALF_UNIT[unit]):
        return Finding(KIND, False, span.text, f"the {entry['name']} is {said}, not {span.text}", span.start, span.end)
    if UNIT_NAMES.get(unit) == entry["unit"] and span.low == span.high and abs(low - days) < 1:
        return Finding(KIND, True, span.text, f"{span.text} is the {entry['name']} ({said})", span.start, span.end)
    detail = f"unverified: {span.text} is near the {entry['name']} ({said})"
    return Finding(KIND, True, span.text, detail, span.start, span.end, verified=False)

