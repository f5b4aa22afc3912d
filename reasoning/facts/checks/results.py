"""Whether a sentence presents an amount as the result of figures written in it (a derivation cue between them).

An amount the checker can neither find on the sheet nor derive is wrong only when the text claims it follows from
figures the reader can see: "40 % of CHF 1.48M, which comes to CHF 529k", "Selling CHF 520k leaves CHF 1.2M",
"CHF 1.6M remains" after "CHF 600k ... off the CHF 2.4M", "$3.1M above the $15M exclusion". Then the result does
not follow and the figure fails. Anywhere else (a figure of the law the checker has no table for, a figure derived
in a text it does not see, a range, a sum of holdings the sentence does not spell out) it cannot decide, and says
so: the finding is unverified, never counted as checked.

An operand is an amount written in the sentence on the cue's far side: a percent or a count alone derives no amount
("KESt 27.5 % on that: EUR 30,750" takes its base from another sentence). The cue words are data
(data/words.toml, [derivation_cues]).
"""

from __future__ import annotations

import itertools
import re

from reasoning.facts.checks.derive import COUNT_WORDS
from reasoning.facts.checks.lawfigures import named_shares
from reasoning.facts.checks.doc import amount_facts, close_to, in_sentence, sentence_of
from reasoning.facts.checks.words import content_words, label_in, phrases, raw_words, table

CUES = table("words")["derivation_cues"]
COUNT = re.compile(rf"\b({'|'.join(COUNT_WORDS)})\b", re.IGNORECASE)
MULTIPLY = re.compile(r"\b(?:of|on|at|times|each|per|apiece|x)\b|[×*]", re.IGNORECASE)
OPERATOR_AFTER = re.compile(r"\s*(?:[x×*+=−/-](?!\w)|times\b|plus\b|minus\b|less\b)", re.IGNORECASE)
OF_AMOUNT = re.compile(r"\s+(?:of|on)\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+)?")
COUNT_AT = re.compile(
    rf"\b({'|'.join(COUNT_WORDS)})\s+(?:[\w'’-]+\s+){{1,4}}?(?:at|of)\s+(?:(?:about|roughly|some)\s+)?", re.IGNORECASE
)
PARTS_AFTER = re.compile(
    r"\s+(?:equal\s+|(?:annual|yearly|quarterly|monthly)\s+)?(?:tranches|instalments|installments|steps|parts|"
    r"payments|slices|portions|shares|years|tax years|quarters|months)\b",
    re.IGNORECASE,
)
OPERANDS_START = re.compile(r"[;(]|,(?=\s)")
CLAUSE_END = re.compile(r"[;.!?]|,\s+(?:and|but|while|whereas)\b")
AFTER_REACH = 40  # "CHF 1.6M remains", "EUR 842,500 of the contracts remain taxable": the verb follows closely


def _cue(words):
    """A pattern for cue words or symbols: words whole, symbols as written."""
    spelled = [w for w in words if w[0].isalnum()]
    symbols = [w for w in words if not w[0].isalnum()]
    either = [rf"(?<![\w-])(?:{phrases(spelled)})(?![\w-])"] + ([phrases(symbols)] if symbols else [])
    return re.compile("|".join(either), re.IGNORECASE)


RESULT, AFTER, COMPARE, RESTATING = (_cue(CUES[k]) for k in ("result", "after", "compare", "restating"))


LEFT = re.compile(r"leaves?|leaving|left", re.I)


def presented_as_result(doc, q, placed=lambda x: True) -> str:
    """The cue that presents amount q as a result of amounts written in its sentence, or "" when none does. The
    operands must be figures the checker can place (`placed`): a result of a figure it cannot place is as unplaced
    as that figure ("40 % of (£3.0m − £650k) = £940,000" where £3.0m is on no sheet)."""
    start, end = sentence_of(doc, q.start)
    others = [x for x in in_sentence(doc, start, end, "amount") if x is not q]
    before = [x for x in others if x.end <= q.start]
    after = [x for x in others if x.start >= q.end]
    if before and all(placed(x) for x in before):
        cue = _last(RESULT, doc.text, before[0].end, q.start)
        parts = [x for x in before if x.unit == q.unit]
        if cue and LEFT.fullmatch(cue) and len(parts) > 1 and q.value > sum(x.value for x in parts):
            return ""  # "£90,000 of cash + £158,120 leave £404,680 to come from the GIA": left of a whole not written
        if cue:
            return cue
        clause = CLAUSE_END.search(doc.text, q.end, min(end, q.end + AFTER_REACH))
        m = AFTER.search(doc.text, q.end, clause.start() if clause else min(end, q.end + AFTER_REACH))
        if m:
            return m[0]
    if after and placed(after[0]):
        m = COMPARE.search(doc.text, q.end, after[0].start)
        if m:
            return m[0]
    return ""


# Several givers each doing what the sentence counts: "Vernon and Loretta can each give", "both parents each", "they
# each": the product has a factor of people no number writes.
SEVERAL_EACH = re.compile(
    r"\b(?:and\s+[A-Z][\w'-]+|both(?:\s+of\s+them)?|they|the\s+couple|the\s+(?:two|spouses|parents))\s+"
    r"(?:(?:can|could|will|would|may|might|should|shall)\s+)?each\b"
)


def product_before(doc, q):
    """(value, words) of the one product a sentence writes before the cue that presents q as its result ("Nineteen
    per cent on EUR 1.04M comes to ...", "Three children at £100,000 each: ..."): one amount and one percent or
    count, nothing else; None otherwise. The result must be that product whether or not the amount is placed."""
    start, _end = sentence_of(doc, q.start)
    if OPERATOR_AFTER.match(doc.text, q.end):
        return None  # "...: USD 747k x 3 = USD 2.24M": q is an operand of the next expression, not a result
    cues = list(RESULT.finditer(doc.text, start, q.start))
    if not cues:
        return _count_at(doc, q, start)
    if cues[-1][0].lower() in ("plus", "minus", "less", "times", "×"):
        return None  # "Four years of £50,000 taxable plus the matching tax-free cash take ...": a further term
    cue = cues[-1].start()
    _start, end = sentence_of(doc, q.start)
    if len([x for x in in_sentence(doc, cue, end, "amount") if x.unit == q.unit]) > 1 and cues[-1][0] == ":":
        return None  # "... each: EUR 150.000 into equities and EUR 100.000 into bonds": a split after the colon
    marks = [m.end() for m in OPERANDS_START.finditer(doc.text, start, cue)] + [c.end() for c in cues[:-1]]
    if RESTATING.fullmatch(cues[-1][0]) and marks and not doc.text[max(marks) : cue].strip():
        marks.remove(max(marks))  # "20 % of EUR 447,500, i.e. ...": the comma sets off the restatement only
    start = max([start, *marks])  # the expression is the clause right before the cue
    amounts = in_sentence(doc, start, cue, "amount")
    percents = in_sentence(doc, start, cue, "percent")
    whole = OF_AMOUNT.match(doc.text, q.end)
    if not amounts and whole:  # "Ramon's 60% stake, i.e. $12.4M of the $24M"
        amounts = [x for x in in_sentence(doc, whole.end(), whole.end() + 1, "amount") if x.start == whole.end()]
    if len(amounts) != 1 or amounts[0].unit != q.unit:
        return None
    counts = [m for m in COUNT.finditer(doc.text, start, cue) if not doc.blocked[m.start()]]
    factors = [(p.value / 100, p.text) for p in percents] + [_count(doc, m) for m in counts]
    law = named_shares(doc, *sentence_of(doc, q.start))
    if not factors and len(law) == 1:  # "The IRS minimum comes to $3.4M on $86M": the law's 5 %, not written
        factors = [(law.pop(), "the law's share")]
    if SEVERAL_EACH.search(doc.text, sentence_of(doc, q.start)[0], cue):
        return None  # "Vernon and Loretta can each give the seven grandchildren $19,000": a factor the words hide
    if len(factors) != 1 or not (MULTIPLY.search(doc.text, start, cue) or amounts[0].start > q.start):
        return None
    (factor, said), amount = factors[0], amounts[0]
    if PER_PERIOD.match(doc.text, amount.end) and PER_PERIOD.match(doc.text, q.end):
        return None  # "£19,200 a year, i.e. £1,600 a month": the amount restated per period, not the percent's product
    return amount.value * factor, f"{said} of {amount.text}"


def _count_at(doc, q, start):
    """"Three beneficiaries at EUR 152,500 shelter EUR 457,500": a count of things at an amount each, then q in the
    same clause, is their product."""
    for m in COUNT_AT.finditer(doc.text, start, q.start):
        if doc.blocked[m.start()]:
            continue
        each = [x for x in in_sentence(doc, m.end(), m.end() + 1, "amount") if x.start == m.end() and x.unit == q.unit]
        if each and each[0].end <= q.start and not CLAUSE_MARK.search(doc.text, each[0].end, q.start) \
                and not MORE_TERMS.search(doc.text, each[0].end, q.start):
            return COUNT_WORDS[m[1].lower()] * each[0].value, f"{m[1]} times {each[0].text}"
    return None


def _count(doc, m):
    """(factor, words) of a count: "three children at £100k each" multiplies; "two equal slices" of an amount
    divides it."""
    n = COUNT_WORDS[m[1].lower()]
    parts = PARTS_AFTER.match(doc.text, m.end())
    each = EACH_OF.match(doc.text, parts.end()) if parts else None
    if each and any(x.start == each.end() for x in doc.quantities if x.kind == "amount"):
        return n, m[1]  # "Four years of £50,000", "three tranches of $3M": so many of that amount
    return (1 / n, f"one of {m[1]}{parts[0]}") if parts else (n, m[1])


PER_PERIOD = re.compile(r"\s*(?:a|per|each|every|/)\s*(?:year|month|quarter|week|yr|mo)\b|\s*(?:annually|monthly|yearly)", re.I)
MORE_TERMS = re.compile(r"\b(?:plus|minus|less|and|with)\b|[+−]", re.IGNORECASE)
EACH_OF = re.compile(r"\s+(?:of|at)\s+(?:about\s+|some\s+|roughly\s+)?")


def _last(pattern, text, start, end):
    found = [m[0] for m in pattern.finditer(text, start, end)]
    return found[-1] if found else ""



def item_named(doc, q):
    """The client's item of q's currency the sentence gives q as the value of ("The rentals are worth EUR 1.8M",
    "$30M of unfunded commitments", "Net of the loan the flat is worth EUR 480,000"): the sentence states the
    client's position, which is the item or follows from what it names; None when it names none next to q (the
    words of q's clause before it, or "of/in the ..." after it). A change by something the checker cannot place
    ("net from the flat after ImmoESt: EUR 569,000" with no other figure or item named) names none."""
    start, end = sentence_of(doc, q.start)
    head = CLAUSE_MARK.split(doc.text[start : q.start])[-1]
    tail = ITEM_AFTER.match(doc.text, q.end, end)
    near_text = " ".join(head.split()[-6:]) + " " + (tail[1] if tail else "")
    if ON_ITEM.search(head):
        return None  # "on the whole position €1,228,800": a gain or a tax on the position, not its value
    if TAX_NEAR.search(near_text):
        return None  # "€7,000 of gift tax": a tax on the gifts, not the gifts
    near = content_words(near_text)
    items = [f for f in amount_facts(doc) if f.unit == q.unit and (content_words(f.label) - WEAK) & near]
    if not items:
        return None
    said = content_words(doc.text[start:end])
    named = {f.label for f in amount_facts(doc) if (content_words(f.label) - WEAK) & said}
    others = [x for x in in_sentence(doc, start, end, "amount") if x is not q]
    if CHANGE.search(doc.text, start, end) and len(named) + len(others) < 2:
        return None  # a change by an amount neither written nor named: the result cannot be placed
    return items[0]


CLAUSE_MARK = re.compile(r"[,;:(—–]")
ON_ITEM = re.compile(
    r"\b(?:on|per)\s+(?:the\s+|each\s+)?(?:whole\s+|entire\s+)?"
    r"(?!(?:[\w'’-]+\s+)?(?:is|are|was|were|comes?|amounts?|totals?|stands?|sits?)\b)[\w'’-]+(?:\s+[\w'’-]+)?\s*$",
    re.I,
)  # "on the whole position €1.2M", never "the gain on the stock is $5.2M": a verb names the value
TAX_NEAR = re.compile(r"(?<![\w-])(?:tax|taxes|duty|duties|levy|IHT|CGT|\w*steuer\w*|impôts?|droits)(?![\w-])", re.I)
ITEM_AFTER = re.compile(
    r"\s*(?:(?:stays?|remains?|is|are|sits?|held|kept|invested|left)\s+){0,2}(?:of|in|on)\s+"
    r"((?:the|her|his|their|its|your|our)?\s*[\w'’-]+(?:\s+[\w'’-]+)?)",
    re.I,
)
CHANGE = _cue(CUES["change"])
WEAK = frozenset(content_words("annual monthly balance value amount account fund total minimum"))


def count_times(doc, q):
    """How q is a count in words times an amount its sentence writes ("Four more years at CHF 7,258 add CHF 29,032",
    "three gifts of £100,000"), or ""."""
    start, end = sentence_of(doc, q.start)
    amounts = [x for x in in_sentence(doc, start, end, "amount") if x is not q and x.unit == q.unit]
    for m in COUNT.finditer(doc.text, start, end):
        if doc.blocked[m.start()]:
            continue
        n = COUNT_WORDS[m[1].lower()]
        for x in amounts:
            if close_to(q, n * x.value):
                return f"{m[1]} times {x.text}"
    return ""


def from_named(doc, q):
    """How q follows from the client's items its sentence names by their labels, or "": one of them, the sum or
    difference of two ("After funding the SLAT the taxable estate is down to $16M": estate less SLAT funding), or a
    yearly one for the months the sentence gives ("over nine months the grants take ...")."""
    start, end = sentence_of(doc, q.start)
    said = raw_words(doc.text[start:end])  # the labels as written: "real estate" names no "portfolio"
    named = [f for f in amount_facts(doc) if f.unit == q.unit and label_in(f.label, said)]
    months = [int(m[1]) if m[1].isdigit() else COUNT_WORDS.get(m[1].lower(), 0)
              for m in MONTHS.finditer(doc.text, start, end)]  # fmt: skip
    for f in named:
        for n in months:
            if n and close_to(q, f.value * n / 12):
                return f"{n} months of the {f.label}"
    if not CHANGE.search(doc.text, start, end):
        return ""  # a sum or difference of two items only where the sentence speaks of a change
    for a, b in itertools.combinations(named, 2):
        if close_to(q, a.value + b.value):
            return f"the {a.label} + the {b.label}"
        if close_to(q, abs(a.value - b.value)):
            big, small = (a, b) if a.value > b.value else (b, a)
            return f"the {big.label} - the {small.label}"
    return ""


MONTHS = re.compile(r"\b(\d{1,2}|" + "|".join(COUNT_WORDS) + r")\s+(?:more\s+)?months\b", re.IGNORECASE)


def share_of_named(doc, q):
    """(value, words) of the one percent of its sentence applied to the client's item it names ("A 3 % yearly
    distribution from the SLAT would be ..."), where q is the sentence's only amount; None otherwise. The result is
    that share of that item, not of another amount that happens to give q."""
    start, end = sentence_of(doc, q.start)
    percents = in_sentence(doc, start, end, "percent")
    if len(percents) != 1 or [x for x in in_sentence(doc, start, end, "amount") if x is not q]:
        return None
    (p,) = percents
    m = BASE_AFTER.match(doc.text, p.end)
    if not m or m.end() > q.start:
        return None
    said = raw_words(m[1]) - WEAK_RAW
    items = [f for f in amount_facts(doc) if f.unit == q.unit and raw_words(f.label) & said]
    if len(items) != 1:
        return None
    return items[0].value * p.value / 100, f"{p.text} of the {items[0].label}"


WEAK_RAW = frozenset(raw_words("annual monthly balance value amount account fund total minimum funding"))
BASE_AFTER = re.compile(
    r"\s*(?:[\w-]+\s+){0,3}?(?:of|from|on)\s+(?:the|her|his|their|its)\s+([\w'’-]+(?:\s+[\w'’-]+)?)", re.IGNORECASE
)
