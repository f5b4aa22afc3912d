"""coverage (final answers only): each instrument the client listed is named, and each goal addressed.

An instrument is named by its name, the client's words or an abbreviation (CRT, DAF, GRAT ...: reasoning/facts/
data/goals.toml); a goal shares at least half its words with the answer (a figure of the goal counts in any form:
"seventy thousand pounds" = "£70k"; the goal words' synonyms and fillers are in goals.toml).

    fails:  an answer that never names the client's exchange fund    passes: "Seed the DAF with ..." for a DAF
"""

from __future__ import annotations

import re

from reasoning.facts import regimes
from reasoning.facts.checks.doc import Doc, close_to
from reasoning.facts.checks.words import DETERMINER, STOPWORDS, table
from reasoning.facts.quantities import find_quantities
from reasoning.facts.sheet import Finding

KIND = "coverage"
FINAL_ONLY = True

GOALS = table("goals")
ABBREVIATIONS = GOALS["abbreviations"]
GOAL_FILLERS = set(GOALS["fillers"])
# Words an answer uses for a goal's words (by their first five letters, as the goal's are read).
GOAL_GROUPS = {w[:5]: {m[:5] for m in group} for group in GOALS["synonyms"] for w in group}
WORD_OR_NUMBER = re.compile(r"[a-z0-9]+")


def _plain(text):
    return " ".join(re.sub(r"[-‐–’'/]", " ", str(text).lower()).split())


def run(doc: Doc) -> list[Finding]:
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
    present += sum(any(close_to(y, x.value) and y.unit == x.unit for y in _all(doc)) for x in figures)
    present += sum(m.name in named for m in rules)
    total = len(words) + len(figures) + len(rules)
    return not total or present * 2 >= total


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
