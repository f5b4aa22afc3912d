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
from reasoning.facts.phrases import sentences
from reasoning.facts.checks.words import content_words, named_fact, phrases, raw_words, table
from reasoning.facts.sheet import Fact
from reasoning.facts.quantities import currency_tables, find_quantities, matches

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
    law: set = field(default_factory=set)  # spans of figures the law's table decided (lawfigures.py)
    final: bool = False  # a final answer (coverage and the commitments are read only there)
    inputs: set = field(default_factory=set)  # spans of figures a checked derivation used
    consumed: list = field(default_factory=list)  # spans of written arithmetic: their numbers are no counts
    declared: list | None = None  # the figures the model declared with the text (None: none, the prose is read)
    evaluated: list = field(default_factory=list)  # those figures, evaluated (derivation.Evaluated)
    derived_by_model: set = field(default_factory=set)  # spans of amounts the declared figures decide (declared.py)


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
NUMBER = r"(\d+(?:\.\d+|,\d+(?![.,]?\d))?)"  # "0.93", and "0,93" as German and French write a rate
ABOUT = r"(?:(?:about|around|roughly|some|approximately|~)\s*)?"
RATES = [
    re.compile(rf"\b(?P<a>{CODE})\s?/\s?(?P<b>{CODE})\s*(?:(?:spot\s+)?rate\s+)?(?:of\s+|at\s+|=\s*|:\s*)?{NUMBER}"),
    re.compile(rf"{NUMBER}\s?(?P<b>{CODE})\s+(?:per|for each|to the|to one|/)\s+(?P<a>{CODE})\b"),
    re.compile(rf"(?P<b>{CODE})\s?{NUMBER}\s+(?:per|for each|to the|to one)\s+(?P<a>{CODE})\b"),
    re.compile(rf"\b1\s?(?P<a>{CODE})\s*(?:=|is|buys|equals|to)\s*{ABOUT}{NUMBER}\s?(?P<b>{CODE})"),
    re.compile(rf"\b1\s?(?P<a>{CODE})\s*(?:=|is|buys|equals|to)\s*{ABOUT}(?P<b>{CODE})\s?{NUMBER}"),
    # "£1 buys about €1.176", "$1 is worth CHF 0.80": the symbol before the one
    re.compile(rf"(?P<a>[$€£])\s?1\s+(?:=|is|buys|equals|gets|is\s+worth)\s+{ABOUT}(?P<b>{CODE})\s?{NUMBER}"),
    re.compile(rf"(?P<a>[$€£])\s?1\s+(?:=|is|buys|equals|gets|is\s+worth)\s+{ABOUT}{NUMBER}\s?(?P<b>{CODE})"),
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
            number = number.replace(",", ".") if number else None
            value = float(number) if number else None
            precision = 0.5 * 10 ** -len(number.split(".")[1]) if number and "." in number else 0.5
            base, quote = (SYMBOLS.get(groups.get(k) or "", groups.get(k) or "") for k in ("a", "b"))
            named = len(pair) == 2
            found.append(Rate(m.start(), m.end(), pair if named else frozenset(), value, precision,
                              base if named else "", quote if named else ""))  # fmt: skip
    return found


def split_sentences(text):
    """The sentences of a text, as phrases.sentences reads them for every check (one splitter for the checker and
    the constraints)."""
    return list(sentences(text))


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


PER_PERIOD_AFTER = re.compile(
    r"\s*(?:a|per|each|every|/)\s*(?P<period>month|quarter|week)\b|\s*(?P<ly>monthly|quarterly|weekly)\b", re.I
)
IN_A_YEAR = {"month": 12, "monthly": 12, "quarter": 4, "quarterly": 4, "week": 52, "weekly": 52}


def per_year(doc, q):
    """How many of q's period make a year, where the text writes it per month, quarter or week; else 0."""
    m = PER_PERIOD_AFTER.match(doc.text, q.end)
    return IN_A_YEAR[(m["period"] or m["ly"]).lower()] if m else 0


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
    return any(not r.pair or r.pair == pair for r in doc.rates + sheet_rates(doc))


def sheet_rates(doc):
    """The exchange rates on the client's sheet, with the way they go where the sheet says it: the reader writes
    "GBP/CHF 1.12" as the fact "GBP/CHF exchange rate" (or "GBP"), CHF 1.12; a fact labelled "exchange rate" with no
    pair is a rate of none."""
    return list(_fact_rates(tuple((f.label, f.value, f.unit, f.text) for f in doc.facts)))


CURRENCY_IN_LABEL = re.compile(r"^\s*([A-Z]{3})(?:\s*/\s*([A-Z]{3}))?(?:\s+(?:exchange|FX|conversion|spot)\s+rate)?\s*$")


@lru_cache(maxsize=64)
def _fact_rates(facts):
    found = []
    for label, value, unit, text in facts:
        m = _rate_label(label)
        quote = m and (m[2] or unit)
        if m and isinstance(value, int | float) and value > 0 and quote and quote != m[1] and re.fullmatch(r"[A-Z]{3}", quote):
            digits = f"{value}".split(".")[1] if "." in f"{value}" else ""
            precision = 0.5 * 10 ** -len(digits) if digits else 0.5
            found.append(Rate(-1, -1, frozenset((m[1], quote)), float(value), precision, m[1], quote))
            continue
        if re.search(r"\b(?:exchange|fx|conversion)\s+rate\b", label or "", re.IGNORECASE):
            found.append(Rate(-1, -1, frozenset(), None))
        found += read_rates(f"{value} {text}")
    return tuple(found)


def in_currency(doc, value, source, target, start=0, end=None):
    """What `value` in `source` may be in `target` at the rates the sentence [start, end) or the sheet states: [] when
    none converts that pair (the same value when the currencies agree)."""
    if source == target or not source:
        return [value]
    end = len(doc.text) if end is None else end
    rates = [r for r in doc.rates if start <= r.start < end] + sheet_rates(doc)
    return [v for r in rates if not r.pair or r.pair == frozenset((source, target)) for v in r.converts(value, source, target)]


def _rate_label(label):
    """The label of an exchange rate: "GBP/CHF exchange rate", or the reader's bare "GBP"; "PEA" or "ISA" is no code."""
    m = CURRENCY_IN_LABEL.match(label or "")
    codes = currency_tables()[0]
    return m if m and m[1] in codes and (not m[2] or m[2] in codes) else None


def is_rate(fact):
    """An exchange rate on the sheet ("GBP/CHF exchange rate": CHF 1.12): no amount of the client's."""
    return bool(_rate_label(fact.label)) or "exchange rate" in (fact.label or "").lower()


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
    if LAW_WORDS.search(near) and not _named_before(doc, q, near):
        return True
    if _next_to_rule(doc, q) or _at_a_rules_edge(doc, q, start):
        return True
    if LIMIT_WORDS.search(near) or BOUND_BEFORE.search(doc.text, max(start, q.start - 24), q.start):
        return any(not m.negated and start <= m.start < end for m in doc.mentions)
    return False


def _named_before(doc, q, near):
    """"At a price of €6.5 the retirement allowance ...": the words of law come after the figure only, and the words
    before it name one of the client's amounts: the figure is that amount (checked), not the law's."""
    before = near.split("#")[0]
    if LAW_WORDS.search(before):
        return False
    named = named_fact(doc, q, amount_facts(doc))
    return named is not None and not LAW_WORDS.search(named.label)


EDGE_BEFORE = re.compile(rf"\b(?:{phrases(LAW['edge_phrases'])})\s*(?:about\s+|around\s+|roughly\s+|~\s*)?$", re.I)


def _at_a_rules_edge(doc, q, start):
    """"the 24 % bracket topping out at $394,600": an amount after a rule's edge, in a clause that names the rule's
    word (a bracket, an allowance, a threshold) before it."""
    edge = EDGE_BEFORE.search(doc.text, max(start, q.start - 40), q.start)
    if not edge:
        return False
    clause = CLAUSE_BREAK.split(doc.text[start : edge.start()])[-1]
    return bool(LAW_WORDS.search(clause) or LIMIT_WORDS.search(clause))


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
        if isinstance(f.value, int | float) and not is_rate(f)
        and (f.kind == "amount" or (f.kind == "limit" and len(f.unit) == 3 and f.unit.isupper()))
    ]  # fmt: skip


def percent_facts(doc):
    return [f for f in doc.facts if f.kind == "percent" and isinstance(f.value, int | float)]


def fact_of(q, facts):
    return next(iter(owners_of(q, facts)), None)


def owners_of(q, facts):
    """The facts a figure is, closest first: "$2M" can mean 1.5-2.5M, but where a fact is $2M it is that one."""
    found = [f for f in facts if matches(q, f.value, f.unit)]
    if not found:
        return []
    best = min(abs(float(f.value) - q.value) for f in found)
    return [f for f in found if abs(float(f.value) - q.value) <= best + 1e-9 * max(1.0, abs(q.value))]


def close_to(q, value):
    return abs(q.value - value) <= q.precision + 1e-9 * max(1.0, abs(value))


def positions(doc):
    """The amounts the sheet's percents make of its amounts, as facts: "Lucia's share" (25% of the USD 24M sale
    price) is USD 6M, the "spending rate" (3.5% of the endowment) CHF 1.68M."""
    found = []
    for p in percent_facts(doc):
        base = content_words(p.base)
        whole = [f for f in amount_facts(doc) if base and base <= content_words(f.label)]
        if len(whole) == 1 and p.role in ("share", "spending", ""):
            value = whole[0].value * p.value / 100
            found.append(Fact(p.label, "amount", value, whole[0].unit, base=whole[0].label, role=p.role))
    return found
