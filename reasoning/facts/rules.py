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

Named as absent ("Florida has no state income tax", "no wealth tax in Austria") is fine. No place facts: nothing.
A place the table lacks, or a country given without the state or canton a rate depends on: undecided, so at most
an ok finding marked unverified (when Finding has `verified`), never a failure.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from reasoning.facts import places as placelib
from reasoning.facts.quantities import find_quantities
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

    def fits(self, value, tol):
        return any(abs(value - r) <= tol for r in self.rates) or bool(
            self.range and self.range[0] - tol <= value <= self.range[1] + tol
        )

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


@dataclass(frozen=True)
class Table:
    as_of: str
    disclaimer: str
    places: dict
    measures: dict
    kinds: dict


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
                tuple(t.get("when", ())), t.get("note", ""), tuple(t.get("unless", ())),
            )
            for t in p.get("taxes", ())
        )
        places[code] = Place(code, p["name"], p["level"], taxes, frozenset(p.get("pointless", ())), p.get("note", ""))
    measures = {
        key: Measure(key, m["name"], tuple(m["aliases"]), tuple(m.get("only", ())), m.get("why", ""))
        for key, m in raw["measure"].items()
    }
    kinds = {
        key: Kind(
            key, tuple(k.get("words", ())), frozenset([key, *k.get("with", ())]), tuple(k.get("topic", ())),
            k.get("untracked", False),
        )
        for key, k in raw["kinds"].items()
    }
    return Table(raw["meta"]["as_of"], raw["meta"]["disclaimer"], places, measures, kinds)


# ---- the client's places ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    codes: tuple  # the client's places and the countries they imply: ("US-FL", "US")
    unknown: frozenset  # countries the table lacks: nothing can be said about them
    open: frozenset  # countries given without the state or canton the table splits them into


def reach(codes) -> Reach:
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
        c for c in countries if c in subdivided and not any("-" in x and placelib.country_of(x) == c for x in found)
    )
    return Reach(tuple(found), unknown, open_)


def _known(reach_):
    return [table().places[c] for c in reach_.codes if c in table().places]


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
    r"(?:\s+[\w'’-]+){0,4}\s*$",
    re.IGNORECASE,
)
NEGATED_AFTER = re.compile(
    r"^\s*(?:[\w'’-]+\s+){0,3}?(?:(?:does|do|did|would|will|is|are|was|were)\s*(?:not|n[o']t)|isn['’]t|aren['’]t|"
    r"doesn['’]t|don['’]t|no longer|was abolished|were abolished|was repealed|has been abolished|ended|"
    r"is not levied|does not apply|doesn['’]t apply|not relevant|irrelevant|pointless|makes? no sense|"
    r"(?:adds?|takes?|costs?|comes? to) nothing|(?:is|are) (?:zero|nil|none)|does not exist|doesn['’]t exist|"
    r"(?:[\w'’-]+\s+){0,5}?(?:nicht|abgeschafft|aufgehoben|n['’]existe plus|supprimée?|abolie?|abolita|abrogata))\b",
    re.IGNORECASE,
)
TAX_WORD = re.compile(
    r"(?<![\w-])(?:tax(?:es|ed|ing|ation)?|rates?|levy|levies|levied|brackets?|duty|duties|withholding|CGT|IHT|"
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
    r"rise|rises|rose|increase|increases|cut|cuts|reduction|savings?)\b",
    re.IGNORECASE,
)
TAX_CUE_BEFORE = re.compile(
    r"(?:\btax(?:es|ed)?|\brate|\blevy|\blevied|\bbracket|\bduty|\bwithholding|\bcharged|\bNIIT|\bCGT|\bLTCG|"
    r"\bsteuer)\s*(?:(?:of|at|is|=|:|rate|rates)\s*)*(?:(?:a|an|the|flat|top|marginal|combined)\s+)*$",
    re.IGNORECASE,
)
ON_TAXABLE = re.compile(
    r"^\s*(?:on|of)\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+|all\s+|any\s+)?(?:[\w'’-]+\s+){0,2}?"
    r"(?:gains?|profits?|income|dividends?|interest|coupons?|capital income|investment income|distributions)\b",
    re.IGNORECASE,
)
OF_SHARE = re.compile(r"^\s*(?:of|in)\b", re.IGNORECASE)
APPROX = re.compile(r"\b(?:about|around|roughly|approximately|approx\.?|some|nearly|almost|close to|c\.)\s*$|~\s*$")
FLAT = re.compile(
    r"\bflat(?:[- ]rate)?\s+(?:(?:tax|rate|levy|withholding|tax rate)\s+(?:of\s+|at\s+|is\s+|=\s*|:\s*)?)?$", re.I
)
FLAT_AFTER = re.compile(r"\s*(?:flat|single)(?:[- ]rate)?\s+(?:tax|rate|levy|withholding)\b", re.IGNORECASE)
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
    return bool(NEGATION.search(before) or NEGATED_AFTER.match(text[end:ce]))


def _words(pattern_words):
    words = sorted(set(pattern_words), key=len, reverse=True)
    exact = [w for w in words if w.upper() == w]
    loose = [w for w in words if w.upper() != w]
    alt = lambda ws: "|".join(re.escape(w) for w in ws)  # noqa: E731
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
    codes = [f.value for f in facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    if not codes or not text:
        return []
    reach_ = reach(codes)
    clauses = _clauses(text)
    named = _named(text, reach_, clauses)
    flagged_clauses = {_clause_of(clauses, f.start) for f in named if not f.ok}
    rated = [f for f in _rates(text, reach_, clauses) if _clause_of(clauses, f.start) not in flagged_clauses]
    return sorted(named + rated, key=lambda f: f.start)


def _clause_of(clauses, position):
    for s, e in clauses:
        if s <= position < e:
            return s, e
    return position, position + 1


# ---- named taxes and measures ------------------------------------------------------------------------------------


def _named(text, reach_, clauses):
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
        what = owners[text[start:end].lower()]
        finding = _named_one(text, start, end, what, reach_, clause)
        if finding:
            found.append(finding)
    for p in generic_patterns:
        for m in p.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            clause = _clause_of(clauses, m.start())
            if _negated(text, m.start(), m.end(), clause):
                continue
            finding = _generic(text, m, generic[m[0].lower()], reach_, clause)
            if finding:
                found.append(finding)
    return found


def _named_one(text, start, end, what, reach_, clause):
    """A place's own tax or measure, or a measure pointless in the client's places."""
    kind, item = what[0]
    homes = []
    for k, x in what:
        homes += [x.place] if k == "tax" else list(x.only)
    if kind == "measure" and not item.only:
        return _pointless(text, start, end, item, reach_)
    about = item.name if kind == "tax" else item.why
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
    if _levies(places, kind.family, level, clause_text):
        return None
    where = ", ".join(_label(p.code) for p in places) or _where(reach_)
    level_text = f" at {level} level" if level else ""
    start = m.start()
    qualified = LEVEL_BEFORE.search(text, max(clause[0], start - 12), start)
    if qualified and level:
        start, words = qualified.start(), text[qualified.start() : m.end()]  # "state income tax", not "income tax"
    return _finding(False, text, f"{words}: no such tax{level_text} in {where}", start, m.end())


# ---- rates -----------------------------------------------------------------------------------------------------


def _rates(text, reach_, clauses):
    found = []
    for q in find_quantities(text):
        if q.kind != "percent" or q.value <= 0:
            continue
        clause = _clause_of(clauses, q.start)
        finding = _rate(text, q, reach_, clause)
        if finding:
            found.append(finding)
    return found


def _near_words(text, q, clause, n=3):
    cs, ce = clause
    before = " ".join(text[cs : q.start].split()[-n:])
    after = " ".join(text[q.end : ce].split()[:n])
    return before, after


def _tax_context(text, q, clause):
    """Whether the percent is a tax rate: a tax word in its clause (not a return, fee or allocation next to it)."""
    cs, ce = clause
    masked = NOT_TAX_RATE.sub(lambda m: " " * len(m[0]), text[cs:ce])  # "the mortgage rate is": no tax rate
    before_text = masked[: q.start - cs]
    cue = bool(TAX_CUE_BEFORE.search(before_text[-40:]))
    after_text = text[q.end : ce]
    if not cue:
        before, after = _near_words(text, q, clause)
        if NOT_TAX_NEAR.search(f"{before} # {after}") and not ON_TAXABLE.match(after_text):
            return False
        if OF_SHARE.match(after_text) and not ON_TAXABLE.match(after_text):
            return False
    named = any(p.search(masked) for p in _tax_aliases())
    return cue or named or bool(TAX_WORD.search(masked)) or bool(ON_TAXABLE.match(after_text))


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
        if (not kinds or t.kinds & kinds) and (not level or p.level in LEVEL_OF[level]) and (not flat or t.flat)
        and _cued(t, clause_text)
    ]


def _fit(value, tol, places, kinds, level, flat, combine, clause_text):
    """The tax (or federal + state pair) a rate fits, as words; None when none does."""
    taxes = _candidates(places, kinds, level, flat, clause_text)
    for t in taxes:
        if t.fits(value, tol):
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
            if lo - tol <= value <= hi + tol:
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


def _rate(text, q, reach_, clause):
    rules = table()
    cs, ce = clause
    clause_text = text[cs:ce]
    tol = q.precision or 0.5
    if APPROX.search(text[max(cs, q.start - 16) : q.start]):
        tol = max(tol, 1.0, q.value * 0.05)
    qualifier = _place_of(text, q.start, q.end, clause) or _place_right_after(text, q.end, clause)
    kinds = _topics(clause_text)
    level = _level_near(text, q, clause)
    flat = bool(FLAT.search(text[cs : q.start]) or FLAT_AFTER.match(text, q.end))
    effective = not flat and bool(EFFECTIVE.search(clause_text) or OF_AMOUNT.match(text[q.end : ce]))
    if effective:
        level = ""  # "the combined rate ... with the 37% federal rate": every level together
    combine = not flat and not level
    negated = _negated(text, q.start, q.end, clause)
    if qualifier and qualifier in rules.places and not _related(qualifier, reach_) and not negated:
        # "the Californian 13.3%": a rate of another place's tax
        own = [rules.places[qualifier]]
        fit = _fit(q.value, tol, own, kinds, "", flat, False, clause_text)
        if fit:
            return _finding(False, text, f"{q.text} is {fit}, not a tax of the client's places ({_where(reach_)})",
                            q.start, q.end)
    if not _tax_context(text, q, clause):
        return None
    places = _known(reach_)
    if qualifier and qualifier in rules.places and "-" in qualifier and _related(qualifier, reach_):
        places, level, combine = [rules.places[qualifier]], "", False  # "California's 13.3%": that state's own
    fit = _fit(q.value, tol, places, kinds, level, flat, combine, clause_text)
    if not fit and effective:
        fit = _effective(q.value, tol, places, kinds, level, clause_text)
    if fit:
        return _finding(True, text, f"{q.text} fits {fit}", q.start, q.end)
    untracked = [k for k in kinds if rules.kinds[k].untracked] if kinds else []
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
    shape = "flat " if flat else ""
    level_text = f" at {level} level" if level else ""
    return _finding(
        False, text, f"no {shape}tax{about}{level_text} of the client's places ({_where(reach_)}) is {q.text}",
        q.start, q.end,
    )
