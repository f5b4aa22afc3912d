"""Claims that a tax is absent, checked against the client's places (data/jurisdictions.toml, [claims]).

A text that says a tax the client's places levy is not there: "With no state income tax on the RSUs" for a New
Yorker, "Gains on private shareholdings are tax-free" for a German resident, "there is no wealth tax" for a Zuricher.
Only plain claims are read: the kind is one of [claims] kinds (not an estate tax, which hangs on the estate's size),
the sentence names no other place and no condition ([claims] conditions: an allowance, a wrapper, a holding period,
real estate, a comparison), and every tax of that kind the claim could mean is levied without a zero rate. A claim
that may be right is left alone.

    fails:  "gains are tax-free" for DE    passes: "gains are tax-free" for CH; "gains in the ISA are tax-free" for GB
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache

from reasoning.facts import places as placelib

NO_BEFORE = re.compile(r"\b(?:no|zero)\s+(?:(?:state|federal|cantonal)\s+)?$", re.IGNORECASE)
FREE = r"(?:tax[- ]free|untaxed|free\s+of\s+(?:any\s+)?tax|not\s+taxed|exempt\s+from\s+tax)"
BE = (
    r"(?:are|is|stay|stays|remain|remains|will\s+be|would\s+be)\s+"
    r"(?:(?:entirely|completely|fully|all|still|always|anyway)\s+)?"
)


@lru_cache(maxsize=1)
def _data():
    from reasoning.facts.rules import DATA

    return tomllib.loads(DATA.read_text())["claims"]


@lru_cache(maxsize=1)
def _patterns():
    data = _data()
    words = "|".join(re.escape(w) for w in sorted(data["conditions"], key=len, reverse=True))
    topics = "|".join(re.escape(w) for w in sorted(data["free_topics"], key=len, reverse=True))
    condition = re.compile(rf"(?<![\w-])(?:{words})(?![\w-])", re.IGNORECASE)
    free = re.compile(rf"(?<![\w-])(?:{topics})(?![\w-])[^.;:!?]{{0,60}}?\b{BE}(?P<claim>{FREE})", re.IGNORECASE)
    return condition, free


ENTITY = re.compile(
    r"\b(?:foundation|endowment|charity|charitable|Stiftung|fondation|fondazione|college|university|trust|non-?profit|"
    r"tax-exempt|pension fund)\b",
    re.IGNORECASE,
)


def entity(facts) -> bool:
    """The client is an institution (a place it is seated in, or its words on the sheet): its own exemptions decide,
    and the table holds an individual's taxes, so no claim of absence is judged."""
    if any(f.kind == "place" and f.role == "seat" for f in facts):
        return True
    persons = [f for f in facts if f.kind in ("person", "age")]
    return not persons and any(ENTITY.search(f"{f.label} {f.text} {f.value}") for f in facts)


def plain(sentence: str, reach_codes) -> bool:
    """No condition and no place but the client's in the sentence: the claim is meant as it stands."""
    condition, _free = _patterns()
    if condition.search(sentence):
        return False
    return all(any(placelib.within(c, p.code) or placelib.within(p.code, c) for c in reach_codes)
               for p in placelib.find_places(sentence))  # fmt: skip


# A list the negation governs across its commas: "keine Vermögen-, Schenkungs- oder Erbschaftsteuer", "no wealth,
# gift or inheritance tax" (never across a clause's own word: "no wealth tax, but inheritance tax applies").
LIST_NEGATED = re.compile(
    r"\b(?:no|kein\w*|aucune?|pas\s+de|nessuna?|neither)\s+"
    r"(?:(?!(?:but|while|so|yet|only|aber|doch|mais|ma)\b)[\w'’]+-?(?:\s+(?!(?:but|aber|mais)\b)[\w'’]+)?"
    r"(?:,|\s+(?:or|nor|oder|noch|ou|ni|o|né))\s+){1,5}$",
    re.IGNORECASE,
)


def negated_kind(text: str, start: int, kind: str) -> bool:
    """The kind's words right after "no": "no state income tax", "zero capital gains tax"."""
    return kind in _data()["kinds"] and bool(NO_BEFORE.search(text[max(0, start - 30) : start]))


def free_claims(text: str):
    """(start, end) of each "... gains are tax-free" in the text."""
    _condition, free = _patterns()
    return [(m.start("claim"), m.end("claim")) for m in free.finditer(text)]


def levied(taxes, kind: str) -> bool:
    """Some tax of the kind is levied without a condition of its own ("when": a city's tax), none at a zero rate."""
    own = [t for t in taxes if kind in t.kinds and not t.when]
    if not own:
        return False
    return all(min(t.rates + ((t.range[0],) if t.range else ()), default=0) > 0 for t in own)
