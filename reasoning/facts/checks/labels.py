"""label: a figure of the client's under another fact's label, a rule's name or a role no fact has.

A fact's figure attached to another fact's label ("the cost basis of USD 450k" when USD 450k is the salary), to a
rule ("USD 450k of NIIT") or to a role no fact has ("70% (the target)"); a percent fact applied to another base
than its own ("70% of USD 450k" when it is 70% of the portfolio). Attached means next to it (words.attached_labels);
labels are compared by their content words, with the synonyms of reasoning/facts/data/words.toml.

    fails:  "the cost basis of USD 450k"  (USD 450k is the salary)    passes: "a salary of USD 450k"
"""

from __future__ import annotations

import re

from reasoning.facts import regimes
from reasoning.facts.checks.doc import Doc, amount_facts, percent_facts
from reasoning.facts.checks.words import (
    AFTER_OF,
    DETERMINER,
    PORTIONS,
    RATE_WORDS,
    ROLES,
    WEAK,
    WORDS_AT,
    attached_labels,
    content_words,
    covers,
    figure_at,
    label_term,
    named_fact,
    raw_words,
)
from reasoning.facts.quantities import format_amount, matches
from reasoning.facts.sheet import Finding

SUM_AFTER = re.compile(r"\s*[+]")

KIND = "label"
FINAL_ONLY = False


def run(doc: Doc) -> list[Finding]:
    findings = []
    mentions = doc.mentions
    amounts, percents = amount_facts(doc), percent_facts(doc)
    for q in doc.quantities:
        if (q.start, q.end) in doc.statutory:
            continue
        owners = [f for f in (amounts if q.kind == "amount" else percents) if matches(q, f.value, f.unit)]
        if owners:
            for detail in _mislabels(doc, q, owners, mentions):
                findings.append(Finding("label", False, q.text, detail, q.start, q.end))
        elif q.kind == "percent":
            findings += _applied_elsewhere(doc, q)
    return findings


def _rates_with_a_base(doc):
    """(value, label, base fact) for each percent the sheet ties to one of the client's amounts: a limit in percent
    ("cash minimum 10% of the brokerage account"), a spending rate, and the gap between a target and today's share
    of one base (15% target, 10% today: 5 points of the liquid portfolio)."""
    amounts = amount_facts(doc)

    def base_of(label):
        found = [f for f in amounts if content_words(label) and content_words(label) <= content_words(f.label)]
        return found[0] if len(found) == 1 else None

    found = []
    for f in doc.facts:
        if f.kind in ("limit", "percent") and f.unit == "%" and f.role not in ("share", "target", "") and f.base:
            found.append((f.value, f.label, base_of(f.base)))
    shares = {f.label.lower(): f for f in percent_facts(doc) if f.role == "share"}
    for t in percent_facts(doc):
        share = shares.get(t.label.lower().removesuffix(" target").strip()) if t.role == "target" else None
        if share and share.base == t.base and share.value != t.value:
            found.append((abs(t.value - share.value), f"{share.label} gap to target", base_of(t.base)))
    return [(v, label, base) for v, label, base in found if base is not None]


def _applied_elsewhere(doc, q):
    """"Spending at 4.5% of the $158M public-equity sleeve" when the spending rate is 4.5% of the $310M endowment:
    a percent the sheet ties to one amount, applied to another amount the text writes after "of"."""
    m = AFTER_OF.match(doc.text, q.end)
    figure = figure_at(doc, m.end()) if m else None
    if figure is None or figure.kind != "amount":
        return []
    candidates = [(label, base) for value, label, base in _rates_with_a_base(doc) if abs(value - q.value) <= q.precision]
    if len({base.label for _label, base in candidates}) != 1:
        return []  # no such percent, or several with other bases: nothing says which it is
    label, base = candidates[0]
    if base.unit != figure.unit or matches(figure, base.value, base.unit):
        return []
    detail = f"{q.text} is the {label}, a share of the {base.label} ({format_amount(base.value, base.unit)}), not of {figure.text}"
    return [Finding("label", False, doc.text[q.start : figure.end], detail, q.start, figure.end)]


def _mislabels(doc, q, owners, mentions):
    owner = owners[0]
    mine = set().union(*(content_words(f.label) for f in owners))
    problems, fine = [], False
    named = named_fact(doc, q, [f for f in doc.facts if f.kind == q.kind]) if q.kind == "amount" else None
    if named and named not in owners:  # "brokerage account balance: USD 1.8M" when USD 1.8M is the IRA balance
        return [f"{q.text} is the {owner.label}, not the {named.label}"] + _wrong_base(doc, q, owners)
    for form, term, start, end in attached_labels(doc, q):
        words = content_words(term)
        if not words or form in ("colon", "prefix"):
            continue  # "a pension pays $4,200": words before a figure with no mark between are too loose here
        if words & mine:
            fine = True
            continue
        if q.kind == "percent" and (words & RATE_WORDS or form == "of"):
            continue  # a rate, or a share of something else: the base is checked on figures below
        regime = next((m for m in mentions if m.start < end and start < m.end), None)
        if regime and q.kind == "amount":
            if not any(covers(raw_words(" ".join(_regime_names(regime))), raw_words(f.label)) for f in owners):
                problems.append(f"{q.text} is the {owner.label}, not {regime.name}")
            continue
        if q.kind == "percent" and words <= {"wealth"}:
            continue  # "a quarter of the portfolio (26%)": the share's base, not its label
        if form in ("before", "colon") and SUM_AFTER.match(doc.text, q.end):
            continue  # "Financial assets: £1.4M + £420k + ...": the label is the sum's
        if form == "of" or words <= PORTIONS:
            continue  # "USD 450k of employer stock", "a share of USD 3.2M": a portion of a holding, not its label
        others = (f for f in doc.facts if f.kind == q.kind and f not in owners)
        other = next((f for f in others if covers(content_words(f.label), words)), None)
        if other:
            problems.append(f"{q.text} is the {owner.label}, not the {other.label}")
        elif words & ROLES and not any(words & ROLES & content_words(f.label) for f in doc.facts):
            problems.append(f"{q.text} is the {owner.label}, not {_a(term)}")
    if fine:
        problems = []
    problems = list(dict.fromkeys(problems))
    if q.kind == "percent":
        problems += _wrong_base(doc, q, owners)
    return problems


def _regime_names(mention):
    table = next((r for r in regimes.REGIMES if r.name == mention.name), None)
    return table.names if table else (mention.name,)


def _a(term):
    words = DETERMINER.sub("", term.strip())
    return f"{'an' if words[:1].lower() in 'aeiou' else 'a'} {words}"


def _wrong_base(doc, q, owners):
    """"70% of USD 450k" when 70% is a share of the portfolio and USD 450k the salary."""
    bases = [f for f in owners if f.base]
    m = AFTER_OF.match(doc.text, q.end)
    if not bases or not m:
        return []
    base_words = set().union(*(content_words(f.base) | content_words(f.label) for f in bases))
    figure = figure_at(doc, m.end())
    if figure is not None:
        if figure.kind != "amount":
            return []
        named = [f for f in amount_facts(doc) if matches(figure, f.value, f.unit)]
        base_only = set().union(*(content_words(f.base) - WEAK for f in bases))  # "ISA balance" is no "SIPP balance"
        if not named or any((content_words(f.label) - WEAK) & base_only for f in named):
            return []
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {named[0].label} ({figure.text})"]
    words = WORDS_AT.match(doc.text, m.end())
    term = content_words(label_term(words[0])) if words else set()
    if not term or term & base_words:
        return []
    other = next((f for f in doc.facts if f.kind == "amount" and covers(content_words(f.label), term)), None)
    if other:
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {other.label}"]
    return []


