"""figure (shares): a share the text states between two of the client's holdings, named by their labels.

"The euro account is roughly a third of their liquid wealth", "Bonds are a quarter of the account today", "The
earn-out is 25% of the price": the subject and the whole are read as the sheet's labels (a holding, or a percent
fact with its base), and the share is recomputed. A fraction word is read to 3 points, hedged or not ("about a
quarter" passes 22-28%), a percent to its precision, 2.5 points more when hedged ("about", "roughly", "over"). A subject or whole the sheet
does not name, or two currencies, is left alone: nothing is claimed about it.

    fails:  "Equities are two-thirds of the account" (60%)    passes: "Equity funds are ~59% of the portfolio"
"""

from __future__ import annotations

import re

from reasoning.facts.checks.doc import Doc, amount_facts, percent_facts
from reasoning.facts.checks.words import WEAK, content_words
from reasoning.facts.quantities import format_percent
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

FRACTIONS = {
    "half": 1 / 2, "a half": 1 / 2, "one half": 1 / 2, "a third": 1 / 3, "one third": 1 / 3, "two thirds": 2 / 3,
    "a quarter": 1 / 4, "one quarter": 1 / 4, "three quarters": 3 / 4, "a fifth": 1 / 5, "one fifth": 1 / 5,
    "two fifths": 2 / 5, "three fifths": 3 / 5, "four fifths": 4 / 5, "a sixth": 1 / 6, "a seventh": 1 / 7,
    "an eighth": 1 / 8, "a tenth": 1 / 10, "one tenth": 1 / 10,
}  # fmt: skip
FRACTION = "|".join(sorted((k.replace(" ", r"[\s-]") for k in FRACTIONS), key=len, reverse=True))
STATEMENT = re.compile(
    r"(?P<subject>(?:[A-Za-z][\w'’-]*\s+){0,3}[A-Za-z][\w'’()-]*)(?:\s*,[^,;]{1,30},)?\s+"
    r"(?:is|are|makes?\s+up|represents?|accounts?\s+for|sits?\s+at|comes?\s+to)\s+"
    r"(?P<hedge>(?:(?:about|roughly|around|nearly|almost|approximately|just|a\s+little|some|over|under|"
    r"more\s+than|less\s+than|~)\s*)*)"
    rf"(?P<share>{FRACTION}|\d+(?:\.\d+)?\s?%)\s+of\s+(?:the|her|his|their|its|our|your)?\s*"
    r"(?P<whole>[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,2})",
    re.IGNORECASE,
)
LEADING = re.compile(r"^(?:(?:the|her|his|their|its|our|your|a|an|so|and|but|today|now)\s+)+", re.IGNORECASE)
FRACTION_SLACK, HEDGE_SLACK = 3.0, 2.5  # points


def run(doc: Doc) -> list[Finding]:
    findings = []
    for m in STATEMENT.finditer(doc.text):
        part = _holding(doc, LEADING.sub("", m["subject"]))
        whole_words = m["whole"]
        if part is None:
            continue
        value, unit, base, label = part
        if base:  # a percent fact: its share of its base
            if not _same(base, whole_words):
                continue
            actual = value
        else:
            whole = _holding(doc, whole_words, amounts_only=True)
            if whole is None or whole[1] != unit or not whole[0]:
                continue
            actual = 100 * value / whole[0]
        stated, slack = _stated(m["share"])
        slack += HEDGE_SLACK if m["hedge"].strip() and m["share"].endswith("%") else 0.0
        span = (m.start("share") - len(m["hedge"]), m.end("share"))
        text = doc.text[span[0] : span[1]]
        ok = abs(actual - stated) <= slack
        detail = (
            f"{text} checks out: the {label} is {format_percent(actual)} of the {whole_words}"
            if ok
            else f"{text} is not the {label}'s share: it is {format_percent(actual)} of the {whole_words}"
        )
        findings.append(Finding(KIND, ok, text, detail, span[0], span[1]))
    return findings


def _stated(share):
    """The share written, in percent, and the slack its form allows."""
    words = " ".join(share.lower().replace("-", " ").split())
    if words in FRACTIONS:
        return 100 * FRACTIONS[words], FRACTION_SLACK
    number = share.rstrip("% ").strip()
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number), 0.5 * 10**-decimals


def _same(label, phrase):
    """The phrase names the label: its words (but "balance", "value" ...) are the label's, with at most one of the
    label's left out ("unrealised gains" for "unrealised GIA gains", "the account" for "securities account"), or the
    phrase is the label's initials ("GIA")."""
    mine, said = content_words(label), content_words(phrase)
    key = (said - WEAK) or said
    if key and key <= mine and len(mine - said) <= 1:
        return True
    initials = "".join(w[0] for w in label.lower().replace("-", " ").split() if w)
    return len(initials) >= 2 and phrase.strip().lower() == initials


def _holding(doc, phrase, amounts_only=False):
    """(value, unit, base, label) of the one fact the phrase names: an amount, or a percent fact (not a target,
    unless the phrase says target) with its base; None when it names none or several."""
    amounts = [f for f in amount_facts(doc) if _same(f.label, phrase)]
    targeted = "target" in phrase.lower()
    percents = [] if amounts_only else [
        f for f in percent_facts(doc)
        if f.base and _same(f.label, phrase) and (("target" in f.label.lower()) == targeted)
    ]  # fmt: skip
    found = amounts + percents
    if len(found) != 1:
        return None
    f = found[0]
    return f.value, f.unit, f.base if f.kind == "percent" else "", f.label
