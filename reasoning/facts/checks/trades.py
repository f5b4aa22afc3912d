"""figure (a trade to a target): the amount and the direction of a trade that brings a holding to its target.

Where the sheet has a holding's share today and its target as shares of one whole ("drifted to 72% equities against a
60/40 target" of a CHF 12M portfolio), the trade to the target is fixed: (72% - 60%) of CHF 12M, a sale of CHF 1.44M.
A sentence that trades the holding with an amount right after its verb, and says the trade is the one to the target
("to target", "back to", "bring", "rebalance": reasoning/facts/data/trades.toml), fails when the amount is another
(beyond its written precision, and 2%), or when it buys what must be sold or sells what must be bought. A sentence
that stages the trade ("the first of three tranches", "CHF 480k a quarter") or speaks of its tax or cost is no claim
about the whole trade and is left to the figure check.

    fails:  "Sell CHF 3.84M of equities to bring them back to target" (the trade is CHF 1.44M)
    fails:  "Buy CHF 1.44M of equities to restore the 60% target" (equities are over it: a sale)
    passes: "Sell CHF 1.44M of equities to bring them back to 60%"
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasoning.facts.checks.doc import Doc, amount_facts, percent_facts
from reasoning.facts.checks.words import content_words, phrases, table
from reasoning.facts.phrases import sentences
from reasoning.facts.quantities import format_amount, format_percent
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

WORDS = table("trades")
SELL = re.compile(rf"\b(?:{phrases(WORDS['selling'])})\b", re.IGNORECASE)
BUY = re.compile(rf"\b(?:{phrases(WORDS['buying'])})\b", re.IGNORECASE)
TO_TARGET = re.compile(rf"(?:{phrases(WORDS['to_target'])})\b|\bto\s+\d[\d.,]*\s?%", re.IGNORECASE)
STAGING = re.compile(rf"\b(?:{phrases(WORDS['staging'])})\b", re.IGNORECASE)
# Between a trade's verb and its amount: hedges and articles only ("sell about CHF 1.4M", "sell some of the ...").
VERB_TO_AMOUNT = re.compile(r"^\s*(?:(?:about|roughly|around|approximately|~|≈|c\.|circa|an?|the|another|a\s+further)\s*)*$", re.I)
SLACK = 0.02  # of the trade: the figure check's rounding, kept tight where the trade is fixed


@dataclass(frozen=True)
class Trade:
    holding: str  # the holding's label ("equities")
    stems: frozenset  # its words' first four letters, to find it named in a sentence
    value: float  # what the trade to the target moves, in `unit`
    unit: str
    sale: bool
    how: str  # "(72% - 60%) of the CHF 12M portfolio"


def trades(doc) -> list[Trade]:
    """The trades the sheet fixes: each holding with a share today and a target of the same whole."""
    out = []
    percents = percent_facts(doc)
    wholes = {f.label: f for f in amount_facts(doc)}
    for now in (p for p in percents if p.role == "share" and p.base in wholes):
        stems = _stems(now.label) - {"shar"}
        targets = [t for t in percents if t.role == "target" and t.base == now.base and stems and stems <= _stems(t.label)]
        if len(targets) != 1 or targets[0].value == now.value:
            continue
        whole, target = wholes[now.base], targets[0]
        value = whole.value * abs(now.value - target.value) / 100
        how = f"({format_percent(now.value)} - {format_percent(target.value)}) of the {format_amount(whole.value, whole.unit)} {whole.label}"
        out.append(Trade(now.label.removesuffix(" share"), frozenset(stems), value, whole.unit, now.value > target.value, how))
    return out


def _stems(label):
    return {w[:4] for w in content_words(label)}


MOVING = re.compile(rf"\b(?:{phrases(WORDS['moving'])})\b", re.IGNORECASE)
INTERIM = re.compile(rf"\b(?:{phrases(WORDS['interim'])})\b", re.IGNORECASE)
TO_LEVEL = re.compile(r"\b(?:back\s+)?to\s+(?:a\s+|an\s+|the\s+)?(?P<level>\d[\d.,]*)\s?%", re.IGNORECASE)


def run(doc: Doc) -> list[Finding]:
    return _levels(doc) + _trades(doc)


def _levels(doc):
    """A move to a level no percent of the sheet's holds, where the sheet has targets: "shifted back to 75%" for a
    60/40 target (SmolLM2 ended a rebalancing session solved so)."""
    percents = percent_facts(doc)
    targets = [p for p in percents if p.role == "target"]
    if not targets:
        return []
    out, said = [], ", ".join(f"{p.label} {format_percent(p.value)}" for p in targets)
    for s, sentence in _sentences(doc, MOVING, INTERIM):
        for m in TO_LEVEL.finditer(sentence):
            level = float(m["level"].replace(",", "."))
            if any(abs(level - p.value) <= 0.5 for p in percents):
                continue
            at = s + m.start("level")
            text = doc.text[at : s + m.end()]
            out.append(Finding(KIND, False, text, f"{text} is none of the client's targets ({said})", at, s + m.end()))
    return out


def _trades(doc):
    fixed = trades(doc)
    if not fixed:
        return []
    out = []
    for s, sentence in _sentences(doc, TO_TARGET, STAGING):
        e = s + len(sentence)
        for verb in (m for pattern in (SELL, BUY) for m in pattern.finditer(doc.text, s, e)):
            q = _amount_after(doc, verb.end(), e)
            trade = q and _trade_named(fixed, sentence, q)
            if trade:
                out.append(_judged(trade, q, selling=SELL.fullmatch(verb[0]) is not None))
    return out


def _sentences(doc, cue, unless):
    """(start, text) of each sentence with the cue and none of the words that rule it out."""
    for s, e in sentences(doc.text):
        sentence = doc.text[s:e]
        if cue.search(sentence) and not unless.search(sentence):
            yield s, sentence


def _amount_after(doc, at, end):
    """The amount a trade's verb takes: the first after it, with only hedges and articles between."""
    q = next((q for q in doc.quantities if q.kind == "amount" and at <= q.start < end), None)
    return q if q is not None and VERB_TO_AMOUNT.match(doc.text[at : q.start]) else None


def _trade_named(fixed, sentence, q):
    """The one fixed trade whose holding the sentence names, in the amount's currency."""
    named = _stems(sentence)
    hits = [t for t in fixed if t.unit == q.unit and t.stems <= named]
    return hits[0] if len(hits) == 1 else None


def _judged(trade, q, selling):
    side = "sale" if trade.sale else "purchase"
    shown = format_amount(trade.value, trade.unit)
    if selling != trade.sale:
        detail = f"the trade to the {trade.holding} target is a {side} of {shown}, {trade.how}"
        return Finding(KIND, False, q.text, detail, q.start, q.end)
    if abs(q.value - trade.value) <= max(q.precision, SLACK * trade.value):
        return Finding(KIND, True, q.text, f"{q.text} is the {side} to the {trade.holding} target, {trade.how}", q.start, q.end, verified=True)
    detail = f"the {side} to the {trade.holding} target is {shown}, {trade.how}, not {q.text}"
    return Finding(KIND, False, q.text, detail, q.start, q.end)
