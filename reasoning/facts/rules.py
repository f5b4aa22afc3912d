"""Taxes and measures per jurisdiction (data/jurisdictions.toml), and a check that a text applies only those of the
client's places.

`findings(text, facts)` reads the client's places from the place facts (ISO 3166: "US-FL", "CH-ZH", "DE"; a
subdivision implies its country, so a Floridian pays US federal taxes and Florida's) and returns findings of kind
"jurisdiction" with spans into `text`:

- a tax or measure NAMED for a client whose places do not have it: a place's own tax ("IHT" for a US client), a kind
  of tax none of the client's places levies ("Florida's state income tax", "the wealth tax" for a Texan, "inheritance
  tax" in Schwyz), a measure that exists elsewhere ("ISA" outside the UK) or makes no sense there ("tax-loss
  harvesting" for a Swiss private investor, "state estate tax planning" in Florida);
- a tax IMPLIED BY ITS RATE: a percent with a tax word next to it in the same clause ("a flat 25% tax takes the
  gains", "the 45% top rate", "13.3% state tax") that fits no tax of the client's places, alone or federal and
  state together; or a place's rate ("the Californian 13.3%") for a client elsewhere. A rate that fits passes
  (ok=True, the detail names the tax). Returns, yields, growth, fees, drawdowns, spending and allocation percents
  are not tax rates.

Named as absent ("Florida has no state income tax", "no wealth tax in Austria") is fine, unless the client's place
does levy it ("no state income tax" for a New Yorker, "gains are tax-free" in Germany: claims.py). No place facts:
nothing.
A place the table lacks, or a country given without the state or canton a rate depends on: undecided, so at most
an ok finding marked unverified (when Finding has `verified`), never a failure.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

from reasoning.facts import claims
from reasoning.facts import places as placelib
from reasoning.facts.quantities import Quantity, find_quantities
from reasoning.facts.sheet import Fact, Finding

DATA = Path(__file__).with_name("data") / "jurisdictions.toml"


@dataclass(frozen=True)
class Tax:
    place: str
    kinds: frozenset
    name: str
    aliases: tuple = ()
    rates: tuple = ()
    range: tuple | None = None
    top: float | None = None
    flat: bool = False
    when: tuple = ()  # words the clause must hold for a rate of this tax to fit ("recapture")
    note: str = ""
    unless: tuple = ()  # words that rule it out ("long-term": not the ordinary rates)
    residents: bool = False  # only residents or citizens pay it, never a non-resident holding assets there (NIIT)
    exempt: tuple = ()  # (amount, currency) of a whole it levies only above (an estate tax's exemption)
    not_in: tuple = ()  # places within its own where another tax replaces it (UK income tax: not in Scotland)
    source_exempt: tuple = ()  # (amount, currency): a non-resident's assets there below it owe none of it
    bands: tuple = ()  # ((from, rate), ...): a scale whose rates apply each to its own slice (IFI, LTT)
    band_unit: str = ""  # the currency of the bands' edges
    graduated: bool = False  # its rate above the allowance rises with the amount: no one rate applies to all above it
    only_on: tuple = ()  # what alone it taxes ("real estate": France's IFI); said of one of `not_on`, it is misapplied
    not_on: tuple = ()  # what it never taxes, as people name it ("the whole portfolio", "securities")
    least: tuple = ()  # ((rate, amount), ...): the least taxable amount (band_unit) at which a rate applies

    def highest(self):
        return self.top if self.top is not None else max(self.rates + ((self.range[1],) if self.range else ()), default=0)

    def fits(self, value, tol, marginal=False, topmost=False):
        """A rate fits one of the tax's rates, or its range; a band's or bracket's rate (marginal) only its rates,
        where it lists them: 21% "in the intermediate band" is no rate of a 20/40/45% scale; a top rate ("at up to
        13.3%", topmost) only the tax's highest."""
        if topmost:
            return abs(value - self.highest()) <= tol
        if any(abs(value - r) <= tol for r in self.rates):
            return True
        if marginal and self.rates:
            return False
        return bool(self.range and self.range[0] - tol <= value <= self.range[1] + tol)

    def rates_text(self):
        shown = [f"{r:g}%" for r in self.rates]
        if self.range:
            shown.append(f"{self.range[0]:g}-{self.range[1]:g}%")
        return ", ".join(shown)


@dataclass(frozen=True)
class Place:
    code: str
    name: str
    level: str
    taxes: tuple
    pointless: frozenset
    note: str = ""
    distinct: frozenset = frozenset()  # kinds its states or cantons keep apart (a US state's estate vs inheritance tax)


@dataclass(frozen=True)
class Measure:
    id: str
    name: str
    aliases: tuple
    only: tuple  # the places where it exists; empty: wherever a place does not list it as pointless
    why: str


@dataclass(frozen=True)
class Kind:
    name: str
    words: tuple
    family: frozenset  # itself and the kinds a writer loosely means by its words
    topic: tuple
    untracked: bool = False  # the places' tables do not list every tax of this kind: undecided, never flagged
    abroad: tuple = ()  # untracked only beside these kinds (or alone): foreign places withhold on dividends, not gains


@dataclass(frozen=True)
class Table:
    as_of: str
    disclaimer: str
    places: dict
    measures: dict
    kinds: dict
    source_roles: frozenset = frozenset()
    source_kinds: frozenset = frozenset()


@lru_cache(maxsize=1)
def table() -> Table:
    """The rule table, read once from data/jurisdictions.toml."""
    with DATA.open("rb") as f:
        raw = tomllib.load(f)
    places = {}
    for code, p in raw["place"].items():
        taxes = tuple(
            Tax(
                code, frozenset(t["kinds"]), t["name"], tuple(t.get("aliases", ())), tuple(t.get("rates", ())),
                tuple(t["range"]) if "range" in t else None, t.get("top"), t.get("flat", False),
                tuple(t.get("when", ())), t.get("note", ""), tuple(t.get("unless", ())), t.get("residents", False),
                tuple(t.get("exempt", ())), tuple(t.get("not_in", ())), tuple(t.get("source_exempt", ())),
                tuple(tuple(b) for b in t.get("bands", ())), t.get("band_unit", ""), t.get("graduated", False),
                tuple(t.get("only_on", ())), tuple(t.get("not_on", ())), tuple(tuple(x) for x in t.get("least", ())),
            )
            for t in p.get("taxes", ())
        )
        places[code] = Place(code, p["name"], p["level"], taxes, frozenset(p.get("pointless", ())), p.get("note", ""),
                             frozenset(p.get("distinct", ())))  # fmt: skip
    measures = {
        key: Measure(key, m["name"], tuple(m["aliases"]), tuple(m.get("only", ())), m.get("why", ""))
        for key, m in raw["measure"].items()
    }
    kinds = {
        key: Kind(
            key, tuple(k.get("words", ())), frozenset([key, *k.get("with", ())]), tuple(k.get("topic", ())),
            k.get("untracked", False), tuple(k.get("abroad", ())),
        )
        for key, k in raw["kinds"].items()
    }
    meta = raw["meta"]
    return Table(meta["as_of"], meta["disclaimer"], places, measures, kinds, frozenset(meta.get("source_roles", ())),
                 frozenset(meta.get("source_kinds", ())))  # fmt: skip


# ---- the client's places ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    codes: tuple  # the client's places and the countries they imply: ("US-FL", "US")
    unknown: frozenset  # countries the table lacks: nothing can be said about them
    open: frozenset  # countries given without the state or canton the table splits them into


def reach(codes, federal_only=frozenset()) -> Reach:
    """The client's places and their countries; `federal_only`, countries the client is tied to by citizenship alone
    while living in another: their states do not tax the client, so no state of theirs is open to a rate."""
    rules = table()
    found = []
    for code in codes:
        for c in (code, placelib.country_of(code)):
            if c and c not in found:
                found.append(c)
    countries = {placelib.country_of(c) for c in found}
    unknown = frozenset(c for c in countries if c not in rules.places)
    subdivided = {placelib.country_of(c) for c in rules.places if "-" in c}
    open_ = frozenset(
        c
        for c in countries
        if c in subdivided and c not in federal_only and not any("-" in x and placelib.country_of(x) == c for x in found)
    )
    return Reach(tuple(found), unknown, open_)


def _known(reach_):
    """The client's places in the table, each without the taxes another of the client's places replaces (the UK
    income tax for a Scot)."""
    found = []
    for c in reach_.codes:
        place = table().places.get(c)
        if place:
            taxes = tuple(t for t in place.taxes if not any(placelib.within(x, n) for x in reach_.codes for n in t.not_in))
            found.append(place if taxes == place.taxes else replace(place, taxes=taxes))
    return found


def _related(code, reach_):
    """The place is one of the client's, or contains one, or lies in a country the client is tied to without a
    subdivision (then which state is meant cannot be told)."""
    if any(placelib.within(p, code) for p in reach_.codes):
        return True
    return "-" in code and placelib.country_of(code) in reach_.open


def _label(code):
    place = table().places.get(code)
    return f"{place.name if place else (placelib.place_name(code) or code)} ({code})"


def _where(reach_):
    return ", ".join(_label(c) for c in reach_.codes)


# ---- reading the text ------------------------------------------------------------------------------------------

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'\d])|\n+|;\s+")
CLAUSE = re.compile(
    r",\s+|:\s+|\s+[-–—]\s+|\b(?:while|whereas|but|so|because|since|although|though|however|which|whereby)\b"
)
NEGATION = re.compile(
    r"\b(?:no|not|never|nor|without|zero|free of|exempt from|abolished|repealed|avoid(?:s|ed|ing)?|escape[sd]?|"
    r"kein\w*|nicht|ohne|pas de|aucune?|sans|nessuna?|senza|"
    r"unlike|instead of|rather than|compared (?:to|with)|versus|vs\.?|neither|none|lacks?|spared|outside)\b"
    r"(?:,?\s+[\w'’-]+){0,4}\s*$",  # "keine Vermögen-, Schenkungs- oder Erbschaftsteuer": a list negated whole
    re.IGNORECASE,
)
NEGATED_AFTER = re.compile(
    r"^\s*(?:[\w'’-]+\s+){0,3}?(?:(?:does|do|did|would|will|is|are|was|were)\s*(?:not|n[o']t)|isn['’]t|aren['’]t|"
    r"doesn['’]t|don['’]t|no longer|was abolished|were abolished|was repealed|has been abolished|ended|"
    r"is not levied|does not apply|doesn['’]t apply|not relevant|irrelevant|pointless|makes? no sense|"
    r"(?:adds?|takes?|costs?|comes? to) nothing|(?:is|are) (?:zero|nil|none)|does not exist|doesn['’]t exist|"
    r"saves? (?:no|nothing)|(?:is|are) (?:useless|of no use)|(?:won['’]t|will not|does not|doesn['’]t) (?:help|save)|"
    r"(?:[\w'’-]+\s+){0,5}?(?:nicht|abgeschafft|aufgehoben|n['’]existe plus|supprimée?|abolie?|abolita|abrogata))\b",
    re.IGNORECASE,
)
TAX_WORD = re.compile(
    r"(?<![\w-])(?:tax(?:es|ed|ing|ation)?|rates?|levy|levies|levied|brackets?|duty|duties|withholding|withheld|CGT|IHT|"
    r"NIIT|LTCG|STCG|surtax|surcharge|Soli|KESt|PFU|[A-Za-zäöü]*[Ss]teuer[a-z]*|impôts?|imposta|marginal)(?![\w-])",
)
NOT_TAX_RATE = re.compile(
    r"\b(?:spending|withdrawal|growth|return|interest|inflation|discount|hurdle|savings|exchange|FX|mortgage|"
    r"coupon|payout|distribution|success|vacancy|default|swap|policy|funding|participation|saving|"
    r"contribution|replacement|draw|burn|churn|cap|capitalisation|capitalization|dividend|7520|AFR|prime|base|bank|"
    r"deposit|lending|borrowing|loan|cash|money[- ]market|treasury|bond|real|nominal|risk-free|policy|Fed|SOFR|"
    r"applicable federal|hurdle|IRR|internal|crossing|retention|response|turnover|occupancy|utili[sz]ation)"
    r"\s+rates?\b|\brates?\s+(?:rise|rises|rose|risen|fall|falls|fell|climb|climbs|drop|drops|cut|cuts|hike|hikes|"
    r"move|moves|go up|go down|environment|risk|sensitivity|shock|outlook|path)\b|"
    r"\b(?:after|pre|post|before)-?tax\b|\btax-(?:free|exempt|deferred|efficient|advantaged|loss|adjusted|smart)\b",
    re.IGNORECASE,
)
NOT_TAX_NEAR = re.compile(
    r"\b(?:returns?|returned|returning|yields?|yielding|growth|grows?|grew|growing|gains? of|fees?|TER|"
    r"expense ratio|drawdowns?|draw|fall|falls|fell|drops?|decline|crash|correction|spending|spend|withdraw\w*|"
    r"allocat\w*|weight\w*|equit(?:y|ies)|stocks?|bonds?|cash|alternatives|share|shares|stake|holding|position|"
    r"inflation|discount|coupon|payout|distribut\w*|probability|chance|odds|annuali[sz]ed|CAGR|IRR|"
    r"a year|per year|p\.a\.|annually|per annum|appreciat\w*|volatility|margin|premium|LTV|loan-to-value|"
    r"ownership|owned|owns|stake|interest rate|mortgage|portfolio|target|multiplier|Steuerfuss|Steuerfuß|"
    r"coefficient|taxable|deductible|included|inclusion|exclusion|excluded|up|down|higher|lower|more|less|"
    r"rise|rises|rose|increase|increases|cut|cuts|reduction|savings?)\b(?<!\bup)|\bup\b(?!\s+to\b)",
    re.IGNORECASE,
)
TAX_CUE_BEFORE = re.compile(
    r"(?:\btax(?:es|ed)?|\brate|\blevy|\blevied|\bbracket|\bduty|\bwithholding|\bcharged|\bNIIT|\bCGT|\bLTCG|"
    r"\bsteuer)\s*(?:(?:of|at|is|=|:|rate|rates)\s*)*(?:(?:a|an|the|flat|top|marginal|combined|up\s+to|as\s+much\s+as|"
    r"about|around|roughly|some)\s+)*$",
    re.IGNORECASE,
)
ON_TAXABLE = re.compile(
    r"^\s*(?:on|of)\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+|all\s+|any\s+)?(?:[\w'’-]+\s+){0,2}?"
    r"(?:gains?|profits?|income|dividends?|interest|coupons?|capital income|investment income|distributions)\b",
    re.IGNORECASE,
)
INCLUDED_AFTER = re.compile(
    r"\s*of\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+|each\s+)?(?:[\w'’-]+\s+){0,5}?"
    r"(?:is|are|becomes?|counts?|remains?)"
    r"\s+(?:\w+\s+)?(?:taxable|included|exempt|tax-free|subject\s+to\s+tax)\b"
    r"|\s+(?:steuerpflichtig|steuerbar|steuerfrei|imposables?|exonérée?s?)\b",  # "davon 60 % steuerpflichtig"
    re.IGNORECASE,
)
OF_SHARE = re.compile(r"^\s*(?:of|in)\b", re.IGNORECASE)
# A rate said to be a band's or bracket's: one of the scale's own rates, not anything in its range.
RATE_ONLY = re.compile(r"^[\s,;]*(?:at|of)\s+(?:(?:up\s+to|as\s+much\s+as|as\s+high\s+as|a\s+(?:top\s+)?rate\s+of)\s+)?$", re.I)
TOP_BEFORE = re.compile(
    r"\b(?:(?:at\s+)?up\s+to|as\s+high\s+as|top(?:\s+marginal)?\s+rate(?:\s+of|\s+is)?|peaks?\s+at|maximum(?:\s+rate)?(?:\s+of)?)\s*$",
    re.IGNORECASE,
)
MARGINAL = re.compile(r"\b(?:band|bands|bracket|brackets|marginal)\b", re.IGNORECASE)
# "4% above a EUR 1M allowance", "40% over the nil-rate band": a rate charged beyond a tax-free amount is a tax rate.
ABOVE_ALLOWANCE = re.compile(
    r"\s*(?:above|over|beyond|on\s+what\s+exceeds)\s+(?:the\s+|a\s+|an\s+|each\s+|her\s+|his\s+|their\s+)?"
    r"(?:[\w.,'’€$£-]+\s+){0,4}?(?:allowances?|exemptions?|nil-rate\s+bands?|thresholds?|tax-free\s+amounts?"
    r"|Freibetrag|franchigia|abattement)\b",
    re.IGNORECASE,
)
# A clause that opens with what is taxed and gives it a rate: "Gains on the compte-titres at 26 %", "dividends from
# the US fund at 15%". Not a return: "gains at 7% a year".
TAXABLE_AT = re.compile(
    r"^\s*(?:[-•*]\s*)?(?:(?:the|her|his|their|its)\s+)?(?:(?:realised|realized|capital|equity|fund|bond)\s+)?"
    r"(?:gains?|dividends?|interest|coupons?)\b(?:\s+[\w'’-]+){0,4}?\s+at\s+(?:about\s+|roughly\s+|around\s+)?$",
    re.IGNORECASE,
)
YEARLY_AFTER = re.compile(
    r"\s*(?:a|per|each|every)\s+(?:year|annum|month)|\s*(?:p\.?\s?a\.?|yearly|annually|annual)\b", re.IGNORECASE
)
APPROX = re.compile(r"\b(?:about|around|roughly|approximately|approx\.?|some|nearly|almost|close to|c\.)\s*$|~\s*$")
FLAT = re.compile(
    r"\bflat(?:[- ]rate)?\s+(?:(?:tax|rate|levy|withholding|tax rate)\s+(?:of\s+|at\s+|is\s+|=\s*|:\s*)?)?$", re.I
)
FLAT_AFTER = re.compile(r"\s*(?:flat|single)(?:[- ]rate)?\s+(?:tax|rate|levy|withholding)\b", re.IGNORECASE)
# One rate said to apply to all above an allowance ("inheritance tax at 40% applies above the allowance", "40% on
# everything over the nil-rate band"): the shape of a tax that taxes all above it at one rate (UK IHT), never of one
# that taxes each slice above it at its own rate (France's droits de succession).
ONE_RATE_ABOVE = re.compile(
    r"\s*(?:(?:appl(?:y|ies|ied)|(?:is|are)\s+(?:due|charged|levied|payable)|kicks?\s+in|falls?\s+due)\s+)?"
    r"(?:on\s+(?:everything|all|anything|whatever(?:\s+is)?|the\s+(?:part|amount|portion))\s+)?"
    + ABOVE_ALLOWANCE.pattern.removeprefix(r"\s*"),
    re.IGNORECASE,
)
ABOVE = "above the allowance"  # the shape of a rate checked with _candidates' `flat`
EFFECTIVE = re.compile(r"\b(?:effective|blended|average|overall|all-in|in total|total|combined|altogether)\b", re.I)
OF_AMOUNT = re.compile(
    r"^\s*of\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+|all\s+|any\s+)?(?:[\w'’-]+\s+){0,2}?"
    r"(?:gains?|profits?|income|proceeds|sale|dividends?|interest|bonus|salary|payout)\b",
    re.IGNORECASE,
)
# Words that may sit between a place and the rate or tax it qualifies: "California's top 13.3%", "Florida's state
# income tax"; not a clause ("a Florida resident pays 20%": the place is who pays, not whose tax).
QUALIFIER_WORDS = (
    r"(?:['’]s)?(?:\s+(?:top|state|income|marginal|flat|tax|taxes|estate|inheritance|gift|wealth|capital|gains|rate|"
    r"rates|own|new|personal|local|city|death|cantonal|communal|federal|levy|duty|the|a|an|of))*\s*"
)
LEVELS = {
    "state": re.compile(r"\bstate(?:-level)?\b(?!\s+(?:pension|bonds?))", re.IGNORECASE),
    "federal": re.compile(r"\b(?:federal(?:ly)?|Bundes\w*|fédéral\w*)\b", re.IGNORECASE),
    "canton": re.compile(r"\b(?:cantonal|canton|kantonal\w*|communal)\b", re.IGNORECASE),
}
LEVEL_BEFORE = re.compile(r"\b(?:state|federal|cantonal)\s+$", re.IGNORECASE)
LEVEL_OF = {"state": ("state",), "federal": ("federal", "country"), "canton": ("canton",)}


def _spans(text, pattern, start=0, end=None):
    end = len(text) if end is None else end
    spans, at = [], start
    for m in pattern.finditer(text, start, end):
        if m.start() > at:
            spans.append((at, m.start()))
        at = m.end()
    if end > at:
        spans.append((at, end))
    return spans


def _clauses(text):
    return [c for s, e in _spans(text, SENTENCE) for c in _spans(text, CLAUSE, s, e)]



def _negated(text, start, end, clause):
    cs, ce = clause
    before = text[max(cs, start - 50) : start]
    listed = claims.LIST_NEGATED.search(text, 0, start)  # "keine Vermögen-, Schenkungs- oder Erbschaftsteuer"
    return bool(NEGATION.search(before) or NEGATED_AFTER.match(text[end:ce]) or listed)




GAP = "…"  # in an alias, a few words of the writer's own: "harvest … loss" reads "harvest the CHF 140k bond-fund loss"


def _literal(alias):
    """An alias as a regex: literal, with each gap ("…") standing for up to five words."""
    return r"(?:\s+[\w'’.,()/-]+){0,5}?\s+".join(re.escape(part.strip()) for part in alias.split(GAP))


def _owner(owners, matched):
    """The owners of the alias a match was read by (a gapped alias matches more than its own words)."""
    if matched.lower() in owners:
        return owners[matched.lower()]
    return next(v for k, v in owners.items() if GAP in k and re.fullmatch(_literal(k), matched, re.IGNORECASE))


def _words(pattern_words):
    words = sorted(set(pattern_words), key=len, reverse=True)
    exact = [w for w in words if w.upper() == w]
    loose = [w for w in words if w.upper() != w]
    alt = lambda ws: "|".join(_literal(w) for w in ws)  # noqa: E731
    parts = []
    if exact:
        parts.append(re.compile(rf"(?<![\w-])(?:{alt(exact)})(?![\w-])"))
    if loose:
        parts.append(re.compile(rf"(?<![\w-])(?:{alt(loose)})(?![\w-])", re.IGNORECASE))
    return parts


@lru_cache(maxsize=1)
def _named_patterns():
    """(pattern, what) for every alias: what is ("tax", Tax) or ("measure", Measure); then the generic words."""
    rules = table()
    owners = {}
    for place in rules.places.values():
        for tax in place.taxes:
            for alias in tax.aliases:
                owners.setdefault(alias.lower(), []).append(("tax", tax))
    for measure in rules.measures.values():
        for alias in measure.aliases:
            owners.setdefault(alias.lower(), []).append(("measure", measure))
    aliases = [a for place in rules.places.values() for t in place.taxes for a in t.aliases]
    aliases += [a for m in rules.measures.values() for a in m.aliases]
    generic = {w.lower(): k for k in rules.kinds.values() for w in k.words}
    return _words(aliases), owners, _words(list(generic)), generic


@lru_cache(maxsize=1)
def _tax_aliases():
    return _words([a for place in table().places.values() for t in place.taxes for a in t.aliases])


@lru_cache(maxsize=1)
def _topic_patterns():
    """(kinds, pattern) per kind of tax (its topic and generic words) and per tax with aliases (its own names)."""
    found = []
    for kind in table().kinds.values():
        words = [*kind.topic, *kind.words]
        if words:
            alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
            found.append((kind.family, re.compile(rf"(?<![\w-])(?:{alt})(?![\w-])", re.IGNORECASE)))
    for place in table().places.values():
        for tax in place.taxes:
            if tax.aliases:
                alt = "|".join(re.escape(a) for a in tax.aliases)
                found.append((tax.kinds, re.compile(rf"(?<![\w-])(?:{alt})(?![\w-])")))
    return found


def _level_near(text, q, clause, reach=30):
    """The level word nearest the rate, within a few words: "37% federal + 13.3% state" gives each its own."""
    cs, ce = clause
    best, distance = "", reach + 1
    for name, pattern in LEVELS.items():
        for m in pattern.finditer(text, cs, ce):
            d = q.start - m.end() if m.end() <= q.start else m.start() - q.end
            if 0 <= d < distance:
                best, distance = name, d
    return best


def _level(clause_text):
    found = [name for name, pattern in LEVELS.items() if pattern.search(clause_text)]
    return found[0] if len(found) == 1 else ""


# ---- findings --------------------------------------------------------------------------------------------------


def _finding(ok, text, detail, start, end, verified=True):
    extra = {}
    if not verified and "verified" in {f.name for f in fields(Finding)}:
        extra["verified"] = False
    return Finding("jurisdiction", ok, text[start:end], detail, start, end, **extra)


def findings(text: str, facts: list[Fact]) -> list[Finding]:
    """The taxes and measures the text applies that the client's places do not have; the tax rates that fit."""
    places = [f for f in facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    codes = [f.value for f in places]
    if not codes or not text:
        return []
    reach_ = reach(codes)
    homes = [f.value for f in places if f.role not in table().source_roles]
    sources = tuple(dict.fromkeys(f.value for f in places if f.role in table().source_roles and f.value not in homes))
    clauses = _clauses(text)
    named = _named(text, reach_, clauses, reach(homes) if homes and sources else None, claims.entity(facts))
    if not claims.entity(facts):  # a foundation's or endowment's exemptions are not in the table
        named += _free_claims(text, reach(homes) if homes else reach_)
    named += _foreign_thresholds(text, reach_, facts)
    flagged_clauses = {_clause_of(clauses, f.start) for f in named if not f.ok}
    held = _held(facts, sources)
    # A rate is the client's only where the client is taxed: a citizen abroad owes no state's ("13.3%" is California's).
    taxed = reach(homes or codes, _citizens_abroad(places))
    rated = _rates(text, taxed, clauses, sources if homes else (), held)
    rated = [f for f in rated if _clause_of(clauses, f.start) not in flagged_clauses]
    rated = [_beyond_the_client(f, facts, taxed) if f.ok and f.verified else f for f in rated]
    return sorted(named + rated, key=lambda f: f.start)


LEAST_MARGIN = 3  # what the sheet lists may leave out a house or an account, and its currencies are not converted


def _beyond_the_client(finding, facts, reach_):
    """A rate that fits a tax only from a taxable amount far above all the client holds: Germany's 40% inheritance
    rate applies from EUR 13M (class II), not to an heir of a client with EUR 2.8M. The sheet's amounts are summed in
    whatever currency, and the rate stands unless even three times that sum stays below the amount it needs."""
    # Every amount on the sheet but a debt (an income or a goal too): counting too much only spares the rate.
    held = sum(f.value for f in facts
               if f.kind == "amount" and f.role != "liability" and isinstance(f.value, int | float))  # fmt: skip
    if held <= 0:
        return finding
    for t in (t for p in _known(reach_) for t in p.taxes if t.least):
        if not finding.detail.startswith(f"{finding.text} fits {t.name} "):
            continue
        rate = next((q.value for q in find_quantities(finding.text) if q.kind == "percent"), None)
        least = next((amount for r, amount in t.least if rate is not None and abs(rate - r) < 0.5), 0)
        if least and held * LEAST_MARGIN < least:
            detail = (f"{finding.text} is a rate of {t.name} ({_label(t.place)}) only on a taxable amount of "
                      f"{t.band_unit} {least:,.0f} or more; the sheet's amounts, each in its own currency, come to "
                      f"about {held:,.0f}")
            return replace(finding, ok=False, detail=detail)
    return finding


def _citizens_abroad(places):
    """Countries the client is a citizen of and does not live in, where the sheet says where the client lives: a US
    citizen living in Zurich owes federal tax but no state's ("California's 13.3%" is not the client's)."""
    lives = {placelib.country_of(f.value) for f in places if f.role == "residence"}
    # An account or a house there is a source of the country's taxes (its states' too), not a home: `sources`.
    other_ties = {placelib.country_of(f.value) for f in places if f.role not in ("citizenship", *table().source_roles)}
    citizen = {placelib.country_of(f.value) for f in places if f.role == "citizenship"}
    return frozenset(citizen - other_ties) if lives else frozenset()


THRESHOLD_WORDS = re.compile(
    r"\b(?:band|bands|nil-rate|exemption|exemptions|exempt|exclusion|threshold|allowance|free\s+amount)\b", re.I
)


def _foreign_thresholds(text, reach_, facts):
    """A tax's threshold of a country the client is not tied to, named as one: "above the £325k band" (the UK
    nil-rate band) for a French client. The sheet's own amounts are the client's, never a threshold; another state's
    threshold in the client's own country is left alone (round figures recur)."""
    if reach_.unknown:
        return []
    own = [f for f in facts if f.kind == "amount" and isinstance(f.value, int | float)]
    found = []
    for q in find_quantities(text):
        if q.kind != "amount" or any(f.unit == q.unit and abs(f.value - q.value) <= q.precision for f in own):
            continue
        near = text[max(0, q.start - 30) : q.end + 30]
        if not THRESHOLD_WORDS.search(near):
            continue
        homes = [
            (t, p.code) for p in table().places.values() for t in p.taxes
            for limit in (t.exempt, t.source_exempt)
            if limit and limit[1] == q.unit and abs(float(limit[0]) - q.value) <= max(q.precision, 1e-9)
        ]  # fmt: skip
        countries = {placelib.country_of(c) for c in reach_.codes}
        if homes and not any(placelib.country_of(code) in countries for _t, code in homes):  # a state's is ambiguous
            tax, code = homes[0]
            detail = f"{q.text} is the threshold of {tax.name} of {_label(code)}, not of the client's places ({_where(reach_)})"
            found.append(_finding(False, text, detail, q.start, q.end))
    return found


def _foreign(kind, kinds):
    """An untracked kind (withholding) may be a foreign place's: alone, or beside a kind foreign places levy it on
    (dividends, interest); "the bond gains lose 26% to withholding" is the home country's tax on gains."""
    others = {k for k in kinds if not table().kinds[k].untracked} - table().kinds[kind.name].family
    tracked = {k for k in others if k not in ("real_estate_gains",)}
    return not kind.abroad or not tracked or bool(tracked & set(kind.abroad))


def _sentence_text(text, position):
    s, e = _sentence_span(text, position)
    return text[s:e]


def _sentence_span(text, position):
    return next(((s, e) for s, e in _spans(text, SENTENCE) if s <= position < e), (position, position))


def _clause_of(clauses, position):
    for s, e in clauses:
        if s <= position < e:
            return s, e
    return position, position + 1


# ---- named taxes and measures ------------------------------------------------------------------------------------


def _named(text, reach_, clauses, home=None, entity=False):
    alias_patterns, owners, generic_patterns, generic = _named_patterns()
    found, taken = [], []
    hits = sorted(
        ((m.start(), m.end()) for p in alias_patterns for m in p.finditer(text)), key=lambda s: (s[0], -s[1])
    )
    for start, end in hits:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        clause = _clause_of(clauses, start)
        if _negated(text, start, end, clause):
            continue
        what = _owner(owners, text[start:end])
        finding = _named_one(text, start, end, what, reach_, clause, home)
        if finding:
            found.append(finding)
    for p in generic_patterns:
        for m in p.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            clause = _clause_of(clauses, m.start())
            if _negated(text, m.start(), m.end(), clause):
                finding = _absent(text, m, generic[m[0].lower()], home or reach_, clause) if not entity else None
                found += [finding] if finding else []
                continue
            finding = _generic(text, m, generic[m[0].lower()], reach_, clause)
            if finding:
                found.append(finding)
    return found


def _absent(text, m, kind, reach_, clause):
    """A kind of tax named as absent ("no state income tax") that the client's place there levies (claims.py)."""
    if not claims.negated_kind(text, m.start(), kind.name) or reach_.unknown:
        return None
    if not claims.plain(_sentence_text(text, m.start()), reach_.codes):
        return None
    level = "state" if m[0].lower().startswith("state ") else _level(text[max(clause[0], m.start() - 20) : m.end()])
    if level in ("state", "canton") and reach_.open:
        return None
    places = [p for p in _known(reach_) if not level or p.level in LEVEL_OF[level]]
    named = {p.code for p in _places_in(_sentence_text(text, m.start()))}
    if named:  # "Texas levies no income tax": the claim is Texas's, not the federal government's
        places = [p for p in places if p.code in named]
    if _outside([t for p in places for t in p.taxes if kind.name in t.kinds], _sentence_text(text, m.start())):
        return None  # "no wealth tax on the securities": France's IFI taxes real estate only
    return _levied_finding(text, m.start(), m.end(), places, kind.name)


def _free_claims(text, reach_):
    """"Gains on private shares are tax-free" where the client's places tax gains (claims.py)."""
    if reach_.unknown or not reach_.codes:
        return []
    found = []
    for start, end in claims.free_claims(text):
        sentence = _sentence_text(text, start)
        if claims.plain(sentence, reach_.codes):
            named = {p.code for p in _places_in(sentence)}
            places = [p for p in _known(reach_) if not named or p.code in named]
            found += [f for f in [_levied_finding(text, start, end, places, "capital_gains")] if f]
    return found


def _levied_finding(text, start, end, places, kind):
    taxes = [t for p in places for t in p.taxes]
    if not claims.levied(taxes, kind):
        return None
    named = ", ".join(f"{t.name} ({_label(t.place)}: {t.rates_text()})" for t in taxes if kind in t.kinds)
    return _finding(False, text, f"'{text[start:end]}', but the client's places levy {named}", start, end)


def _named_one(text, start, end, what, reach_, clause, home=None):
    """A place's own tax or measure, or a measure pointless in the client's places. A tax of a place the client
    only holds assets in (home: the reach of the other places) is the client's only where a non-resident pays it
    (Table.source_kinds), and not when the table marks it the residents' alone (NIIT)."""
    kind, item = what[0]
    homes = []
    for k, x in what:
        homes += [x.place] if k == "tax" else list(x.only)
    if kind == "measure" and not item.only:  # whether it saves tax depends on where the client pays tax
        return _pointless(text, start, end, item, home or reach_)
    about = item.name if kind == "tax" else item.why
    if kind == "tax" and home is not None and not any(placelib.within(p, h) for p in home.codes for h in homes):
        if all(x.residents or not x.kinds & table().source_kinds for k, x in what if k == "tax"):
            reach_ = home  # "the US NIIT" for a Swiss resident with a US account
    return _homes(text, start, end, tuple(dict.fromkeys(homes)), reach_, f"{text[start:end]} is {about}")


def _homes(text, start, end, homes, reach_, what):
    if any(placelib.within(p, h) for p in reach_.codes for h in homes):
        return None
    if any(placelib.country_of(h) in reach_.open and "-" in h for h in homes):
        return _finding(True, text, f"{what}: the client's state or canton is not known", start, end, False)
    where = ", ".join(_label(h) for h in homes)
    return _finding(False, text, f"{what} of {where}, but the client's places are {_where(reach_)}", start, end)


def _pointless(text, start, end, measure, reach_):
    """Pointless for every country the client is tied to (its own table or all the client's parts of it list it)."""
    rules = table()
    if reach_.unknown:
        return None
    for country in {placelib.country_of(c) for c in reach_.codes}:
        if measure.id in rules.places[country].pointless:
            continue
        parts = [c for c in reach_.codes if "-" in c and placelib.country_of(c) == country]
        if not parts:
            if any(measure.id in p.pointless for code, p in rules.places.items() if placelib.within(code, country)):
                return _finding(True, text, f"{measure.name}: the client's state or canton is not known", start,
                                end, False)
            return None
        if not all(c in rules.places and measure.id in rules.places[c].pointless for c in parts):
            return None
    return _finding(
        False, text, f"{text[start:end]}: {measure.why}, and it makes no sense in the client's places "
        f"({_where(reach_)})", start, end,
    )


PLACE_BEFORE = re.compile(rf"^{QUALIFIER_WORDS}$", re.IGNORECASE)
PLACE_AFTER = re.compile(r"^\s*(?:in|of|by|under)\s+(?:the\s+)?$")


@lru_cache(maxsize=16)
def _places_in(text):
    return tuple(placelib.find_places(text))


def _place_of(text, start, end, clause):
    """The place a tax's words are tied to: "Florida's state income tax", "the Swiss inheritance tax",
    "inheritance tax in Austria"."""
    cs, ce = clause
    for place in _places_in(text):
        ps, pe = place.start, place.end
        if ps < cs or pe > ce:
            continue
        if pe <= start and PLACE_BEFORE.match(text[pe:start]):
            return place.code
        if ps >= end and PLACE_AFTER.match(text[end:ps]):
            return place.code
    return ""


def _place_right_after(text, end, clause):
    """"... + 13.3% California = 37.1%": a rate's own place written straight after it."""
    return next(
        (p.code for p in _places_in(text) if clause[0] <= p.start and p.end <= clause[1] and not text[end : p.start].strip()
         and p.start > end),
        "",
    )


def _levies(places, family, level, clause_text):
    return [
        t for p in places for t in p.taxes
        if t.kinds & family and (not level or p.level in LEVEL_OF[level]) and _cued(t, clause_text)
    ]


def _cued(tax, clause_text):
    return (not tax.when or _said(tuple(tax.when), clause_text)) and not (
        tax.unless and _said(tuple(tax.unless), clause_text)
    )


@lru_cache(maxsize=2048)
def _said(words, clause_text):
    return any(re.search(rf"(?<![\w-]){re.escape(w)}", clause_text, re.IGNORECASE) for w in words)


def _generic(text, m, kind, reach_, clause):
    """A kind of tax named by its generic words: does the place it is tied to (or any of the client's) levy it?"""
    rules = table()
    clause_text = text[clause[0] : clause[1]]
    level = "state" if m[0].lower().startswith("state ") else _level(text[max(clause[0], m.start() - 20) : m.end()])
    qualifier = _place_of(text, m.start(), m.end(), clause)
    words = m[0]
    if qualifier:
        if placelib.country_of(qualifier) not in rules.places:
            return None
        if not _related(qualifier, reach_):
            return _finding(
                False, text, f"{words} of {_label(qualifier)}: not a place of the client ({_where(reach_)})",
                m.start(), m.end(),
            )
        if "-" in qualifier:
            targets = [qualifier]
        else:
            parts = [c for c in reach_.codes if "-" in c and placelib.country_of(c) == qualifier]
            targets = [qualifier] + ([] if level == "federal" else parts)
        if any(placelib.country_of(t) in reach_.open for t in targets) and level in ("state", "canton"):
            return None
        places = [rules.places[t] for t in targets if t in rules.places]
        if "-" in qualifier and qualifier not in rules.places:
            return None
    else:
        if reach_.unknown:
            return None
        places = _known(reach_)
        if level in ("state", "canton") and reach_.open:
            return None
        if not level and reach_.open:
            # a country without its subdivision: a subdivision might levy it
            open_places = [p for c, p in rules.places.items() if placelib.country_of(c) in reach_.open and "-" in c]
            if not _levies(places, kind.family, level, clause_text) and _levies(open_places, kind.family, "", ""):
                return _finding(True, text, f"{words}: only some states or cantons levy it, and the client's is "
                                "not known", m.start(), m.end(), False)
    family = _family(kind, places, level, qualifier)
    levied = _levies(places, family, level, clause_text)
    if levied:
        return _misapplied(text, m, levied, clause_text)
    where = ", ".join(_label(p.code) for p in places) or _where(reach_)
    level_text = f" at {level} level" if level else ""
    start = m.start()
    qualified = LEVEL_BEFORE.search(text, max(clause[0], start - 12), start)
    if qualified and level:
        start, words = qualified.start(), text[qualified.start() : m.end()]  # "state income tax", not "income tax"
    return _finding(False, text, f"{words}: no such tax{level_text} in {where}", start, m.end())


def _misapplied(text, m, levied, clause_text):
    """A tax the client's place levies, said to apply to what it never taxes ("a yearly wealth tax applies to the
    whole portfolio" for a French client: the IFI taxes real estate only)."""
    wrong = None if NEGATION.search(clause_text) else _outside(levied, clause_text)
    if not wrong:
        return None
    t = levied[0]
    what = wrong if wrong.lower().startswith(("all ", "the ")) else f"the {wrong}"
    return _finding(False, text, f"{m[0]}: {t.name} ({_label(t.place)}) taxes {t.only_on[0]} only, not {what}",
                    m.start(), m.end())  # fmt: skip


def _outside(taxes, clause_text):
    """What the clause names that none of the taxes is levied on ("the whole portfolio" for the IFI); None when any
    of them may apply there, or the clause names what one of them does tax."""
    if not taxes or not all(t.not_on for t in taxes):
        return None
    if any(_said(tuple(t.only_on), clause_text) for t in taxes):
        return None
    return next((w for w in taxes[0].not_on if _said((w,), clause_text)), None)


def _family(kind, places, level, qualifier):
    """The kinds a tax's words may mean: loosely its family ("estate tax" said of a Swiss inheritance tax), but
    strictly its own kind of a state or canton whose country keeps them apart ("Pennsylvania's estate tax": it
    levies an inheritance tax, not an estate tax)."""
    local = level in ("state", "canton") or "-" in (qualifier or "")
    countries = {placelib.country_of(p.code) for p in places}
    distinct = set().union(*(table().places[c].distinct for c in countries if c in table().places))
    if not local or kind.name not in distinct:
        return kind.family
    return frozenset([kind.name]) | (kind.family - distinct)


def exempt_taxes(facts):
    """The client's taxes of a whole (estate, inheritance) that levy only above an exemption: [(Tax, amount,
    currency)]."""
    codes = [f.value for f in facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    homes = [f.value for f in facts if f.kind == "place" and f.value in codes and f.role not in table().source_roles]
    return [(t, float(t.exempt[0]), t.exempt[1]) for p in _known(reach(homes or codes)) for t in p.taxes if t.exempt]


# ---- rates -----------------------------------------------------------------------------------------------------


def _rates(text, reach_, clauses, sources=(), held=()):
    """The tax rates of the text against the client's home places (reach_), and against the places it holds assets
    in (sources) for the kinds those levy on a non-resident (Table.source_kinds)."""
    found = []
    for q in find_quantities(text) + _fractions_paid(text):
        if q.kind != "percent" or q.value <= 0:
            continue
        clause = _clause_of(clauses, q.start)
        finding = _rate(text, q, reach_, clause, sources, held)
        if finding:
            found.append(finding)
    return found


FRACTIONS = {"half": 50, "a half": 50, "a third": 100 / 3, "one third": 100 / 3, "a quarter": 25, "one quarter": 25,
             "a fifth": 20, "one fifth": 20, "a tenth": 10, "one tenth": 10, "two fifths": 40, "two thirds": 200 / 3,
             "three quarters": 75}  # fmt: skip
FRACTION_PAID = re.compile(
    r"(?<![\w-])(?P<fraction>" + "|".join(sorted(map(re.escape, FRACTIONS), key=len, reverse=True)) + r")"
    r"(?=\s+(?:of\s+(?:it|them|the\s+\w+)\s+)?(?:to|in)\s+(?:\w+\s+){0,2}?(?:tax|taxes|the\s+taxman|withholding)\b)",
    re.IGNORECASE,
)


def _fractions_paid(text):
    """A share paid in tax written as a fraction: "gains lose about a quarter to tax" reads as 25%; "keep a third of
    the bonus aside for the Finanzamt" too."""
    before, _after, taking = _paying()
    found = _fractions_set_aside(text)
    for m in FRACTION_PAID.finditer(text):
        ahead = text[max(0, m.start() - 30) : m.start()]
        if before.search(ahead) or taking.search(ahead):
            value = FRACTIONS[m["fraction"].lower()]
            found.append(Quantity("percent", value, "%", m.start(), m.end(), m[0], 2.5, False))
    return found


SET_ASIDE = re.compile(
    r"\b(?:keep|keeps|set|sets|put|puts|hold|holds|reserve|reserves|earmark|earmarks|park|parks)\s+$", re.IGNORECASE
)


def _fractions_set_aside(text):
    """A fraction kept back for a collector: "keep a quarter of the gain aside for the tax office"."""
    collectors = _collectors()
    fraction = "|".join(sorted(map(re.escape, FRACTIONS), key=len, reverse=True))
    pattern = re.compile(
        rf"(?<![\w-])(?P<fraction>{fraction})(?=\s+of\s+(?:[\w'’-]+\s+){{1,8}}?(?:aside\s+|back\s+)?for\s+"
        rf"(?:{collectors})\b)",
        re.IGNORECASE,
    )
    found = []
    for m in pattern.finditer(text):
        if SET_ASIDE.search(text[max(0, m.start() - 20) : m.start()]):
            value = FRACTIONS[m["fraction"].lower()]
            found.append(Quantity("percent", value, "%", m.start(), m.end(), m[0], 2.5, False))
    return found


@lru_cache(maxsize=1)
def _collectors():
    raw = tomllib.loads(DATA.read_text())["meta"]
    return "|".join(re.escape(c) for c in sorted(raw["collectors"], key=len, reverse=True))


def _near_words(text, q, clause, n=3):
    cs, ce = clause
    before = " ".join(text[cs : q.start].split()[-n:])
    after = " ".join(text[q.end : ce].split()[:n])
    return before, after


@lru_cache(maxsize=1)
def _paying():
    """(verb before, collector after): "lose 26% to withholding", "pay 40% on what they inherit"."""
    raw = tomllib.loads(DATA.read_text())["meta"]
    verbs = "|".join(re.escape(v) for v in sorted(raw["paying_verbs"], key=len, reverse=True))
    collectors = "|".join(re.escape(c) for c in sorted(raw["collectors"], key=len, reverse=True))
    approx = r"(?:(?:about|around|roughly|up\s+to|some|nearly|almost|close\s+to)\s+)?"
    before = re.compile(rf"\b(?:{verbs})\s+{approx}$", re.I)
    after = re.compile(rf"^\s*(?:to|in)\s+(?:{collectors})\b", re.I)
    takers = "|".join(re.escape(v) for v in sorted(raw["taking_verbs"], key=len, reverse=True))
    taking = re.compile(rf"(?<![\w-])(?:{collectors})\s+(?:then\s+|also\s+)?(?:{takers})\s+{approx}$", re.I)
    return before, after, taking


def _paid(text, q, clause, kinds):
    """A percent paid away: a paying verb before it, and a collector after it ("to the state") or "on" a tax
    topic of the clause ("pay 40% on what they inherit"); or a collector taking it ("the state takes 16%")."""
    before, after, taking = _paying()
    if taking.search(text[max(clause[0], q.start - 40) : q.start]):
        return True  # "the state takes 16%"
    if not before.search(text[max(clause[0], q.start - 30) : q.start]):
        return False
    rest = text[q.end : clause[1]]
    return bool(after.match(rest)) or (bool(kinds) and bool(re.match(r"\s*on\b", rest)))


def _tax_context(text, q, clause):
    """Whether the percent is a tax rate: a tax word in its clause (not a return, fee or allocation next to it)."""
    cs, ce = clause
    if INCLUDED_AFTER.match(text, q.end):
        return False  # "60% of the gain is taxable": the share taxed, not the rate
    if _paid(text, q, clause, _topics(text[cs:ce])) or ONE_RATE_ABOVE.match(text, q.end, ce):
        return True
    if TAXABLE_AT.search(text[cs : q.start]) and not YEARLY_AFTER.match(text, q.end):
        return True  # "Gains on the compte-titres at 26 %: about €62,400": what is taxed, and its rate
    masked = NOT_TAX_RATE.sub(lambda m: " " * len(m[0]), text[cs:ce])  # "the mortgage rate is": no tax rate
    before_text = masked[: q.start - cs]
    cue = bool(TAX_CUE_BEFORE.search(before_text[-40:]))
    after_text = text[q.end : ce]
    if ON_TAXABLE.match(after_text) and TAX_WORD.search(masked[q.end - cs :]):
        return True  # "Set aside 27,5 % of the realised gains for tax", "26.375% of the equity gains as a tax provision"
    if not cue:
        before, after = _near_words(text, q, clause)
        if NOT_TAX_NEAR.search(f"{before} # {after}") and not ON_TAXABLE.match(after_text):
            return False
        if OF_SHARE.match(after_text) and not ON_TAXABLE.match(after_text):
            return False
    named = any(p.search(masked) for p in _tax_aliases())
    return cue or named or bool(TAX_WORD.search(masked)) or bool(ON_TAXABLE.match(after_text) and not MOVED.search(masked))


MOVED = re.compile(r"\b(?:put|puts|invest\w*|spend\w*|use|uses|into|towards?|donate\w*|give|gives)\b", re.I)


@lru_cache(maxsize=512)  # a clause's percents share its topics: read once per clause
def _topics(clause_text):
    kinds = set()
    for family, pattern in _topic_patterns():
        if pattern.search(clause_text):
            kinds |= family
    return frozenset(kinds)


def _candidates(places, kinds, level, flat, clause_text):
    return [
        t for p in places for t in p.taxes
        if (not kinds or t.kinds & kinds) and (not level or p.level in LEVEL_OF[level])
        and (not flat or t.flat or (flat == ABOVE and not t.graduated)) and _cued(t, clause_text)
    ]


def _fit(value, tol, places, kinds, level, flat, combine, clause_text, topmost=False):
    """The tax (or federal + state pair) a rate fits, as words; None when none does."""
    taxes = _candidates(places, kinds, level, flat, clause_text)
    marginal = bool(MARGINAL.search(clause_text))
    for t in taxes:
        if t.fits(value, tol, marginal, topmost):
            return f"{t.name} ({_label(t.place)}: {t.rates_text()})"
    if not combine:
        return None
    for a in taxes:
        for b in taxes:
            if placelib.country_of(a.place) != placelib.country_of(b.place) or a.place == b.place:
                continue
            if "-" in a.place or "-" not in b.place:
                continue
            lo = min(a.rates + ((a.range[0],) if a.range else ())) + min(b.rates + ((b.range[0],) if b.range else ()))
            hi = max(a.rates + ((a.range[1],) if a.range else ())) + max(b.rates + ((b.range[1],) if b.range else ()))
            if (abs(value - (a.highest() + b.highest())) <= tol) if topmost else (lo - tol <= value <= hi + tol):
                return f"{a.name} with {b.name} ({_label(a.place)} and {_label(b.place)})"
    return None


def _effective(value, tol, places, kinds, level, clause_text):
    """An effective or blended rate ("30% of the gain goes in tax", "about 50% in total") fits anything up to the
    highest rates of the client's country and state together."""
    taxes = _candidates(places, kinds, level, False, clause_text)
    top = {}
    for t in taxes:
        high = max(t.rates + ((t.range[1],) if t.range else ()), default=0)
        top[t.place] = max(top.get(t.place, 0), high)
    if top and value <= sum(top.values()) + tol:
        return f"an effective rate up to {sum(top.values()):g}% ({', '.join(_label(c) for c in top)})"
    return None


def _source_places(sources, held=()):
    """The places of the client's assets, with the countries they lie in, as Places with only the taxes a
    non-resident pays there, less those whose non-resident threshold the assets held there stay below (held)."""
    rules, found = table(), []
    for code in reach(sources).codes if sources else ():
        place = rules.places.get(code)
        if place:
            taxes = tuple(
                replace(t, kinds=t.kinds & rules.source_kinds) for t in place.taxes
                if t.kinds & rules.source_kinds and not _below(t, code, held)
            )  # fmt: skip
            found.append(Place(place.code, place.name, place.level, taxes, place.pointless, place.note))
    return found


def _held(facts, sources):
    """What the client holds in each place of its assets, from the amounts whose words name a place there:
    ((code, currency, total), ...); a place with amounts in several currencies gives one row per currency."""
    totals = {}
    for f in facts:
        if f.kind != "amount" or f.role not in ("", "holding") or not isinstance(f.value, int | float):
            continue
        named = {p.code for p in placelib.find_places(f"{f.label} {f.text}")}
        for code in sources:
            if any(placelib.within(n, code) or placelib.within(code, n) for n in named):
                totals[(code, f.unit)] = totals.get((code, f.unit), 0) + f.value
    return tuple((code, unit, total) for (code, unit), total in totals.items())


def _below(tax, code, held):
    """The client's assets in the place are known, all in the threshold's currency, and below it."""
    if not tax.source_exempt:
        return False
    amount, unit = float(tax.source_exempt[0]), tax.source_exempt[1]
    rows = [(u, total) for c, u, total in held if placelib.within(c, code) or placelib.within(code, c)]
    return bool(rows) and all(u == unit for u, _ in rows) and sum(t for _, t in rows) < amount


def _rate(text, q, reach_, clause, sources=(), held=()):
    rules = table()
    cs, ce = clause
    if RATE_ONLY.match(text[cs : q.start]):  # "The state taxes the gains as income, at up to 13.3%": the rate of the
        clause = cs, ce = _sentence_span(text, q.start)[0], ce  # clause before, which says what is taxed
    clause_text = text[cs:ce]
    tol = q.precision or 0.5
    if APPROX.search(text[max(cs, q.start - 16) : q.start]):
        tol = max(tol, 1.0, q.value * 0.05)
    qualifier = _place_of(text, q.start, q.end, clause) or _place_right_after(text, q.end, clause)
    kinds = _topics(clause_text) or _topics(_sentence_text(text, q.start))  # "... so nothing is taxed at 40%"
    level = _level_near(text, q, clause)
    flat = bool(FLAT.search(text[cs : q.start]) or FLAT_AFTER.match(text, q.end))
    if not flat and ONE_RATE_ABOVE.match(text, q.end, ce):
        flat = ABOVE
    effective = not flat and bool(EFFECTIVE.search(clause_text) or OF_AMOUNT.match(text[q.end : ce]))
    if effective:
        level = ""  # "the combined rate ... with the 37% federal rate": every level together
    combine = not flat and not level
    negated = _negated(text, q.start, q.end, clause)
    related = _related(qualifier, reach_) or (sources and _related(qualifier, reach(sources)))
    if qualifier and qualifier in rules.places and not related and not negated:
        # "the Californian 13.3%": a rate of another place's tax
        own = [rules.places[qualifier]]
        fit = _fit(q.value, tol, own, kinds, "", flat, False, clause_text)
        if fit:
            return _finding(False, text, f"{q.text} is {fit}, not a tax of the client's places ({_where(reach_)})",
                            q.start, q.end)
    if not _tax_context(text, q, clause):
        return None
    places = _known(reach_)
    if qualifier and qualifier in rules.places and "-" in qualifier and related:
        places, level, combine = [rules.places[qualifier]], "", False  # "California's 13.3%": that state's own
    topmost = bool(TOP_BEFORE.search(text[cs : q.start]))  # "at up to 13.3%": the tax's highest rate, no other
    fit = _fit(q.value, tol, places, kinds, level, flat, combine, clause_text, topmost)
    home = bool(qualifier) and bool(related) and not (sources and _related(qualifier, reach(sources)))
    if not fit and sources and not home:  # "US withholding of 15% on the dividends" for a Swiss client with a US account
        fit = _fit(q.value, tol, _source_places(sources, held), kinds, level, flat, False, clause_text)
    if not fit and effective:
        fit = _effective(q.value, tol, places, kinds, level, clause_text)
    if fit:
        return _finding(True, text, f"{q.text} fits {fit}", q.start, q.end)
    untracked = [k for k in kinds if rules.kinds[k].untracked and _foreign(rules.kinds[k], kinds)] if kinds else []
    if untracked:
        return _finding(True, text, f"{q.text}: the table does not list every {untracked[0]} tax", q.start, q.end,
                        False)
    if reach_.unknown:
        return _finding(True, text, f"{q.text}: the table lacks {', '.join(sorted(reach_.unknown))}", q.start,
                        q.end, False)
    if reach_.open:
        others = [p for c, p in rules.places.items() if placelib.country_of(c) in reach_.open and "-" in c]
        if _fit(q.value, tol, places + others, kinds, level, flat, combine, clause_text):
            return _finding(True, text, f"{q.text}: fits some state or canton, and the client's is not known",
                            q.start, q.end, False)
    about = f" on {', '.join(sorted(k.replace('_', ' ') for k in kinds))}" if kinds else ""
    shape = "flat " if flat is True else ""
    level_text = f" at {level} level" if level else ""
    rising = flat == ABOVE and _fit(q.value, tol, places, kinds, level, False, False, clause_text)
    above = f" on all above the allowance: {rising} rises with the amount" if rising else ""
    return _finding(
        False, text, f"no {shape}tax{about}{level_text} of the client's places ({_where(reach_)}) is {q.text}{above}",
        q.start, q.end,
    )
