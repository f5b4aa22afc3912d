"""figure: the law's own figures an advisor quotes ("the £325,000 nil-rate band", "KESt 27.5 %"), checked against the
table of them in data/law.toml ([[figures]]) for the client's countries.

A figure is the law's where one of an entry's words stands within three words of it. It passes (verified) when it is
one of the entry's values, or a small multiple of one ("two residence bands", "£6,000 with last year's unused
exemption"; the multiple is left unverified); it fails when it is neither and the words name one entry only ("the UK
nil-rate band is GBP 325,000, not GBP 352,000"). Either way its span is the law's: the figure check leaves it to this
one, and a derivation may use it as an operand. Figures of other countries' law, and words several entries share,
are left alone.

This check runs before the figure check, which reads doc.statutory and doc.law.
"""

from __future__ import annotations

import re
from functools import lru_cache

from reasoning.facts import places as placelib
from reasoning.facts.checks.doc import Doc, amount_facts, fact_of, sentence_of
from reasoning.facts.checks.words import any_of, table
from reasoning.facts.quantities import format_amount, format_percent, matches
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False
REACH = 3  # words between the figure and the law's words
EXACT = 0.005  # a multiple is read only where it is written to the unit, not as "EUR 1 Mio." (0.5-1.5M)
MULTIPLES = (2, 3, 4, 5, 6, 7, 8, 9, 10)
WORD = re.compile(r"\S+")
CLAUSE_MARK = re.compile(r"[;:()=—–]|,(?!\d)")


@lru_cache(maxsize=1)
def entries():
    return table("law").get("figures", [])


def run(doc: Doc) -> list[Finding]:
    countries = _countries(doc.facts)
    table_ = [e for e in entries() if e["place"] in countries]
    found = []
    own = amount_facts(doc)
    for q in doc.quantities if table_ else ():
        if q.kind == "amount" and fact_of(q, own):
            continue  # "the Säule 3a of CHF 88'000": the client's balance, not the law's maximum
        named = [e for e in table_ if e["unit"] == q.unit and _near(doc, q, e["words"]) and _applies(doc, q, e)]
        if not named:
            continue
        finding = _judge(q, named)
        doc.law.add((q.start, q.end))
        if q.kind == "amount":
            doc.statutory.add((q.start, q.end))
        found.append(finding)
    return found


def named_shares(doc, start, end):
    """The law's percents of the client's countries whose words the sentence names without writing the figure
    ("Morag can take £160,000 tax-free from her SIPP": a quarter of it), as fractions a derivation may use."""
    countries = _countries(doc.facts)
    text = doc.text[start:end]
    return {v / 100 for e in entries() if e["place"] in countries and e["unit"] == "%"
            and any_of(tuple(e["words"])).search(text)
            and ("when" not in e or any_of(tuple(e["when"])).search(text)) for v in e["values"]}  # fmt: skip


def _judge(q, named):
    for e in named:
        if any(matches(q, v, q.unit) for v in e["values"]):
            return Finding("figure", True, q.text, f"{q.text} is the {e['name']} ({e['year']})", q.start, q.end)
    for e in named:
        if q.kind == "amount" and any(abs(q.value - n * v) <= EXACT * n * v for v in e["values"] for n in MULTIPLES):
            detail = f"unverified: {q.text} is a multiple of the {e['name']}"
            return Finding("figure", True, q.text, detail, q.start, q.end, verified=False)
    if len(named) > 1:
        names = ", ".join(e["name"] for e in named)
        detail = f"unverified: {q.text} is named as the law's figure but is none of {names}"
        return Finding("figure", True, q.text, detail, q.start, q.end, verified=False)
    e = named[0]
    said = format_percent(e["values"][0]) if q.unit == "%" else format_amount(e["values"][0], q.unit)
    return Finding("figure", False, q.text, f"the {e['name']} is {said} ({e['year']}), not {q.text}", q.start, q.end)


def _applies(doc, q, entry):
    """An entry with `when` words speaks only of sentences that have one ("25 % KESt" on savings interest)."""
    start, end = sentence_of(doc, q.start)
    return "when" not in entry or bool(any_of(tuple(entry["when"])).search(doc.text, start, end))


def _near(doc, q, words):
    """One of the words within REACH words of q, in its sentence."""
    start, end = sentence_of(doc, q.start)
    before = " ".join(WORD.findall(doc.text[start : q.start])[-(REACH + 3) :])
    after = " ".join(WORD.findall(doc.text[q.end : end])[: REACH + 3])
    pattern = any_of(tuple(words))
    return any(_within(m, text, side) for text, side in ((before, "before"), (after, "after"))
               for m in pattern.finditer(text))  # fmt: skip


def _within(m, text, side):
    gap = text[m.end() :] if side == "before" else text[: m.start()]
    gap = gap.removeprefix(":") if side == "before" else gap  # "IFI base: 70 %": the words label the figure
    if side == "before" and gap.strip() == "(":
        return True  # "Abgeltungsteuer with Soli (26,375 % of ...)": the bracket gives the words' figure
    return len(gap.split()) <= REACH and not CLAUSE_MARK.search(gap)  # "After the allowance, EUR 1.04M is taxable"



def _countries(facts):
    return {placelib.country_of(f.value) for f in facts if f.kind == "place" and isinstance(f.value, str)
            and f.role not in ("assets", "property", "situs")}  # fmt: skip


