"""Tax regimes and rules a text may name, each tied to the jurisdiction it belongs to.

A Regime is a rule an advisor cites by name (NIIT, pillar 3a, Erbschaftsteuer, IHT) with the ISO 3166 code of the
place whose law it is: a country ("US", "CH") or a subdivision ("US-CA"). `find_regimes(text)` returns every
mention, from this table and from the generic forms "<place> tax", "<place>'s ... tax", "taxes in <place>",
"<demonym> tax rules" and "<place> homestead rules / law / exemption / relief" (places from places.find_places).
`tied(mention, places)` says whether the rule can apply to a client whose facts name `places`; the checker flags a
rule tied to none of them. A rule named as absent ("Florida has no state income tax") is marked `negated`.

The table is deliberately small: names an advisor writes that belong to one jurisdiction, or to a known few
("wealth tax": the countries that levy one, so it is wrong for a US or UK client; "the state taxes the gains": the
US states that tax gains). Words many places use ("inheritance tax", "estate tax", "withholding tax") are left out:
they tie to a place only in the generic forms, where the text names the place itself.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from reasoning.facts import claims
from reasoning.facts import places as placelib

# What a place taxes a non-resident on, where he only holds an asset (jurisdictions.toml [meta]).
_META = tomllib.loads((Path(__file__).with_name("data") / "jurisdictions.toml").read_text())["meta"]
SOURCE_KINDS = frozenset(_META["source_kinds"])
SOURCE_ROLES = frozenset(_META["source_roles"])
# US states with no income tax on wages (New Hampshire and, before 2022, Washington taxed some investment income
# only): a "state income tax" cannot apply to a client who lives in one of them.
NO_WAGE_TAX = frozenset("US-AK US-FL US-NV US-NH US-SD US-TN US-TX US-WA US-WY".split())
# ... and those with no tax on capital gains (Washington taxes large gains since 2022).
NO_GAINS_TAX = NO_WAGE_TAX - {"US-WA"}


@dataclass(frozen=True)
class Regime:
    names: tuple[str, ...]  # as an advisor writes them; ALL-CAPS names match case-sensitively, others in any case
    code: str  # the jurisdiction whose law it is: "US", "US-CA", "CH", ...
    what: str  # one line for a reader
    excluded: frozenset = frozenset()  # places within `code` where it does not apply
    also: tuple = ()  # other jurisdictions with a rule of the same name ("wealth tax": CH, ES, NO, ...)
    kinds: frozenset = frozenset()  # the kinds of tax it is about (jurisdictions.toml [kinds]), where known

    @property
    def name(self):
        return self.names[0]


# The table: reasoning/facts/data/regimes.toml.
_TABLE = tomllib.loads((Path(__file__).with_name("data") / "regimes.toml").read_text())
REGIMES = tuple(
    Regime(tuple(r["names"]), r["code"], r["what"], frozenset(r.get("excluded", ())), tuple(r.get("also", ())),
           frozenset(r.get("kinds", ())))
    for r in _TABLE["regime"]
)  # fmt: skip


@dataclass(frozen=True)
class Mention:
    """One rule a text names: its span, the jurisdiction it belongs to and what it is."""

    name: str  # the rule as a reader knows it ("NIIT", "California tax")
    code: str
    what: str
    start: int
    end: int
    text: str
    excluded: frozenset = frozenset()
    negated: bool = False  # "no state income tax", "without IHT": named as absent, not applied
    also: tuple = ()
    kinds: frozenset = frozenset()  # the kinds of tax it is about, where the table or its words say


def _pattern(names, flags=0):
    # "5% payout" is also written "5 % payout"
    alternation = "|".join(re.escape(n).replace("%", r"\s?%") for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w]){'(?:' + alternation + ')'}(?![\w])", flags)


_BY_NAME = {n.lower(): r for r in REGIMES for n in r.names}
_ACRONYMS = _pattern([n for r in REGIMES for n in r.names if n.isupper() or n.upper() == n])
_PHRASES = _pattern([n for r in REGIMES for n in r.names if not (n.isupper() or n.upper() == n)], re.IGNORECASE)

# Generic forms around a place the text names: "California taxes gains", "Germany's inheritance tax",
# "German tax rules"; "taxes in California", "inheritance tax in Germany", "taxed by the UK".
TAX_WORD = r"tax(?:es|ed|ation)?(?:\s+(?:rules?|laws?|regime|code|authorit(?:y|ies)))?"
# After a place, its law in other words too: "Florida homestead rules", "California community property law", "a UK
# pension" (its rules).
RULE_WORD = rf"(?:{TAX_WORD}|laws?|rules|exemptions?|reliefs?|allowances?|pensions?)"
AFTER_PLACE = re.compile(rf"(?:['’]s)?((?:\s+[\w.,%$€£'’-]+){{0,3}}?)\s+{RULE_WORD}\b", re.IGNORECASE)  # "Illinois's $4M estate tax"
BEFORE_PLACE = re.compile(rf"\b(?:{TAX_WORD}|law)\s+(?:in|of|by|under)\s+(?:the\s+)?$", re.IGNORECASE)
# "no state income tax", "free of IHT", "avoids California tax": the rule is named as absent, not applied.
NEGATION = re.compile(
    r"(?:\b(?:no|without|zero|free of|exempt from|avoid(?:s|ed|ing)?|escape[sd]?|unlike|instead of"
    r"|keine?n?|ohne|pas de|pas d['’]|aucune?|sans|nessuna?|senza)"  # German, French, Italian: "keine Schenkungssteuer"
    r"\b(?:\s+[\w-]+){0,3}"
    # "not" and "never" negate the rule only through being, owing or falling under it: "not subject to California
    # tax", "never pays IHT"; "do not eat into her US exemption" still applies the exemption
    r"|\b(?:not|never)(?:\s+(?:be|being|been|is|are|subject|liable|to|for|pay|pays|owe|owes|face|faces|trigger|any"
    r"|fall|falls|under|within|apply|applies|a|the|her|his|their|its|bear|bears|incur|incurs)){0,3})\s*$",
    re.IGNORECASE,
)
# The kinds of tax a place's rule is about, read from its words ("Geneva wealth tax", "New York income tax").
KIND_WORDS = (
    ("wealth", re.compile(r"\bwealth|fortune|Vermögen", re.IGNORECASE)),
    ("income", re.compile(r"\bincome\b", re.IGNORECASE)),
    ("capital_gains", re.compile(r"\bgains?\b", re.IGNORECASE)),
)
NEGATING_WORDS = re.compile(r"\b(?:no|not|never|without|zero|free|keine?n?|ohne|aucune?|sans|nessuna?|senza)\b", re.IGNORECASE)


def find_regimes(text: str) -> list[Mention]:
    """Every rule the text names, in order: the table's names, and "<place> tax" forms not inside them (a place form
    that holds a table's name replaces it)."""
    found = [_table_mention(text, m) for pattern in (_ACRONYMS, _PHRASES) for m in pattern.finditer(text)]
    for mention in _place_mentions(text):
        # "Geneva wealth tax": the place's own form holds the table's "wealth tax" and says whose tax it is
        inside = [m for m in found if mention.start <= m.start and m.end <= mention.end]
        overlaps = [m for m in found if mention.start < m.end and m.start < mention.end]
        wider = all(m.end - m.start < mention.end - mention.start for m in inside)
        if overlaps == inside and wider:
            found = [m for m in found if m not in inside] + [mention]
    return sorted(found, key=lambda m: m.start)


def _table_mention(text, match):
    regime = _BY_NAME[re.sub(r"\s%", "%", match[0]).lower()]
    return Mention(
        regime.name, regime.code, regime.what, match.start(), match.end(), match[0], regime.excluded,
        _negated(text, match.start()), regime.also, regime.kinds,
    )


def _place_mentions(text):
    for place in placelib.find_places(text):
        after = AFTER_PLACE.match(text, place.end)
        if after:
            between = after[1] or ""
            negated = bool(NEGATING_WORDS.search(between)) or _negated(text, place.start)
            yield _place_mention(place, place.start, after.end(), text, negated)
            continue
        before = BEFORE_PLACE.search(text, max(0, place.start - 40), place.start)
        if before:
            yield _place_mention(place, before.start(), place.end, text, _negated(text, before.start()))


def _place_mention(place, start, end, text, negated):
    name = place.name or place.text
    words = text[place.end : end] if end > place.end else text[start : place.start]
    kinds = frozenset(kind for kind, pattern in KIND_WORDS if pattern.search(words))
    return Mention(
        f"{name} tax", place.code, f"the law of {name}", start, end, text[start:end], negated=negated, kinds=kinds
    )


def _negated(text, start):
    return bool(NEGATION.search(text[max(0, start - 40) : start]) or claims.LIST_NEGATED.search(text, 0, start))


def tied(mention: Mention, places: list[str], sources=()) -> bool:
    """Whether the rule can apply to a client whose facts name `places` (ISO 3166 codes).

    A country's rules tie to the country and any of its subdivisions (US federal rules to any US place; Swiss federal
    and cantonal rules to any CH place), except the subdivisions a rule excludes (no state income tax in Florida);
    a rule several countries share (a wealth tax) ties to each.
    A subdivision's rules tie to that subdivision; and, since the facts cannot tell which state or canton is meant, to
    its country when the facts name the country but none of its subdivisions.
    `sources` are the places the client is tied to only by an asset there (an account, a property): they levy on him
    only the source kinds (jurisdictions.toml [meta]), so a rule of another known kind (their wealth or income tax)
    does not tie to them.
    """
    if sources and mention.kinds and not mention.kinds & SOURCE_KINDS:
        places = [p for p in places if p not in sources]
    for code in (mention.code, *mention.also):
        for place in places:
            if place not in mention.excluded and (place == code or placelib.within(place, code)):
                return True
    code = mention.code
    country = placelib.country_of(code)
    if country != code and country in places:
        return not any(p != country and placelib.country_of(p) == country for p in places)
    return False
