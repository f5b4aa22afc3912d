"""Sentences, clauses, durations and dates as advisors and models write them, for the checks that read timing.

`sentences` cuts a text into sentences (a line or a bullet is one; "Fr. 400'000" ends none); `clause_at` the clause
around a span. `durations` reads spans of time in months, with a small table over quantities.words_value: "eighteen
months", "1.5 years", "a year and a half", "half a year", "18-month", "3-5 years", "two to three months", "a few
weeks". `timings` keeps those a plan states ("over six weeks", "within the next 18 months", "a 4-year plan",
"immediately", "this quarter"), not frequencies ("every 6 months"). `deadlines` reads dates as periods of
fractional years ("Q3 2027", "the fourth quarter of 2027", "June 2027", "mid-2030", "the end of 2031", "by 2035").

dateparser reads dates, not spans (None for "within 18 months", "eighteen months" as a date in the past), and
text2num only turns number words into digits, which words_value does: neither is used.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from dataclasses import dataclass
from functools import lru_cache

from reasoning.facts.quantities import NUMBER_WORDS, alternation, words_value

# ---- sentences and clauses ---------------------------------------------------------------------------------------

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'*•\d-])|\n\s*|;\s+")
# Abbreviations whose point ends no sentence ("Fr. 400'000", "2,5 Mio. EUR"): data/law.toml.
_ABBREVIATIONS = tomllib.loads((Path(__file__).with_name("data") / "law.toml").read_text())["sentence_abbreviations"]
ABBREVIATION = re.compile(
    rf"\b(?:{'|'.join(re.escape(a) for a in sorted(_ABBREVIATIONS, key=len, reverse=True))})\.$"
)
CLAUSE_BREAK = re.compile(r"[,;:()]|\s[-–—]\s|\b(?:but|while|whereas|then|and then|so that|although)\b")


@lru_cache(maxsize=64)
def sentences(text):
    """(start, end) of each sentence, a line or a bullet being one; "Fr. 400'000" ends none."""
    spans, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if ABBREVIATION.search(text, max(0, m.start() - 8), m.start()):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return tuple((s, e) for s, e in spans if text[s:e].strip())


def sentence_at(text, position):
    return next(((s, e) for s, e in sentences(text) if s <= position < e or s <= position == e), (0, len(text)))


def clause_at(text, start, end):
    """The clause around [start, end): from the last break before it to the next break after it, in its sentence."""
    s, e = sentence_at(text, start)
    before = [m.end() for m in CLAUSE_BREAK.finditer(text, s, start)]
    after = CLAUSE_BREAK.search(text, end, e)
    return (before[-1] if before else s), (after.start() if after else e)


# ---- durations and dates -----------------------------------------------------------------------------------------

UNIT_MONTHS = {"day": 12 / 365, "week": 12 / 52, "month": 1, "quarter": 3, "year": 12, "yr": 12, "mo": 1}
UNIT = r"(?P<unit>days?|weeks?|months?|mos?|quarters?|years?|yrs?)\b"
VAGUE = {"a few": (2, 4), "a couple of": (2, 3), "several": (3, 8), "some": (2, 8)}
_NUMBER_WORD = alternation([*NUMBER_WORDS, "several", "some"])
NUMBER = rf"(?P<num>\d+(?:[.,]\d+)?|(?:{_NUMBER_WORD})(?:-(?:{_NUMBER_WORD}))?|a\s+few|a\s+couple\s+of|an?)"
DURATION = re.compile(
    rf"(?<![\w-])(?:(?P<halfa>half\s+an?\s+)(?P<hunit>year|month)\b"
    rf"|(?:an?\s+|(?<=next\s))(?P<aunit>year|month|week|quarter)\s+and\s+a\s+half\b"
    rf"|(?<=next\s)(?P<nunit>year|month|week|quarter)\b"
    rf"|{NUMBER}(?:\s*(?:-|–|to)\s*(?P<num2>\d+(?:[.,]\d+)?|{_NUMBER_WORD}))?(?P<half>\s+and\s+a\s+half)?[\s-]+{UNIT})",
    re.IGNORECASE,
)
TIMING_BEFORE = re.compile(
    r"(?:\b(?:over|within|in|across|during|inside(?:\s+of)?|throughout|spread\s+over|staggered\s+over|phased\s+over)"
    r"|\bfor\s+the\s+(?=next|coming)|\b(?:a|per|each|every)\s+(?:year|month|quarter)\s+for"
    r"|\b(?:annually|yearly|monthly|quarterly)\s+for)\s+(?:the\s+)?(?:next\s+|coming\s+|following\s+|first\s+)?"
    r"(?:about\s+|roughly\s+|around\s+|some\s+|only\s+"
    r"|just\s+)?$",
    re.IGNORECASE,
)
# "take a year over the move", "spend six months on the sale": a duration the plan takes for something
TAKE_BEFORE = re.compile(r"\b(?:take|takes|taking|spend|spends|spending)\s+(?:about\s+|roughly\s+|some\s+)?$", re.I)
TAKE_AFTER = re.compile(r"\s+(?:over|on|for|to)\s+(?!expenses|costs|spending)", re.IGNORECASE)
# "in three yearly tranches", "four annual gifts": parts a period apart
PER_MONTHS = {"yearly": 12, "annual": 12, "monthly": 1, "quarterly": 3, "half-yearly": 6, "semi-annual": 6}
EVERY_PART = re.compile(
    rf"\b(?P<n>\d+|{_NUMBER_WORD})\s+(?P<per>half-yearly|semi-annual|yearly|annual|monthly|quarterly)\s+"
    r"(?:tranches|instalments|installments|payments|steps|gifts|contributions|transfers|sales|purchases)\b",
    re.IGNORECASE,
)
PLAN_AFTER = re.compile(
    r"[\s-]*(?:(?:sale|selling|rebalancing|exit|transition|diversification|implementation|execution)\s+)?"
    r"(?:plan|programme|program|schedule|glide\s*path|transition|roll-?out|phase-?in|wind-?down|rebalancing|sale)\b",
    re.IGNORECASE,
)
AT_ONCE = re.compile(
    r"\b(?:immediately|at\s+once|in\s+one\s+go|in\s+a\s+single\s+(?:trade|step|block|transaction|tranche)|right\s+away"
    r"|(?P<which>this|next)\s+(?P<window>week|month|quarter|(?:tax\s+)?year)|all\s+now)\b",
    re.IGNORECASE,
)
WINDOW_MONTHS = {"week": 0.25, "month": 1, "quarter": 3, "year": 12, "tax year": 12}
START = re.compile(r"\b(?:start|starts|starting|begin|begins|beginning|kick\s+off|open\s+with)\b", re.IGNORECASE)


@dataclass
class Span:
    low: float  # months (a duration) or a year (a date) or an age
    high: float
    start: int
    end: int
    text: str


def _amount_of(match):
    """The number of a DURATION match, as (low, high) of its units; None when the words are not a number."""
    if match["halfa"]:
        return (0.5, 0.5), match["hunit"]
    if match["aunit"]:
        return (1.5, 1.5), match["aunit"]
    if match["nunit"]:
        return (1, 1), match["nunit"]
    num = re.sub(r"\s+", " ", match["num"].lower())
    if num in VAGUE:
        low, high = VAGUE[num]
    elif num[0].isdigit():
        low = high = float(num.replace(",", "."))
    else:
        value = words_value(num)
        if value is None or num in ("and", "the"):
            return None
        low = high = float(value)
    if match["num2"]:  # "3-5 years", "two to three years"
        second = float(match["num2"].replace(",", ".")) if match["num2"][0].isdigit() else words_value(match["num2"])
        high = max(high, float(second or high))
    extra = 0.5 if match["half"] else 0
    return (low + extra, high + extra), match["unit"]


def durations(text):
    """Every span of time the text states, in months: "eighteen months" (18), "1.5 years" (18), "a year and a half"
    (18), "six weeks" (1.4), "a few weeks" (0.5-0.9)."""
    found = []
    for m in DURATION.finditer(text):
        read = _amount_of(m)
        if read is None:
            continue
        (low, high), unit = read
        factor = UNIT_MONTHS[unit.lower().rstrip("s")]
        found.append(Span(low * factor, high * factor, m.start(), m.end(), m[0]))
    return found


def timings(text, start, end):
    """The plan's own timings between start and end: a duration after a timing word ("over six weeks", "within the
    next 18 months") or before a plan's name ("a 4-year glide path"), and "immediately" as a timing of none."""
    found = []
    for d in durations(text[start:end]):
        at, to = start + d.start, start + d.end
        if re.search(r"\b(?:every|each|per)\s+$", text[max(0, at - 8) : at], re.IGNORECASE):
            continue  # "every 6 months": a frequency
        taken = TAKE_BEFORE.search(text, max(0, at - 30), at) and TAKE_AFTER.match(text, to)
        if TIMING_BEFORE.search(text, max(0, at - 60), at) or ("-" in d.text and PLAN_AFTER.match(text, to)) or taken:
            found.append(Span(d.low, d.high, at, to, d.text))
    for m in EVERY_PART.finditer(text, start, end):
        n = int(m["n"]) if m["n"].isdigit() else words_value(m["n"].lower())
        if n and n > 1:  # "three yearly tranches": the last one two years after the first
            months = (n - 1) * PER_MONTHS[m["per"].lower()]
            found.append(Span(months, months, m.start(), m.end(), m[0]))
    for m in AT_ONCE.finditer(text, start, end):
        window = WINDOW_MONTHS[" ".join(m["window"].lower().split())] if m["window"] else 0.25
        window *= 2 if (m["which"] or "").lower() == "next" else 1  # "next month": by the end of the next one
        found.append(Span(0, window, m.start(), m.end(), m[0]))
    return found


MONTHS = "january february march april may june july august september october november december".split()
MONTH_NAMES = "|".join(MONTHS + [m[:3] for m in MONTHS])
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
YEAR_RE = r"(?:19|20)\d\d"
DATE = re.compile(
    rf"\b(?:(?P<q>Q[1-4])\s*(?P<qyear>{YEAR_RE})|(?P<h>H[12])\s*(?P<hyear>{YEAR_RE})"
    rf"|(?:the\s+)?(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th)\s+(?P<part>quarter|half)\s+of\s+(?P<oyear>{YEAR_RE})"
    rf"|(?P<month>{MONTH_NAMES})\.?\s+(?P<myear>{YEAR_RE})"
    rf"|(?P<edge>(?:the\s+)?end(?:\s+of|-)\s*|year-?end\s+|mid-?\s*|early\s+|late\s+)?(?P<year>{YEAR_RE}))(?![\d%])",
    re.IGNORECASE,
)
DEADLINE_BEFORE = re.compile(
    r"\b(?:by|until|till|through|thru|before|no\s+later\s+than|in|during|completed?\s+in|finish\w*\s+in|end\s+of"
    r"|from|starting(?:\s+in)?|after|beginning(?:\s+in)?|into|for)\s+(?:the\s+)?$"
    # "push the closing to spring 2028": a season is a date of the plan
    r"|\b(?:to|in|by|until|for)\s+(?:the\s+)?(?:(?:early|late|mid-?)\s*)?(?:spring|summer|autumn|fall|winter)"
    r"(?:\s+of)?\s+$",
    re.IGNORECASE,
)


def period(m):
    """(earliest, latest) of a DATE match, as fractional years: "Q3 2027" (2027.5, 2027.75), "June 2027" (2027.42,
    2027.5), "end of 2031" (2031.92, 2032.0), "mid-2030" (2030.33, 2030.67), "2031" (2031.0, 2032.0)."""
    if m["q"]:
        q = int(m["q"][1])
        return int(m["qyear"]) + (q - 1) / 4, int(m["qyear"]) + q / 4
    if m["h"] or m["ord"]:
        year = int(m["hyear"] or m["oyear"])
        n = int(m["h"][1]) if m["h"] else ORDINALS[m["ord"].lower()]
        size = 0.5 if (m["h"] or m["part"].lower() == "half") else 0.25
        return year + (n - 1) * size, year + n * size
    if m["month"]:
        n = next(i for i, name in enumerate(MONTHS) if name.startswith(m["month"].lower()[:3]))
        return int(m["myear"]) + n / 12, int(m["myear"]) + (n + 1) / 12
    year, edge = int(m["year"]), (m["edge"] or "").lower()
    if "end" in edge:
        return year + 11 / 12, year + 1
    if "mid" in edge:
        return year + 1 / 3, year + 2 / 3
    if "early" in edge:
        return year, year + 1 / 3
    if "late" in edge:
        return year + 2 / 3, year + 1
    return year, year + 1


def deadlines(text, start, end):
    """Dates the text sets for the plan, with the word before them: "by 2035", "in Q3 2033", "by the end of 2031",
    "in the fourth quarter of 2027", "from 2032". A year with no cue ("the 2031 budget") is no date of the plan."""
    found = []
    for m in DATE.finditer(text, start, end):
        cue = DEADLINE_BEFORE.search(text, max(0, m.start() - 30), m.start())
        if cue is None and not (m["q"] or m["h"] or m["ord"]):
            continue
        earliest, latest = period(m)
        found.append((Span(earliest, latest, m.start(), m.end(), m[0]), cue[0].split()[0].lower() if cue else "in"))
    return found
