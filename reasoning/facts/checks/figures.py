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
from reasoning.facts.checks.derive import (
    COUNT_WORDS,
    PER_ROLE,
    POINTS,
    people_of,
    converted,
    derive,
    gaps,
    goals_in_all,
    labelled_monthly,
    shares,
)
from reasoning.facts.checks.doc import (
    LAW_WORDS,
    LIMIT_WORDS,
    Doc,
    near_words,
    amount_facts,
    close_to,
    fact_of,
    in_sentence,
    per_year,
    percent_facts,
    positions,
    sentence_of,
)
from reasoning.facts.checks.results import (
    count_times,
    from_named,
    item_named,
    presented_as_result,
    product_before,
    share_of_named,
)
from reasoning.facts.checks.words import (
    OF_WORDS,
    POSSESSIVE,
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
    r"\b(?P<n>\d{1,2}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?:equal\s+|(?:annual|yearly|quarterly|monthly)\s+)?(?:tranches|instalments|installments|steps|"
    r"parts|payments|slices|portions|gifts|sales|sells|years|tax years|quarters)\b",
    re.IGNORECASE,
)
PART_WORDS = COUNT_WORDS  # "eight quarterly sales": 8
FRACTION_WORD = re.compile(
    r"\b(?:half|halves|thirds?|quarters?|fifths?|tenths?|twentieths?|split|equal|evenly|each|per|tranches?|"
    r"instalments?|installments?)\b",
    re.IGNORECASE,
)  # a simple share of an amount is derived only where the sentence speaks of shares
SIMPLE_SHARES = (1 / 2, 1 / 3, 2 / 3, 1 / 4, 3 / 4, 1 / 5, 1 / 10, 1 / 20)


def run(doc: Doc) -> list[Finding]:
    # An amount the model declared with a derivation is decided by it (declared.py, which runs first); the prose is
    # read for the rest: the percents, and the amounts declared with none (the model's own) or not at all.
    amounts = [f for f in _amounts(doc) if (f.start, f.end) not in doc.derived_by_model]
    return amounts + _percents(doc)


def _amounts(doc):
    findings = []
    facts = amount_facts(doc)
    derived = [q for q in doc.quantities if (q.start, q.end) in doc.derived and q.kind == "amount"]
    offered = [q for q in doc.quantities if q.kind == "amount" and proposed(doc, q)]
    for q in doc.quantities:
        if q.kind != "amount":
            continue
        if (q.start, q.end) in doc.statutory:  # the law's figure, unless the sentence computes it wrongly
            wrong = _product_wrong(doc, q, product_before(doc, q))
            findings += [Finding("figure", False, q.text, wrong, q.start, q.end)] if wrong else []
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
        held = "" if shown else _range_holds(doc, q, facts, derived)
        if held:
            findings.append(Finding("figure", True, q.text, held, q.start, q.end))
            continue
        turned, inverted = ("", "") if shown else converted(doc, q)
        if inverted:
            findings.append(Finding("figure", False, q.text, inverted, q.start, q.end))
            continue
        shown = shown or turned
        dropped, sure = _unknown(doc, q, facts, derived)
        wrong = "" if shown else (dropped if sure else "") or _mislabelled(doc, q, facts) or _contradicted(doc, q)
        wrong = wrong or ("" if shown or q in offered else _more_than_it_holds(doc, q, facts))
        wrong = wrong or ("" if shown else _misstated_position(doc, q))
        wrong = wrong or _change_wrong(doc, q)
        product = None if shown else product_before(doc, q) or (None if q in offered else share_of_named(doc, q))
        wrong = wrong or _product_wrong(doc, q, product)
        if wrong:  # checked before any implied derivation: a chance match must not excuse it
            findings.append(Finding("figure", False, q.text, wrong, q.start, q.end))
            continue
        ends = _range_of(doc, q) or ()  # the two ends of a range are no operands of each other
        earlier = [x for x in _derived_so_far(doc) if x.end <= q.start and x not in derived and x not in ends]
        others = derived + earlier + [p for p in offered if p is not q]
        steps = [k for k in _known(doc, facts, q) if k[3] != REST]
        how = shown or (product[1] if product else "") or _implicit(doc, q, facts, others)
        how = how or derive(doc, q, steps + _as_known(others, q)) or count_times(doc, q) or from_named(doc, q)
        if how:
            doc.derived.setdefault((q.start, q.end), how)  # a share of it may follow ("that is 40% of ...")
            findings.append(Finding("figure", True, q.text, f"{q.text} is derived: {how}", q.start, q.end))
            continue
        detail, sure = _unknown(doc, q, facts, derived)
        left = "" if sure or _undecidable(doc, q) else _remainder_wrong(doc, q)
        if left:  # "Funding the $4M SLAT from the brokerage leaves $4.2M in it": the brokerage less $4M
            findings.append(Finding("figure", False, q.text, left, q.start, q.end))
            continue
        if sure or q not in offered:
            why = "" if sure else _undecidable(doc, q) or _unplaced(doc, q, lambda x: _placed(doc, x, facts, offered))
            findings.append(Finding("figure", bool(why), q.text, why or detail, q.start, q.end, verified=not why))
    # a figure no check could tie to the sheet, that a checked derivation then used: an input the text assumes
    # (in a step; the answer the client reads carries no figure the checker cannot place, assumed or not)
    assumed = (lambda f: not doc.final and not f.ok and (f.start, f.end) in doc.inputs and " neither " in f.detail)
    return [_assumed(f) if assumed(f) else f
            for f in findings]  # fmt: skip


def _derived_so_far(doc):
    """The amounts derived so far, in this sentence or an earlier one: a later figure may build on them ("on that",
    "of that", "so EUR 730k must come from sales" after "only EUR 470k of the EUR 720k")."""
    return [x for x in doc.quantities if x.kind == "amount" and (x.start, x.end) in doc.derived]


RANGE_BETWEEN = re.compile(r"\s*(?:-|–|—|to)\s*$")
RANGE_WIDTH = 0.25  # a range is read as holding a figure only when it is this narrow (of its upper end) or narrower


def _range_of(doc, q):
    """The two ends of the range q is one end of ("CHF 1.4–1.5 Mio.", "$44–48K"), in one unit, or None."""
    amounts = [x for x in doc.quantities if x.kind == "amount" and x.unit == q.unit]
    for a, b in zip(amounts, amounts[1:]):
        if q in (a, b) and a.end <= b.start and RANGE_BETWEEN.fullmatch(doc.text, a.end, b.start) and a.value < b.value:
            return a, b
    return None


def _range_holds(doc, q, facts, derived):
    """How the range q ends ("Budget CHF 1.4–1.5 Mio.") holds a fact or a figure derived in one step (CHF 1.44M,
    4% of the assets): then both ends are fine though neither is the figure itself; "" when it holds none."""
    ends = _range_of(doc, q)
    if ends is None:
        return ""
    lo, hi = ends[0].value - ends[0].precision, ends[1].value + ends[1].precision
    if hi - lo > RANGE_WIDTH * hi:
        return ""  # "EUR 100-200k" holds most figures near it by chance
    whole = replace(q, value=(lo + hi) / 2, precision=(hi - lo) / 2)
    fact = fact_of(whole, facts)
    how = f"the {fact.label}" if fact else _implicit(doc, whole, facts, [d for d in derived if d not in ends])
    span = doc.text[ends[0].start : ends[1].end]
    return f"{q.text} is an end of the range {span}, which holds {how}" if how else ""


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
    if LAW_WORDS.search(doc.text, start, end) and THRESHOLD_BEFORE.search(doc.text, max(start, q.start - 24), q.start):
        return f"unverified: {q.text} reads as the threshold of the rule the sentence names"  # "... once the gain exceeds"
    if TOTAL_BEFORE.search(doc.text, max(start, q.start - 20), q.start):
        return f"unverified: {q.text} is a total whose parts the sentence does not give"
    units = {x.unit for x in in_sentence(doc, start, end, "amount")} | {f.unit for f in amount_facts(doc)}
    converting = any(start <= r.start < end for r in doc.rates) or CONVERTING.search(doc.text, start, end)
    if converting and units - {q.unit}:
        return f"unverified: {q.text} is a conversion at a rate the text and the sheet do not state"
    return ""


THRESHOLD_BEFORE = re.compile(
    r"\b(?:exceeds?|exceeding|above|beyond|reaches|reaching|tops?|passes|over|more than|übersteigt|dépasse)\s+$", re.I
)


REMAINS = re.compile(
    r"\b(?:remain\w*|left|leaves?|leaving|keeps?|keeping|still\s+holds?|holds?|stays?|verbleib\w*|bleib\w*|reste\w*)\b",
    re.IGNORECASE,
)
AFTER_TAKING = re.compile(r"\b(?:after|once|when|leaves?|leaving|left|nach)\b", re.IGNORECASE)
OUTLAY_WORDS = re.compile(r"\b(?:gifts?|grants?|donations?|paid|pays?|funding|funds?|repa\w+|spend\w*)\b", re.I)


def _remainder_wrong(doc, q):
    """Why q, stated as what remains of one client's holding the sentence names after one amount is taken out of it,
    does not follow; "" when it does, or when the sentence does not pin the whole and the part down to one each."""
    start, end = sentence_of(doc, q.start)
    if not (REMAINS.search(doc.text, start, end) and AFTER_TAKING.search(doc.text, start, end)):
        return ""
    said = content_words(doc.text[start:end])
    held = [f for f in amount_facts(doc) if f.role == "holding"] + [p for p in positions(doc) if p.role == "share"]
    wholes = [f for f in held if f.unit == q.unit and f.value > q.value and (content_words(f.label) - WHOLE_WEAK) & said]
    wholes = [f for f in wholes if f.role == "share"] or wholes  # "the equity sleeve": the position, not the assets
    takes = [(x.value, x.text) for x in in_sentence(doc, start, q.start, "amount") if x.unit == q.unit]  # before q
    total = goals_in_all(doc, q.unit) if OUTLAY_WORDS.search(doc.text, start, end) else None
    takes += [(total, "the goals in all")] if total and not takes else []
    takes += [(f.value, f"the {f.label}") for f in amount_facts(doc) if not takes and f.unit == q.unit
              and f.role in ("liability", "goal") and (content_words(f.label) - WHOLE_WEAK) & said]  # fmt: skip
    if len(wholes) != 1 or len(takes) != 1:
        return ""
    whole, (part, name) = wholes[0], takes[0]
    seen = _widened(q) if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start) else q
    if part >= whole.value or close_to(seen, whole.value - part) or close_to(seen, whole.value):
        return ""
    left = format_amount(whole.value - part, q.unit)
    return f"{q.text} does not follow: the {whole.label} less {name} is {left}"


WHOLE_WEAK = frozenset(content_words("account accounts balance value amount total fund"))


def _unplaced(doc, q, placed):
    """Why an amount neither on the sheet nor derived is unverified rather than wrong: the sentence does not present
    it as the result of figures written in it that the checker can place, nor as the value of an item of the
    client's it names (checks/results.py); "" when it does (it is then wrong). A final answer, which the client reads,
    carries no figure the checker cannot place: there it fails, and the session says its answer needs review."""
    if doc.final or presented_as_result(doc, q, placed) or item_named(doc, q):
        return ""
    return f"unverified: {q.text} is neither on the fact sheet nor derived, and the sentence does not derive it"


def _placed(doc, x, facts, offered):
    """Whether the checker can place an amount written as an operand: a fact, derived, the law's, or the advisor's
    own proposal or estimate."""
    span = (x.start, x.end)
    return bool(fact_of(x, facts)) or span in doc.derived or span in doc.statutory or x in offered


def _product_wrong(doc, q, product):
    """"Nineteen per cent on EUR 1.04M comes to EUR 179,600": the one product the sentence writes before the cue
    gives another amount (whatever the amount's source, the result does not follow from it)."""
    if not product:
        return ""
    seen = _widened(q) if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start) else q
    value, words = product
    if close_to(seen, value) or close_to(seen, value * _periods_between(doc, q)):
        return ""
    return f"{q.text} does not follow: {words} is {format_amount(value, q.unit)}"


PER_YEAR_AFTER = re.compile(r"\s*(?:a|per|each)\s+year\b|\s*(?:annually|yearly|p\.\s?a\.)", re.I)
MONTHLY = re.compile(r"\b(?:a|per|each)\s+month\b|\bmonthly\b|\bmonatlich|\bpar\s+mois\b", re.I)
PER_YEAR = re.compile(r"\b(?:a|per)\s+year\b|\bannual|\bjährlich|\bpar\s+an\b", re.I)


def _periods_between(doc, q):
    """12 where q is a year's worth of a monthly figure the sentence gives before it ("CHF 3'780 a month ..., i.e.
    CHF 45'360 a year"), 1/12 the other way round, else 1."""
    start, _end = sentence_of(doc, q.start)
    if PER_YEAR_AFTER.match(doc.text, q.end) and MONTHLY.search(doc.text, start, q.start):
        return 12
    if per_year(doc, q) == 12 and PER_YEAR.search(doc.text, start, q.start):
        return 1 / 12
    return 1


YEARS_OF = re.compile(rf"\b(?P<n>\d+(?:\.\d+)?|{'|'.join(COUNT_WORDS)})\s+(?:more\s+|full\s+)?years\s+of\b", re.I)


def _years_of(doc, q, named):
    """"Four years of spending (£336,000)": the named fact over the years the sentence writes before q, a month's
    figure twelve times a year."""
    start, _end = sentence_of(doc, q.start)
    m = next(iter(reversed(list(YEARS_OF.finditer(doc.text, start, q.start)))), None)
    if m is None:
        return False
    n = float(COUNT_WORDS.get(m["n"].lower(), 0) or m["n"])
    monthly = MONTHLY.search(named.label) or labelled_monthly(doc, named.value)
    return close_to(q, named.value * n * (12 if monthly else 1))


def _mislabelled(doc, q, facts):
    named = named_fact(doc, q, facts)
    owned = any(form == "prefix" and POSSESSIVE.search(term) for form, term, _s, _e in attached_labels(doc, q))
    if not named and owned:  # "Lucia's $3.6M": whose share it is ("cash CHF 144k" may be a trade in the cash)
        named = named_fact(doc, q, positions(doc))
    if named and not matches(q, named.value, named.unit) and not _written_change(doc, q) and not _all_of(doc, q, named):
        if named.unit == q.unit and _years_of(doc, q, named):
            return ""  # "Four years of spending (£336,000)": 48 months of the monthly spending
        return f"{q.text} is given as the {named.label}, which is {format_amount(named.value, named.unit)}"
    return ""


CHANGE_NOUN = re.compile(
    r"[\s,:;—–-]*(?:(?:that\s+is|i\.e\.|so|or)\s+)?(?:an?\s+|the\s+)?(?:net\s+)?(?:purchase|sale|increase|decrease|rise|"
    r"fall|drop|difference|change|reduction|addition|top-up|buy|sell|shift|move)s?\s+(?:of\s+)?(?:about\s+|some\s+)?$",
    re.IGNORECASE,
)


def _change_wrong(doc, q):
    """"Bonds go from CHF 440'200 to CHF 568'000, a purchase of CHF 137'800": the change named right after a written
    "from A to B" is B − A, or it fails."""
    start, _end = sentence_of(doc, q.start)
    before = _two_before(doc, q)
    if len(before) != 2 or not CHANGE_NOUN.match(doc.text, before[1].end, q.start):
        return ""
    a, b = before
    if not FROM_TO_AMOUNTS.search(doc.text, start, b.end) or not re.search(r"\bfrom\s+\S*$", doc.text[start : a.start + 1]):
        return ""
    change = abs(b.value - a.value)
    seen = _widened(q) if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start) else q
    if close_to(seen, change):
        return ""
    return f"{q.text} does not follow: from {a.text} to {b.text} is a change of {format_amount(change, q.unit)}"


FROM_TO_AMOUNTS = re.compile(r"\bfrom\s+.{1,30}?\s+to\s+", re.IGNORECASE)


def _all_of(doc, q, fact):
    """q is a per-person goal for all its people ("grandchild gifts ($76,000)" for four grandchildren at $19,000)."""
    role = PER_ROLE.search(fact.label)
    people = people_of(doc, role[1].lower()) if role else 0
    return people > 1 and close_to(q, fact.value * people)


def _two_before(doc, q):
    """The last two amounts of q's currency its sentence writes before it."""
    start, _end = sentence_of(doc, q.start)
    return [x for x in in_sentence(doc, start, q.start, "amount") if x.unit == q.unit][-2:]


def _written_change(doc, q):
    """q is the difference or sum of the two amounts its sentence writes just before it ("BTP go from €1.08M to
    €1.62M: a purchase of €540,000"): the reader sees where it comes from, whatever word names it."""
    before = _two_before(doc, q)
    return len(before) == 2 and any(close_to(q, v) for v in (abs(before[0].value - before[1].value),
                                                           before[0].value + before[1].value))  # fmt: skip


IN_HOLDING = re.compile(
    r"\s*(?:already\s+|now\s+|currently\s+|still\s+|held\s+|sitting\s+|invested\s+)?in\s+"
    r"(?:the\s+|her\s+|his\s+|their\s+|its\s+|your\s+|our\s+)?((?:[\w'’()-]+\s*){1,3})"
)


FUTURE = re.compile(
    r"\b(?:will|would|could|might|grow\w*|grew|grown|project\w*|forecast\w*|expect\w*|by\s+(?:19|20)\d\d|"
    r"(?:in|after|within)\s+\w+\s+years)\b",
    re.IGNORECASE,
)


def _more_than_it_holds(doc, q, facts):
    """"With $2.6M in traditional IRAs" where they hold $2.4M: what is in a holding is all of it or a part of it,
    never more."""
    m = IN_HOLDING.match(doc.text, q.end)
    if not m or FUTURE.search(doc.text, *sentence_of(doc, q.start)):
        return ""  # "by 2030 the IRA will hold $2.6M": a projection may exceed today's balance
    words = raw_words(m[1])
    for f in facts:
        if f.role == "holding" and f.unit == q.unit and label_in(f.label, words) and q.value - q.precision > f.value:
            return f"{q.text} is more than the {f.label} holds ({format_amount(f.value, f.unit)})"
    return ""


POSITION_STATED = re.compile(
    r"(?:^|[.;:!?]\s+|\b(?:the|her|his|their|its|our|your)\s+)(?P<subject>[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,2})"
    r"(?:\s*,[^,;]{1,30},)?\s+(?:is|are|sits?\s+at|stands?\s+at|comes?\s+to|amounts?\s+to)\s+"
    r"(?P<hedge>(?:(?:about|roughly|around|nearly|almost|approximately|some|~)\s*)*)$",
    re.IGNORECASE,
)


def _misstated_position(doc, q):
    """"Equities, at 45 %, are roughly CHF 18 Mio. today" where equities are 45% of CHF 36M: a class the sheet gives
    today's share of, stated in money, is that share of its base (2% off when hedged). Targets, and a sentence about
    another time or a change, are left alone."""
    start, end = sentence_of(doc, q.start)
    m = POSITION_STATED.search(doc.text[start : q.start])  # the sentence's own start is a "^"
    if not m or FUTURE.search(doc.text, start, end) or CHANGE.search(doc.text, start, end):
        return ""
    subject = content_words(m["subject"])
    for p, base in _positions_named(doc, subject):
        if base.unit != q.unit:
            continue
        value = base.value * p.value / 100
        slack = APPROX_SLACK * value if m["hedge"].strip() else 0.0
        if abs(q.value - value) > q.precision + slack:
            return (f"{q.text} is given as the {p.label} ({format_percent(p.value)} of the {base.label}), "
                    f"which is {format_amount(value, base.unit)}")  # fmt: skip
    return ""


CHANGE = re.compile(r"\b(?:after|once|then|target\w*|rebalanc\w*|if|when|should|must|need\w*|would)\b", re.I)


def _positions_named(doc, subject):
    """(percent fact, base amount) for each of today's shares (no target) whose whole label is the subject."""
    found = []
    for p in percent_facts(doc):
        if p.role == "target" or not p.base or content_words(p.label) != subject:
            continue
        bases = [f for f in amount_facts(doc) if content_words(p.base) and content_words(p.base) <= content_words(f.label)]
        if len(bases) == 1:
            found.append((p, bases[0]))
    return found


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
    today = q.kind == "percent" and TODAY_BEFORE.search(doc.text, max(0, q.start - 40), q.start)
    restated = None if today else _restated(doc, q, share)  # "of which the single stock is about 65%": today's
    if restated:
        fact, said = restated
        if not any(close_to(q, x.value) for x in said):
            return f'{q.text} restates the client\'s {fact.kind} "{fact.value}", which says {said[0].text}'
    return ""


TODAY_BEFORE = re.compile(
    r"\b(?:of which|today|currently|now|at present)\b[^.;]*?\b(?:is|are|makes up|stands at)\s+(?:about\s+|roughly\s+|"
    r"around\s+|some\s+|nearly\s+|almost\s+|over\s+)?$",
    re.IGNORECASE,
)


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


RESULT_VERBS = re.compile(rf"\b(?:{phrases(table('law')['result_verbs'])})\b", re.IGNORECASE)


def _fact_does(doc, subject):
    """The words before a proposing verb name one of the client's amounts ("the RSUs add $2.8M", "the building
    contributes $3.5M"): the sentence states what that holding does, and its figure is checked."""
    said = content_words(subject)
    return bool(said) and any(
        (content_words(f.label) - WEAK_LABEL) and (content_words(f.label) - WEAK_LABEL) & said for f in amount_facts(doc)
    )


WEAK_LABEL = frozenset(content_words("annual monthly balance value amount account fund total portfolio wealth"))


ESTIMATE_BEFORE = re.compile(
    r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|some|circa|each|every|per|say|e\.g\.|"
    r"for example|hypothetical))\s*$",
    re.IGNORECASE,
)


PRONOUN_AFTER = re.compile(r"\s+(?:him|her|them|it|us|you|the\s+(?:client|couple|estate|family))\b", re.IGNORECASE)


def _puts_someone(words, verb):
    """"That puts him $2.5M above the exclusion": "put" with a person as its object states where a figure leaves
    them, no amount put anywhere ("give her $50k" stays a proposal)."""
    whole = re.match(r"\w*", words[verb.start() :])[0].lower()
    return whole in ("put", "puts", "putting") and bool(PRONOUN_AFTER.match(words, verb.start() + len(whole)))


def proposed(doc, q):
    """An amount the answer proposes ("sell USD 500k", "gift ~$100k", "the CRT (~$500k)"), estimates ("about
    $8,980 a month") or takes as an example ("each EUR 10,000"): the advisor's own figure, not the client's; it is
    left unflagged unless it drops its scale, sits under a fact's label, contradicts the arithmetic in its brackets
    or restates a goal or constraint with another figure."""
    start = sentence_of(doc, q.start)[0]
    clause = CLAUSE_MARKS.split(doc.text[max(start, q.start - 60) : q.start])[-1]
    clause = RESULT_VERBS.split(clause)[-1]  # "Selling CHF 520k leaves CHF 1.2M": a result, not a proposal
    words = " ".join(clause.split()[-6:])
    verb = PROPOSING.search(words)
    if verb and not _fact_does(doc, words[: verb.start()]) and not _puts_someone(words, verb):
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
    known = _known(doc, facts, q) + [(d.value, d.unit, d.text, "derived in the text") for d in derived if d is not q]
    known = [k for k in known if k[1] == q.unit]
    if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start):
        q = _widened(q)
    for value, _unit, name, role in known:
        if close_to(q, value):
            return name if role in name else f"{name}, {role}"
    known = [k for k in known if k[3] != REST]  # a rest the sentence does not name: no operand of a further step
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


REST = "a rest the sentence does not name"


def _known(doc, facts, q=None):
    """(value, unit, name, role) of each fact amount, and of each position a percent fact makes of one ("70% of the
    portfolio": the employer stock); the rest beside a position only where q's sentence names the class left out
    ("the portfolio outside cash"): else a rest meets a wrong figure by chance."""
    known = [(f.value, f.unit, format_amount(f.value, f.unit), f"the {f.label}") for f in facts]
    said = content_words(doc.text[slice(*sentence_of(doc, q.start))]) if q is not None else frozenset()
    for p in percent_facts(doc):
        base = content_words(p.base)
        for f in facts:
            if not base or base & content_words(f.label):
                value = f.value * p.value / 100
                role = f"{format_percent(p.value)} of the {f.label}"
                known.append((value, f.unit, f"{format_amount(value, f.unit)} ({role})", role))
                if p.role == "target":
                    continue  # the rest beside a target is no position: "outside the bonds target" met slips by chance
                if q is not None and content_words(p.label) - said:
                    role = f"the {f.label} outside the {p.label}"  # a rest: as it stands, never a step's operand
                    known.append((f.value - value, f.unit, f"{format_amount(f.value - value, f.unit)} ({role})", REST))
                    continue
                rest, role = f.value - value, f"the {f.label} outside the {p.label}"
    for points, share in gaps(doc):  # the amount a class is off its target: what a rebalancing moves
        for f in facts:
            if content_words(share.base) and content_words(share.base) <= content_words(f.label):
                value = f.value * points / 100
                role = f"the {share.label} gap to target, {points:g} points of the {f.label}"
                known.append((value, f.unit, f"{format_amount(value, f.unit)} ({role})", role))
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
RANGE_BEFORE = re.compile(r"\d\s*(?:-|–|to|and)\s*$")  # "5-10%", "between 40 and 50 %"


def _percents(doc):
    findings = []
    facts = percent_facts(doc)
    for q in doc.quantities:
        if q.kind != "percent" or (q.start, q.end) in doc.law:
            continue
        named = named_fact(doc, q, facts)
        if not named and not _presented_as_share(doc, q):
            continue
        fact = named if named and matches(q, named.value, named.unit) else None if named else fact_of(q, facts)
        how = doc.derived.get((q.start, q.end)) or ("" if named else _ratio_of_known(doc, q, facts))
        how = how or ("" if fact else _written_ratio(doc, q))  # "At $17.2M the $900,000 cap equals ... about 5.2%"
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


def _written_ratio(doc, q):
    """How a percent is one amount its sentence writes as a share of another it writes, or "": the sentence computes
    its own rate ("the $900,000 cap is about 5.2% of $17.2M"), which need not be the sheet's rate of that name."""
    start, end = sentence_of(doc, q.start)
    amounts = in_sentence(doc, start, end, "amount")
    seen = _widened(q) if APPROX_BEFORE.search(doc.text, max(0, q.start - 16), q.start) else q
    for a, b in itertools.permutations(amounts, 2):
        if a.unit == b.unit and 0 < a.value < b.value and abs(100 * a.value / b.value - seen.value) <= seen.precision:
            return f"{a.text} as a share of {b.text}"
    return ""


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


