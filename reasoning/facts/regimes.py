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
from dataclasses import dataclass

from reasoning.facts import places as placelib

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

    @property
    def name(self):
        return self.names[0]


REGIMES = (
    # United States: federal rules tie to any US place.
    Regime(("NIIT", "net investment income tax", "Medicare surtax"), "US", "the 3.8% US net investment income tax"),
    Regime(("IRMAA",), "US", "the US Medicare income-related premium surcharge"),
    Regime(("Medicare",), "US", "US federal health insurance for people 65 and older"),
    Regime(("Social Security",), "US", "the US federal pension"),
    Regime(("federal estate tax", "federal estate and gift tax", "unified credit"), "US", "the US federal estate tax"),
    Regime(("gift tax annual exclusion", "annual gift exclusion"), "US", "the US yearly gift tax exclusion"),
    Regime(("401(k)", "403(b)", "457(b)"), "US", "a US employer retirement plan"),
    Regime(("IRA", "IRAs", "Roth IRA", "Roth conversion", "Roth", "backdoor Roth"), "US", "a US retirement account"),
    Regime(("RMD", "RMDs", "required minimum distribution", "required minimum distributions"), "US",
           "US required withdrawals from retirement accounts"),
    Regime(("529 plan", "529 plans"), "US", "a US education savings plan"),
    Regime(("wash-sale rule", "wash sale rule", "wash sale", "wash-sale"), "US",
           "the US rule disallowing a loss rebought within 30 days"),
    Regime(("QSBS", "Section 1202"), "US", "the US qualified small business stock exclusion"),
    Regime(("1031 exchange", "Section 1031"), "US", "the US like-kind exchange of real estate"),
    Regime(("AMT", "alternative minimum tax"), "US", "the US alternative minimum tax"),
    Regime(("step-up in basis", "stepped-up basis"), "US", "the US basis step-up at death"),
    Regime(("IRS",), "US", "the US federal tax authority"),
    Regime(("state income tax", "state income taxes"), "US", "a US state's income tax", NO_WAGE_TAX),
    Regime(("state capital gains tax", "state tax on gains", "state tax on the gains", "state taxes the gains",
            "state taxes gains", "state taxes capital gains"), "US", "a US state's tax on gains", NO_GAINS_TAX),
    Regime(("3.8% surtax", "surtax on investment income"), "US", "the 3.8% US net investment income tax"),
    # US states: tie only to that state.
    Regime(("California income tax", "California state tax", "CA FTB", "FTB", "Franchise Tax Board"), "US-CA",
           "California's income tax"),
    Regime(("New York state tax", "New York State income tax", "NYS tax", "New York City income tax", "NYC tax"),
           "US-NY", "New York's income tax"),
    # Switzerland: federal and cantonal rules tie to any Swiss place.
    Regime(("Swiss wealth tax", "Vermögenssteuer", "Vermögensteuer"), "CH",
           "the Swiss cantonal wealth tax"),
    Regime(("cantonal tax", "cantonal taxes", "cantonal income tax", "cantonal and communal tax"), "CH",
           "Swiss cantonal tax"),
    Regime(("direct federal tax", "direkte Bundessteuer"), "CH", "the Swiss federal income tax"),
    Regime(("AHV", "AVS", "AHV/IV"), "CH", "Swiss old-age insurance (first pillar)"),
    Regime(("pillar 3a", "Säule 3a", "3a account", "3a accounts", "pillar 2", "second pillar", "BVG", "LPP"), "CH",
           "the Swiss pension pillars"),
    Regime(("Eigenmietwert", "imputed rental value"), "CH", "the Swiss tax on a home's imputed rent"),
    Regime(("Verrechnungssteuer",), "CH", "the Swiss 35% withholding tax"),
    # Countries that tax wealth every year (only they: a US or UK client has none).
    Regime(("wealth tax", "yearly wealth tax", "annual wealth tax", "impôt sur la fortune"), "CH",
           "a yearly tax on net wealth", also=("ES", "NO", "FR", "LI", "NL", "IT")),
    # Germany.
    Regime(("Erbschaftsteuer", "Erbschaftssteuer", "Schenkungsteuer", "Schenkungssteuer"), "DE",
           "the German inheritance and gift tax"),
    Regime(("Abgeltungsteuer", "Abgeltungssteuer"), "DE", "the German flat tax on investment income"),
    Regime(("Solidaritätszuschlag",), "DE", "the German solidarity surcharge"),
    Regime(("Sparer-Pauschbetrag",), "DE", "the German saver's allowance"),
    # United Kingdom.
    Regime(("IHT", "nil-rate band", "residence nil-rate band"), "GB", "UK inheritance tax"),
    Regime(("ISA", "ISAs", "stocks and shares ISA"), "GB", "a UK tax-free savings account"),
    Regime(("SIPP", "SIPPs"), "GB", "a UK self-invested personal pension"),
    Regime(("CGT annual exempt amount", "annual exempt amount"), "GB", "the UK capital gains tax allowance"),
    Regime(("HMRC",), "GB", "the UK tax authority"),
    Regime(("SDLT", "stamp duty land tax"), "GB", "UK stamp duty on property"),
)


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


def _pattern(names, flags=0):
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w]){'(?:' + alternation + ')'}(?![\w])", flags)


_BY_NAME = {n.lower(): r for r in REGIMES for n in r.names}
_ACRONYMS = _pattern([n for r in REGIMES for n in r.names if n.isupper() or n.upper() == n])
_PHRASES = _pattern([n for r in REGIMES for n in r.names if not (n.isupper() or n.upper() == n)], re.IGNORECASE)

# Generic forms around a place the text names: "California taxes gains", "Germany's inheritance tax",
# "German tax rules"; "taxes in California", "inheritance tax in Germany", "taxed by the UK".
TAX_WORD = r"tax(?:es|ed|ation)?(?:\s+(?:rules?|laws?|regime|code|authorit(?:y|ies)))?"
# After a place, its law in other words too: "Florida homestead rules", "California community property law".
RULE_WORD = rf"(?:{TAX_WORD}|laws?|rules|exemptions?|reliefs?|allowances?)"
AFTER_PLACE = re.compile(rf"(?:['’]s)?((?:\s+[\w-]+){{0,3}}?)\s+{RULE_WORD}\b", re.IGNORECASE)
BEFORE_PLACE = re.compile(rf"\b(?:{TAX_WORD}|law)\s+(?:in|of|by|under)\s+(?:the\s+)?$", re.IGNORECASE)
# "no state income tax", "free of IHT", "avoids California tax": the rule is named as absent, not applied.
NEGATION = re.compile(
    r"\b(?:no|not|never|without|zero|free of|exempt from|avoid(?:s|ed|ing)?|escape[sd]?|unlike|instead of)"
    r"\b(?:\s+[\w-]+){0,3}\s*$",
    re.IGNORECASE,
)
NEGATING_WORDS = re.compile(r"\b(?:no|not|never|without|zero|free)\b", re.IGNORECASE)


def find_regimes(text: str) -> list[Mention]:
    """Every rule the text names, in order: the table's names first, then "<place> tax" forms not inside them."""
    found = [_table_mention(text, m) for pattern in (_ACRONYMS, _PHRASES) for m in pattern.finditer(text)]
    taken = [(m.start, m.end) for m in found]
    for mention in _place_mentions(text):
        if not any(mention.start < end and start < mention.end for start, end in taken):
            found.append(mention)
    return sorted(found, key=lambda m: m.start)


def _table_mention(text, match):
    regime = _BY_NAME[match[0].lower()]
    return Mention(
        regime.name, regime.code, regime.what, match.start(), match.end(), match[0], regime.excluded,
        _negated(text, match.start()), regime.also,
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
    return Mention(f"{name} tax", place.code, f"the law of {name}", start, end, text[start:end], negated=negated)


def _negated(text, start):
    return bool(NEGATION.search(text[max(0, start - 40) : start]))


def tied(mention: Mention, places: list[str]) -> bool:
    """Whether the rule can apply to a client whose facts name `places` (ISO 3166 codes).

    A country's rules tie to the country and any of its subdivisions (US federal rules to any US place; Swiss federal
    and cantonal rules to any CH place), except the subdivisions a rule excludes (no state income tax in Florida);
    a rule several countries share (a wealth tax) ties to each.
    A subdivision's rules tie to that subdivision; and, since the facts cannot tell which state or canton is meant, to
    its country when the facts name the country but none of its subdivisions.
    """
    for code in (mention.code, *mention.also):
        for place in places:
            if place not in mention.excluded and (place == code or placelib.within(place, code)):
                return True
    code = mention.code
    country = placelib.country_of(code)
    if country != code and country in places:
        return not any(p != country and placelib.country_of(p) == country for p in places)
    return False
