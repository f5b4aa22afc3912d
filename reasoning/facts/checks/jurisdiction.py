"""jurisdiction: a rule of a place the client is not tied to.

A rule (regimes.py) of a place the client's place facts do not reach (regimes.tied). No place facts: nothing
flagged. A place merely named, or a rule named as absent ("no state income tax"), is fine.

    fails:  "the NIIT applies" for a client in Zurich    passes: "there is no state income tax in Florida"
"""

from __future__ import annotations

from reasoning.facts import regimes
from reasoning.facts.checks.doc import Doc
from reasoning.facts.places import place_name
from reasoning.facts.sheet import Finding

KIND = "jurisdiction"
FINAL_ONLY = False


def run(doc: Doc) -> list[Finding]:
    places = [f.value for f in doc.facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    if not places:
        return []
    sources = _sources(doc.facts)
    findings, seen = [], set()
    for m in doc.mentions:
        if m.negated or m.name in seen or regimes.tied(m, places, sources):
            continue
        seen.add(m.name)
        where = ", ".join(dict.fromkeys(_place_label(doc, p) for p in places))
        detail = f"{m.text} is {m.what}, but the client's places are {where}"
        findings.append(Finding("jurisdiction", False, m.text, detail, m.start, m.end))
    return findings


def _sources(facts):
    """The places the client is tied to only by an asset there (an account, a property), by no other role."""
    by_role = {}
    for f in facts:
        if f.kind == "place" and isinstance(f.value, str) and f.value:
            by_role.setdefault(f.value, set()).add(f.role or "")
    return {code for code, roles in by_role.items() if roles <= regimes.SOURCE_ROLES}


def _place_label(doc, code):
    return f"{(place_name(code) or code).split(',')[0]} ({code})"


