"""figure (ages): a person's age written next to their name is the age the sheet gives them.

"Rachel (52)", "Lukas is 47", "At 76, Margaret", "Sabine, at 51," and "Marco, 56," tie a number to a person the
sheet holds with an age ("Rachel's age"). Another number fails, even when it is someone else's age. A number next to
a name with no age on the sheet, or further away ("retire at 65"), is left alone.

    fails:  "Rachel (52) and Daniel" when Rachel is 50    passes: "Urs (58) plans to retire at 63"
"""

from __future__ import annotations

import re

from reasoning.facts.checks.doc import Doc
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

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


def run(doc: Doc) -> list[Finding]:
    findings, seen = [], set()
    for name, age in ages(doc.facts).items():
        for pattern in _patterns(name):
            for m in pattern.finditer(doc.text):
                span = (m.start("age"), m.end("age"))
                if span in seen:
                    continue
                seen.add(span)
                said = int(m["age"])
                text = doc.text[m.start() : m.end()]
                if said == age:
                    findings.append(Finding(KIND, True, text, f"{said} is {name}'s age", m.start(), m.end()))
                else:
                    detail = f"{text}: {name} is {age:g}, not {said}"
                    findings.append(Finding(KIND, False, text, detail, m.start(), m.end()))
    return findings
