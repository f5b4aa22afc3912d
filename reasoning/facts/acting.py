"""What a sentence acts on: coverage that means something.

`addressed(text, start, end)` says whether the sentence around a mention of an instrument, goal or commitment acts
on it: a figure, an action verb (fund, sell, gift, transfer, convert, open, contribute, buy, set up ...), a date or a
horizon. "GRAT: weigh it against the plan above." names the GRAT and does nothing with it. `coverage_findings(text,
facts)` is the coverage rule of check.py (each instrument the client listed, each goal) requiring it, kind
"coverage", for the checker to call in place of its own.
"""

from __future__ import annotations

import re

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
    "exits exiting distribute distributed distributing recommend recommends recommended protect protects protected"
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


def _words(text):
    return [(m.start(), m.end(), m[0]) for m in re.finditer(r"[A-Za-z][A-Za-z'’-]*", text)]


def acts(sentence, mask=()):
    """Whether a sentence acts (a figure, an action verb, a date or horizon), the masked spans aside."""
    chars = list(sentence)
    for s, e in mask:
        chars[s:e] = " " * (e - s)
    plain = "".join(chars)
    if any(q.kind in ("amount", "percent", "year") for q in find_quantities(plain)):
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


# ---- coverage that means something -------------------------------------------------------------------------------

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
    "irrevocable life insurance trust": "ILIT",
}
DETERMINER = re.compile(r"^(?:(?:a|an|the|her|his|their|its|some|one|two)\s+)+", re.IGNORECASE)


def _instrument_mentions(text, fact):
    """Where the answer names an instrument: its name, the client's words, or its abbreviation (CRT, DAF ...)."""
    phrases = {DETERMINER.sub("", str(fact.value or "")).strip()}
    if fact.text and len(fact.text.split()) <= 6:
        phrases.add(DETERMINER.sub("", fact.text).strip())
    phrases.discard("")
    spans = []
    for phrase in phrases:
        plain = " ".join(re.sub(r"[-‐–’'/]", " ", phrase.lower()).split())
        abbreviation = ABBREVIATIONS.get(plain) or (
            "".join(w[0] for w in plain.split()).upper() if len(plain.split()) >= 3 else ""
        )
        if abbreviation:
            spans += [m.span() for m in re.finditer(rf"(?<!\w){abbreviation}s?(?!\w)", text)]
        loose = r"[\s\-‐–’'/]+".join(map(re.escape, plain.split()))
        spans += [m.span() for m in re.finditer(rf"(?<!\w){loose}(?:e?s)?(?!\w)", text, re.IGNORECASE)]
    return sorted(set(spans))


GOAL_FILLERS = set(
    "get gets getting got keep keeps keeping kept stay stays staying make makes making want wants wanted would like "
    "while within without into onto over under below above before after next than then them they she he him it so "
    "such very also still both some any more less most least much many way ways use uses using need needs can could "
    "should will able start starts begin begins the a an her his their its your our my client of in on at to for and "
    "or with by from as is are was this that these those about all each per".split()
)
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
GOAL_GROUPS = {w[:5]: {m[:5] for m in g.split()} for g in GOAL_SYNONYMS for w in g.split()}


def _plain(text):
    return " ".join(re.sub(r"[-‐–’'/]", " ", str(text).lower()).split())


def _goal_met(goal, text):
    """Today's rule (check.py): at least half the goal's words, by their first five letters or a word of their group,
    each figure in any form, each rule by any of its names, are in the text."""
    rules = regimes.find_regimes(goal)
    named = {m.name for m in regimes.find_regimes(text)}
    figures = [x for x in find_quantities(goal) if x.kind in ("amount", "percent", "age")]
    for span in sorted([(x.start, x.end) for x in figures] + [(m.start, m.end) for m in rules], reverse=True):
        goal = goal[: span[0]] + " " + goal[span[1] :]
    stems = {w[:5] for w in re.findall(r"[a-z0-9]+", _plain(text))}
    words = {w[:5] for w in re.findall(r"[a-z0-9]+", _plain(goal)) if w not in GOAL_FILLERS}
    present = sum(bool(GOAL_GROUPS.get(w, {w}) & stems) for w in words)
    ours = [y for y in find_quantities(text) if y.kind in ("amount", "percent", "age")]
    present += sum(
        any(
            y.unit == x.unit and abs(y.value - x.value) <= max(x.precision, y.precision) * 2 + 1e-9 * abs(x.value)
            for y in ours
        )
        for x in figures
    )
    present += sum(m.name in named for m in rules)
    total = len(words) + len(figures) + len(rules)
    return not total or present * 2 >= total


def coverage_findings(text: str, facts: list[Fact]) -> list[Finding]:
    """Each instrument the client listed and each goal, addressed by a sentence that acts on it (`addressed`): an
    instrument named only in a filler line ("GRAT: weigh it against the plan above.") is not addressed; a goal is
    met by today's rule on the sentences that act."""
    text = text or ""
    acting = " ".join(text[s:e] for s, e in sentences(text) if acts(text[s:e]))
    out = []
    for fact in facts:
        name = str(fact.value or fact.text)
        if fact.kind == "instrument":
            what = f"the {DETERMINER.sub('', name)} the client listed"
            spans = _instrument_mentions(text, fact)
            hit = next(((s, e) for s, e in spans if addressed(text, s, e)), None)
            if hit:
                out.append(Finding("coverage", True, text[hit[0] : hit[1]], f"the answer addresses {what}", *hit))
            elif spans:
                s, e = spans[0]
                out.append(Finding("coverage", False, text[s:e], f"the answer names {what} but never acts on it", s, e))
            else:
                out.append(Finding("coverage", False, "", f"the answer never addresses {what}", -1, -1))
        elif fact.kind == "goal":
            what = f"the client's goal: {name}"
            if _goal_met(name, acting):
                out.append(Finding("coverage", True, "", f"the answer addresses {what}", -1, -1))
            elif _goal_met(name, text):
                out.append(Finding("coverage", False, "", f"the answer names {what} but never acts on it", -1, -1))
            else:
                out.append(Finding("coverage", False, "", f"the answer never addresses {what}", -1, -1))
    return out
