"""figure (ages): a person's age written next to their name is the age the sheet gives them.

"Rachel (52)", "Lukas is 47", "At 76, Margaret", "Sabine, at 51," and "Marco, 56," tie a number to a person the
sheet holds with an age ("Rachel's age"). Another number fails, even when it is someone else's age. A number next to
a name with no age on the sheet, or further away ("retire at 65"), is left alone.

    fails:  "Rachel (52) and Daniel" when Rachel is 50    passes: "Urs (58) plans to retire at 63"
"""

from __future__ import annotations

import re

from reasoning.facts.checks.doc import Doc
from reasoning.facts.checks.words import table
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False
OLDEST = table("impossible")["oldest_age"]

AGE = r"(?P<age>\d{2,3})(?!\s*(?:%|years?\s+(?:of|to|from|ago))|\d|[.,]\d)"


def _patterns(name):
    n = re.escape(name)
    return [
        re.compile(rf"\b{n}\s*\(\s*(?:age\s+|aged\s+)?{AGE}\s*\)"),  # "Rachel (52)"
        re.compile(rf"\b{n}(?:'s age)?,?\s+(?:is|was|turns|aged|age|at)\s+{AGE}\b"),  # "Lukas is 47", "Sabine, at 51"
        re.compile(rf"\b{n},\s+{AGE},"),  # "Marco, 56,"
        re.compile(rf"\b(?:[Aa]t|[Aa]ged)\s+{AGE},?\s+{n}\b"),  # "At 76, Margaret"
    ]


def ages(facts):
    """{name: age} for each person the sheet gives an age, by the age fact's label ("Rachel's age")."""
    found = {}
    for f in facts:
        if f.kind == "age" and isinstance(f.value, int | float):
            name = re.sub(r"['’]s age$", "", f.label.strip())
            if name and name[0].isupper() and " " not in name:
                found[name] = f.value
    return found


# "the 66-year-old client", "the client (66)", "the client, aged 66": the client's own age, where the sheet has one.
N = AGE.replace("?P<age>", "")  # the same number, in a pattern that holds it twice
CLIENT_WORDS = r"(?:client|investor|owner|founder|entrepreneur|widow|widower|retiree|pensioner)"
CLIENT_PATTERNS = [
    re.compile(rf"\b{N}[- ]years?[- ]old\s+(?:\w+\s+)?{CLIENT_WORDS}\b", re.IGNORECASE),
    re.compile(rf"\b(?:the|our|my)\s+{CLIENT_WORDS}\s*(?:\(\s*{N}\s*\)|,?\s+(?:aged|age)\s+{N}\b)", re.IGNORECASE),
]


def client_age(facts):
    """The client's own age: the one age fact the sheet labels the client's (its role, or "age"/"client's age")."""
    own = [f.value for f in facts if f.kind == "age" and isinstance(f.value, int | float)
           and (f.role == "client" or f.label.strip().lower() in ("age", "client's age", "client age"))]  # fmt: skip
    return own[0] if len(set(own)) == 1 else None


def run(doc: Doc) -> list[Finding]:
    """Each age the text ties to the client or to a person the sheet gives an age, against that age."""
    found, seen = [], set()
    people = [(None, "the client", client_age(doc.facts), CLIENT_PATTERNS)]
    people += [(name, name, age, _patterns(name)) for name, age in ages(doc.facts).items()]
    for name, who, age, patterns in people:
        if age is None:
            continue
        for m in (m for pattern in patterns for m in pattern.finditer(doc.text)):
            if FUTURE_BEFORE.search(doc.text, max(0, m.start() - 24), m.start()):
                continue  # "not before Beat is 66", "once Anna turns 60": an age to come, not today's
            group = "age" if name else next(i for i, g in enumerate(m.groups(), 1) if g)
            span = (m.start(group), m.end(group))
            if name is None and int(m[group]) > OLDEST:
                continue  # "the 660-year-old client": no one's age at all (impossible.py says so)
            if span not in seen:
                seen.add(span)
                found.append(_judged(doc.text[m.start() : m.end()], int(m[group]), age, who, m.start(), m.end()))
    return found


FUTURE_BEFORE = re.compile(
    r"\b(?:before|until|till|when|once|after|by the time|by which|as soon as|bis|sobald|wenn|avant|quand)\s+$",
    re.IGNORECASE,
)


def _judged(text, said, age, who, start, end):
    if said == age:
        return Finding(KIND, True, text, f"{said} is {who}'s age", start, end)
    return Finding(KIND, False, text, f"{text}: {who} is {age:g}, not {said}", start, end)
