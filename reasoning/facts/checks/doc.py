"""The checker's shared reading of one text: its sentences, exchange-rate quotes, amounts and percents, the rules it
names, and which amounts are the law's (statutory) rather than the client's. Every check reads the same Doc.

Statutory amounts: an amount next to a word of tax law (exemption, allowance, exclusion, bracket, nil-rate band,
per child: reasoning/facts/data/law.toml), or next to a threshold, limit or bound in a sentence that names a rule
("the NIIT applies above USD 250k of MAGI"), or a rule's own amount ("the Sparer-Pauschbetrag of EUR 1,000",
"403(b) ($23,000 a year)") is the law's figure, not the client's: neither a figure nor a label is checked there.
Next to an account the client holds ("ISAs (£240k)") an amount is its balance, unless it is yearly.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from reasoning.facts import regimes
from reasoning.facts.checks.words import phrases, raw_words, table
from reasoning.facts.quantities import find_quantities, matches

LAW = table("law")


# ---- reading the text ---------------------------------------------------------------------------------------------


@dataclass
class Doc:
    text: str
    facts: list
    quantities: list  # amounts and percents, outside exchange-rate quotes
    rates: list
    sentences: list  # (start, end)
    mentions: list  # the rules the text names (regimes.find_regimes)
    blocked: bytearray = field(default_factory=bytearray)
    starts: list = field(default_factory=list)  # sentence starts, and quantity starts, for bisect
    positions: list = field(default_factory=list)
    attached: dict = field(default_factory=dict)  # a figure's span -> the labels attached to it
    every: list = field(default_factory=list)  # every quantity, ages and years too
    derived: dict = field(default_factory=dict)  # span of a result shown -> how it was derived
    combined: list = field(default_factory=list)  # (q1, q2) in different currencies joined by an expression
    statutory: set = field(default_factory=set)  # spans of amounts tied to a rule's threshold
    final: bool = False  # a final answer (coverage and the commitments are read only there)
    inputs: set = field(default_factory=set)  # spans of figures a checked derivation used
    consumed: list = field(default_factory=list)  # spans of written arithmetic: their numbers are no counts


@dataclass(frozen=True)
class Rate:
    start: int
    end: int
    pair: frozenset  # {"EUR", "CHF"}, or empty when the text names no pair
    value: float | None
    precision: float = 0.0
    base: str = ""  # "EUR/CHF 0.94": 1 EUR (base) = 0.94 CHF (quote); "" when the text names no pair
    quote: str = ""

    def converts(self, value, source, target):
        """What `value` in `source` is in `target` at this rate: one way for a named pair (EUR/CHF 0.94 multiplies
        euros, divides francs), both ways for a rate with no pair ("an exchange rate of 0.94")."""
        if not self.value:
            return []
        if self.base and self.quote:
            if (source, target) == (self.base, self.quote):
                return [value * self.value]
            if (source, target) == (self.quote, self.base):
                return [value / self.value]
            return []
        return [value * self.value, value / self.value]


CODE = r"(?:[A-Z]{3}|\$|€|£)"
SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
NUMBER = r"(\d+(?:\.\d+)?)"
RATES = [
    re.compile(rf"\b(?P<a>{CODE})\s?/\s?(?P<b>{CODE})\s*(?:(?:spot\s+)?rate\s+)?(?:of\s+|at\s+|=\s*|:\s*)?{NUMBER}"),
    re.compile(rf"{NUMBER}\s?(?P<b>{CODE})\s+(?:per|for each|to the|to one|/)\s+(?P<a>{CODE})\b"),
    re.compile(rf"(?P<b>{CODE})\s?{NUMBER}\s+(?:per|for each|to the|to one)\s+(?P<a>{CODE})\b"),
    re.compile(rf"\b1\s?(?P<a>{CODE})\s*(?:=|is|buys|equals|to)\s*{NUMBER}\s?(?P<b>{CODE})"),
    re.compile(rf"\b1\s?(?P<a>{CODE})\s*(?:=|is|buys|equals|to)\s*(?P<b>{CODE})\s?{NUMBER}"),
    # "an exchange rate of 0.94", "at a rate of 0.94"; "converted at today's rate", "at the current exchange rate":
    # a rate used, even unnamed. "exchange rates" alone (a risk, a view) states none.
    re.compile(
        rf"\b(?:(?:exchange|FX|conversion|currency)\s+rate|a\s+rate)\s+(?:of|at|is|=|:)\s*{NUMBER}"
        rf"|\bconvert(?:ed|ing)?\s+at\s+(?:{NUMBER}|(?:[\w'’]+\s+){{0,3}}?rates?\b)"
        r"|\bat\s+(?:the\s+)?(?:current|spot|today['’]s|prevailing)\s+(?:exchange\s+|FX\s+)?rates?\b",
        re.IGNORECASE,
    ),
]


def read_rates(text):
    found = []
    for pattern in RATES:
        for m in pattern.finditer(text):
            if any(m.start() < r.end and r.start < m.end() for r in found):
                continue
            groups = m.groupdict()
            pair = frozenset(SYMBOLS.get(c, c) for c in (groups.get("a"), groups.get("b")) if c)
            number = next((g for g in m.groups() if g and re.fullmatch(NUMBER, g)), None)
            value = float(number) if number else None
            precision = 0.5 * 10 ** -len(number.split(".")[1]) if number and "." in number else 0.5
            base, quote = (SYMBOLS.get(groups.get(k) or "", groups.get(k) or "") for k in ("a", "b"))
            named = len(pair) == 2
            found.append(Rate(m.start(), m.end(), pair if named else frozenset(), value, precision,
                              base if named else "", quote if named else ""))  # fmt: skip
    return found


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'*\-•\d])|\n\s*|;\s+")


ABBREVIATION = re.compile(rf"(?:\b(?:{phrases(LAW['sentence_abbreviations'])})\.)$")


def split_sentences(text):
    spans, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if ABBREVIATION.search(text, max(0, m.start() - 8), m.start()):
            continue  # "Fr. 400'000", "2,5 Mio. EUR": a point that ends no sentence
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def read(text, facts):
    rates = read_rates(text)
    every = find_quantities(text)
    quantities = [
        q for q in every
        if q.kind in ("amount", "percent") and not any(r.start <= q.start < r.end for r in rates) and not _spelled(q)
    ]  # fmt: skip
    doc = Doc(text, list(facts), quantities, rates, split_sentences(text), regimes.find_regimes(text))
    doc.every = every
    doc.starts = [s for s, _ in doc.sentences]
    doc.positions = [q.start for q in quantities]
    doc.blocked = bytearray(len(text))  # figures, ages, years and rate quotes: never read again as bare numbers
    for x in [*every, *rates]:
        doc.blocked[x.start : x.end] = b"\x01" * (x.end - x.start)
    doc.statutory = {(q.start, q.end) for q in quantities if q.kind == "amount" and _is_statutory(doc, q)}
    return doc


def _spelled(q):
    """"the two euro assets": a small amount in words and no scale is a count before a noun, not money."""
    return q.kind == "amount" and not any(c.isdigit() for c in q.text) and not q.scaled and q.value < 100


def sentence_of(doc, position):
    at = bisect.bisect_right(doc.starts, position) - 1
    if at >= 0 and position < doc.sentences[at][1]:
        return doc.sentences[at]
    return 0, len(doc.text)


def in_sentence(doc, start, end, kind=None):
    """The amounts and percents of one sentence (of one kind)."""
    at = bisect.bisect_left(doc.positions, start)
    found = []
    while at < len(doc.quantities) and doc.quantities[at].start < end:
        if kind is None or doc.quantities[at].kind == kind:
            found.append(doc.quantities[at])
        at += 1
    return found


def has_rate(doc, a, b):
    pair = frozenset((a, b))
    rates = doc.rates + list(_fact_rates(tuple((f.label, str(f.value), f.text) for f in doc.facts)))
    return any(not r.pair or r.pair == pair for r in rates)


@lru_cache(maxsize=64)
def _fact_rates(facts):
    found = []
    for label, value, text in facts:
        if re.search(r"\b(?:exchange|fx|conversion)\s+rate\b", label, re.IGNORECASE):
            found.append(Rate(-1, -1, frozenset(), None))
        found += read_rates(f"{value} {text}")
    return tuple(found)


# ---- statutory amounts ----------------------------------------------------------------------------------------------

# Words of tax law: an amount next to one is the law's. A limit or threshold may be the client's own ("annual draw
# limit: SGD 240k"), so it, like a bound ("above USD 250k"), counts only in a sentence that names a rule.
LAW_WORDS = re.compile(rf"\b(?:{phrases(LAW['law_words'])})\b", re.IGNORECASE)
LIMIT_WORDS = re.compile(rf"\b(?:{phrases(LAW['limit_words'])})\b", re.IGNORECASE)
BOUND_BEFORE = re.compile(
    r"\b(?:up to|above|below|over|under|exceeding|beyond|more than|less than|at most|at least|first)\s*$", re.I
)
CLAUSE_BREAK = re.compile(r"\b(?:while|and|but|so|when|if|because|since|whereas|then|which|who|with|without)\b|[,;:(]")


def near_words(doc, q):
    """The three words before a figure and the three after it, each within its clause ("before # after")."""
    start, end = sentence_of(doc, q.start)
    before = CLAUSE_BREAK.split(" ".join(doc.text[start : q.start].split()[-3:]))[-1]
    after = CLAUSE_BREAK.split(" ".join(doc.text[q.end : end].split()[:3]))[0]
    return f"{before} # {after}"


def _is_statutory(doc, q):
    """An amount the text ties to a rule's threshold, limit or exemption (within three words, in the same clause)."""
    start, end = sentence_of(doc, q.start)
    near = near_words(doc, q)
    if LAW_WORDS.search(near) or _next_to_rule(doc, q):
        return True
    if LIMIT_WORDS.search(near) or BOUND_BEFORE.search(doc.text, max(start, q.start - 24), q.start):
        return any(not m.negated and start <= m.start < end for m in doc.mentions)
    return False


RULE_THEN_AMOUNT = re.compile(
    r"\s*(?:(?:limit|allowance|cap|maximum|max|contribution|threshold|exemption|amount)\s*)?(?:of|is|at|:|=|,)?"
    r"\s*\(?\s*(?:about|around|roughly|up to|~)?\s*$",
    re.IGNORECASE,
)
AMOUNT_THEN_RULE = re.compile(r"\s*(?:\(|\b(?:in|into|to)\s+(?:the|a|an|her|his|their)?)?\s*$", re.IGNORECASE)


def _next_to_rule(doc, q):
    """"the Sparer-Pauschbetrag of EUR 1,000", "403(b) ($23,000 a year)", "$7,000 into the Roth IRA": a rule's
    own amount. ("USD 450k of NIIT" is not: that is a label slip.)"""
    for m in doc.mentions:
        before = m.end <= q.start and q.start - m.end <= 30 and RULE_THEN_AMOUNT.fullmatch(doc.text, m.end, q.start)
        after = q.end <= m.start and m.start - q.end <= 12 and AMOUNT_THEN_RULE.fullmatch(doc.text, q.end, m.start)
        if before or after:
            held = any(raw_words(m.text) & raw_words(str(f.value)) for f in doc.facts if f.kind == "account") or any(
                raw_words(m.text) & raw_words(f.label) for f in doc.facts if f.kind == "amount"
            )  # the client's SIPPs, ISAs, 401(k) on the sheet as amounts
            # next to an account the client holds ("ISAs (£240k)") an amount is its balance, unless it is yearly
            return not held or bool(YEARLY.match(doc.text, q.end))
    return False


YEARLY = re.compile(r"\s*(?:a|per|each|every)\s+(?:year|annum)\b|\s*(?:annually|yearly|p\.a\.)", re.IGNORECASE)


# ---- the client's facts -----------------------------------------------------------------------------------------


def amount_facts(doc):
    """The client's amounts, and the limits stated in money ("a cash floor of EUR 500k" is a figure of the client's
    too)."""
    return [
        f for f in doc.facts
        if isinstance(f.value, int | float)
        and (f.kind == "amount" or (f.kind == "limit" and len(f.unit) == 3 and f.unit.isupper()))
    ]  # fmt: skip


def percent_facts(doc):
    return [f for f in doc.facts if f.kind == "percent" and isinstance(f.value, int | float)]


def fact_of(q, facts):
    return next((f for f in facts if matches(q, f.value, f.unit)), None)


def close_to(q, value):
    return abs(q.value - value) <= q.precision + 1e-9 * max(1.0, abs(value))


