"""The derivations a reader redoes without the text writing them out, beyond one step from a fact (figures.py).

People write "three more vesting years at $800k bring in $2.4M", "+7 points, that is CHF 168,000", "EUR 6,000 a
month is EUR 72,000 a year", "their combined $7.4M". A figure is derived when it is, within the precision written:
- a base times one or two of the sentence's counts, or divided by one ("8 donees × $19k", "4 pairs", "3 × 152,500");
  counts are the numbers written in the sentence (digits or words) and the client's counts of people;
- a base times a share the sentence or the sheet gives: a percent written, its complement, points ("+4 pts"), the
  gap between two of the sheet's percents of one base (62% today, 50% target: 12 points), a limit in percent;
- a monthly base times 12 where the sentence or the fact speaks of months;
- a sum of two or three of the client's amounts (one currency), or the difference of two, when the figure is written
  precisely enough (0.5% for three, 2.5% for two) that a chance match is unlikely.
Bases are the client's amounts, the positions the sheet's percents make of them, the amounts the sentence writes,
and bare numbers written with a scale ("100k"). Every derivation records the figures it used (doc.inputs): a figure
the checker cannot tie to the sheet but that a checked derivation uses is an input the text assumes (unverified).
"""

from __future__ import annotations

import itertools
import math
import re

from reasoning.facts.checks.doc import (
    amount_facts,
    close_to,
    in_currency,
    in_sentence,
    percent_facts,
    sentence_of,
    sheet_rates,
)
from reasoning.facts.checks.lawfigures import named_shares
from reasoning.facts.checks.words import content_words, phrases, table
from reasoning.facts.quantities import format_amount

COUNT_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "both": 2, "twice": 2, "double": 2, "dozen": 12,
}  # fmt: skip
SCALES = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "mn": 1e6, "bn": 1e9, "million": 1e6, "billion": 1e9}
BARE = re.compile(
    r"(?<![\w.,$€£¥/])(\d{1,3}(?:[,'’]\d{3})+|\d+(?:\.\d+)?)(?:\s?(k|K|M|mn|bn|million|billion)\b)?(?![\d%])"
)
COUNT_WORD = re.compile(rf"\b(?:{'|'.join(COUNT_WORDS)})\b", re.IGNORECASE)
POINTS = re.compile(r"(\d+(?:\.\d+)?)\s?(?:percentage\s+)?(?:points?|pts?|pp)\b", re.IGNORECASE)
MONTHS = re.compile(r"\b(?:month|monthly|months|a year|per year|annual|annually|yearly)\b", re.IGNORECASE)
TIGHT_TWO, TIGHT_THREE = 0.025, 0.005
PERIOD_BEFORE = re.compile(r"\b(?:every|each|within|after|in|by|at|age|aged)\s+$", re.I)  # "every ten years": no count
SUM_WORDS = re.compile(r"\b(?:total\w*|combined|together|all told|in all|altogether|sum|overall)\b|\+", re.I)
REMAINING = re.compile(
    r"\b(?:net|after|remain\w*|left|leaves?|unused|spare|stays?|bleib\w*|verbleib\w*|übrig|abzüglich|reste\w*|après|minus|less|above|over|more than|exceeds?|excess|beyond|outside|rest"
    r"|gains?|profits?|appreciation|unreali[sz]ed|the\s+other|the\s+remainder)\b",
    re.I,
)  # a difference the sentence speaks of (a gain is a value less its cost); how precisely it must be written to count


# A sentence that speaks of people one by one ("each child", "per donee", "both spouses"): the client's counts of
# people may multiply or divide its amounts (reasoning/facts/data/words.toml, per_person_words).
PER_PERSON = re.compile(rf"\b(?:{phrases(table('words')['per_person_words'])})\b", re.IGNORECASE)


def numbers(doc, start, end):
    """(value, scaled, start, end) of each bare number in the sentence that is no quantity (a count, "152,500")."""
    found = []
    for m in BARE.finditer(doc.text, start, end):
        if doc.blocked[m.start()]:
            continue
        value = float(m[1].replace(",", "").replace("'", "").replace("’", ""))
        found.append((value * SCALES.get(m[2] or "", 1), bool(m[2]), m.start(), m.end()))
    return found


def counts(doc, start, end):
    """The counts a sentence names, and the client's counts of people."""
    free = [(s, e) for s, e in _free(doc, start, end)]
    written = [n for n, scaled, s, _e in numbers(doc, start, end) if not scaled and 1 < n <= 100 and n == int(n)
               and any(a <= s < b for a, b in free) and not PERIOD_BEFORE.search(doc.text, start, s)]  # fmt: skip
    written += [COUNT_WORDS[m[0].lower()] for m in COUNT_WORD.finditer(doc.text, start, end)
                if any(a <= m.start() < b for a, b in free)
                and not PERIOD_BEFORE.search(doc.text, start, m.start())]  # fmt: skip
    if not PER_PERSON.search(doc.text, start, end):
        return sorted(set(written)), []  # "the rentals are worth EUR 1.8M": no count of people makes it 2 × 900k
    people = {float(f.value) for f in doc.facts if f.kind == "person" and isinstance(f.value, int | float)}
    return sorted(set(written)), sorted(v for v in people | {2.0} if v > 1)


def _free(doc, start, end):
    """The stretches of a sentence outside its written arithmetic."""
    at = start
    for a, b in sorted(doc.consumed):
        if b <= at or a >= end:
            continue
        if a > at:
            yield at, a
        at = max(at, b)
    if at < end:
        yield at, end


def shares(doc, start, end, written=True):
    """The shares a sentence gives or the sheet implies, as fractions: percents and their complements, points, the
    gaps between two of the sheet's percents of one base, limits in percent (the sheet's only: written=False)."""
    found = set()
    before = doc.text[:start].rstrip()
    if before.endswith(";"):  # "taxed at the 27,5 % KESt; for every EUR 10.000 of gain that is EUR 2.750"
        start = sentence_of(doc, len(before) - 1)[0]
    for p in in_sentence(doc, start, end, "percent") if written else ():
        found |= {p.value / 100, 1 - p.value / 100}
    if written:
        found |= {float(m[1]) / 100 for m in POINTS.finditer(doc.text, start, end)}
    found |= {gap / 100 for gap, _share in gaps(doc)}
    found |= {f.value / 100 for f in doc.facts if f.kind == "limit" and f.unit == "%" and isinstance(f.value, int | float)}
    found |= named_shares(doc, start, end) if written else set()  # "tax-free from her SIPP": the law's 25 %
    return {s for s in found if 0 < s < 1}


def gaps(doc):
    """(points, share fact) for each class the sheet gives both today's share and a target of, on one base ("equities"
    62% and "equities target" 50% of the liquid portfolio: 12 points)."""
    sheet = percent_facts(doc)
    today = {f.label.lower(): f for f in sheet if f.role != "target" and f.base}
    found = []
    for t in sheet:
        share = today.get(t.label.lower().removesuffix(" target").strip()) if t.role == "target" else None
        if share and content_words(share.base) == content_words(t.base) and share.value != t.value:
            found.append((abs(t.value - share.value), share))
    return found


def derive(doc, q, known):
    """How q follows from `known` ((value, unit, name, role) tuples) by the steps above, or ""; the figures of the
    text it used go to doc.inputs."""
    start, end = sentence_of(doc, q.start)
    here = [x for x in in_sentence(doc, start, end, "amount") if x is not q and x.unit == q.unit]
    bases = [(v, name) for v, unit, name, _role in known if unit == q.unit]
    bases += [(x.value, x.text) for x in here]
    bases += [(n, doc.text[s:e]) for n, scaled, s, e in numbers(doc, start, end) if scaled or n >= 1000]
    written, people = counts(doc, start, end)
    total = goals_in_all(doc, q.unit)
    if total:  # the goals' sum itself, or split over their years; no share of it (a limit's base is another amount)
        if close_to(q, total):
            return f"the goals in all ({format_amount(total, q.unit)})"
        if YEARLY.search(doc.text, start, end):  # "Each year's EUR 300.000 of gifts": the goals over their years
            for n in horizon_years(doc) + _horizons_in_years(doc):
                if close_to(q, total / n):
                    return f"the goals in all ({format_amount(total, q.unit)}) over {n:g} years"
    for value, name in bases:
        for factors in _products(written, people):
            product = value * math.prod(factors)
            if close_to(q, product) or (len(factors) == 1 and close_to(q, value / factors[0])):
                sign = "×" if close_to(q, product) else "÷"
                return _used(doc, here, name, f"{name} {sign} " + f" {sign} ".join(f"{n:g}" for n in factors))
        for share in shares(doc, start, end):
            if close_to(q, value * share):
                return _used(doc, here, name, f"{share:.4g} of {name}")
        if (MONTHS.search(doc.text, start, end) or labelled_monthly(doc, value)) and _monthly(doc, value, name):
            for n in [1.0, *written, *horizon_years(doc)]:  # "Twenty years of EUR 6,000 monthly": 12 × 20 months
                if close_to(q, value * 12 * n) or (n == 1 and close_to(q, value / 12)):
                    return _used(doc, here, name, f"{name}, a month to a year" + (f" × {n:g}" if n != 1 else ""))
    holdings = [(v, f"the {f.label}" + ("" if f.unit == q.unit else f" in {q.unit}"))
                for f in amount_facts(doc) if f.role in ("", "holding") and not NOT_HELD.search(f.label)
                for v in in_currency(doc, f.value, f.unit, q.unit, start, end)]  # fmt: skip
    summed = SUM_WORDS.search(doc.text, start, end)
    relative = q.precision / abs(q.value) if q.value else 1.0
    if relative <= TIGHT_TWO or (summed and relative <= 2 * TIGHT_TWO):
        for (a, name_a), (b, name_b) in itertools.combinations(holdings, 2):
            if close_to(q, a + b):
                return f"{name_a} + {name_b}"
    if relative <= TIGHT_THREE or (summed and relative <= TIGHT_TWO):
        for parts in itertools.combinations(holdings, 3):
            if close_to(q, sum(v for v, _ in parts)):
                return " + ".join(name for _, name in parts)
    if REMAINING.search(doc.text, start, end):  # "Selling CHF 260k leaves CHF 1.56M of Swiss equities"
        before = [x for x in doc.quantities if x.kind == "amount" and x.unit == q.unit and x.end <= q.start]
        for value, name in [(v, n) for v, unit, n, _r in known if unit == q.unit] + [(x.value, x.text) for x in before]:
            for x in here + before:  # "the rest of their $20.4M, $3.4M" after "... is $17M;"
                if x.value < value and close_to(q, value - x.value):
                    return _used(doc, here, x.text, f"{name} - {x.text}")
    if REMAINING.search(doc.text, start, end) and relative <= TIGHT_TWO:
        how = _less_a_part(doc, q, here, start, end)
        if how:
            return how
    if REMAINING.search(doc.text, start, end):
        facts = [(f.value, f.label) for f in amount_facts(doc) if f.unit == q.unit]
        for (a, name_a), (b, name_b) in itertools.combinations(facts, 2):
            (big, name_big), (small, name_small) = ((a, name_a), (b, name_b)) if a > b else ((b, name_b), (a, name_a))
            # written roughly ("the other €1.4M"), only where the text named the part taken out before it
            if close_to(q, big - small) and (relative <= TIGHT_TWO or _named_before(doc, name_small, q.start)):
                return f"the {name_big} - the {name_small}"
    return ""


# A cost basis or a gain is no holding to add to another ("the cost basis + the rental duplexes" met a slip by chance).
NOT_HELD = re.compile(rf"\b(?:{phrases(table('words')['basis_words'])})\b", re.IGNORECASE)


def _less_a_part(doc, q, here, start, end):
    """How q is an amount less a part of another ("Paying the gifts out of the securities account leaves EUR 510,000"
    for three grandchildren at EUR 30,000 each; "Of each EUR 400,000 allowance, EUR 275,000 stays unused" where each
    parent gives half of EUR 250,000): the part is a client's amount or one the sentence writes, times a count of
    the sentence or of the client's people, or a simple share of it. Only for a figure written precisely."""
    said = content_words(doc.text[start:end])
    named = [f for f in amount_facts(doc) if f.unit == q.unit and content_words(f.label) & said]
    wholes = [(f.value, f"the {f.label}") for f in named] + [(x.value, x.text) for x in here]
    parts = wholes + [(f.value, f"the {f.label}") for f in amount_facts(doc) if f.unit == q.unit and f.role == "goal"]
    total = goals_in_all(doc, q.unit)
    parts += [(total, "the goals in all")] if total else []
    written, people = counts(doc, start, end)
    people += [float(f.value) for f in doc.facts if f.kind == "person" and isinstance(f.value, int | float)]
    factors = {n for n in [*written, *people] if n > 1} | {1 / n for n in [*written, *people] if n > 1} | {0.5, 1.0}
    for (whole, name), (part, part_name) in itertools.product(wholes, parts):
        for k in factors if part != whole else ():
            if part * k < whole and close_to(q, whole - part * k):
                return f"{name} - {k:.3g} × {part_name}"
    return ""


def goals_in_all(doc, unit):
    """The client's goals in one currency summed, each per-person goal times its people ("two hundred thousand euros
    to each of her two children and fifty thousand to each of four grandchildren": EUR 600,000), or None where the
    sheet has fewer than two goals to sum or none per person."""
    goals = [f for f in amount_facts(doc) if f.role == "goal" and f.unit == unit]
    total, per_person = 0.0, False
    for f in goals:
        role = PER_ROLE.search(f.label)
        people = people_of(doc, role[1].lower()) if role else 0
        per_person |= people > 1
        total += f.value * (people if people > 1 else 1)
    return total if goals and (per_person or len(goals) > 1) else None


PER_ROLE = re.compile(r"\b(?:per|each)\s+(child|grandchild|heir|beneficiary|donee|parent|sibling)\b", re.I)


def people_of(doc, role):
    """How many people of a role the sheet counts: named ones (value 1 each) and groups ("four grandchildren": 4)."""
    return sum(f.value for f in doc.facts if f.kind == "person" and f.role == role and isinstance(f.value, int | float))


YEARLY = re.compile(r"\b(?:each|every|per|a)\s+year(?:['’]s)?\b|\b(?:yearly|annual|annually)\b", re.I)


def _horizons_in_years(doc):
    """A horizon's span in years ("within the next two years": 2; "within 18 months": 1.5)."""
    return [f.value / (12 if f.unit == "months" else 1) for f in doc.facts if f.kind == "horizon"
            and f.unit in ("months", "years") and isinstance(f.value, int | float) and f.value > 0]  # fmt: skip


def horizon_years(doc):
    """The years the client's horizons span: an "over 5 years" horizon, or the years between two ages it names
    ("draw from 59 until his pension starts at 65": 6) or between an age it names and the client's age today."""
    years = {float(f.value) for f in doc.facts if f.kind == "horizon" and f.unit == "years"
             and isinstance(f.value, int | float)}  # fmt: skip
    ages = [float(f.value) for f in doc.facts if f.kind == "horizon" and f.unit == "age"
            and isinstance(f.value, int | float)]  # fmt: skip
    ages += [float(f.value) for f in doc.facts if f.kind == "age" and f.role == "client" and isinstance(f.value, int | float)]
    years |= {abs(a - b) for a, b in itertools.combinations(ages, 2)}
    return sorted(n for n in years if 1 < n <= 40)


def _named_before(doc, label, position):
    """The fact's label (a holding's name) written in the text before a position: "BTP make up about 36 % of the
    portfolio; the other €1.4M" names the part the remainder leaves out."""
    return bool(label) and re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", doc.text[:position], re.I) is not None


def labelled_monthly(doc, value):
    """A client's amount its label calls monthly ("monthly draw"): "the EUR 324,000 of draws" may be its years."""
    return any(f.value == value and MONTHLY_LABEL.search(f.label) for f in amount_facts(doc))


def _monthly(doc, value, name):
    """A base that is a monthly figure: a fact labelled monthly (or an expense or withdrawal), or a figure the text
    writes with "a month" or "monthly" after it; a yearly figure divides into months. Any other base times 12 meets
    wrong figures by chance."""
    for f in amount_facts(doc):
        if f.value == value and (MONTHLY_LABEL.search(f.label) or YEARLY_LABEL.search(f.label)):
            return True
    at = doc.text.find(name)
    return at >= 0 and bool(MONTHLY_AFTER.match(doc.text, at + len(name)))


MONTHLY_LABEL = re.compile(r"\b(?:monthly|a month|per month|withdrawal|expenses?|spending|rent|salary)\b", re.I)
YEARLY_LABEL = re.compile(r"\b(?:annual|yearly|a year|per year)\b", re.I)
MONTHLY_AFTER = re.compile(r"\s*(?:a|per|each|every|/)\s*(?:month|mo|year|yr|annum)\b|\s*(?:monthly|annually|yearly|p\.a\.)", re.I)


def _products(written, people):
    """The factors a product may use: every count the sentence writes (a count written and left out makes another
    figure), and up to one of the client's counts of people ("for the two children", "each parent")."""
    if not written:
        return [(n,) for n in people]
    return [tuple(written)] + [(*written, n) for n in people]


def _used(doc, here, name, how):
    for x in here:
        if x.text == name:
            doc.inputs.add((x.start, x.end))
    return how


def converted(doc, q):
    """(how, wrong) for an amount next to a rate the sentence names with its pair ("At EUR/CHF 0.94 the euro account
    comes to about CHF 904k"): derived when it is one of the client's amounts in the other currency (or one the
    sentence writes) converted the way the rate goes; wrong when it is one converted the other way round. With no
    such rate in the sentence, the sheet's rate converts too ("CHF 445k of 2.245 Mio." for the USD 500k account),
    the way it goes only: a figure the other way round may be one of the day's."""
    start, end = sentence_of(doc, q.start)
    rates = [r for r in doc.rates if start <= r.start < end and r.base and r.value and q.unit in (r.base, r.quote)]
    for rate in rates:
        quote = doc.text[rate.start : rate.end]
        how = _converted_by(doc, q, rate, start, end, quote)
        if how:
            return how, ""
        for value, name in _sources(doc, q, rate, start, end):
            right = rate.converts(value, _other(q, rate), q.unit)[0]
            wrong = value / rate.value if right == value * rate.value else value * rate.value
            if abs(wrong - q.value) <= q.precision + CONVERTED_SLACK * abs(wrong):
                return "", (
                    f"{q.text} converts {name} at {quote} the wrong way round: that is about "
                    f"{format_amount(right, q.unit)}"
                )
    for rate in [r for r in sheet_rates(doc) if r.base and r.value and q.unit in (r.base, r.quote)]:
        how = _converted_by(doc, q, rate, start, end, f"the sheet's {rate.base}/{rate.quote} {rate.value:g}")
        if how:
            return how, ""
    for rate in [r for r in sheet_rates(doc) if r.base and r.value and q.unit in (r.base, r.quote)]:
        wrong = _turned_round(doc, q, rate, start, end)
        if wrong:
            return "", wrong
    return "", ""


def _turned_round(doc, q, rate, start, end):
    """"The CHF account is worth about EUR 291,400" at the sheet's EUR/CHF 0.94: the account the sentence names (or
    an amount it writes) converted the wrong way round. Only where the two ways differ by far more than a day's
    move (5%), so a figure at another day's rate is never taken for one."""
    if abs(rate.value - 1 / rate.value) < 0.05 * max(rate.value, 1 / rate.value):
        return ""
    other = _other(q, rate)
    said = content_words(doc.text[start:end])
    said |= {code.lower() for word, code in table("words")["currency_names"].items() if word in said}  # "euro"
    sources = [(x.value, x.text) for x in in_sentence(doc, start, end, "amount") if x.unit == other]
    sources += [(f.value, f"the {f.label}") for f in amount_facts(doc)
                if f.unit == other and (content_words(f.label) - TURN_WEAK) & said]  # fmt: skip
    for value, name in sources:
        right = rate.converts(value, other, q.unit)[0]
        wrong = value / rate.value if right == value * rate.value else value * rate.value
        if abs(wrong - q.value) <= q.precision + TURNED_SLACK * abs(wrong) and not close_to(q, right):
            return (f"{q.text} converts {name} at the sheet's {rate.base}/{rate.quote} {rate.value:g} the wrong way "
                    f"round: that is about {format_amount(right, q.unit)}")  # fmt: skip
    return ""


TURNED_SLACK = 0.003  # with no rate written, only a figure written as that conversion: a sum near one is no slip
TURN_WEAK = frozenset(content_words("account accounts deposit balance fund total amount"))


def _other(q, rate):
    return rate.quote if q.unit == rate.base else rate.base


def _sources(doc, q, rate, start, end):
    """(value, name) of the amounts in the rate's other currency: the sentence's, then the client's."""
    other = _other(q, rate)
    sources = [(x.value, x.text) for x in in_sentence(doc, start, end, "amount") if x.unit == other]
    return sources + [(f.value, f"the {f.label}") for f in amount_facts(doc) if f.unit == other]


def _converted_by(doc, q, rate, start, end, quote):
    """How q is one of the amounts in the rate's other currency, converted the way the rate goes, or ""."""
    for value, name in _sources(doc, q, rate, start, end):
        right = rate.converts(value, _other(q, rate), q.unit)[0]
        if abs(right - q.value) <= q.precision + CONVERTED_SLACK * abs(right):
            return f"{name} at {quote}"
    return ""


CONVERTED_SLACK = 0.01  # a converted figure is rounded: 1% either way
