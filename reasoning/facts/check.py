"""Every thought and answer checked against the client's fact sheet: figures, arithmetic, currencies, places, labels.

`check(text, facts, final)` returns Findings of the kinds in sheet.CHECK_KINDS, ok=True ones too (each figure and
sum that checks out), so `badge` can say "figures checked: 5 of 5". False alarms cost as much as misses: whatever
the checker cannot tell apart is left alone, and each rule below says what it leaves alone.

- figure: a money amount is a fact (same currency, within the precision written: quantities.matches), or derived
  from facts by arithmetic the text shows ("70% of USD 3.2M = USD 2.24M"), or by one step a reader can redo (advisors
  write "the USD 2.24M in employer stock" without the sum): a fact times a percent fact or its complement; a share the
  sentence names ("three tranches", "5-10% of wealth") of a known amount; half, a third ... a twentieth of an amount
  the sentence names; a sum or difference of two amounts the text names; a total of amounts written before
  "totalling". It fails when its scale is dropped ("$3.2" for USD 3.2M), when it sits under a fact's label but is not
  that fact ("portfolio: USD 3.5M"), when it restates a goal or constraint with another figure than the client wrote,
  or when it is neither a fact nor derived. An amount the answer proposes ("sell USD 500k", "gift ~$100k", "the CRT
  (~$500k)"), estimates ("about $8,980 a month") or takes as an example ("each EUR 10,000") is the advisor's own: it
  fails only in the first three ways, or when the arithmetic in its brackets gives another amount.
- percents are client figures only where the text presents them as the client's share ("70% of her portfolio",
  "54% of her EUR 4.5M portfolio", "a 70% concentration") or under a fact's label ("SGD target: 45%"). Rates,
  returns, drawdowns, fees and bands, and percents the advisor proposes ("cap at 10% of the portfolio"), are never
  flagged. Years, ages and list numbers are not figures.
- statutory amounts: an amount next to a word of tax law (exemption, allowance, exclusion, bracket, nil-rate band,
  per child), or next to a threshold, limit or bound in a sentence that names a rule ("the NIIT applies above USD 250k
  of MAGI"), or a rule's own amount ("the Sparer-Pauschbetrag of EUR 1,000", "403(b) ($23,000 a year)") is the
  law's figure, not the client's: neither a figure nor a label is checked there. Next to an account the client holds
  ("ISAs (£240k)") an amount is its balance, unless it is yearly.
- arithmetic: "A% of B = C", "A / B = C%", "A + B = C", "A - B = C", "A x B = C", "C is A% of B", "a third of B (C)",
  "C (A + B)", "A as a share of B is C%", and conversions "A at EUR/CHF r is C"; recomputed over the range each
  figure as written can mean (70% is 69.5-70.5%), so a result is flagged only when no reading of the operands gives
  it ("about" allows 2% more). A conversion is accepted at the rate either way round: quotes are written both ways.
- currency: two currencies combined (an expression, "as a share of", "of", "plus", "a total of", a written sum or
  ratio of the two) with no rate stated in the text ("EUR/CHF 0.94", "0.94 CHF per EUR", "an exchange rate of 0.94",
  "converted at today's rate") or the facts. Amounts listed side by side, or talk of exchange rates, are fine.
- jurisdiction: a rule (regimes.py) of a place the client's place facts do not reach (regimes.tied). No place
  facts: nothing flagged. A place merely named, or a rule named as absent ("no state income tax"), is fine.
- label: a fact's figure attached to another fact's label ("the cost basis of USD 450k" when USD 450k is the
  salary), to a rule ("USD 450k of NIIT") or to a role no fact has ("70% (the target)"); a percent fact applied to
  another base than its own ("70% of USD 450k" when it is 70% of the portfolio). Attached means next to it: "<fig>
  of <term>", "<term> of <fig>", "<term>: <fig>", "<term> (<fig>)", "<fig> (<term>)", "<fig> <term>"; labels are
  compared by their content words, with a few synonyms (portfolio ~ assets ~ wealth; salary ~ income).
- coverage (final answers only): each instrument the client listed is named (its name, the client's words or an
  abbreviation: CRT, DAF, GRAT ...), and each goal shares at least half its words with the answer (a figure of the
  goal counts in any form: "seventy thousand pounds" = "£70k").

CAP: a node with a failed check scores at most 0.3. Evaluators score a sound but ordinary step about 0.4-0.6, so a
step that misstates the client's figures or applies another country's law ranks below every sound sibling and is
not chosen for the answer; it stays above zero so the tree still shows it and an advisor can correct it.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from reasoning.facts import regimes
from reasoning.facts.quantities import currency_tables, find_quantities, format_amount, format_percent, matches
from reasoning.facts.sheet import Fact, Finding

CAP = 0.3


def check(text: str, facts: list[Fact], final: bool = False) -> list[Finding]:
    """The findings of one text against the client's facts, in text order (coverage last)."""
    doc = _read(text or "", facts)
    found = _arithmetic(doc) + _currencies(doc) + _figures(doc) + _percents(doc) + _labels(doc)
    found += _jurisdictions(doc)
    found.sort(key=lambda f: (f.start, f.end))
    return found + (_coverage(doc) if final else [])


def failures(findings) -> list[Finding]:
    return [f for f in findings if not f.ok]


def capped(score: float | None, findings: list[Finding]) -> tuple[float | None, str]:
    """The score a node's findings allow, and the reason to append to its judgement ("" when nothing failed)."""
    failed = failures(findings)
    if not failed:
        return score, ""
    reason = f"fact check: {failed[0].detail}" + (f" (+{len(failed) - 1} more)" if len(failed) > 1 else "")
    if score is None or score <= CAP:
        return score, reason
    return CAP, f"capped at {CAP} by the {reason}"


def badge(findings) -> str:
    """'figures checked: 5 of 5', or 'figures checked: 3 of 5; 2 failed: USD 3.2 (scale dropped), ...'."""
    items = {}
    for f in findings:
        key = (f.start, f.end, f.text) if f.start >= 0 else (f.kind, f.detail)
        items[key] = items.get(key, True) and f.ok
    failed = [f for f in failures(findings)]
    total, passed = len(items), sum(items.values())
    line = f"figures checked: {passed} of {total}"
    if not failed:
        return line
    shown = list(dict.fromkeys(_short(f) for f in failed))
    more = f", +{len(shown) - 3} more" if len(shown) > 3 else ""
    return f"{line}; {total - passed} failed: " + ", ".join(shown[:3]) + more


def _short(finding):
    """"USD 3.2 (scale dropped)", "collar (not addressed)": a failed finding in a few words."""
    if finding.kind == "coverage":
        what = finding.detail.removeprefix("the answer never addresses ").removesuffix(" the client listed")
        what = what.removeprefix("the ").replace("client's goal: ", "goal: ")
        return f"{what if len(what) <= 40 else what[:37].rstrip() + '...'} (not addressed)"
    reason = {
        "figure": "scale dropped" if "drops its scale" in finding.detail else "not on the sheet",
        "label": "wrong label",
        "arithmetic": "wrong sum",
        "currency": "no exchange rate",
        "jurisdiction": "not the client's place",
    }.get(finding.kind, finding.kind)
    misstated = " restates " in finding.detail or " given as the " in finding.detail.replace("the client's share", "")
    if finding.kind == "figure" and misstated:
        reason = "not the client's figure"
    return f"{finding.text} ({reason})"


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


@dataclass(frozen=True)
class Rate:
    start: int
    end: int
    pair: frozenset  # {"EUR", "CHF"}, or empty when the text names no pair
    value: float | None
    precision: float = 0.0


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


def _rates(text):
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
            found.append(Rate(m.start(), m.end(), pair if len(pair) == 2 else frozenset(), value, precision))
    return found


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'*\-•\d])|\n\s*|;\s+")


ABBREVIATION = re.compile(
    r"(?:\b(?:Fr|SFr|Mr|Mrs|Ms|Dr|St|No|Nr|ca|approx|vs|e\.g|i\.e|p\.a|Mio|Mrd|Tsd|Inc|Ltd|Co|Art|Abs)\.)$"
)


def _sentences(text):
    spans, start = [], 0
    for m in SENTENCE_END.finditer(text):
        if ABBREVIATION.search(text, max(0, m.start() - 8), m.start()):
            continue  # "Fr. 400'000", "2,5 Mio. EUR": a point that ends no sentence
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def _read(text, facts):
    rates = _rates(text)
    every = find_quantities(text)
    quantities = [
        q for q in every if q.kind in ("amount", "percent") and not any(r.start <= q.start < r.end for r in rates)
    ]
    doc = Doc(text, list(facts), quantities, rates, _sentences(text), regimes.find_regimes(text))
    doc.every = every
    doc.starts = [s for s, _ in doc.sentences]
    doc.positions = [q.start for q in quantities]
    doc.blocked = bytearray(len(text))  # figures, ages, years and rate quotes: never read again as bare numbers
    for x in [*every, *rates]:
        doc.blocked[x.start : x.end] = b"\x01" * (x.end - x.start)
    doc.statutory = {(q.start, q.end) for q in quantities if q.kind == "amount" and _is_statutory(doc, q)}
    return doc


def _sentence_of(doc, position):
    at = bisect.bisect_right(doc.starts, position) - 1
    if at >= 0 and position < doc.sentences[at][1]:
        return doc.sentences[at]
    return 0, len(doc.text)


def _in_sentence(doc, start, end, kind=None):
    """The amounts and percents of one sentence (of one kind)."""
    at = bisect.bisect_left(doc.positions, start)
    found = []
    while at < len(doc.quantities) and doc.quantities[at].start < end:
        if kind is None or doc.quantities[at].kind == kind:
            found.append(doc.quantities[at])
        at += 1
    return found


def _has_rate(doc, a, b):
    pair = frozenset((a, b))
    rates = doc.rates + list(_fact_rates(tuple((f.label, str(f.value), f.text) for f in doc.facts)))
    return any(not r.pair or r.pair == pair for r in rates)


@lru_cache(maxsize=64)
def _fact_rates(facts):
    found = []
    for label, value, text in facts:
        if re.search(r"\b(?:exchange|fx|conversion)\s+rate\b", label, re.IGNORECASE):
            found.append(Rate(-1, -1, frozenset(), None))
        found += _rates(f"{value} {text}")
    return tuple(found)


# ---- statutory amounts ----------------------------------------------------------------------------------------------

# Words of tax law: an amount next to one is the law's. A limit or threshold may be the client's own ("annual draw
# limit: SGD 240k"), so it, like a bound ("above USD 250k"), counts only in a sentence that names a rule.
LAW_WORDS = re.compile(
    r"\b(?:exemptions?|exempt|exclusions?|allowances?|nil-rate|brackets?|annual exempt amount|"
    r"per (?:child|person|heir|donee|spouse|recipient)|each child)\b",
    re.IGNORECASE,
)
LIMIT_WORDS = re.compile(r"\b(?:thresholds?|limits?|caps?|ceilings?|bands?)\b", re.IGNORECASE)
BOUND_BEFORE = re.compile(
    r"\b(?:up to|above|below|over|under|exceeding|beyond|more than|less than|at most|at least|first)\s*$", re.I
)
CLAUSE_BREAK = re.compile(r"\b(?:while|and|but|so|when|if|because|since|whereas|then|which|who|with|without)\b|[,;:(]")


def _is_statutory(doc, q):
    """An amount the text ties to a rule's threshold, limit or exemption (within three words, in the same clause)."""
    start, end = _sentence_of(doc, q.start)
    before = " ".join(doc.text[start : q.start].split()[-3:])
    before = CLAUSE_BREAK.split(before)[-1]
    after = CLAUSE_BREAK.split(" ".join(doc.text[q.end : end].split()[:3]))[0]
    near = f"{before} # {after}"
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
AMOUNT_THEN_RULE = re.compile(r"\s*(?:\(|\b(?:in|into|to)\s+(?:the|a|an|her|his|their)?)\s*$", re.IGNORECASE)


def _next_to_rule(doc, q):
    """"the Sparer-Pauschbetrag of EUR 1,000", "403(b) ($23,000 a year)", "$7,000 into the Roth IRA": a rule's
    own amount. ("USD 450k of NIIT" is not: that is a label slip.)"""
    for m in doc.mentions:
        before = m.end <= q.start and q.start - m.end <= 30 and RULE_THEN_AMOUNT.fullmatch(doc.text, m.end, q.start)
        after = q.end <= m.start and m.start - q.end <= 12 and AMOUNT_THEN_RULE.fullmatch(doc.text, q.end, m.start)
        if before or after:
            held = any(_raw(m.text) & _raw(str(f.value)) for f in doc.facts if f.kind == "account")
            # next to an account the client holds ("ISAs (£240k)") an amount is its balance, unless it is yearly
            return not held or bool(YEARLY.match(doc.text, q.end))
    return False


YEARLY = re.compile(r"\s*(?:a|per|each|every)\s+(?:year|annum)\b|\s*(?:annually|yearly|p\.a\.)", re.IGNORECASE)


# ---- arithmetic ------------------------------------------------------------------------------------------------------

TOKEN = re.compile(
    r"(?P<frac>\b(?:(?:a|one)\s+(?:third|quarter|fifth|tenth|twentieth|half)|(?:two|three|four)\s+"
    r"(?:thirds|quarters|fifths|tenths)|half)\s+(?:of\s+)?)"
    r"|(?P<share>\bas\s+an?\s+(?:share|percentage|proportion|fraction|percent)\s+of\b|\bout\s+of\b)"
    r"|(?P<eq>=|≈|→|->|\b(?:is|are|was|equals?|gives|comes\s+to|amounts\s+to|leaves|makes\s+up|represents)\b)"
    r"|(?P<approx>~|\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|circa|some)\b)"
    r"|(?P<op>\bplus\b|\bminus\b|\bless\b|\btimes\b|\bdivided\s+by\b|\bmultiplied\s+by\b|\bof\b|\bat\b"
    r"|[+×*÷/−]|(?<=\s)[-–](?=\s)|\bx\b)"
    r"|(?P<num>(?<![\w.,])\d+(?:\.\d+)?(?![\w%]|[.,]\d))"
    r"|(?P<lp>\()|(?P<rp>\))"
    r"|(?P<word>[A-Za-z][\w'’-]*)"
    r"|(?P<punct>[,;:!?.])"
)
FRACTIONS = {"half": 1 / 2, "third": 1 / 3, "quarter": 1 / 4, "fifth": 1 / 5, "tenth": 1 / 10, "twentieth": 1 / 20}
COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
OPS = {"plus": "+", "minus": "-", "less": "-", "times": "*", "x": "*", "×": "*", "*": "*", "÷": "/", "/": "/",
       "−": "-", "-": "-", "–": "-", "+": "+", "of": "of", "at": "at", "divided by": "/",
       "multiplied by": "*"}  # fmt: skip
DETERMINERS = {"the", "her", "his", "their", "its", "your", "our", "a", "an", "this", "that", "total", "client's"}
LABEL_BREAKS = set(
    "and or but so then which that while if when to from for by with would could should will can may must has have "
    "had not".split()
)


@dataclass
class Token:
    kind: str
    start: int
    end: int
    text: str
    q: object = None  # the Quantity, Rate or number it carries


@dataclass
class Value:
    lo: float
    hi: float
    mid: float
    unit: str  # an ISO code, "%", or "" for a pure number or ratio
    start: int
    end: int
    quantities: list = field(default_factory=list)
    ops: int = 0
    mixed: tuple | None = None  # two quantities in different currencies that were combined


def _tokens(doc, start, end):
    taken = [q for q in doc.quantities if start <= q.start < end] + [r for r in doc.rates if start <= r.start < end]
    tokens = [Token("q" if hasattr(x, "kind") else "rate", x.start, x.end, doc.text[x.start : x.end], x) for x in taken]
    blocked = doc.blocked
    tokens += [
        Token(m.lastgroup, m.start(), m.end(), m[0], None)
        for m in TOKEN.finditer(doc.text, start, end)
        if not blocked[m.start()]
    ]
    tokens.sort(key=lambda t: t.start)
    return tokens


def _arithmetic(doc):
    findings = []
    for start, end in doc.sentences:
        if len(_in_sentence(doc, start, end)) < 2:
            continue  # a sum needs an operand and a result
        tokens = _tokens(doc, start, end)
        i = 0
        while i < len(tokens):
            found, i = _statement(doc, tokens, i)
            if found:
                findings.append(found)
    return findings


def _statement(doc, tokens, i):
    """One "expression = result" at tokens[i], as a finding, and where to go on reading."""
    left, j = _expression(tokens, i)
    if left is None:
        return None, i + 1
    while j < len(tokens) and (tokens[j].kind in ("rate", "approx") or tokens[j].text == "at"):
        j += 1  # "EUR 650k at EUR/CHF 0.94 is ...": the rate is read by _conversion
    if left.mixed:
        return _mixed(doc, left, tokens, j)
    if left.ops == 0 and j < len(tokens) and tokens[j].kind == "eq":
        right, k = _expression(tokens, _skip(tokens, j + 1, "approx"))
        if right is not None and right.ops and len(left.quantities) == 1 and left.quantities[0].kind == "amount":
            if right.mixed:
                return _mixed(doc, right, tokens, k)
            return _verify(doc, right, left.quantities[0], tokens, j), k  # "C is A% of B"
        if right is not None and right.ops == 0 and _is_conversion(left, right):
            return _conversion(doc, left, right), k
    result, k = _result(tokens, j)
    if result is None and left.ops and _bracketed(tokens, i, j):  # "CHF 2.45M (EUR 900k + EUR 1.2M ...)"
        result, k = tokens[i - 2].q, j + 1
    if result is None:
        return None, max(j, i + 1)
    if left.ops == 0:
        if result.kind == "amount" and _is_conversion(left, _value_of(result)):
            return _conversion(doc, left, _value_of(result)), k
        return None, max(j, i + 1)
    return _verify(doc, left, result, tokens, j), k


def _first(tokens, value):
    return next((n for n, t in enumerate(tokens) if t.start == value.start), 0)


def _bracketed(tokens, i, j):
    """The expression tokens[i:j] fills the brackets right after an amount: that amount is its result."""
    return (
        i >= 2 and tokens[i - 1].kind == "lp" and tokens[i - 2].kind == "q" and tokens[i - 2].q.kind == "amount"
        and j < len(tokens) and tokens[j].kind == "rp"
    )  # fmt: skip


def _mixed(doc, value, tokens, j):
    """Two currencies in one expression: recorded for the currency check (a rate makes it fine); its result is not
    recomputed, and counts as derived so it is not flagged twice."""
    doc.combined.append(value.mixed)
    result, k = _result(tokens, j)
    if result is None and _bracketed(tokens, _first(tokens, value), j):
        result, k = tokens[_first(tokens, value) - 2].q, j + 1
    if result is not None:
        doc.derived[(result.start, result.end)] = f"{doc.text[value.start : value.end]}, in two currencies"
    return None, max(k, j)


def _result(tokens, j):
    """The result of "= C", "is about C" or "(C)" at tokens[j]: its Quantity, and the index after it."""
    if j >= len(tokens):
        return None, j
    if tokens[j].kind == "eq":
        k = _skip(tokens, j + 1, "approx")
        if k < len(tokens) and tokens[k].kind == "q":
            return tokens[k].q, k + 1
    if tokens[j].kind == "lp":
        k = _skip(tokens, _skip(tokens, j + 1, "eq"), "approx")
        if k + 1 < len(tokens) and tokens[k].kind == "q" and tokens[k + 1].kind == "rp":
            return tokens[k].q, k + 2
    return None, j


def _skip(tokens, j, kind):
    while j < len(tokens) and tokens[j].kind == kind:
        j += 1
    return j


def _expression(tokens, i):
    """Sums of products, left to right: the Value and the index after it, or (None, i)."""
    left, j = _product(tokens, i)
    while left is not None and j < len(tokens) and tokens[j].kind == "op" and _op(tokens[j]) in ("+", "-"):
        right, k = _product(tokens, j + 1)
        if right is None:
            break
        left, j = _combine(left, _op(tokens[j]), right), k
    return left, j


def _op(token):
    """"+", "-", "*", "/", "of" or "at" for an operator token ("divided by" -> "/")."""
    return OPS.get(" ".join(token.text.lower().split()), "")


def _product(tokens, i):
    left, j = _operand(tokens, i)
    while left is not None and not left.mixed and j < len(tokens):
        t = tokens[j]
        op = "share" if t.kind == "share" else _op(t) if t.kind == "op" else None
        if op in (None, "+", "-"):
            break
        if op == "of" and left.unit != "%":
            break
        if op == "at":
            break  # a conversion: read by _is_conversion
        right, k = _operand(tokens, j + 1)
        if right is None:
            break
        left, j = _combine(left, op, right), k
    return left, j


def _operand(tokens, i):
    """A figure (or "a third of" a figure), after determiners, with up to four label words and a parenthesis after."""
    while i < len(tokens) and tokens[i].kind == "word" and tokens[i].text.lower() in DETERMINERS:
        i += 1
    if i >= len(tokens):
        return None, i
    t = tokens[i]
    if t.kind == "frac":
        inner, j = _operand(tokens, i + 1)
        if inner is None:
            return None, i
        share = _fraction(t.text)
        value = Value(inner.lo * share, inner.hi * share, inner.mid * share, inner.unit, t.start, inner.end,
                      inner.quantities, inner.ops + 1)  # fmt: skip
        return value, j
    if t.kind == "q":
        value = _value_of(t.q)
    elif t.kind == "num":
        value = _number(t)
    else:
        return None, i
    j = i + 1
    words = 0
    while j < len(tokens) and tokens[j].kind == "word" and words < 4 and tokens[j].text.lower() not in LABEL_BREAKS:
        j, words = j + 1, words + 1
    if j < len(tokens) and tokens[j].kind == "lp":  # "(the target)": a parenthesis with no figure is skipped
        k = j + 1
        while k < len(tokens) and tokens[k].kind in ("word", "punct"):
            k += 1
        if k < len(tokens) and tokens[k].kind == "rp" and k > j + 1:
            j = k + 1
    return value, j


def _fraction(text):
    words = text.lower().replace(" of", "").split()
    count = COUNTS.get(words[0], 1) if len(words) > 1 else 1
    return count * FRACTIONS[words[-1].rstrip("s")]


def _value_of(q):
    return Value(q.value - q.precision, q.value + q.precision, q.value, q.unit, q.start, q.end, [q])


def _number(token):
    text = token.text
    spread = 0.0 if "." not in text else 0.5 * 10 ** -len(text.split(".")[1])
    value = float(text)
    return Value(value - spread, value + spread, value, "", token.start, token.end, [])


def _combine(a, op, b):
    """a op b over the ranges the figures can mean; a mixed-currency step is recorded, not computed."""
    merged = dict(start=a.start, end=b.end, quantities=a.quantities + b.quantities, ops=a.ops + b.ops + 1)
    money = {a.unit, b.unit} - {"", "%"}
    if len(money) == 2:
        return Value(0, 0, 0, "?", mixed=(a.quantities[-1], b.quantities[0]), **merged)
    if op == "of" or (op == "*" and "%" in (a.unit, b.unit) and money):
        pa, pb = (a, b) if a.unit == "%" else (b, a)
        lo, hi, mid = _times(pa.lo / 100, pa.hi / 100, pa.mid / 100, pb)
        return Value(lo, hi, mid, pb.unit, **merged)
    if op == "*":
        if a.unit and b.unit:
            return Value(0, 0, 0, "?", **merged)
        lo, hi, mid = _times(a.lo, a.hi, a.mid, b)
        return Value(lo, hi, mid, a.unit or b.unit, **merged)
    if op in ("/", "share"):
        if b.lo <= 0 <= b.hi:
            return Value(0, 0, 0, "?", **merged)
        lo, hi, mid = _times(a.lo, a.hi, a.mid, Value(1 / b.hi, 1 / b.lo, 1 / b.mid, "", 0, 0))
        unit = "" if a.unit == b.unit else a.unit if not b.unit else "?"
        if op == "share":
            return Value(lo * 100, hi * 100, mid * 100, "%" if unit == "" else "?", **merged)
        return Value(lo, hi, mid, unit, **merged)
    if a.unit != b.unit:
        return Value(0, 0, 0, "?", **merged)
    sign = 1 if op == "+" else -1
    ends = (a.lo + sign * b.lo, a.lo + sign * b.hi, a.hi + sign * b.lo, a.hi + sign * b.hi)
    return Value(min(ends), max(ends), a.mid + sign * b.mid, a.unit, **merged)


def _times(lo, hi, mid, b):
    ends = (lo * b.lo, lo * b.hi, hi * b.lo, hi * b.hi)
    return min(ends), max(ends), mid * b.mid


APPROX_SLACK = 0.02  # "about USD 750k" for 746,667: a result the text calls approximate may be 2% off


def _verify(doc, expression, result, tokens, eq_index):
    """The arithmetic finding for an expression and its stated result; the result is marked as derived."""
    approx = any(t.kind == "approx" or t.text == "≈" for t in tokens[eq_index : eq_index + 3])
    lo, hi, mid, unit = expression.lo, expression.hi, expression.mid, expression.unit
    if unit == "" and result.unit == "%":
        lo, hi, mid, unit = lo * 100, hi * 100, mid * 100, "%"
    span = (min(expression.start, result.start), max(expression.end, result.end))
    shown = doc.text[span[0] : span[1]]
    if unit == "?" or unit != result.unit:
        if {unit, result.unit} - {"", "%", "?"} and len({unit, result.unit} - {"", "%", "?"}) == 2:
            doc.combined.append((expression.quantities[-1], result))
        return None
    slack = result.precision + (APPROX_SLACK * abs(result.value) if approx else 0.0)
    doc.derived[(result.start, result.end)] = shown
    if lo - slack - 1e-9 <= result.value <= hi + slack + 1e-9:
        return Finding("arithmetic", True, shown, f"{shown}: the arithmetic checks out", span[0], span[1])
    right = format_percent(mid) if unit == "%" else format_amount(mid, unit) if unit else f"{mid:,.4g}"
    detail = f"{shown}: the arithmetic gives {right}, not {result.text}"
    return Finding("arithmetic", False, shown, detail, span[0], span[1])


def _is_conversion(a, b):
    return (
        a.ops == 0
        and len(a.quantities) == 1
        and len(b.quantities) == 1
        and a.quantities[0].kind == b.quantities[0].kind == "amount"
        and a.unit != b.unit
    )


def _conversion(doc, a, b):
    """"EUR 650k at EUR/CHF 0.94 is CHF 691k": checked at a rate the text or facts state (either way round); with
    no rate stated, the two currencies were combined without one."""
    qa, qb = a.quantities[0], b.quantities[0]
    pair = frozenset((qa.unit, qb.unit))
    rates = [r for r in doc.rates if (not r.pair or r.pair == pair)]
    doc.derived[(qb.start, qb.end)] = f"{qa.text} converted"
    if not rates and not _has_rate(doc, qa.unit, qb.unit):
        doc.combined.append((qa, qb))
        return None
    valued = [r for r in rates if r.value]
    if not valued:
        return None
    shown = doc.text[qa.start : qb.end]
    for r in valued:
        for factor in (r.value - r.precision, r.value + r.precision):
            for converted in (qa.value * factor, qa.value / factor):
                if abs(converted - qb.value) <= qb.precision + abs(converted) * (r.precision / r.value):
                    return Finding("arithmetic", True, shown, f"{shown}: the conversion checks out", qa.start, qb.end)
    r = valued[0]
    options = f"{format_amount(qa.value * r.value, qb.unit)} or {format_amount(qa.value / r.value, qb.unit)}"
    detail = f"{shown}: at {r.value} that is {options}, not {qb.text}"
    return Finding("arithmetic", False, shown, detail, qa.start, qb.end)


# ---- figures ---------------------------------------------------------------------------------------------------------

PARTS = re.compile(
    r"\b(?P<n>\d{1,2}|two|three|four|five|six|ten|twelve)\s+(?:equal\s+)?(?:tranches|instalments|installments|steps|"
    r"parts|payments|slices|portions|gifts|sales|sells|years|tax years|quarters)\b",
    re.IGNORECASE,
)
PART_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10, "twelve": 12}
SIMPLE_SHARES = (1 / 2, 1 / 3, 2 / 3, 1 / 4, 3 / 4, 1 / 5, 1 / 10, 1 / 20)


def _amount_facts(doc):
    return [f for f in doc.facts if f.kind == "amount" and isinstance(f.value, int | float)]


def _percent_facts(doc):
    return [f for f in doc.facts if f.kind == "percent" and isinstance(f.value, int | float)]


def _fact_of(q, facts):
    return next((f for f in facts if matches(q, f.value, f.unit)), None)


def _figures(doc):
    findings = []
    facts = _amount_facts(doc)
    derived = [q for q in doc.quantities if (q.start, q.end) in doc.derived and q.kind == "amount"]
    proposed = [q for q in doc.quantities if q.kind == "amount" and _proposed(doc, q)]
    for q in doc.quantities:
        if q.kind != "amount" or (q.start, q.end) in doc.statutory:
            continue
        fact = _fact_of(q, facts)
        wrong = _contradicted(doc, q, share=0.8) if fact else ""  # "help their son buy a house with $400k"
        if fact and not wrong:
            findings.append(Finding("figure", True, q.text, f"{q.text} is the {fact.label}", q.start, q.end))
            continue
        if wrong:
            findings.append(Finding("figure", False, q.text, wrong, q.start, q.end))
            continue
        shown = doc.derived.get((q.start, q.end))
        dropped, sure = _unknown(doc, q, facts, derived)
        wrong = "" if shown else (dropped if sure else "") or _mislabelled(doc, q, facts) or _contradicted(doc, q)
        if wrong:  # checked before any implied derivation: a chance match must not excuse it
            findings.append(Finding("figure", False, q.text, wrong, q.start, q.end))
            continue
        how = shown or _implicit(doc, q, facts, derived + [p for p in proposed if p is not q])
        if how:
            findings.append(Finding("figure", True, q.text, f"{q.text} is derived: {how}", q.start, q.end))
            continue
        detail, sure = _unknown(doc, q, facts, derived)
        if sure or q not in proposed:
            findings.append(Finding("figure", False, q.text, detail, q.start, q.end))
    return findings


def _mislabelled(doc, q, facts):
    named = _named_fact(doc, q, facts)
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
        if results and not _close(q, results[-1].value):
            return f"{q.text} does not match the arithmetic given for it ({paren[1]})"
    restated = _restated(doc, q, share)
    if restated:
        fact, said = restated
        if not any(_close(q, x.value) for x in said):
            return f'{q.text} restates the client\'s {fact.kind} "{fact.value}", which says {said[0].text}'
    return ""


def _restated(doc, q, share=0.6):
    """The goal or constraint the sentence of q restates (`share` of its words), with its figures of q's kind."""
    start, end = _sentence_of(doc, q.start)
    sentence = _content(doc.text[start:end])
    for fact in doc.facts:
        if fact.kind not in ("goal", "constraint"):
            continue
        codes = currency_tables()[0]
        words = {w for w in _content(str(fact.value)) if not w[:1].isdigit() and w.upper() not in codes}
        if len(words) >= 3 and len(words & sentence) >= share * len(words):
            said = [x for x in find_quantities(str(fact.value)) if x.kind == q.kind and x.unit == q.unit]
            written = [x for x in _in_sentence(doc, start, end, q.kind) if any(_close(x, y.value) for y in said)]
            if said and not written:  # with the client's figure written beside it, q is another figure
                return fact, said
    return None


PROPOSING = re.compile(
    r"\b(?:sell|buy|fund|contribut|gift|give|giving|donat|invest|allocat|mov|transfer|convert|withdraw|draw|harvest|"
    r"put|putting|place|deploy|commit|set(?:ting)? aside|reserv|keep|lend|borrow|spend|pay|pledg|swap|hedg|earmark|"
    r"realis|realiz|raise|add|trim|reduc|roll|exercis|bunch|recommend|aim|target|cap|limit|shift|rebalanc)\w*\b",
    re.IGNORECASE,
)


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
    start = _sentence_of(doc, q.start)[0]
    clause = CLAUSE_MARKS.split(doc.text[max(start, q.start - 60) : q.start])[-1]
    if PROPOSING.search(" ".join(clause.split()[-6:])):
        return True
    if ESTIMATE_BEFORE.search(doc.text, max(start, q.start - 20), q.start):
        return True  # "about $8,980 a month", "each EUR 10,000 of losses": an estimate or an example
    listed = [f for f in doc.facts if f.kind in ("instrument", "account") and f.value]
    for form, term, _start, _end in _attached(doc, q):
        words = _content(term)
        if form != "of" and any(words & _content(str(f.value)) for f in listed):
            return not any(_label_in(f.label, _raw(term)) for f in _amount_facts(doc))
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
        if _close(q, value):
            return name if role in name else f"{name}, {role}"
    start, end = _sentence_of(doc, q.start)
    shares = [(p.value / 100, p.text) for p in doc.quantities if p.kind == "percent" and start <= p.start < end]
    for m in PARTS.finditer(doc.text, start, end):
        count = int(m["n"]) if m["n"].isdigit() else PART_WORDS[m["n"].lower()]
        if count:
            shares.append((1 / count, m[0]))
    for value, _unit, name, _role in known:
        for share, text in shares:
            if _close(q, value * share):
                return f"{text} of {name}"
    here = [x for x in _in_sentence(doc, start, end, "amount") if x is not q and x.unit == q.unit]
    written = [x for x in doc.quantities if x.kind == "amount" and x is not q and x.unit == q.unit]
    near = [k for k in known if any(_close(x, k[0]) for x in here)]
    named = [k for k in known if any(_close(x, k[0]) for x in written)]
    for value, _unit, name, _role in near:
        for share in SIMPLE_SHARES:
            if _close(q, value * share):
                return f"{_fraction_name(share)} of {name}"
    # a sum or difference: one operand in the sentence and the other known, or both written in the text
    for value, _unit, name, _role in near + named:
        for other, _other_unit, other_name, _ in known if (value, _unit, name, _role) in near else named:
            if other != value and _close(q, value + other):
                return f"{name} + {other_name}"
            if other != value and _close(q, abs(value - other)):
                return f"{name} - {other_name}" if value > other else f"{other_name} - {name}"
    before = [x for x in here if x.end <= q.start]
    for count in range(2, len(before) + 1):  # "SGD 3.1m, SGD 4.725m and SGD 1.16m: SGD 8.985m"
        if _close(q, sum(x.value for x in before[-count:])):
            return " + ".join(x.text for x in before[-count:])
    if TOTAL_WORD.search(doc.text, max(0, q.start - 24), q.start):  # "totalling": any few amounts written before
        distinct = list({x.value: x for x in written if x.end <= q.start}.values())[-8:]
        for count in (2, 3, 4):
            for parts in itertools.combinations(distinct, count):
                if _close(q, sum(x.value for x in parts)):
                    return " + ".join(x.text for x in parts)
    return ""


def _known(doc, facts):
    """(value, unit, name, role) of each fact amount, and of each position a percent fact makes of one ("70% of the
    portfolio": the employer stock)."""
    known = [(f.value, f.unit, format_amount(f.value, f.unit), f"the {f.label}") for f in facts]
    for p in _percent_facts(doc):
        base = _content(p.base)
        for f in facts:
            if not base or base & _content(f.label):
                value = f.value * p.value / 100
                role = f"{format_percent(p.value)} of the {f.label}"
                known.append((value, f.unit, f"{format_amount(value, f.unit)} ({role})", role))
                rest, role = f.value - value, f"the {f.label} outside the {p.label}"
                known.append((rest, f.unit, f"{format_amount(rest, f.unit)} ({role})", role))
    return known


APPROX_BEFORE = re.compile(r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|some|circa))\s*$", re.I)


def _widened(q):
    """The same figure, read as the approximation the text says it is (2% either way)."""
    return replace(q, precision=max(q.precision, APPROX_SLACK * abs(q.value)))


TOTAL_WORD = re.compile(r"\b(?:total\w*|in all|altogether|combined|sum)\b[^.;]*$", re.IGNORECASE)


def _close(q, value):
    return abs(q.value - value) <= q.precision + 1e-9 * max(1.0, abs(value))


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
    facts = _percent_facts(doc)
    for q in doc.quantities:
        if q.kind != "percent":
            continue
        named = _named_fact(doc, q, facts)
        if not named and not _presented_as_share(doc, q):
            continue
        fact = named if named and matches(q, named.value, named.unit) else None if named else _fact_of(q, facts)
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


def _named_fact(doc, q, facts):
    """The fact whose whole label the text attaches to the figure ("SGD target: 45%", "the cost basis of USD 400k");
    of several ("his SIPP", "her SIPP": both read "SIPP"), the one the figure matches, if any."""
    named = []
    for form, term, start, _end in _attached(doc, q):
        if form == "of" or SHARE_BEFORE.search(doc.text, max(0, start - 16), start):
            continue  # "5-10% of wealth (USD 160k to USD 320k)": the share's value, not the wealth
        words = _raw(term)
        near = _raw(_edge(term, form))  # the label ends next to the figure: "portfolio yields $75k" names none
        named += [f for f in facts if _label_in(f.label, words) and near & _raw(f.label)]
    return next((f for f in named if matches(q, f.value, f.unit)), named[0] if named else None)


def _edge(term, form):
    """The word of a term next to its figure: the last before it, the first after it."""
    words = term.split()
    if not words:
        return ""
    return words[-1] if form in ("before", "prefix", "colon") else words[0]


SHARE_BEFORE = re.compile(r"%\s+of\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+)?$")


WEAK = frozenset("balance value amount size sum account".split())  # "the 401(k) ($1.5M)" names the 401(k) balance


def _label_in(label, words):
    """Every word of the label as written (but balance, value, ...) is in the words."""
    needed = {w for w in _raw(label) - WEAK if not w.isdigit()} or _raw(label)  # "SIPP balance 2": the SIPP
    return bool(needed) and needed <= words


def _presented_as_share(doc, q):
    if not q.text.rstrip().endswith(("%", "percent", "per cent")):
        return False
    if not SHARE_AFTER.match(doc.text, q.end) and not _of_fact_amount(doc, q):
        after = OF_WORDS.match(doc.text, q.end, q.end + 60)
        words = _content(after[1]) if after else frozenset()
        if not any(words & _content(f.label) for f in _amount_facts(doc)):
            return False
    before = doc.text[max(0, q.start - 30) : q.start]
    return not (RANGE_BEFORE.search(before) or PROPOSAL_BEFORE.search(before))


def _of_fact_amount(doc, q):
    """"54% of her €4.5M portfolio": a percent of an amount on the sheet."""
    m = OF_FIGURE.match(doc.text, q.end)
    figure = _figure_at(doc, m.end()) if m else None
    return bool(figure and figure.kind == "amount" and _fact_of(figure, _amount_facts(doc)))


OF_FIGURE = re.compile(r"\s*of\s+")


def _ratio_of_known(doc, q, facts):
    """How a share follows in one step: the rest of a percent fact with a base (30% beside 70% of the portfolio),
    or one fact amount (or amount derived in the text) as a share of a larger one."""
    for f in facts:
        if f.base and abs(100 - f.value - q.value) <= q.precision:
            return f"the rest of the {f.base} beside the {f.label}"
    derived = [d for d in doc.quantities if (d.start, d.end) in doc.derived and d.kind == "amount"]
    known = [(f.value, f.unit, f.label) for f in _amount_facts(doc)] + [(d.value, d.unit, d.text) for d in derived]
    for a, unit, name in known:
        for b, other_unit, other_name in known:
            if unit == other_unit and 0 < a < b and abs(a / b * 100 - q.value) <= q.precision:
                return f"{name} as a share of {other_name}"
    return ""


# ---- currencies ------------------------------------------------------------------------------------------------------

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


def _currencies(doc):
    """One finding per sentence that combines two currencies with no rate stated."""
    pairs = list(doc.combined)
    for start, end in doc.sentences:
        amounts, percents = _in_sentence(doc, start, end, "amount"), _in_sentence(doc, start, end, "percent")
        for a, b in zip(amounts, amounts[1:]):
            if a.unit != b.unit and _joined(doc, a, b, start, end):
                pairs.append((a, b))
        pairs += _numerically_combined(doc, amounts, percents)
    findings, seen = [], set()
    for a, b in sorted(pairs, key=lambda pair: min(q.start for q in pair)):
        a, b = sorted((a, b), key=lambda q: q.start)
        sentence = _sentence_of(doc, a.start)
        if a.unit == b.unit or sentence in seen or _has_rate(doc, a.unit, b.unit):
            continue
        seen.add(sentence)
        detail = f"{a.text} and {b.text} are combined with no exchange rate stated"
        findings.append(Finding("currency", False, doc.text[a.start : b.end], detail, a.start, b.end))
    return findings


def _joined(doc, a, b, start, end):
    between = doc.text[a.end : b.start]
    if COMBINING.fullmatch(between + " ") or COMBINING.fullmatch(between):
        return True
    if LIST_BETWEEN.match(between):
        return bool(TOTAL_BEFORE.search(doc.text[start : a.start]) or TOTAL_AFTER.match(doc.text[b.end : end]))
    return False


def _numerically_combined(doc, amounts, percents):
    """Two currencies whose sum, difference or ratio is written in the same sentence (that figure is then derived,
    wrongly, and the currency finding says so)."""
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
                if c is a or c is b or coarse or _fact_of(c, doc.facts):
                    continue  # a coarse figure meets a sum by chance; a fact is not the text's own sum
                if any(abs(c.value - v) <= c.precision for v in values):
                    found.append((a, b))
                    doc.derived.setdefault((c.start, c.end), f"{a.text} and {b.text} combined")
    return found


# ---- places ----------------------------------------------------------------------------------------------------------


def _jurisdictions(doc):
    places = [f.value for f in doc.facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    if not places:
        return []
    findings, seen = [], set()
    for m in doc.mentions:
        if m.negated or m.name in seen or regimes.tied(m, places):
            continue
        seen.add(m.name)
        where = ", ".join(dict.fromkeys(_place_label(doc, p) for p in places))
        detail = f"{m.text} is {m.what}, but the client's places are {where}"
        findings.append(Finding("jurisdiction", False, m.text, detail, m.start, m.end))
    return findings


def _place_label(doc, code):
    from reasoning.facts.places import place_name

    return f"{(place_name(code) or code).split(',')[0]} ({code})"


# ---- labels ----------------------------------------------------------------------------------------------------------

STOPWORDS = set(
    "the a an her his their its your our my client client's of in on at to for and or with by from as is are was "
    "this that these those net total current overall whole entire about some all each per year years month months "
    "annual annually yearly monthly today now".split()
)
SYNONYMS = {
    "wealth": "portfolio assets asset wealth worth holdings investments investable estate".split(),
    "salary": "salary income wage wages pay compensation earnings paycheck".split(),
    "share": "share stake concentration position weight allocation exposure percentage proportion holding".split(),
    "basis": "basis cost".split(),
    "employer": "employer company firm employer's company's".split(),
    "stock": "stock stocks shares equity rsu rsus".split(),
    "gain": "gain gains appreciation profit".split(),
    "home": "home house property residence".split(),
    "cash": "cash savings deposits liquidity".split(),
    "mortgage": "mortgage loan debt liability liabilities".split(),
    "spending": "spending expenses outgoings budget".split(),
    "target": "target goal objective".split(),
}
GROUP = {word: group for group, words in SYNONYMS.items() for word in words}
ROLES = {"target", "basis", "salary", "gain", "mortgage", "wealth", "spending", "bonus"}  # roles only a fact can fill
PORTIONS = set("share portion part half third quarter fraction rest remainder sale tranche slice bulk majority".split())
RATE_WORDS = set(
    "rate rates tax taxes return returns drawdown fall drop decline loss yield fee fees bracket band threshold "
    "inflation growth discount premium coupon surtax levy withholding correction crash pullback haircut spread "
    "commission interest probability chance odds".split()
)
TIME_WORDS = set("year years month months annual annually yearly monthly today now".split())
FUNCTION = STOPWORDS - {"net", "total", "current", "client", "client's"} - TIME_WORDS | set(
    "but so then which that while if when into over under than it we you she he they i be been were would could "
    "should will can may must has have had not sell buy hold keep give gift move plus minus times less x below above "
    "under over beyond within between against after before since until around".split()
)
LEADING = {"the", "her", "his", "their", "its", "your", "our", "a", "an", "this", "that"}
WORDS = r"[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,3}"
WORDS_AT = re.compile(WORDS)
OF_WORDS = re.compile(r"\s*of\s+((?:[\w'’-]+\s*){1,3})")
ARTICLES = re.compile(r"(?:(?:the|her|his|their|its|a|an)\s+)*")
CONTENT_WORD = re.compile(r"[a-z0-9][a-z0-9'’()-]*")
AFTER_OF = re.compile(r"\s*(?:\([^()]{0,40}\)\s*)?(?:of|in)\s+")
AFTER_PAREN = re.compile(r"\s*\(\s*([^()\d]{1,40})\)")
AFTER_BARE = re.compile(rf"[ \t]+({WORDS})")
MARKER_BEFORE = re.compile(r"(?:\s+of\s+(?:about\s+|around\s+|roughly\s+)?|\s*:\s*|\s*\(\s*)(?:~|≈|c\.)?\s*$")


@lru_cache(maxsize=4096)
def _content(text):
    words = set()
    for word in CONTENT_WORD.findall(text.lower().replace("’", "'")):
        word = word.removesuffix("'s")
        if word in STOPWORDS:
            continue
        if word not in GROUP and len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(GROUP.get(word, word))
    return frozenset(words)


def _term(text, from_end=False):
    """The label words of a phrase: up to the first function word (or from the last one backwards). "worth" and
    "valued" are verbs ("a flat worth CHF 1.4M") except in "net worth"; a currency code ends a term read forwards
    ("USD 450k plus CHF ...") but belongs to one read backwards ("SGD target: 40%")."""
    words = text.split()
    if not from_end:
        while words and words[0].lower() in LEADING:
            words = words[1:]
    order = list(reversed(words)) if from_end else words
    kept = []
    for i, word in enumerate(order):
        low = word.lower().strip("'’")
        verb = low in ("worth", "valued") and not _after_net(order, i, from_end)
        if low in FUNCTION or verb or (not from_end and word in currency_tables()[0]):
            break
        kept.append(word)
    kept = list(reversed(kept)) if from_end else kept
    return " ".join(kept)


def _after_net(order, i, from_end):
    before = i + 1 if from_end else i - 1  # the word written just before order[i]
    return 0 <= before < len(order) and order[before].lower() == "net"


def _labels(doc):
    findings = []
    mentions = doc.mentions
    amounts, percents = _amount_facts(doc), _percent_facts(doc)
    for q in doc.quantities:
        if (q.start, q.end) in doc.statutory:
            continue
        owners = [f for f in (amounts if q.kind == "amount" else percents) if matches(q, f.value, f.unit)]
        if owners:
            for detail in _mislabels(doc, q, owners, mentions):
                findings.append(Finding("label", False, q.text, detail, q.start, q.end))
    return findings


def _mislabels(doc, q, owners, mentions):
    owner = owners[0]
    mine = set().union(*(_content(f.label) for f in owners))
    problems, fine = [], False
    named = _named_fact(doc, q, [f for f in doc.facts if f.kind == q.kind]) if q.kind == "amount" else None
    if named and named not in owners:  # "brokerage account balance: USD 1.8M" when USD 1.8M is the IRA balance
        return [f"{q.text} is the {owner.label}, not the {named.label}"] + _wrong_base(doc, q, owners)
    for form, term, start, end in _attached(doc, q):
        words = _content(term)
        if not words or form in ("colon", "prefix"):
            continue  # "a pension pays $4,200": words before a figure with no mark between are too loose here
        if words & mine:
            fine = True
            continue
        if q.kind == "percent" and (words & RATE_WORDS or form == "of"):
            continue  # a rate, or a share of something else: the base is checked on figures below
        regime = next((m for m in mentions if m.start < end and start < m.end), None)
        if regime and q.kind == "amount":
            if not any(_covers(_raw(" ".join(_regime_names(regime))), _raw(f.label)) for f in owners):
                problems.append(f"{q.text} is the {owner.label}, not {regime.name}")
            continue
        if form == "of" or words <= PORTIONS:
            continue  # "USD 450k of employer stock", "a share of USD 3.2M": a portion of a holding, not its label
        others = (f for f in doc.facts if f.kind == q.kind and f not in owners)
        other = next((f for f in others if _covers(_content(f.label), words)), None)
        if other:
            problems.append(f"{q.text} is the {owner.label}, not the {other.label}")
        elif words & ROLES and not any(words & ROLES & _content(f.label) for f in doc.facts):
            problems.append(f"{q.text} is the {owner.label}, not {_a(term)}")
    if fine:
        problems = []
    problems = list(dict.fromkeys(problems))
    if q.kind == "percent":
        problems += _wrong_base(doc, q, owners)
    return problems


@lru_cache(maxsize=1024)
def _raw(text):
    """The content words as written, singular: "ISAs" -> "isa"."""
    words = (w.removesuffix("'s") for w in CONTENT_WORD.findall(text.lower().replace("’", "'")))
    return frozenset(_singular(w) for w in words if w not in STOPWORDS)


def _singular(word):
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _regime_names(mention):
    table = next((r for r in regimes.REGIMES if r.name == mention.name), None)
    return table.names if table else (mention.name,)


def _a(term):
    words = DETERMINER.sub("", term.strip())
    return f"{'an' if words[:1].lower() in 'aeiou' else 'a'} {words}"


def _covers(label_words, words):
    return bool(label_words) and len(words & label_words) * 2 >= len(words)


def _attached(doc, q):
    """(form, term, start, end) for each label the text attaches to the figure q."""
    key = (q.start, q.end)
    if key not in doc.attached:
        doc.attached[key] = _labels_around(doc, q)
    return doc.attached[key]


def _labels_around(doc, q):
    text, found = doc.text, []
    m = AFTER_OF.match(text, q.end)
    if m and not _figure_at(doc, m.end()):
        words = WORDS_AT.match(text, m.end())
        if words:
            term = _term(words[0])
            found.append(("of", term, m.end(), m.end() + len(term)))
    m = AFTER_PAREN.match(text, q.end)
    if m:
        found.append(("paren", m[1], m.start(1), m.end(1)))
    m = AFTER_BARE.match(text, q.end)
    if m:
        term = _term(m[1])
        found.append(("bare", term, m.start(1), m.start(1) + len(term)))
    before = _before(text, q.start)
    if before:
        term = _term(before[0], from_end=True)
        found.append(("before", term, before[1] - len(term), before[1]))
        if text[before[1] : q.start].strip().startswith(":"):  # "apartment in Lyon: EUR 1.1M": the whole label
            found.append(("colon", before[0], before[1] - len(before[0]), before[1]))
    else:
        end = len(text[: q.start].rstrip(" \t"))
        words = _words_before(text, end, 3) if end < q.start else ""  # "the equity target 50%"
        term = _term(words, from_end=True)
        if term:
            found.append(("prefix", term, end - len(term), end))
    return found


WORD = re.compile(r"[A-Za-z][\w'’-]*$")


def _words_before(text, end, count):
    """Up to `count` words ending exactly at `end`, separated by spaces only ("" when a mark comes first)."""
    words = text[max(0, end - 60) : end].split(" ")
    kept = []
    for word in reversed(words):
        if len(kept) == count or not WORD.match(word):
            break
        kept.append(word)
    return " ".join(reversed(kept))


def _before(text, start):
    """The words of "<term> of <fig>", "<term>: <fig>" or "<term> (<fig>)" before a figure, and where they end."""
    tail = text[max(0, start - 24) : start]
    marker = MARKER_BEFORE.search(tail)
    if not marker:
        return None
    end = start - len(tail) + marker.start()
    words = _words_before(text, end, 4)
    return (words, end) if words else None


def _figure_at(doc, position):
    at = ARTICLES.match(doc.text, position).end()
    return next((q for q in doc.quantities if q.start == at), None)


def _wrong_base(doc, q, owners):
    """"70% of USD 450k" when 70% is a share of the portfolio and USD 450k the salary."""
    bases = [f for f in owners if f.base]
    m = AFTER_OF.match(doc.text, q.end)
    if not bases or not m:
        return []
    base_words = set().union(*(_content(f.base) | _content(f.label) for f in bases))
    figure = _figure_at(doc, m.end())
    if figure is not None:
        if figure.kind != "amount":
            return []
        named = [f for f in _amount_facts(doc) if matches(figure, f.value, f.unit)]
        base_only = set().union(*(_content(f.base) - WEAK for f in bases))  # "ISA balance" is no "SIPP balance"
        if not named or any((_content(f.label) - WEAK) & base_only for f in named):
            return []
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {named[0].label} ({figure.text})"]
    words = WORDS_AT.match(doc.text, m.end())
    term = _content(_term(words[0])) if words else set()
    if not term or term & base_words:
        return []
    other = next((f for f in doc.facts if f.kind == "amount" and _covers(_content(f.label), term)), None)
    if other:
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {other.label}"]
    return []


# ---- coverage --------------------------------------------------------------------------------------------------------

ABBREVIATIONS = {
    "charitable remainder trust": "CRT",
    "charitable remainder unitrust": "CRUT",
    "charitable lead trust": "CLT",
    "donor advised fund": "DAF",
    "grantor retained annuity trust": "GRAT",
    "exchange traded fund": "ETF",
    "spousal lifetime access trust": "SLAT",
    "intentionally defective grantor trust": "IDGT",
    "qualified small business stock": "QSBS",
}
DETERMINER = re.compile(r"^(?:(?:a|an|the|her|his|their|its|some|one|two)\s+)+", re.IGNORECASE)


def _plain(text):
    return " ".join(re.sub(r"[-‐–’'/]", " ", str(text).lower()).split())


def _coverage(doc):
    plain = _plain(doc.text)
    stems = {w[:5] for w in WORD_OR_NUMBER.findall(plain)}
    findings = []
    for f in doc.facts:
        if f.kind == "instrument":
            name = str(f.value or f.text)
            addressed = _names_instrument(doc.text, plain, f)
            what = f"the {DETERMINER.sub('', name)} the client listed"
        elif f.kind == "goal":
            name = str(f.value or f.text)
            addressed = _names_goal(doc, name, stems)
            what = f"the client's goal: {name}"
        else:
            continue
        detail = f"the answer addresses {what}" if addressed else f"the answer never addresses {what}"
        findings.append(Finding("coverage", addressed, "", detail, -1, -1))
    return findings


def _names_goal(doc, goal, stems):
    """At least half the goal's words are in the answer, as an advisor paraphrases them: a word counts when it or a
    word of its group is there (by their first five letters: "pass the business to their daughter" is answered by
    "transfer the GmbH stake to the daughter"); a rule the goal names counts when the answer names the same rule by
    any of its names ("IRMAA", "required minimum distributions" for "RMDs"); each figure counts as one word, present
    when the answer writes it in any form ("seventy thousand pounds": "£70k"). Filler verbs and particles ("get",
    "keep", "while", "within") count for nothing."""
    rules = regimes.find_regimes(goal)
    named = {m.name for m in regimes.find_regimes(doc.text)}
    figures = [x for x in find_quantities(goal) if x.kind in ("amount", "percent", "age")]
    for span in sorted([(x.start, x.end) for x in figures] + [(m.start, m.end) for m in rules], reverse=True):
        goal = goal[: span[0]] + " " + goal[span[1] :]
    words = {w[:5] for w in WORD_OR_NUMBER.findall(_plain(goal)) if w not in STOPWORDS and w not in GOAL_FILLERS}
    present = sum(bool(GOAL_GROUPS.get(w, {w}) & stems) for w in words)
    present += sum(any(_close(y, x.value) and y.unit == x.unit for y in _all(doc)) for x in figures)
    present += sum(m.name in named for m in rules)
    total = len(words) + len(figures) + len(rules)
    return not total or present * 2 >= total


GOAL_FILLERS = set(
    "get gets getting got keep keeps keeping kept stay stays staying make makes making want wants wanted would like "
    "while within without into onto over under below above before after next than then them they she he him it so "
    "such very also still both some any more less most least much many way ways use uses using need needs can could "
    "should will able start starts begin begins".split()
)
# Words an answer uses for a goal's words (by their first five letters, as the goal's are read).
GOAL_SYNONYMS = (
    "pass transfer transfers hand gift gifts gifting succession bequeath inherit inheritance leave",
    "business company firm gmbh stake enterprise",
    "daughter son children child kids heir heirs brother sister sibling siblings grandchildren",
    "fair fairly equal equally equalise equalize equalisation equalization even",
    "reduce sell sale sales trim cut lower diversify diversified divest unwind exit",
    "withdrawals withdrawal withdraw draw drawing drawdowns distributions decumulation",
    "sequence order ordering sequencing",
    "retire retirement retiring",
    "single concentrated concentration",
    "position holding stake shares stock",
    "manageable minimise minimize lowest low spread",
    "thresholds threshold tier tiers limit bracket",
    "bill cost costs",
)
GOAL_GROUPS = {w[:5]: {m[:5] for m in group.split()} for group in GOAL_SYNONYMS for w in group.split()}


WORD_OR_NUMBER = re.compile(r"[a-z0-9]+")


def _all(doc):
    return [q for q in doc.every if q.kind in ("amount", "percent", "age")]


def _names_instrument(text, plain, fact):
    phrases = {_plain(DETERMINER.sub("", str(fact.value or "")))}
    if fact.text and len(fact.text.split()) <= 6:
        phrases.add(_plain(DETERMINER.sub("", fact.text)))
    phrases.discard("")
    for phrase in phrases:
        abbreviation = ABBREVIATIONS.get(phrase) or (
            "".join(w[0] for w in phrase.split()).upper() if len(phrase.split()) >= 3 else ""
        )
        if abbreviation and abbreviation in text and re.search(rf"(?<!\w){abbreviation}s?(?!\w)", text):
            return True
    return any(p in plain and re.search(rf"(?<!\w){re.escape(p)}(?:e?s)?(?!\w)", plain) for p in phrases)
