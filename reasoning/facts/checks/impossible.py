"""figure (impossible): an age no person has, a year no plan names, an account or pillar that does not exist.

Whatever the sheet says, "the 660-year-old client" (over `oldest_age`), "before 4054" (outside `first_year` to
`last_year`), "pillar 6a" and "a 4030(b)" (a pillar or numbered account not in the table) and "a scenario that
loses 30-120%" (a loss over `largest_loss` where the sentence names no leverage) are slips: a digit added or changed. The table is reasoning/facts/data/impossible.toml.

    fails:  "Review the plan with the 660-year-old client before 4054."    passes: "the 66-year-old client, by 2054"
"""

from __future__ import annotations

import re

from reasoning.facts.checks.doc import Doc, sentence_of
from reasoning.facts.checks.words import any_of, table
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

LIMITS = table("impossible")
AGE = re.compile(r"\b(?P<n>\d{3,4})[- ]years?[- ]old\b|\b(?:aged?|ages)\s+(?P<m>\d{3,4})\b", re.IGNORECASE)
# a year where a plan says when: "before 4054", "by 2190", "in 1850" (a four-digit number after a word of time)
YEAR = re.compile(r"\b(?:in|by|before|after|until|from|since|through|till|of)\s+(?P<y>[12]\d{3}|[3-9]\d{3})\b(?![\d%]|[.,]\d|\s*(?:[kKmM]\b|[A-Z]{3}|€|\$|£|francs?|euros?|dollars?|pounds?|people|shares|units))")
NUMBERED = re.compile(r"(?<![\w(])(?P<name>\d{3,4}\([a-z]\))")
PILLAR = re.compile(r"\b(?:pillar|Säule|pilier)\s+(?P<p>\d[a-z]?)\b", re.IGNORECASE)
# a loss in percent: "loses 30-120%", "a fall of 150%", "drops up to 130 %" (the last number of a range counts)
LOSS = re.compile(
    r"\b(?:lose|loses|losing|lost|loss(?:es)?\s+of|fall|falls|fell|fall\s+of|drop|drops|dropped|drop\s+of"
    r"|decline|declines|declined|decline\s+of|drawdown\s+of)\s+(?:up\s+to\s+|about\s+|around\s+|some\s+|of\s+)?"
    r"(?:\d+(?:[.,]\d+)?\s*(?:-|–|to)\s*)?(?P<n>\d+(?:[.,]\d+)?)\s?(?:%|percent\b|per\s?cent\b)",
    re.IGNORECASE,
)
LEVERAGE = any_of(tuple(LIMITS["leverage_words"]))


def run(doc: Doc) -> list[Finding]:
    return _ages(doc.text) + _years(doc.text) + _names(doc.text) + _losses(doc)


def _ages(text):
    found = []
    for m in AGE.finditer(text):
        age = int(m["n"] or m["m"])
        if age > LIMITS["oldest_age"]:
            found.append(Finding(KIND, False, m[0], f"{m[0]}: no one is {age} years old", m.start(), m.end()))
    return found


def _years(text):
    found = []
    for m in YEAR.finditer(text):
        year = int(m["y"])
        if not LIMITS["first_year"] <= year <= LIMITS["last_year"]:
            detail = f"{year}: no plan's year (one from {LIMITS['first_year']} to {LIMITS['last_year']})"
            found.append(Finding(KIND, False, m["y"], detail, m.start("y"), m.end("y")))
    return found


def _names(text):
    found = []
    for m in NUMBERED.finditer(text):
        if m["name"] not in LIMITS["numbered_accounts"]:
            detail = f"{m['name']}: no such account (those written so: {', '.join(LIMITS['numbered_accounts'][:4])} ...)"
            found.append(Finding(KIND, False, m["name"], detail, m.start("name"), m.end("name")))
    for m in PILLAR.finditer(text):
        if m["p"].lower() not in LIMITS["pillars"]:
            found.append(Finding(KIND, False, m[0], f"{m[0]}: no such pillar (1, 2, 3a, 3b)", m.start(), m.end()))
    return found


def _losses(doc):
    found = []
    for m in LOSS.finditer(doc.text):
        loss = float(m["n"].replace(",", "."))
        start, end = sentence_of(doc, m.start())
        if loss > LIMITS["largest_loss"] and not LEVERAGE.search(doc.text[start:end]):
            span = doc.text[m.start("n") : m.end()]
            detail = f"{span}: a holding loses at most all of itself ({LIMITS['largest_loss']}%) unless it is levered"
            found.append(Finding(KIND, False, span, detail, m.start("n"), m.end()))
    return found
