"""coverage (final answers only): each instrument the client listed, and each goal, is acted on.

An instrument is named by its name, the client's words or an abbreviation (CRT, DAF, GRAT ...: reasoning/facts/
data/goals.toml), in a sentence that acts on it (acting.addressed: a figure, an action verb, a date); a goal shares
at least half its words with the sentences that act (a figure of the goal counts in any form: "seventy thousand
pounds" = "£70k"; the goal words' synonyms and fillers are in goals.toml). Named only in a filler line ("GRAT: weigh
it against the plan above.") is named, not addressed.

    fails:  an answer that never names the client's exchange fund, or names it only in a filler line
    passes: "Seed the DAF with USD 500k of the low-basis shares" for a DAF
"""

from __future__ import annotations

import re

from reasoning.facts import regimes
from reasoning.facts.acting import acts, addressed
from reasoning.facts.checks import prohibitions
from reasoning.facts.checks.doc import Doc, close_to
from reasoning.facts.phrases import sentences
from reasoning.facts.checks.words import DETERMINER, STOPWORDS, table
from reasoning.facts.quantities import find_quantities
from reasoning.facts.sheet import Fact, Finding

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
    return findings(doc.text, doc.facts)


def findings(text: str, facts: list[Fact]) -> list[Finding]:
    """One finding per instrument the client listed and per goal: addressed, named but never acted on, or never
    named."""
    text = text or ""
    acting = " ".join(text[s:e] for s, e in sentences(text) if acts(text[s:e]))
    if text.strip() and not acting:  # "The portfolio includes returns on property tax.": an answer that does nothing
        return [Finding(KIND, False, "", "the answer acts on nothing: no figure, action or date in it", -1, -1)]
    missed = _targets_untouched(acting, facts)
    if missed:  # a case with targets is answered by acting on them
        return [Finding(KIND, False, "", f"the answer never acts on the client's targets ({missed})", -1, -1)]
    barred = [rule.thing.lower() for rule in prohibitions.rules(facts)]
    out = []
    for fact in facts:
        name = str(fact.value or fact.text)
        if fact.kind == "instrument" and any(_plain(name) in _plain(thing) for thing in barred):
            continue  # "cannot make a pension buy-in any more": nothing to act on (prohibitions.py reads the rule)
        if fact.kind == "instrument":
            what = f"the {DETERMINER.sub('', name)} the client listed"
            spans = _instrument_mentions(text, fact)
            hit = next(((s, e) for s, e in spans if addressed(text, s, e)), None)
            if hit:
                out.append(Finding(KIND, True, text[hit[0] : hit[1]], f"the answer addresses {what}", *hit))
            elif spans:
                s, e = spans[0]
                out.append(Finding(KIND, False, text[s:e], f"the answer names {what} but never acts on it", s, e))
            else:
                out.append(Finding(KIND, False, "", f"the answer never addresses {what}", -1, -1))
        elif fact.kind == "goal":
            what = f"the client's goal: {name}"
            if _goal_met(name, acting):
                out.append(Finding(KIND, True, "", f"the answer addresses {what}", -1, -1))
            elif _goal_met(name, text):
                out.append(Finding(KIND, False, "", f"the answer names {what} but never acts on it", -1, -1))
            else:
                out.append(Finding(KIND, False, "", f"the answer never addresses {what}", -1, -1))
    return out


def _targets_untouched(acting, facts):
    """The client's targets, where no sentence that acts names any of them (its class, or its figure): a rebalancing
    answer that never speaks of the equities, the bonds or their 60/40 answers something else."""
    targets = [f for f in facts if f.kind == "percent" and f.role == "target"]
    if not targets:
        return ""
    stems = {w[:5] for w in WORD_OR_NUMBER.findall(_plain(acting)) if not w.isdigit()}
    ours = [y for y in find_quantities(acting) if y.kind == "percent"]
    for t in targets:
        label = WORD_OR_NUMBER.findall(_plain(t.label))
        words = {w[:5] for w in label if w not in ("target", "targets") and not w.isdigit()}
        if words & stems or any(close_to(y, t.value) for y in ours):
            return ""
    return ", ".join(f"{t.label} {t.value:g}%" for t in targets[:3])


def _goal_met(goal, text):
    """At least half the goal's words are in the text, as an advisor paraphrases them: a word counts when it or a
    word of its group is there (by their first five letters: "pass the business to their daughter" is answered by
    "transfer the GmbH stake to the daughter"); a rule the goal names counts when the text names the same rule by
    any of its names ("IRMAA", "required minimum distributions" for "RMDs"); each figure counts as one word, present
    when the text writes it in any form ("seventy thousand pounds": "£70k"). Filler verbs and particles ("get",
    "keep", "while", "within") count for nothing."""
    rules = regimes.find_regimes(goal)
    named = {m.name for m in regimes.find_regimes(text)}
    figures = [x for x in find_quantities(goal) if x.kind in ("amount", "percent", "age")]
    for span in sorted([(x.start, x.end) for x in figures] + [(m.start, m.end) for m in rules], reverse=True):
        goal = goal[: span[0]] + " " + goal[span[1] :]
    stems = {w[:5] for w in WORD_OR_NUMBER.findall(_plain(text))}
    words = {w[:5] for w in WORD_OR_NUMBER.findall(_plain(goal)) if w not in STOPWORDS and w not in GOAL_FILLERS}
    present = sum(bool(GOAL_GROUPS.get(w, {w}) & stems) for w in words)
    ours = [y for y in find_quantities(text) if y.kind in ("amount", "percent", "age")]
    present += sum(any(close_to(y, x.value) and y.unit == x.unit for y in ours) for x in figures)
    present += sum(m.name in named for m in rules)
    total = len(words) + len(figures) + len(rules)
    return not total or present * 2 >= total


def _instrument_mentions(text, fact):
    """Where the text names an instrument: its name, the client's words, or its abbreviation (CRT, DAF ...)."""
    phrases = {_plain(DETERMINER.sub("", str(fact.value or "")))}
    if fact.text and len(fact.text.split()) <= 6:
        phrases.add(_plain(DETERMINER.sub("", fact.text)))
    phrases.discard("")
    spans = []
    for phrase in phrases:
        abbreviation = ABBREVIATIONS.get(phrase) or (
            "".join(w[0] for w in phrase.split()).upper() if len(phrase.split()) >= 3 else ""
        )
        if abbreviation:
            spans += [m.span() for m in re.finditer(rf"(?<!\w){abbreviation}s?(?!\w)", text)]
        loose = r"[\s\-‐–’'/]+".join(map(re.escape, phrase.split()))
        spans += [m.span() for m in re.finditer(rf"(?<!\w){loose}(?:e?s)?(?!\w)", text, re.IGNORECASE)]
    return sorted(set(spans))
