"""arithmetic: the sums, products, shares and conversions a text writes out, recomputed.

"A% of B = C", "A / B = C%", "A + B = C", "A - B = C", "A x B = C", "C is A% of B", "a third of B (C)",
"C (A + B)", "A as a share of B is C%", and conversions "A at EUR/CHF r is C"; recomputed over the range each figure
as written can mean (70% is 69.5-70.5%), so a result is flagged only when no reading of the operands gives it
("about" allows 2% more). A conversion is accepted at the rate either way round: quotes are written both ways.

Runs first: each result it reads is marked derived (doc.derived), so the figure check accepts it, and each pair of
currencies it sees combined (doc.combined) is left to the currency check.

    fails:  "70% of USD 3.2M = USD 2.5M"        passes: "70% of USD 3.2M = USD 2.24M"
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from reasoning.facts.checks.derive import COUNT_WORDS
from reasoning.facts.checks.doc import Rate, Doc, has_rate, in_sentence, per_year, sentence_of, sheet_rates
from reasoning.facts.checks.words import table
from reasoning.facts.quantities import format_amount, format_percent
from reasoning.facts.sheet import Finding

KIND = "arithmetic"
FINAL_ONLY = False

TOKEN = re.compile(
    r"(?P<frac>\b(?:(?:a|one)\s+(?:third|quarter|fifth|tenth|twentieth|half)|(?:two|three|four)\s+"
    r"(?:thirds|quarters|fifths|tenths)|half)\s+(?:of\s+)?)"
    r"|(?P<share>\bas\s+an?\s+(?:share|percentage|proportion|fraction|percent)\s+of\b|\bout\s+of\b)"
    r"|(?P<eq>=|≈|→|->|(?<=\s)—(?=\s)|\bi\.e\.,?|\b(?:is|are|was|equals?|gives|comes\s+to|amounts\s+to|leaves|makes\s+up|represents"
    r"|that\s+is|which\s+is|adds?\s+up\s+to|add\s+up\s+to|come\s+to|amounts?\s+to|means)\b)"
    r"|(?P<approx>~|\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|circa|some)\b)"
    r"|(?P<op>\bplus\b|\bminus\b|\bless\b|\btimes\b|\bdivided\s+by\b|\bmultiplied\s+by\b|\bof\b|\bat\b"
    r"|[+×*÷/−]|(?<=\s)[-–](?=\s)|\bx\b)"
    r"|(?P<num>(?<![\w.,])(?:0,\d+|\d{1,3}(?:,\d{3})+|\d{1,3}(?:['’]\d{3})+|\d{1,3}(?:\.\d{3}){2,}|\d+(?:\.\d+)?)(?:k|K|M|bn|\s(?:million|billion|thousand)\b)?(?![\w%]|[.,]\d))"
    r"|(?P<lp>\()|(?P<rp>\))"
    r"|(?P<word>[A-Za-z][\w'’-]*)"
    r"|(?P<punct>[,;:!?.])"
)
FRACTIONS = {"half": 1 / 2, "third": 1 / 3, "quarter": 1 / 4, "fifth": 1 / 5, "tenth": 1 / 10, "twentieth": 1 / 20}
COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
OPS = {"plus": "+", "minus": "-", "less": "-", "times": "*", "x": "*", "×": "*", "*": "*", "÷": "/", "/": "/",
       "−": "-", "-": "-", "–": "-", "+": "+", "of": "of", "at": "at", "divided by": "/",
       "multiplied by": "*"}  # fmt: skip
BASE_BEFORE = ("on", "upon", "above", "below", "beyond", "over", "under")  # "Cash above the $250,000 floor is ..."  # a figure after "on" is what a rate applies to, in an expression read only in part
DETERMINERS = set(table("words")["operand_determiners"])
LABEL_BREAKS = set(table("words")["operand_label_breaks"])


@dataclass
class Token:
    kind: str
    start: int
    end: int
    text: str
    q: object = None  # the Quantity, Rate or number it carries
    exact: bool = False  # a figure written as one of the client's exactly ("EUR 3 Mio." for EUR 3,000,000)


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
    numbers: list = field(default_factory=list)  # the bare numbers it was computed from


def _tokens(doc, start, end):
    taken = [q for q in doc.quantities if start <= q.start < end] + [r for r in doc.rates if start <= r.start < end]
    tokens = [Token("q" if hasattr(x, "kind") else "rate", x.start, x.end, doc.text[x.start : x.end], x,
                    hasattr(x, "kind") and _exact(doc, x)) for x in taken]  # fmt: skip
    blocked = doc.blocked
    # "650.000 − 380.000 = EUR 270.000": where the sentence's amounts group thousands with points, so do its bare numbers
    dotted = any(getattr(x, "kind", "") == "amount" and x.value >= 1000 and DOTTED.search(x.text) for x in taken)
    mixes = [m.span() for m in MIX.finditer(doc.text, start, end) if sum(map(int, m[0].split("/"))) == 100]
    tokens += [
        Token(m.lastgroup, m.start(), m.end(), _thousands(m[0]) if dotted and m.lastgroup == "num" else m[0], None)
        for m in TOKEN.finditer(doc.text, start, end)
        if not blocked[m.start()] and not any(a <= m.start() < b for a, b in mixes)
    ]
    tokens.sort(key=lambda t: t.start)
    return tokens


MIX = re.compile(r"(?<![\w./])\d{1,2}(?:/\d{1,2}){1,3}(?![\w./])")  # "60/30/10", "a 70/30 split": a mix, no division
DOTTED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:\.\d{3})+(?![\d.,]|\s?(?:[kKmM]|Mio|Mrd|mn|bn|million|billion)\b)")


def _thousands(text):
    """Where points group thousands, commas mark decimals: "650.000" is 650000, "0,909" is 0.909."""
    if re.fullmatch(r"[1-9]\d{0,2}(?:\.\d{3})+", text):
        return text.replace(".", "")
    return text.replace(",", ".") if re.fullmatch(r"\d+,\d+", text) else text


def run(doc: Doc) -> list[Finding]:
    findings = []
    for start, end in doc.sentences:
        if not in_sentence(doc, start, end):
            continue  # a sum needs an operand and a result
        tokens = _tokens(doc, start, end)
        if len(in_sentence(doc, start, end)) < 2 and not any(t.kind == "num" for t in tokens):
            continue  # "400,000 × 1.08 = EUR 432,000": bare operands and one amount
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
    if left.ops and FROM_TO.search(doc.text, max(0, left.start - 30), left.start):
        return None, j  # "from 45% to 55% of CHF 1.6M means buying CHF 160k": the step is the change, not 55%
    while j < len(tokens) and (tokens[j].kind in ("rate", "approx") or tokens[j].text == "at"):
        j += 1  # "EUR 650k at EUR/CHF 0.94 is ...": the rate is read by _conversion
    if left.mixed:
        return _mixed(doc, left, tokens, j)
    colon = j < len(tokens) and tokens[j].text == ":"  # "about CHF 2.7M: CHF 1.6M + CHF 0.47M + CHF 0.66M"
    if left.ops == 0 and _word_before(tokens, i) in BASE_BEFORE:
        return None, j  # "LTT on £450,000: 6% of ...", "0.7 % on €760k = €2,500 + ...": a base, not a result
    if left.ops == 0 and j < len(tokens) and (tokens[j].kind == "eq" or colon):
        right, k = _expression(tokens, _skip(tokens, j + 1, "approx"))
        then = k + 1 if k < len(tokens) and tokens[k].text == "," else k  # "..., i.e. £10,500 + £3,750 = £14,250"
        if colon and (right is None or (then < len(tokens) and tokens[then].kind == "eq") or _more_after(tokens, k)):
            return None, j + 1  # "USD 747k: USD 747k x 3 = USD 2.24M": the colon introduces a sum with its own result
        if right is not None and right.ops and len(left.quantities) == 1 and left.quantities[0].kind == "amount":
            if right.mixed:
                return _mixed(doc, right, tokens, k)
            return _verify(doc, right, left.quantities[0], tokens, j), k  # "C is A% of B"
        if right is not None and right.ops == 0 and not colon and _is_conversion(left, right):
            return _conversion(doc, left, right), k
    result, k = _result(tokens, j)
    if result is None and left.ops and j < len(tokens) and tokens[j].text == ":":
        result, k = _result_after_colon(tokens, j)  # "Two children at €19,060 each: some €38,000 in all"
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
        if k + 1 < len(tokens) and tokens[k].kind == "word" and tokens[k].text.lower().endswith("ing"):
            k = _skip(tokens, k + 1, "approx")  # "... means selling CHF 180k": what the step comes to, as a deed
        if k < len(tokens) and tokens[k].kind == "q":
            return tokens[k].q, k + 1
    if tokens[j].kind == "lp":
        k = _skip(tokens, _skip(tokens, j + 1, "eq"), "approx")
        if k + 1 < len(tokens) and tokens[k].kind == "q" and tokens[k + 1].kind == "rp":
            return tokens[k].q, k + 2
    return None, j


def _result_after_colon(tokens, j):
    """The amount right after a colon that closes a computed expression, and the index after it."""
    k = _skip(tokens, j + 1, "approx")
    if k < len(tokens) and tokens[k].kind == "q" and tokens[k].q.kind == "amount":
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        if after is not None and (after.kind == "eq" or (after.kind == "op" and _op(after) in ("+", "-", "*", "/"))):
            return None, j  # "Three tranches of USD 747k: USD 747k x 3 = USD 2.24M": a sum with its own result
        if _more_after(tokens, k + 1):
            return None, j  # "instalments of EUR 250.000 each: EUR 150.000 into equities and EUR 100.000 ...": a split
        return tokens[k].q, k + 1
    return None, j


def _word_before(tokens, i):
    """The word before tokens[i], past any article ("above the $250,000 floor": "above")."""
    k = i - 1
    while k >= 0 and tokens[k].text.lower() in ("the", "a", "an", "her", "his", "their", "its"):
        k -= 1
    return tokens[k].text.lower() if k >= 0 else ""


def _more_after(tokens, k):
    """More figures follow in the sentence: what the colon introduced is a list or a split, not one result ("600,000
    euros: 2 × 200.000 to the children and 4 × 50.000 to the grandchildren")."""
    return any(t.kind == "num" or (t.kind == "q" and t.q.kind == "amount") for t in tokens[k:])


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
        if op == "of" and _is_count(left) and j + 1 < len(tokens) and tokens[j + 1].kind == "q":
            op = "*"  # "Eleven annual conversions of $200K": so many of the amount
        elif op == "of" and left.unit != "%":
            break
        held = tokens[j - 1].text.lower() in UNITS_HELD and not left.unit and not left.ops and left.mid == int(left.mid)
        if op == "at" and (held or (_is_count(left) and _each_after(tokens, j + 1))):
            op = "*"  # "Two children at about €19,060 each", "42,000 shares at $118": so many at an amount each
        elif op == "at":
            break  # a conversion: read by _is_conversion
        right, k = _operand(tokens, _skip(tokens, j + 1, "approx"))
        if right is None:
            break
        left, j = _combine(left, op, right), k
    return left, j


UNITS_HELD = {"shares", "share", "units", "sh", "aktien", "actions", "azioni"}


def _operand(tokens, i):
    """A figure (or "a third of" a figure), after determiners, with up to four label words and a parenthesis after."""
    while i < len(tokens) and tokens[i].kind == "word" and tokens[i].text.lower() in DETERMINERS:
        i += 1
    if i >= len(tokens):
        return None, i
    t = tokens[i]
    if t.kind == "frac":
        k = i + 1
        while k < i + 3 and k < len(tokens) and tokens[k].kind == "word" and tokens[k].text.lower() not in LABEL_BREAKS:
            k += 1  # "half of the planned EUR 800k", "a third of the remaining EUR 1.2M"
        inner, j = _operand(tokens, k if k < len(tokens) and tokens[k].kind == "q" else i + 1)
        if inner is None:
            return None, i
        share = _fraction(t.text)
        value = Value(inner.lo * share, inner.hi * share, inner.mid * share, inner.unit, t.start, inner.end,
                      inner.quantities, inner.ops + 1)  # fmt: skip
        return value, j
    if t.kind == "q":
        value = _value_of(t.q, exact=t.exact)
    elif t.kind == "num":
        value = _number(t)
    elif t.kind == "word" and t.text.lower() in COUNT_WORDS and _next_is_operator(tokens, i):
        n = float(COUNT_WORDS[t.text.lower()])  # "Four parent-child pairs × EUR 400k"
        value = Value(n, n, n, "", t.start, t.end, [], numbers=[n])
    else:
        return None, i
    j = i + 1
    if t.kind != "q" and j < len(tokens) and tokens[j].kind == "word" and tokens[j].text.lower() in POINT_WORDS:
        value = Value(value.lo, value.hi, value.mid, "%", value.start, tokens[j].end, [], numbers=value.numbers)
        j += 1 + (tokens[j].text.lower() == "percentage" and j + 1 < len(tokens) and tokens[j + 1].text.lower() in POINT_WORDS)
    words = 0
    while j < len(tokens) and words < 4:
        if tokens[j].kind == "word" and tokens[j].text.lower() not in LABEL_BREAKS:
            j, words = j + 1, words + 1
        elif _account_name(tokens, j):  # "$1.1M 401(k) + ...": an account's name, not a figure
            j, words = j + 4, words + 1
        elif (_op(tokens[j]) == "of" and value.unit not in ("", "%") and j + 1 < len(tokens)
              and tokens[j + 1].kind == "word" and tokens[j + 1].text.lower() not in LABEL_BREAKS):
            j, words = j + 2, words + 1  # "EUR 800k of gifts is ...": what the amount is of, a label
        else:
            break
    if j < len(tokens) and tokens[j].kind == "lp":  # "(the target)": a parenthesis with no figure is skipped
        k = j + 1
        while k < len(tokens) and tokens[k].kind in ("word", "punct"):
            k += 1
        if k < len(tokens) and tokens[k].kind == "rp" and k > j + 1:
            j = k + 1
    return value, j


FROM_TO = re.compile(r"\bfrom\s+\S+(?:\s?%)?\s+(?:to|→|->)\s*$", re.IGNORECASE)
POINT_WORDS = {"points", "point", "pts", "pt", "pp", "percentage"}  # "twenty points of EUR 1.65M": 20% of it


def _each_after(tokens, j):
    """An amount, then "each", at tokens[j] (after an approximation word)."""
    j = _skip(tokens, j, "approx")
    return j + 1 < len(tokens) and tokens[j].kind == "q" and tokens[j + 1].text.lower() in ("each", "apiece")


def _is_count(value):
    """A bare whole number with no operation yet, and no money: a count ("eleven", "11")."""
    return not value.unit and not value.quantities and not value.ops and value.mid == int(value.mid) and 1 < value.mid <= 100


def _account_name(tokens, j):
    """"401(k)", "403(b)": a number, then one letter in brackets."""
    kinds = [t.kind for t in tokens[j : j + 4]]
    return kinds == ["num", "lp", "word", "rp"] and len(tokens[j + 2].text) == 1 and tokens[j + 1].start == tokens[j].end


def _next_is_operator(tokens, i):
    """A count word is an operand only when an operator follows it within its few label words."""
    words, inside = 0, False
    for t in tokens[i + 1 :]:
        if t.kind == "op" and not inside:
            return _op(t) in ("*", "/", "of", "at")  # "of", "at ... each": so many of an amount, read by _product
        if t.kind in ("lp", "rp"):  # "Six donees (two daughters, four grandchildren) × ...": a gloss in brackets
            inside = t.kind == "lp"
        elif t.kind == "word" or (inside and t.kind == "punct"):
            words += not inside
        else:
            return False
        if words > 5:
            return False
    return False


def _fraction(text):
    words = text.lower().replace(" of", "").split()
    count = COUNTS.get(words[0], 1) if len(words) > 1 else 1
    return count * FRACTIONS[words[-1].rstrip("s")]


def _value_of(q, exact=False):
    spread = 0.0 if exact else q.precision
    return Value(q.value - spread, q.value + spread, q.value, q.unit, q.start, q.end, [q])


def _exact(doc, q):
    """An operand written as one of the client's figures exactly ("70 % × EUR 3 Mio." for 70% and EUR 3,000,000) is
    that figure, not the range its digits allow (EUR 2.5-3.5M), which would excuse a wrong result."""
    return any(
        isinstance(f.value, int | float) and not isinstance(f.value, bool) and f.unit == q.unit
        and abs(float(f.value) - q.value) <= 1e-9 * max(1.0, abs(q.value))
        for f in doc.facts
    )  # fmt: skip


SCALES = {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9}


def _number(token):
    """A bare number: "3", "0.94", "152,500", "100k", "1.1 million" (a scale written with it, as in "700k / 0.94",
    or a sum's first term "1.1 million + 740,000")."""
    text = token.text.replace(",", ".") if re.fullmatch(r"0,\d+", token.text) else token.text.replace(",", "")
    text = text.replace(".", "") if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", text) else text  # "4.800.000"
    text = re.sub(r"(?<=\d)['’](?=\d{3})", "", text)  # "980'000"
    digits, _, word = text.partition(" ")
    if not word:
        digits = text.rstrip("kKMbn")
        word = text[len(digits) :]
    scale = SCALES.get(word, 1)
    spread = (0.0 if "." not in digits else 0.5 * 10 ** -len(digits.split(".")[1])) * scale
    spread = spread or (0.5 * scale if scale > 1 else 0.0)
    value = float(digits) * scale
    return Value(value - spread, value + spread, value, "", token.start, token.end, [], numbers=[value])


def _combine(a, op, b):
    """a op b over the ranges the figures can mean; a mixed-currency step is recorded, not computed."""
    merged = dict(start=a.start, end=b.end, quantities=a.quantities + b.quantities, ops=a.ops + b.ops + 1,
                  numbers=a.numbers + b.numbers)  # fmt: skip
    money = {a.unit, b.unit} - {"", "%"}
    if len(money) == 2:
        return Value(0, 0, 0, "?", mixed=(a.quantities[-1], b.quantities[0]), **merged)
    if op == "of" or (op == "*" and "%" in (a.unit, b.unit) and (money or {a.unit, b.unit} == {"", "%"})):
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
APPROX_BEFORE = re.compile(r"(?:~|≈|\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|circa|some))\s*$", re.I)


def _verify(doc, expression, result, tokens, eq_index):
    """The arithmetic finding for an expression and its stated result; the result is marked as derived."""
    approx = any(t.kind == "approx" or t.text == "≈" for t in tokens[eq_index : eq_index + 3])
    lo, hi, mid, unit = expression.lo, expression.hi, expression.mid, expression.unit
    if unit == "" and result.unit == "%":
        lo, hi, mid, unit = lo * 100, hi * 100, mid * 100, "%"
    span = (min(expression.start, result.start), max(expression.end, result.end))
    shown = doc.text[span[0] : span[1]]
    money = {unit, result.unit} - {"", "%", "?"}
    turned = _turned(doc, expression, result, shown, span)
    if turned is not None:
        return turned
    if unit == "" and result.kind == "amount" and not expression.mixed:
        unit = result.unit  # "2 × 3 × 100k = EUR 600k": counts and bare figures, in the result's currency
        if not expression.quantities and expression.ops and result.scaled and not lo <= result.value <= hi:
            # the bare figures may carry their scale ("742k + 1,084k"): 1 is a reading too, not only 1e3 ... 1e9
            scale = min((1.0, 1e3, 1e6, 1e9), key=lambda x: abs(math.log(max(abs(mid) * x, 1e-9) / max(abs(result.value), 1e-9))))
            lo, hi, mid = lo * scale, hi * scale, mid * scale  # "EUR 4.4M (1.2 + 0.8 + 1.5 + 0.9)": in millions
    elif len(money) == 2 and len(expression.quantities) == 1 and expression.ops:
        unit = result.unit  # "USD 300k ÷ 1.27 = £236k": a conversion at the rate the text writes as a number
    if unit == "?" or unit != result.unit:
        if {unit, result.unit} - {"", "%", "?"} and len({unit, result.unit} - {"", "%", "?"}) == 2:
            doc.combined.append((expression.quantities[-1], result))
        return None
    slack = result.precision + (APPROX_SLACK * abs(result.value) if approx else 0.0)
    doc.derived[(result.start, result.end)] = shown
    doc.consumed.append(span)
    yearly = per_year(doc, result)  # "CHF 4,000 a month is about 5% of the CHF 960,000": a year's worth of it
    if (lo - slack - 1e-9 <= result.value <= hi + slack + 1e-9 or _surcharged(expression, result, slack)
            or (yearly and lo - slack * yearly - 1e-9 <= result.value * yearly <= hi + slack * yearly + 1e-9)):
        doc.inputs.update((x.start, x.end) for x in expression.quantities)
        return Finding("arithmetic", True, shown, f"{shown}: the arithmetic checks out", span[0], span[1])
    right = format_percent(mid) if unit == "%" else format_amount(mid, unit) if unit else f"{mid:,.4g}"
    detail = f"{shown}: the arithmetic gives {right}, not {result.text}"
    return Finding("arithmetic", False, shown, detail, span[0], span[1])


def _surcharged(expression, result, slack):
    """"45 % plus 5,5 % Soli (47,475 %)": a surcharge is a percent of the tax, so a rate plus a surcharge is the rate
    times one and the surcharge, not their sum."""
    rates = expression.quantities
    if result.unit != "%" or expression.ops != 1 or len(rates) != 2 or any(r.unit != "%" for r in rates):
        return False
    return abs(rates[0].value * (1 + rates[1].value / 100) - result.value) <= slack + 0.0005 * result.value


def _turned(doc, expression, result, shown, span):
    """"CHF 1.9M ÷ 1.064 ≈ EUR 1.79M" at CHF/EUR 1.064: a conversion written with the number of a rate the text
    names, checked the way that rate goes (1 CHF = 1.064 EUR multiplies francs); None when it is no such step."""
    if result.kind != "amount" or expression.ops != 1:
        return None
    start, end = sentence_of(doc, result.start)
    rates = [r for r in doc.rates if start <= r.start < end and r.base and r.value and result.unit in (r.base, r.quote)]
    rates += [r for s in sheet_rates(doc) if s.base and s.value for r in _both_ways(s) if result.unit in s.pair]
    rate = next((r for r in rates if any(abs(n - r.value) <= r.precision for n in expression.numbers)), None)
    if rate is None:
        return None
    source = rate.quote if result.unit == rate.base else rate.base
    amounts = [q.value for q in expression.quantities if q.unit in (source, "")] + [
        n for n in expression.numbers if abs(n - rate.value) > rate.precision
    ]
    if len(amounts) != 1:
        return None
    right = rate.converts(amounts[0], source, result.unit)[0]
    doc.derived[(result.start, result.end)] = shown
    if abs(right - result.value) <= result.precision + 0.02 * abs(right):
        return Finding("arithmetic", True, shown, f"{shown}: the conversion checks out", span[0], span[1])
    quote = doc.text[rate.start : rate.end] if rate.start >= 0 else f"{rate.base}/{rate.quote} {rate.value:g}"
    detail = f"{shown}: at {quote} that is {format_amount(right, result.unit)}, not {result.text}"
    return Finding("arithmetic", False, shown, detail + " (the rate applied the wrong way round)", span[0], span[1])


def _both_ways(rate):
    """A sheet's rate and its inverse, as people write it either way ("EUR/CHF 0.94", "700k / 1.064"): the inverse's
    precision is that of a figure written to three decimals."""
    inverse = Rate(-1, -1, rate.pair, 1 / rate.value, 0.0005, rate.quote, rate.base)
    return [rate, inverse]


def _confirmed(doc, rate):
    """The text quotes a rate as the sheet does (pair, way and value): its way is the client's, not a slip of
    writing."""
    return any(s.base == rate.base and s.quote == rate.quote and abs(s.value - rate.value) <= max(s.precision, rate.precision)
               for s in sheet_rates(doc))  # fmt: skip


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
    named = [r for r in rates if r.value]
    rates += [s for s in sheet_rates(doc) if s.pair == pair and s.value and not named]  # the sheet's, if none written
    doc.derived[(qb.start, qb.end)] = f"{qa.text} converted"
    if not rates and not has_rate(doc, qa.unit, qb.unit):
        doc.combined.append((qa, qb))
        return None
    valued = [r for r in rates if r.value]
    if not valued:
        return None
    shown = doc.text[qa.start : qb.end]
    approx = bool(APPROX_BEFORE.search(doc.text, max(qa.end, qb.start - 16), qb.start))
    for r in valued:
        slack = r.precision / r.value + (CONVERTED_SLACK if r.start < 0 else 0.0)  # the sheet's rate: figures rounded
        slack += APPROX_SLACK if approx else 0.0  # "come to roughly EUR 269.000"
        for converted in r.converts(qa.value, qa.unit, qb.unit):
            if abs(converted - qb.value) <= qb.precision + abs(converted) * slack:
                return Finding("arithmetic", True, shown, f"{shown}: the conversion checks out", qa.start, qb.end)
    r = valued[0]
    options = " or ".join(format_amount(v, qb.unit) for v in r.converts(qa.value, qa.unit, qb.unit))
    if r.base and not options:
        return None  # a rate of another pair
    quote = doc.text[r.start : r.end] if r.start >= 0 else f"{r.base}/{r.quote} {r.value:g}"
    if r.base and (r.start < 0 or _confirmed(doc, r)) and _close_to_any(qb, [qa.value / r.value if options.startswith(format_amount(qa.value * r.value, qb.unit)) else qa.value * r.value]):
        detail = f"{shown}: at {quote} that is {options}, not {qb.text} (the rate applied the wrong way round)"
        return Finding("arithmetic", False, shown, detail, qa.start, qb.end)
    if r.start < 0:
        return None  # another figure than the sheet's rate gives: a rate of the day the text does not write
    if r.base and _close_to_any(qb, [qa.value * r.value, qa.value / r.value], slack=0.0):
        # the text writes both amounts and the rate: it may quote the pair the other way round ("EUR/CHF 1.06" for
        # francs to euros), which people do; the market reading gives another figure, so it is not checked
        detail = f"unverified: {shown} reads {quote} the other way round from the market's (1 {r.base} = {r.value} {r.quote})"
        return Finding("arithmetic", True, shown, detail, qa.start, qb.end, verified=False)
    detail = f"{shown}: at {quote} that is {options}, not {qb.text}"
    return Finding("arithmetic", False, shown, detail, qa.start, qb.end)


CONVERTED_SLACK = 0.01  # a converted figure is rounded: 1% either way


def _close_to_any(q, values, slack=0.02):
    return any(abs(q.value - v) <= q.precision + slack * abs(v) for v in values)


