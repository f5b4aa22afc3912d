"""What a sentence acts on: coverage that means something.

`addressed(text, start, end)` says whether the sentence around a mention of an instrument, goal or commitment acts
on it: a figure, an action verb (fund, sell, gift, transfer, convert, open, contribute, buy, set up ...), a date or a
horizon. "GRAT: weigh it against the plan above." names the GRAT and does nothing with it. The coverage check
(checks/coverage.py) requires it of every instrument and goal it counts as addressed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from reasoning.facts import regimes
from reasoning.facts.phrases import MONTH_NAMES, durations, sentence_at, sentences
from reasoning.facts.quantities import find_quantities
from reasoning.facts.sheet import Fact, Finding

# ---- what a sentence acts on --------------------------------------------------------------------------------------

# Verbs that act on a thing; a word that is also a noun ("fund", "gift", "transfer", "open") acts only as a verb:
# first in a sentence or after a modal, "to", a pronoun or "and", or followed by what it acts on.
ACTIONS = (
    "sell sells sold selling buy buys bought buying contribute contributes contributed contributing donate donates "
    "donated donating exercise exercised exercising deploy deploys deployed deploying invest invests invested "
    "investing allocate allocates allocated allocating hedged hedging purchased purchasing repay repays repaid "
    "repaying withdraw withdraws withdrew withdrawing rebalance rebalanced rebalancing diversify diversified "
    "diversifying trim trims trimmed trimming reduce reduces reduced reducing realise realised realising realize "
    "realized realizing harvest harvested harvesting seeded seeding execute executed executing implement implemented "
    "implementing sign signed drafted elect elected claimed defer deferred deferring staged staging move moves moved "
    "moving shift shifted shifting use uses using put establish established establishing settle settled settling "
    "cover covers covering earmark earmarked ring-fence ring-fenced ringfence reserved meet meets pay pays paid "
    "paying amortise amortize amortised amortized refinance refinanced roll rolled rolling convert converts converted "
    "converting gifted gifting funded funding transferred transferring opened opening avoid skip forgo decline reject "
    "exclude designate designated appoint appointed filled swapped exchanged wrap wrapped hold holds holding retain "
    "retained collared sets-up placed reinvest reinvests reinvested reinvesting close closes closed closing complete "
    "completes completed completing finish finishes finished finishing list listed spread spreads spreading phase "
    "phased unwind unwinds unwinding liquidate liquidated liquidating divest divested divesting dispose disposed exit "
    "exits exiting distribute distributed distributing recommend recommends recommended protect protects protected "
    "switch switches switched switching spend spends spent spending postpone postpones postponed postponing "
    "retire retires retired retiring give gives giving gave hand hands handed handing start starts started starting "
    "begin begins began beginning draw draws drawing drew"
).split()
# Nouns as often as verbs ("the exchange fund", "a 60/40 split", "in place"): verbs only in a verb's place.
NOUN_VERBS = (
    "fund funds gift gifts transfer transfers open opens place exchange hedge split stage reserve purchase claim draft "
    "seed swap collar drop"
).split()
MAKE = re.compile(
    r"\bmak(?:e|es|ing)\s+(?:a|an|the|both|two|three|her|his|their|its|annual|yearly|one|each)\s+(?:[\w-]+\s+){0,2}"
    r"(?:buy-?ins?|gifts?|contributions?|payments?|transfers?|donations?|conversions?|withdrawals?|elections?|grants?"
    r"|loans?|purchases?|distributions?)\b",
    re.IGNORECASE,
)
VERB_BEFORE = re.compile(
    r"(?:^|[:•*\-–]\s*|\b(?:to|will|would|should|could|can|must|then|and|we|she|he|they|you|i|first,?|next,?"
    r"|also|now|later|recommend|please)\s+)$",
    re.IGNORECASE,
)
VERB_AFTER = re.compile(
    r"^\s+(?:an?|the|it|them|her|his|their|its|this|that|some|part|up|with|into|\d|[A-Z]{3}\s|\$|€|£)"
)
NOUN_AFTER = re.compile(r"^\s*(?:funds?|trusts?|or|and|of|is|are|was|has|[:,;)]|$)", re.IGNORECASE)  # "Hedge fund or"
SET_UP = re.compile(r"\bset(?:s|ting)?\s+up\b|\bpay\s+down\b|\brule\s+out\b", re.IGNORECASE)
# A date or a schedule, not "next year" or "later": a year, a quarter, a month, an age, a span, a frequency.
WHEN = re.compile(
    rf"\b(?:Q[1-4]|H[12])\b|\b(?:{MONTH_NAMES})\b|\b(?:annually|yearly|quarterly|monthly|each\s+year|every\s+year"
    r"|per\s+year|a\s+year|year-?end|at\s+(?:age\s+)?\d{2}|by\s+(?:age\s+)?\d{2})\b",
)


# Phrases that point back at the answer itself (reasoning/facts/data/goals.toml, self_references).
_SELF = tomllib.loads((Path(__file__).with_name("data") / "goals.toml").read_text())["self_references"]
HOLLOW = re.compile(rf"\b(?:{'|'.join(re.escape(p) for p in sorted(_SELF, key=len, reverse=True))})\b", re.IGNORECASE)


def _words(text):
    return [(m.start(), m.end(), m[0]) for m in re.finditer(r"[A-Za-z][A-Za-z'’-]*", text)]


def acts(sentence, mask=()):
    """Whether a sentence acts (a figure, an action verb, a date or horizon), the masked spans aside; a hollow one
    (it points back at the answer and names no amount or percent: HOLLOW) acts on nothing, whatever its verbs."""
    chars = list(sentence)
    for s, e in mask:
        chars[s:e] = " " * (e - s)
    plain = "".join(chars)
    quantities = find_quantities(plain)
    if any(q.kind in ("amount", "percent") for q in quantities):
        return True
    if HOLLOW.search(plain):
        return False
    if any(q.kind == "year" for q in quantities):
        return True
    spans = [d for d in durations(plain) if d.text.lower() not in ("year", "month", "week", "quarter")]  # "next year"
    return bool(WHEN.search(plain) or spans or verbs(plain))


def verbs(plain):
    """Whether a text has a verb that acts (ACTIONS; a NOUN_VERBS word in a verb's place; set up, make a gift)."""
    if SET_UP.search(plain) or MAKE.search(plain):
        return True
    for start, end, word in _words(plain):
        lower = word.lower()
        if lower in ACTIONS or (lower.endswith("s") and lower[:-1] in ACTIONS and lower[:-1] not in NOUN_VERBS):
            return True
        if (
            lower in NOUN_VERBS
            and not NOUN_AFTER.match(plain[end:])
            and (VERB_BEFORE.search(plain[:start]) or VERB_AFTER.match(plain[end:]))
        ):
            return True
    return False


def addressed(text: str, start: int, end: int) -> bool:
    """Whether the sentence around text[start:end] (a mention of an instrument, a goal, a commitment) acts on it: a
    figure, an action verb (fund, sell, gift, transfer, convert, open, contribute, buy, set up ...), a date or a
    horizon. "GRAT: weigh it against the plan above." names the GRAT and does nothing with it."""
    s, e = sentence_at(text, start)
    while e < len(text) and text[e] == ";":  # "A CRT fits her goal; fund it with the low-basis shares."
        e = sentence_at(text, min(len(text) - 1, e + 2))[1] if e + 2 < len(text) else len(text)
    return acts(text[s:e], mask=[(max(0, start - s), max(0, end - s))])
