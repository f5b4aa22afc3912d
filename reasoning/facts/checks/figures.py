"""figure: each amount (and each percent given as the client's share) is the client's, or derived from the client's.

A money amount is a fact (same currency, within the precision written: quantities.matches), or derived from facts
by arithmetic the text shows ("70% of USD 3.2M = USD 2.24M"), or by one step a reader can redo (advisors write "the
USD 2.24M in employer stock" without the sum): a fact times a percent fact or its complement; a share the sentence
names ("three tranches", "5-10% of wealth") of a known amount; half, a third ... a twentieth of an amount the
sentence names; a sum or difference of two amounts the text names; a total of amounts written before "totalling".
It fails when its scale is dropped ("$3.2" for USD 3.2M), when it sits under a fact's label but is not that fact
("portfolio: USD 3.5M"), when it restates a goal or constraint with another figure than the client wrote, or when
it is neither a fact nor derived. An amount the answer proposes ("sell USD 500k", "gift ~$100k", "the CRT
(~$500k)"), estimates ("about $8,980 a month") or takes as an example ("each EUR 10,000") is the advisor's own: it
fails only in the first three ways, or when the arithmetic in its brackets gives another amount.

Percents are client figures only where the text presents them as the client's share ("70% of her portfolio", "54%
of her EUR 4.5M portfolio", "a 70% concentration") or under a fact's label ("SGD target: 45%"). Rates, returns,
drawdowns, fees and bands, and percents the advisor proposes ("cap at 10% of the portfolio"), are never flagged.
Years, ages and list numbers are not figures.

    fails:  "the portfolio of $3.2"  (USD 3.2M)    passes: "the USD 2.24M in employer stock"  (70% of USD 3.2M)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from reasoning.facts.checks.arithmetic import APPROX_SLACK
from reasoning.facts.checks.derive import POINTS, converted, derive, shares
from reasoning.facts.checks.doc import (
    LAW_WORDS,
    LIMIT_WORDS,
    Doc,
    near_words,
    amount_facts,
    close_to,
    fact_of,
    in_sentence,
    percent_facts,
    sentence_of,
)
from reasoning.facts.checks.words import (
    OF_WORDS,
    attached_labels,
    content_words,
    figure_at,
    label_in,
    named_fact,
    phrases,
    raw_words,
    table,
)
from reasoning.facts.quantities import currency_tables, find_quantities, format_amount, format_percent, matches
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

PARTS = re.compile(
    r"\b(?P<n>\d{1,2}|two|three|four|five|six|ten|twelve)\s+(?:equal\s+)?(?:tranches|instalments|installments|steps|"
    r"parts|payments|slices|portions|gifts|sales|sells|years|tax years|quarters)\b",
    re.IGNORECASE,
)
PART_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10, "twelve": 12}
FRACTION_WORD = re.compile(
    r"\b(?:half|halves|thirds?|quarters?|fifths?|tenths?|twentieths?|split|equal|evenly|each|per|tranches?|"
    r"instalments?|installments?)\b",
    re.IGNORECASE,
)  # a simple share of an amount is derived only where the sentence speaks of shares
SIMPLE_SHARES = (1 / 2, 1 / 3, 2 / 3, 1 / 4, 3 / 4, 1 / 5, 1 / 10, 1 / 20)


def run(doc: Doc) -> list[Finding]:
    return _amounts(doc) + _percents(doc)


def _amounts(doc):
    findings = []
    facts = amount_facts(doc)
    derived = [q for q in doc.quantities if (q.start, q.end) in doc.derived and q.kind == "amount"]
    proposed = [q for q in doc.quantities if q.kind == "amount" and _proposed(doc, q)]
    for q in doc.quantities:
        if q.kind != "amount" or (q.start, q.end) in doc.statutory:
            continue
        fact = fact_of(q, facts)
        wrong = _contradicted(doc, q, share=0.8) if fact else ""  # "help their son buy a house with $400k"
        if fact and not wrong:
            findings.append(Finding("figure", True, q.text, f"{q.text} is the {fact.label}", q.start, q.end))
            continue
        if wrong:
            findings.append(Finding("figure", False, q.text, wrong, q.start, q.end))
            continue
        shown = doc.derived.get((q.start, q.end))
        turned, inverted = ("", "") if shown else converted(doc, q)
        if inverted:
            findings.append(Finding("figure", False, q.text, inverted, q.start, q.end))
            continue
        shown = shown or turned
        dropped, sure = _unknown(doc, q, facts, derived)
        wrong = "" if shown else (dropped if sure else "") or _mislabelled(doc, q, facts) or _contradicted(doc, q)
        if wrong:  # checked before any implied derivation: a chance match must not excuse it
            findings.append(Finding("figure", False, q.text, wrong, q.start, q.end))
            continue
        others = derived + [p for p in proposed if p is not q]
        how = shown or _implicit(doc, q, facts, others) or derive(doc, q, _known(doc, facts) + _as_known(others, q))
        if how:
            doc.derived.setdefault((q.start, q.end), how)  # a share of it may follow ("that is 40% of ...")
            findings.append(Finding("figure", True, q.text, f"{q.text} is derived: {how}", q.start, q.end))
            continue
        detail, sure = _unknown(doc, q, facts, derived)
        if sure or q not in proposed:
            why = "" if sure else _undecidable(doc, q)
            findings.append(Finding("figure", bool(why), q.text, why or detail, q.start, q.end, verified=not why))
    # a figure no check could tie to the sheet, that a checked derivation then used: an input the text assumes
    return [_assumed(f) if not f.ok and (f.start, f.end) in doc.inputs and " neither " in f.detail else f
            for f in findings]  # fmt: skip


def _as_known(quantities, q):
    return [(d.value, d.unit, d.text, "derived in the text") for d in quantities if d is not q]


def _assumed(finding):
    detail = f"unverified: {finding.text} is not on the fact sheet; the text assumes it and derives from it"
    return Finding("figure", True, finding.text, detail, finding.start, finding.end, verified=False)


TOTAL_BEFORE = re.compile(r"\b(?:combined|total|totalling|totaling|all told|altogether)\s*(?:of\s+)?[~≈]?\s*$", re.I)
CONVERTING = re.compile(
    r"\b(?:convert\w*|exchange\w*|in (?:francs|euros?|dollars|pounds|sterling)|at (?:today's|the current|the spot)"
    r"|rate)\b",
    re.I,
)


def _undecidable(doc, q):
    """Why the checker cannot decide an amount it cannot tie to the sheet, or "" when it can (it is then wrong): a
    threshold or limit of a rule it does not know, or a conversion at a rate the text and the sheet do not give."""
    start, end = sentence_of(doc, q.start)
    if LIMIT_WORDS.search(near_words(doc, q)) or LAW_WORDS.search(near_words(doc, q)):
        return f"unverified: {q.text} reads as a rule's threshold or limit, which the sheet does not hold"
    if TOTAL_BEFORE.search(doc.text, max(start, q.start - 20), q.start):
        return f"unverified: {q.text} is a total whose parts the sentence does not give"
    units = {x.unit for x in in_sentence(doc, start, end, "amount")} | {f.unit for f in amount_facts(doc)}
    converting = any(start <= r.start < end for r in doc.rates) or CONVERTING.search(doc.text, start, end)
    if converting and units - {q.unit}:
        return f"unverified: {q.text} is a conversion at a rate the text and the sheet do not state"
    return ""


def _mislabelled(doc, q, facts):
    named = named_fact(doc, q, facts)
    if named:
        return f"{q.text} is given as the {named.label}, which is {format_amount(named.value, named.unit)}"
    return ""


CLAUSE_MARKS = re.compile(r"[,;:()]")
PAREN_AFTER = re.compile(r"[^().;]{0,60}\(([^()]*)\)")


def _contradicted(doc, q, share=0.6):
    """Why a figure the answer may propose is still wrong: the arithmetic in the brackets after it gives another
    amount ("Sell USD 774k ... (USD 328k - USD 70k = USD 258k)"), or it restates a goal or constraint of the client's
    with another figure than the client wrote. "" when neither."""
    paren = PAREN_AFTER.match(doc.text, q.end)
    if paren and "=" in paren[1]:
        results = [d for d in doc.quantities if d.kind == q.kind and d.unit == q.unit
                   and paren.start(1) <= d.start < paren.end(1) and (d.start, d.end) in doc.derived]  # fmt: skip
        if results and not close_to(q, results[-1].value):
            return f"{q.text} does not match the arithmetic given for it ({paren[1]})"
    restated = _restated(doc, q, share)
    if restated:
        fact, said = restated
        if not any(close_to(q, x.value) for x in said):
            return f'{q.text} restates the client\'s {fact.kind} "{fact.value}", which says {said[0].text}'
    return ""


def _restated(doc, q, share=0.6):
    """The goal or constraint the sentence of q restates (`share` of its words), with its figures of q's kind."""
    start, end = sentence_of(doc, q.start)
    sentence = content_words(doc.text[start:end])
    for fact in doc.facts:
        if fact.kind not in ("goal", "constraint"):
            continue
        codes = currency_tables()[0]
        words = {w for w in content_words(str(fact.value)) if not w[:1].isdigit() and w.upper() not in codes}
        if len(words) >= 3 and len(words & sentence) >= share * len(words):
            said = [x for x in find_quantities(str(fact.value)) if x.kind == q.kind and x.unit == q.unit]
            written = [x for x in in_sentence(doc, start, end, q.kind) if any(close_to(x, y.value) for y in said)]
            if said and not written:  # with the client's figure written beside it, q is another figure
                return fact, said
    return None


PROPOSING = re.compile(rf"\b(?:{phrases(table('law')['proposing_stems'])})\w*\b", re.IGNORECASE)


ESTIMATE_BEFORE = re.compile(
    r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|some|circa|each|every|per|say|e\.g\.|"
    r"for example|hypothetical))\s*$",
    re.IGNORECASE,
)


def _proposed(doc, q):
    """An amount the answer proposes ("sell USD 500k", "gift ~$100k", "the CRT (~$500k)"), estimates ("about
    $8,980 a month") or takes as an example ("each EUR 10,000"): the advisor's own figure, not the client's; it is
    left unflagged unless it drops its scale, sits under a fact's label, contradicts the arithmetic in its brackets
    or restates a goal or constraint with another figure."""
    start = sentence_of(doc, q.start)[0]
    clause = CLAUSE_MARKS.split(doc.text[max(start, q.start - 60) : q.start])[-1]
    if PROPOSING.search(" ".join(clause.split()[-6:])):
        return True
    if ESTIMATE_BEFORE.search(doc.text, max(start, q.start - 20), q.start):
        return True  # "about $8,980 a month", "each EUR 10,000 of losses": an estimate or an example
    listed = [f for f in doc.facts if f.kind in ("instrument", "account") and f.value]
    for form, term, _start, _end in attached_labels(doc, q):
        words = content_words(term)
        if form != "of" and any(words & content_words(str(f.value)) for f in listed):
            return not any(label_in(f.label, raw_words(term)) for f in amount_facts(doc))
    return False


def _implicit(doc, q, facts, derived):
    """How q follows from the known amounts in one step the text need not show, or "": a known position (70% of the
    portfolio); a share the sentence names ("three tranches", "5-10% of wealth") of any known amount; or a simple
    share, sum or difference of a known amount the sentence itself names. Steps from amounts the sentence does not
    name are not tried: over every pair of facts, a wrong figure would meet one by chance."""
    known = _known(doc, facts) + [(d.value, d.unit, d.text, "derived in the text") for d in derived if d is not q]
    known = [k for k in known if k[1] == q.unit]
    if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start):
        q = _widened(q)
    for value, _unit, name, role in known:
        if close_to(q, value):
            return name if role in name else f"{name}, {role}"
    start, end = sentence_of(doc, q.start)
    shares = [(p.value / 100, p.text) for p in doc.quantities if p.kind == "percent" and start <= p.start < end]
    for m in PARTS.finditer(doc.text, start, end):
        count = int(m["n"]) if m["n"].isdigit() else PART_WORDS[m["n"].lower()]
        if count:
            shares.append((1 / count, m[0]))
    for value, _unit, name, _role in known:
        for share, text in shares:
            if close_to(q, value * share):
                return f"{text} of {name}"
    here = [x for x in in_sentence(doc, start, end, "amount") if x is not q and x.unit == q.unit]
    written = [x for x in doc.quantities if x.kind == "amount" and x is not q and x.unit == q.unit]
    near = [k for k in known if any(close_to(x, k[0]) for x in here)]
    named = [k for k in known if any(close_to(x, k[0]) for x in written)]
    for value, _unit, name, _role in near if FRACTION_WORD.search(doc.text, start, end) else ():
        for share in SIMPLE_SHARES:
            if close_to(q, value * share):
                return f"{_fraction_name(share)} of {name}"
    # a sum or difference: one operand in the sentence and the other known, or both written in the text
    targets = {f"{format_percent(p.value)} of the {f.label}" for p in percent_facts(doc) if p.role == "target"
               for f in facts}  # fmt: skip
    for value, _unit, name, _role in near + named:
        for other, _other_unit, other_name, role in known if (value, _unit, name, _role) in near else named:
            if role in targets:
                continue  # a position at a target is where the holding should be, not a part of it to add or take
            if other != value and close_to(q, value + other):
                return f"{name} + {other_name}"
            if other != value and close_to(q, abs(value - other)):
                return f"{name} - {other_name}" if value > other else f"{other_name} - {name}"
    before = [x for x in here if x.end <= q.start]
    for count in range(2, len(before) + 1):  # "SGD 3.1m, SGD 4.725m and SGD 1.16m: SGD 8.985m"
        if close_to(q, sum(x.value for x in before[-count:])):
            return " + ".join(x.text for x in before[-count:])
    if TOTAL_WORD.search(doc.text, max(0, q.start - 24), q.start):  # "totalling": any few amounts written before
        distinct = list({x.value: x for x in written if x.end <= q.start}.values())[-8:]
        for count in (2, 3, 4):
            for parts in itertools.combinations(distinct, count):
                if close_to(q, sum(x.value for x in parts)):
                    return " + ".join(x.text for x in parts)
    return ""


def _known(doc, facts):
    """(value, unit, name, role) of each fact amount, and of each position a percent fact makes of one ("70% of the
    portfolio": the employer stock)."""
    known = [(f.value, f.unit, format_amount(f.value, f.unit), f"the {f.label}") for f in facts]
    for p in percent_facts(doc):
        base = content_words(p.base)
        for f in facts:
            if not base or base & content_words(f.label):
                value = f.value * p.value / 100
                role = f"{format_percent(p.value)} of the {f.label}"
                known.append((value, f.unit, f"{format_amount(value, f.unit)} ({role})", role))
                if p.role == "target":
                    continue  # the rest beside a target is no position: "outside the bonds target" met slips by chance
                rest, role = f.value - value, f"the {f.label} outside the {p.label}"
                known.append((rest, f.unit, f"{format_amount(rest, f.unit)} ({role})", role))
    return known


APPROX_BEFORE = re.compile(r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|some|circa))\s*$", re.I)


def _widened(q):
    """The same figure, read as the approximation the text says it is (2% either way)."""
    return replace(q, precision=max(q.precision, APPROX_SLACK * abs(q.value)))


TOTAL_WORD = re.compile(r"\b(?:total\w*|in all|altogether|combined|sum)\b[^.;]*$", re.IGNORECASE)


def _fraction_name(share):
    return {1 / 2: "half", 1 / 3: "a third", 2 / 3: "two thirds", 1 / 4: "a quarter", 3 / 4: "three quarters",
            1 / 5: "a fifth", 1 / 10: "a tenth", 1 / 20: "a twentieth"}[share]  # fmt: skip


def _unknown(doc, q, facts, derived):
    """Why an amount fails, and whether that is sure: a known amount with its scale dropped ("$3.2" for USD 3.2M);
    else (not sure: it may be the answer's own proposal) neither a fact nor derived."""
    if not q.scaled and q.value < 1000:
        known = _known(doc, facts) + [(d.value, d.unit, d.text, "derived in the text") for d in derived]
        for exponent in (3, 6, 9):
            scale = 10**exponent
            for value, unit, _name, role in known:
                if unit == q.unit and abs(q.value * scale - value) <= q.precision * scale:
                    return f"{q.text} drops its scale: {role} is {format_amount(value, unit)}", True
    return f"{q.text} is neither on the fact sheet nor derived in the text", False


# ---- percents presented as the client's share ------------------------------------------------------------------------

SHARE_AFTER = re.compile(
    r"\s*(?:\([^()]{0,40}\)\s*)?(?:of\s+(?:(?:the|her|his|their|its|your|our|client['’]s|total|overall|whole|"
    r"entire|investable|liquid|current)\s+)*(?P<base>portfolio|wealth|net worth|assets|holdings|investments)\b"
    r"|(?:[\w'’-]+\s+){0,2}?(?:concentration|stake)\b|(?:is|are|sits?|held)\s+in\b)",
    re.IGNORECASE,
)
PROPOSAL_BEFORE = re.compile(
    r"\b(?:to|at|below|under|above|over|than|max(?:imum)?|most|up|cap\w*|limit\w*|target\w*|trim\w*|reduc\w*|"
    r"sell\w*|sold|buy\w*|bought|build\w*|add\w*|keep\w*|hold\w*|aim\w*|by|within|from|each|per|every|another|"
    r"further|extra|additional|new|only|just|around|about|roughly|approximately|some|if|say|like|allocat\w*|"
    r"invest\w*|mov\w*|shift\w*|put|give|gift\w*|donat\w*|contribut\w*|rebalanc\w*|diversif\w*|exceed\w*|"
    r"drop\w*|fall\w*|fell|ris\w*|rose|grow\w*|los\w*|lost|swap\w*|exchang\w*|hedg\w*|collar\w*)\s*$",
    re.IGNORECASE,
)
RANGE_BEFORE = re.compile(r"\d\s*(?:-|–|to)\s*$")


def _percents(doc):
    findings = []
    facts = percent_facts(doc)
    for q in doc.quantities:
        if q.kind != "percent":
            continue
        named = named_fact(doc, q, facts)
        if not named and not _presented_as_share(doc, q):
            continue
        fact = named if named and matches(q, named.value, named.unit) else None if named else fact_of(q, facts)
        how = doc.derived.get((q.start, q.end)) or ("" if named else _ratio_of_known(doc, q, facts))
        how = f"the {fact.label}" if fact else f"derived: {how}" if how else ""
        if how:
            findings.append(Finding("figure", True, q.text, f"{q.text} is {how}", q.start, q.end))
        else:
            detail = (
                f"{q.text} is given as the {named.label}, which is {format_percent(named.value)}"
                if named
                else f"{q.text} is given as the client's share but is neither on the fact sheet nor derived"
            )
            findings.append(Finding("figure", False, q.text, detail, q.start, q.end))
    for q in doc.quantities:  # "cannot hold more than 90% in EUR" for the client's 30%
        if q.kind == "percent" and not any(f.start == q.start for f in findings) and _contradicted(doc, q):
            findings.append(Finding("figure", False, q.text, _contradicted(doc, q), q.start, q.end))
    return findings


def _presented_as_share(doc, q):
    if not q.text.rstrip().endswith(("%", "percent", "per cent")):
        return False
    if not SHARE_AFTER.match(doc.text, q.end) and not _of_fact_amount(doc, q):
        after = OF_WORDS.match(doc.text, q.end, q.end + 60)
        words = content_words(after[1]) if after else frozenset()
        if not any(words & content_words(f.label) for f in amount_facts(doc)):
            return False
    before = doc.text[max(0, q.start - 30) : q.start]
    return not (RANGE_BEFORE.search(before) or PROPOSAL_BEFORE.search(before))


def _of_fact_amount(doc, q):
    """"54% of her €4.5M portfolio": a percent of an amount on the sheet."""
    m = OF_FIGURE.match(doc.text, q.end)
    figure = figure_at(doc, m.end()) if m else None
    return bool(figure and figure.kind == "amount" and fact_of(figure, amount_facts(doc)))


OF_FIGURE = re.compile(r"\s*of\s+")


def _ratio_of_known(doc, q, facts):
    """How a share follows in one step: the rest of a percent fact with a base (30% beside 70% of the portfolio),
    or one fact amount (or amount derived in the text) as a share of a larger one."""
    for f in facts:
        if f.base and abs(100 - f.value - q.value) <= q.precision:
            return f"the rest of the {f.base} beside the {f.label}"
    start, end = sentence_of(doc, q.start)
    for share in shares(doc, start, end, written=False):
        if abs(share * 100 - q.value) <= q.precision:
            return "a gap between two of the sheet's percents, or a limit"
    if any(abs(float(m[1]) - q.value) <= q.precision for m in POINTS.finditer(doc.text, start, end)):
        return "the points the sentence gives"
    derived = [d for d in doc.quantities if (d.start, d.end) in doc.derived and d.kind == "amount"]
    known = [(f.value, f.unit, f.label) for f in amount_facts(doc)] + [(d.value, d.unit, d.text) for d in derived]
    for a, unit, name in known:
        for b, other_unit, other_name in known:
            if unit == other_unit and 0 < a < b and abs(a / b * 100 - q.value) <= q.precision:
                return f"{name} as a share of {other_name}"
    return ""


