"""constraint (a rule that forbids an act): the sheet's constraints that forbid something against the text.

A constraint that opens with a prohibition ("without selling any of the directly held buildings", "cannot make a
pension buy-in any more", "no new private equity commitments": the words are data, reasoning/facts/data/
prohibitions.toml) forbids a verb, or with "make", "use", "touch" and the like any act, on a thing. A sentence that
names the thing and does that act to it, near it (in its clause, or after "<thing>:"), breaks the rule; one that
names it and keeps it ("keep the buildings", "no buy-in: the lock bars it") is a kept rule.

    fails:  "Sell CHF 5M of the directly held buildings" under "without selling any of the directly held buildings"
    fails:  "Pension buy-in: implement it in the first quarter." under "cannot make a pension buy-in any more"
    passes: "Keep the buildings and sell CHF 5M of equities instead." (kept)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reasoning.facts.acting import verbs
from reasoning.facts.checks.doc import Doc
from reasoning.facts.checks.words import phrases, table
from reasoning.facts.phrases import CLAUSE_BREAK, sentences
from reasoning.facts.sheet import Finding

KIND = "constraint"
FINAL_ONLY = False

WORDS = table("prohibitions")
OPENER = re.compile(rf"\b(?:{phrases(WORDS['openers'])})\s+(?:to\s+|be\s+able\s+to\s+)?", re.IGNORECASE)
NONE_OF = re.compile(rf"^\s*(?:{phrases(WORDS['none_of'])})\s+(?!(?:more\s+)?than\b)", re.IGNORECASE)  # "no more than": a cap
# A rule in force only for a while ("cannot touch the Roth before 2030", "during his lifetime") is a horizon's to judge.
WHILE = re.compile(r"\b(?:before|until|till|during|while|for\s+the\s+next|in\s+the\s+first)\b", re.IGNORECASE)
GENERAL = set(WORDS["general"])
FILLERS = set(WORDS["fillers"])
OBJECT_END = re.compile(rf"\b(?:{phrases(WORDS['object_ends'])})\b|[,;:.()]", re.IGNORECASE)
KEEPS = re.compile(rf"\b(?:{phrases(WORDS['keeps'])})\b", re.IGNORECASE)
CREATING = set(WORDS["creating"])
FAMILIES = {word: set(family) for family in WORDS["families"].values() for word in family}
WORD = re.compile(r"[^\W\d_][\w'’-]*")
GENERIC_THINGS = set(WORDS["generic_things"])
CAPPED = re.compile(r"\s+(?:any\s+)?(?:more|less|fewer)\s+than\b|\s+(?:above|beyond|in\s+excess\s+of|at\s+most|up\s+to)\b", re.IGNORECASE)
NEAR = 8  # words between the act and the thing it acts on, at most


@dataclass(frozen=True)
class Rule:
    text: str  # the client's words
    acts: frozenset | None  # the verbs that break it; None: any act on the thing
    thing: str  # what it protects, as written ("directly held buildings")
    head: str  # the word a sentence must name: the thing's last word that names which ("Nestlé" of "Nestlé shares")


def rule_of(text: str) -> Rule | None:
    """The prohibition a constraint states, or None (not one, or a verb or a thing this table cannot read)."""
    m = OPENER.search(text)
    if m:
        rest = text[m.end() :]
        found = WORD.match(rest)
        if not found:
            return None
        verb = found[0].lower()
        acts = None if verb in GENERAL else FAMILIES.get(verb)
        if verb not in GENERAL and acts is None:
            return None  # a verb the table does not know: left alone rather than guessed at
        rest = rest[found.end() :]
        if re.match(r"\s+(?:up|off|away|over|down)\b", rest):
            return None  # "give up control": a phrasal verb is another act than its verb's
        if CAPPED.match(rest):
            return None  # "without realising more than CHF 50k of gains": a cap on the act (constraints.py), no ban

    elif (m := NONE_OF.match(text)) is not None:
        rest = text[m.end() :]
        acts = CREATING if re.search(r"\b(?:new|further|more)\s*$", m[0], re.IGNORECASE) else None
    else:
        return None
    if WHILE.search(re.split(r"\b(?:because|since|as)\b|[,;.]", rest, maxsplit=1)[0]):
        return None
    end = OBJECT_END.search(rest)
    words = WORD.findall(rest[: end.start()] if end else rest)
    while words and words[0].lower() in FILLERS:
        words.pop(0)  # "any of the directly held buildings"
    if "of" in (w.lower() for w in words):
        words = words[: [w.lower() for w in words].index("of")]  # "the home section of the ranch": the section
    words = [w for w in words if w.lower() not in FILLERS and len(w) > 2]
    if not words:
        return None
    which = [w for w in words if w.lower() not in GENERIC_THINGS] or words
    return Rule(text, frozenset(acts) if acts else None, " ".join(words), which[-1].lower())


def rules(facts) -> list[Rule]:
    return [r for f in facts if f.kind == "constraint" for r in [rule_of(str(f.value or f.text))] if r]


def run(doc: Doc) -> list[Finding]:
    out = []
    for rule in rules(doc.facts):
        for s, e in sentences(doc.text):
            finding = _judged(doc.text, s, e, rule)
            if finding:
                out.append(finding)
    return out


def _names(word, head):
    """A word names the thing: the same word, or its plural or singular ("building", "buy-ins")."""
    word = word.lower().rstrip("'’")
    return word == head or word.rstrip("s") == head.rstrip("s")


def _judged(text, s, e, rule):
    """The finding of one sentence on one rule: broken, kept, or None where the sentence does not act on the thing."""
    words = [(m.start(), m.end(), m[0]) for m in WORD.finditer(text, s, e)]
    mentions = [i for i, (_, _, w) in enumerate(words) if _names(w, rule.head)]
    for i in mentions:
        at, to = words[i][0], words[i][1]
        window = _window(text, s, e, words, i)
        if not _acts(window, rule):
            continue
        quoted = f"'{rule.text.strip()}'"
        if KEEPS.search(text[s:e]):
            return Finding(KIND, True, text[at:to], f"the plan keeps the client's rule {quoted}", at, to)
        return Finding(KIND, False, text[at:to], f"the plan acts on the {rule.thing}, which the client's rule "
                       f"{quoted} forbids", at, to)  # fmt: skip
    return None


def _window(text, s, e, words, i):
    """The words near a mention that can act on it: its clause, within NEAR words; after "<thing>:" the rest."""
    at, to = words[i][0], words[i][1]
    head = text[to : min(e, to + 3)]
    if head.lstrip().startswith(":"):  # "Pension buy-in: implement it in Q1."
        return text[to:e]
    breaks = [m.end() for m in CLAUSE_BREAK.finditer(text, s, at)]
    after = CLAUSE_BREAK.search(text, to, e)
    c0, c1 = (breaks[-1] if breaks else s), (after.start() if after else e)
    lo = max(0, i - NEAR)
    hi = min(len(words) - 1, i + NEAR)
    start, end = max(c0, words[lo][0]), min(c1, words[hi][1])
    return text[start:end]


def _acts(window, rule):
    if rule.acts is None:
        return verbs(window)
    return any(w.lower() in rule.acts for w in WORD.findall(window))
