"""Statutory limits the client's plan runs into (data/jurisdictions.toml, [brackets] and [lock]), checked as the
client's constraints (constraints.findings adds these findings).

- a bracket to stay within (a limit in % whose words name a bracket: "staying within the 24% bracket"): an amount
  converted, withdrawn or realised in one year above the bracket's top plus the most a return can deduct breaks it
  ("Convert $600K this year" against the 24% bracket's USD 394,600). Amounts below it are left alone: the return's
  other income is not known.
- a lock (a Swiss pension buy-in bars a lump sum for 3 years): where the sheet plans the lump sum at the client's
  retirement age, a buy-in the text times at an age less than the lock before it breaks the plan ("the buy-in at
  63" for a lump sum at 64, "wait with the buy-in until 63"); one the lock's length or more before keeps it. Ages that belong to the lump sum or to
  retiring, and sentences about someone else, are left alone.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache

from reasoning.facts import places as placelib
from reasoning.facts.acting import acts
from reasoning.facts.phrases import clause_at, sentences
from reasoning.facts.quantities import find_quantities, format_amount
from reasoning.facts.sheet import Fact, Finding, display


@lru_cache(maxsize=1)
def _data():
    from reasoning.facts.rules import DATA

    raw = tomllib.loads(DATA.read_text())
    return raw.get("brackets", {}), raw.get("lock", {})


def findings(text: str, facts: list[Fact]) -> list[Finding]:
    return _brackets(text, facts) + _locks(text, facts)


def _countries(facts):
    return {placelib.country_of(f.value) for f in facts if f.kind == "place" and isinstance(f.value, str)
            and f.role not in ("assets", "property", "situs")}  # fmt: skip


# ---- brackets ----------------------------------------------------------------------------------------------------

ONE_YEAR = re.compile(
    r"\b(?:this|next|one|a\s+single|the\s+same|each|every|per|a)\s+(?:tax\s+)?year\b|\bin\s+(?:one|a\s+single)\s+go\b"
    r"|\bat\s+once\b|\bannually\b|\bin\s+20\d\d\b",
    re.IGNORECASE,
)
INCOME_ACT = re.compile(
    r"\b(?:convert\w*|conversions?|withdraw\w*|distribut\w*|draw|draws|drawing|realis\w*|realiz\w*)\b", re.IGNORECASE
)


def _brackets(text, facts):
    tables, _locks_ = _data()
    out = []
    for limit in facts:
        words = f"{limit.label} {limit.base} {limit.text}".lower()
        if limit.kind != "limit" or limit.unit != "%" or "bracket" not in words:
            continue
        for country in _countries(facts):
            table = tables.get(country)
            top = next((t for r, t in table["tops"] if abs(r - limit.value) < 1e-9), None) if table else None
            if top is not None:
                out += _over_top(text, limit, table, top)
    return out


def _over_top(text, limit, table, top):
    out = []
    for s, e in sentences(text):
        sentence = text[s:e]
        if not INCOME_ACT.search(sentence) or not ONE_YEAR.search(sentence):
            continue
        if re.search(r"\b(?:not|never|no)\b", sentence, re.I):
            continue
        for q in find_quantities(sentence):
            if q.kind != "amount" or q.unit != table["currency"] or q.value <= top + table["slack"]:
                continue
            c0, c1 = clause_at(sentence, q.start, q.end)
            if not ONE_YEAR.search(sentence, c0, c1):
                continue  # "Convert $1.2M, about $120k each year": the year is another amount's
            detail = (f"{q.text} in one year is above the top of the {limit.value:g}% bracket "
                      f"({format_amount(top, q.unit)} of taxable income, {table['name']}): it breaks the client's "
                      f"{limit.label} ({display(limit)})")  # fmt: skip
            out.append(Finding("constraint", False, q.text, detail, s + q.start, s + q.end))
    return out


# ---- locks -------------------------------------------------------------------------------------------------------

AGE = re.compile(
    r"\b(?:at|by|aged?|until|till|when\s+(?:she|he|they)\s+(?:turns?|is)|turning)\s+(?:age\s+)?(?P<age>\d{2})\b(?![%\d])",
    re.I,
)
BEFORE_RETIRING = re.compile(
    r"\b(?:(?:the|a|one|(?P<n>two|three|\d))\s+)?years?\s+before\s+(?:(?:she|he|they|[A-Z][a-z]+)\s+)?retir\w*", re.I
)
NUMBERS = {"two": 2, "three": 3}
OTHER = re.compile(r"\b(?:wife|husband|spouse|partner|son|daughter|children)\b", re.IGNORECASE)


def _words(words):
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.I)


def _locks(text, facts):
    _tables, locks = _data()
    countries = _countries(facts)
    out = []
    for lock in locks.values():
        if lock["place"] not in countries:
            continue
        retire = _planned_at(facts, lock)
        if retire is not None:
            out += _timed(text, facts, lock, retire)
    return out


def _planned_at(facts, lock):
    """The client's retirement age, when the sheet plans the blocked act then (a goal or horizon names it)."""
    blocks = _words(lock["blocks"])
    if not any(blocks.search(f"{f.value} {f.text}") for f in facts if f.kind in ("goal", "horizon")):
        return None
    ages = [f for f in facts if f.kind == "horizon" and f.unit == "age" and isinstance(f.value, int | float)]
    return ages[0].value if len(ages) == 1 else None


def _timed(text, facts, lock, retire):
    act, blocks = _words(lock["act"]), _words(lock["blocks"])
    others = {f.label for f in facts if f.kind == "person" and f.role not in ("", "client")}
    out = []
    for s, e in sentences(text):
        sentence = text[s:e]
        if not act.search(sentence) or not acts(sentence) or OTHER.search(sentence):
            continue
        if any(re.search(rf"\b{re.escape(name)}\b", sentence) for name in others):
            continue
        for at, end, age in _ages(sentence, retire, blocks):
            gap = retire - age
            broken = gap < lock["years"]
            verb = "breaks" if broken else "keeps"
            detail = (f"'{sentence[at:end]}' {verb} the lock before the planned lump sum at {retire:g}: "
                      f"{lock['why']} ({lock['law']})")  # fmt: skip
            out.append(Finding("constraint", not broken, sentence[at:end], detail, s + at, s + end))
    return out


def _ages(sentence, retire, blocks):
    """(start, end, age) of each age the sentence times the act at; not those of the blocked act or of retiring."""
    found = []
    for m in AGE.finditer(sentence):
        before = sentence[max(0, m.start() - 25) : m.start()]
        if blocks.search(before) or re.search(r"retir\w*\s*$|retir\w*\s+\w+\s*$", before, re.I):
            continue
        age = int(m["age"])
        if 40 <= age <= 80:
            found.append((m.start(), m.end(), age))
    for m in BEFORE_RETIRING.finditer(sentence):
        n = m["n"]
        years = NUMBERS.get(n.lower(), None) if n and not n.isdigit() else (int(n) if n else 1)
        if years:
            found.append((m.start(), m.end(), retire - years))
    return found
