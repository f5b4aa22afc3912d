"""Amounts, percents, ages and years as people write them, read from a text into numbers with their spans.

"$3.2M", "USD 2.4 million", "CHF 1'800'000", "2,5 Mio. EUR", "two million dollars", "70 %", "seventy percent",
"aged 58", "a 58-year-old", "by 2031". Currency symbols, ISO codes and names come from babel's CLDR data over a
few locales (CURRENCY_LOCALES); only what CLDR leaves ambiguous or lacks is written here (SYMBOL_OVERRIDES,
NAME_OVERRIDES, CODE_WORDS).

What is not a quantity: a bare number with no currency, percent sign, age or year cue ("4 9 10 13", "two
children"), a duration ("10 years"), a figure inside a word or a code ("401(k)", "3a", "S&P 500").

Numbers are read with Decimal so "1.234M" is exactly 1234000.0. Separators: ' ’ and thin/no-break spaces group
thousands; "," groups thousands when three digits follow it ("2,500") and is a decimal comma otherwise ("2,5");
"." is a decimal point, except in a run of dot groups ("1.800.000"); plain spaces group thousands only right next
to a currency ("CHF 1 800 000").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from babel import Locale, localedata
from babel.core import get_global
from babel.localedata import locale_identifiers
from babel.numbers import get_currency_name, get_currency_symbol

KINDS = ("amount", "percent", "age", "year")
UNITS = {"percent": "%", "age": "years", "year": ""}
YEARS = (1990, 2100)
EPS = 1e-9


@dataclass(frozen=True)
class Quantity:
    kind: str  # "amount" | "percent" | "age" | "year"
    value: float  # base units: "$3.2M" -> 3200000.0; "70%" -> 70.0; "aged 58" -> 58.0; "2031" -> 2031.0
    unit: str  # ISO 4217 code for amounts; "%" for percents; "years" for ages; "" for years
    start: int
    end: int
    text: str  # source[start:end]
    precision: float  # half a unit of the last digit shown, in base units: "$3.2M" -> 50000.0; "70%" -> 0.5
    scaled: bool  # the figure carried a scale (k, M, m, million, Mio., bn, thousand)


# ---- currencies from CLDR ---------------------------------------------------------------------------------------

CURRENCY_LOCALES = ("en_US", "en_GB", "de_CH", "fr_CH", "de_DE")
# Symbols CLDR gives several currencies (or none): the reading a wealth problem in these markets means. CLDR's
# Singapore English writes a bare "$"; advisors write "S$".
SYMBOL_OVERRIDES = {"$": "USD", "Fr.": "CHF", "SFr.": "CHF", "SFr": "CHF", "Fr": "CHF", "sFr.": "CHF", "S$": "SGD"}
# Short names CLDR has only inside longer ones ("US dollars", "Swiss francs", "British pounds").
NAME_OVERRIDES = {
    "dollar": "USD",
    "dollars": "USD",
    "franc": "CHF",
    "francs": "CHF",
    "Franken": "CHF",
    "pound": "GBP",
    "pounds": "GBP",
    "pounds sterling": "GBP",
    "sterling": "GBP",
}
# ISO codes that are also English words in capitals ("TOP 10 holdings", "ALL 3 accounts"): not read as currencies.
CODE_WORDS = {"ALL", "TOP", "CUP", "MOP", "BOB", "SOS", "GEL", "MAD", "PEN", "TRY", "LAK", "BAM", "CVE", "ERN", "RON"}


@lru_cache(maxsize=1)
def currency_tables():
    """(codes, symbols, names): the ISO codes in use as tender; symbol -> code and lower-case name -> code.

    Symbols and names come from CLDR over CURRENCY_LOCALES; then the symbols English-speaking locales use at home
    ("RM" for MYR in en_MY). A symbol or name two currencies share is dropped unless SYMBOL_OVERRIDES or
    NAME_OVERRIDES say.
    """
    codes = set()
    for entries in get_global("territory_currencies").values():
        codes.update(code for code, _start, end, tender in entries if end is None and tender)
    codes -= CODE_WORDS
    symbols, names = {}, {}
    for locale in map(Locale.parse, CURRENCY_LOCALES):
        for code in sorted(codes):
            symbol = get_currency_symbol(code, locale)
            if symbol != code:
                symbols.setdefault(symbol, set()).add(code)
            for count in (1, 2):
                name = get_currency_name(code, count=count, locale=locale)
                if name and name != code:
                    names.setdefault(name.lower(), set()).add(code)
    symbols = {s: next(iter(c)) for s, c in symbols.items() if len(c) == 1}
    names = {n: next(iter(c)) for n, c in names.items() if len(c) == 1}
    for symbol, code in _local_symbols(codes).items():
        symbols.setdefault(symbol, code)
    symbols.update(SYMBOL_OVERRIDES)
    names.update({n.lower(): c for n, c in NAME_OVERRIDES.items()})
    return frozenset(codes), symbols, names


def _local_symbols(codes):
    """Symbols English-speaking locales use at home that one currency alone has there: "RM" for MYR (en_MY),
    "NZ$"; a letter symbol must be capitals or end in a dot, so "Le" or "Ar" is no currency."""
    found = {}
    for identifier in locale_identifiers():
        if not identifier.startswith("en_"):
            continue
        for code, symbol in localedata.load(identifier, merge_inherited=False).get("currency_symbols", {}).items():
            symbol = symbol.replace("\u200e", "")
            if code not in codes or symbol == code or " " in symbol or "\u00a0" in symbol:
                continue
            signed = any(unicodedata.category(ch) == "Sc" for ch in symbol) and re.search(r"[A-Za-z]", symbol)
            if signed or re.fullmatch(r"[A-Z]{2,}|[A-Za-z]+\.", symbol):
                found.setdefault(symbol, set()).add(code)
    return {s: next(iter(c)) for s, c in found.items() if len(c) == 1}


def alternation(words):
    """One regex for a set of literal words, as a trie ("US$|USD" -> "US(?:\\$|D)"): the longest writing wins and a
    failed position costs one branch per character, not one per word (the currency names are 780)."""
    trie = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _trie_pattern(trie)


def _trie_pattern(node):
    branches = [re.escape(ch) + _trie_pattern(child) for ch, child in sorted(node.items()) if ch]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body


# ---- numbers -----------------------------------------------------------------------------------------------------

# A figure: thousands groups (' ’ , thin or no-break space; or two or more dot groups) with an optional decimal
# part, or plain digits with an optional decimal point or comma. Never inside a word or after another digit.
FIGURE = (
    r"(?:\d{1,3}(?:[,'’\u202f\u00a0]\d{3})+(?:\.\d+)?"
    r"|\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?"
    r"|\d+(?:[.,]\d+)?)"
)
# The same, with plain spaces as thousands separators too ("CHF 1 800 000"): only next to a currency.
FIGURE_SPACED = r"(?:\d{1,3}(?: \d{3})+(?![\d'’]|[.,]\d))"  # "CHF 404 000." at a sentence's end too
EDGE_BEFORE = r"(?<![\w.,'’/&-])"
EDGE_AFTER = r"(?![\w'’]|[.,]\d)"

SCALES = {
    "k": 3, "K": 3, "thousand": 3, "thousands": 3, "Tsd.": 3, "Tsd": 3,
    "m": 6, "M": 6, "mn": 6, "mln": 6, "Mln": 6, "MM": 6, "mm": 6, "mio": 6, "Mio": 6, "Mio.": 6, "mio.": 6, "million": 6,
    "millions": 6, "Million": 6, "Millionen": 6, "Mill.": 6,
    "bn": 9, "b": 9, "B": 9, "billion": 9, "billions": 9, "Mrd.": 9, "Mrd": 9, "Milliarden": 9,
}  # fmt: skip
SCALE = r"(?:" + alternation(SCALES) + r")(?:(?<=\.)|(?![A-Za-z]))"

ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {w: i for i, w in enumerate(ONES)} | {w: 10 * (i + 2) for i, w in enumerate(TENS)}
MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD = alternation(list(NUMBER_WORDS) + list(MULTIPLIERS))
# "two", "twenty-five", "two hundred and fifty thousand", "a million", "half a million"
WORDS = (
    rf"(?:half\s+an?\s+(?:million|billion|thousand)|an?\s+(?:million|billion|thousand|hundred)"
    rf"|(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*)"
)


def decimal_of(figure):
    """The Decimal a figure means and its number of decimals shown, or None ("1'800'000" -> 1800000, 0)."""
    s = figure.replace("'", "").replace("’", "").replace("\u202f", "").replace("\u00a0", "").replace(" ", "")
    if s.count(".") > 1:  # German dot groups: "1.800.000,50"
        s = s.replace(".", "").replace(",", ".")
    elif "," in s and "." in s:
        s = s.replace(",", "")
    elif s.count(",") == 1 and not re.search(r",\d{3}$", s):  # a decimal comma: "2,5"
        s = s.replace(",", ".")
    else:
        s = s.replace(",", "")
    try:
        number = Decimal(s)
    except InvalidOperation:
        return None
    decimals = len(s.split(".")[1]) if "." in s else 0
    return number, decimals


def words_value(words):
    """"two hundred and fifty thousand" -> 250000; "half a million" -> 500000; None when not a number."""
    tokens = [t for t in re.split(r"[\s-]+", words.lower()) if t and t != "and"]
    if not tokens:
        return None
    if tokens[0] == "half":
        return MULTIPLIERS[tokens[-1]] // 2 if tokens[-1] in MULTIPLIERS else None
    total, current = 0, 0
    for token in tokens:
        if token in ("a", "an"):
            current = 1
        elif token in NUMBER_WORDS:
            current += NUMBER_WORDS[token]
        elif token == "hundred":
            current = max(current, 1) * 100
        elif token in MULTIPLIERS:
            total += max(current, 1) * MULTIPLIERS[token]
            current = 0
        else:
            return None
    return total + current


def _half_unit(decimals, exponent=0):
    return float(Decimal(5) * Decimal(10) ** (exponent - decimals - 1))


# ---- the patterns ------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _patterns():
    codes, symbols, names = currency_tables()
    code = rf"(?<![A-Za-z])(?:{alternation(codes)})(?![A-Za-z])"
    lettered = [s for s in symbols if s[0].isalpha()]
    signs = [s for s in symbols if not s[0].isalpha()]
    symbol = rf"(?:(?<![A-Za-z])(?:{alternation(lettered)})|{alternation(signs)})"
    name = rf"(?i:(?<![A-Za-z])(?:{alternation(names)})(?![A-Za-z]))"
    figure = rf"(?P<sign>[-−])?(?P<figure>{FIGURE_SPACED}|{FIGURE})"
    scale = rf"(?:\s?(?P<scale>{SCALE}))?"
    second = rf"(?:\s*(?:-|–|—|to)\s*(?P<figure2>{FIGURE}))?"  # a range: "$1-2M", "CHF 1–2 Mio."
    starts = "".join(sorted({re.escape(w[0]) for w in list(codes) + list(symbols)}))
    before = re.compile(
        rf"(?=[{starts}])(?P<currency>{code}|{symbol})\s?{figure}(?![\d'’]|[.,]\d){second}{scale}(?![A-Za-z\d])"
        rf"(?:\s+(?P<named>{name}))?"  # "$3 million dollars": the name is part of the span
    )
    words_before = re.compile(rf"(?=[{starts}])(?P<currency>{code}|{symbol})\s?(?P<words>(?i:{WORDS}))(?![A-Za-z])")
    after = re.compile(
        rf"(?=[-−\d]){EDGE_BEFORE}{figure}(?![\d'’]|[.,]\d){second}{scale}\s?(?P<currency>{code}|{symbol}|{name})"
        r"(?![A-Za-z$€£¥])"
    )
    words_after = re.compile(
        rf"(?<![\w-])(?P<words>(?i:{WORDS}))(?:\s(?P<scale>{SCALE}))?\s+(?P<currency>{code}|{name})(?![A-Za-z])"
    )
    return before, words_before, after, words_after


def _currency(token):
    _codes, symbols, names = currency_tables()
    token = token.strip()
    return symbols.get(token) or names.get(token.lower()) or (token if re.fullmatch(r"[A-Z]{3}", token) else "")


PERCENT = re.compile(
    rf"(?=[-−\d]){EDGE_BEFORE}(?P<sign>[-−])?(?P<figure>{FIGURE}){EDGE_AFTER}"
    rf"(?:\s*(?:-|–|—|to)\s*(?P<figure2>{FIGURE}))?"
    r"\s?(?P<unit>%|percent\b|per\s?cent\b|pct\b|Prozent\b)",
)
PERCENT_WORDS = re.compile(rf"(?<![\w-])(?P<words>{WORDS})(?P<half>\s+and\s+a\s+half)?\s?(?:percent|per\s?cent)\b", re.I)
# Ages: "aged 58", "at age 65", "58-year-old", "58 years old", "63 ans", "she is 61", "both 68", "turns 65", "Anna (58)",
# "A Californian, 58, holds", "a couple, 50 and 48.", "retire at 62", "Medicare at 65", "70½". The span is the number
# alone. A cue-less reading ("is 61", ", 58,") needs an age a client can have (BARE_AGES) and the clause to end.
AGE_NUMBER = r"(?P<figure>\d{1,3}(?:½|\.5(?!\d))?)"
AGE_WORD_NUMBER = rf"(?P<figure>(?i:{WORDS}))"
CLAUSE_END = r"(?=\s*(?:[,.;:)!?]|$)|\s+(?:and|with|but|who|has|have|in|next|this|or)\b|\s+[-–—•]\s)"  # "- turns 73 - Max."
BARE_AGES = (16, 105)
AND = r"\s+(?:and|und|et|&)\s+"
AGES = [  # (pattern, a cue-less reading)
    (rf"\b(?:[Aa]ged?|[Aa]ges)\s+{AGE_NUMBER}(?![\d%'’]|[.,]\d|\s*(?:percent|per cent))(?!\w)", False),
    (rf"(?=\d)(?<![\w.,]){AGE_NUMBER}(?:[- ]years?[- ]old|\s?y/o\b|\s+ans\b|\s+Jahre\b|-jährig)", False),
    (r"(?<![\w.,])(?P<figure>\d{2}½)(?!\s*(?:years?|%|percent)\b)", True),
    (rf"\b(?:[Tt]urns|turned|turning|retir\w*\s+at|at|by|after|before|until|from)\s+{AGE_NUMBER}(?![\w%'’]|[.,]\d)"
     rf"{CLAUSE_END}", True),
    (rf"\b(?:is|was|are|am|'s|’s|[Bb]oth)\s+{AGE_NUMBER}(?![\w%'’]|[.,]\d){CLAUSE_END}", True),
    (rf"(?<=[A-Za-z]) \({AGE_NUMBER}\)", True),
    (rf"(?<=[A-Za-z]) \({AGE_NUMBER}(?={AND}\d{{2}}\))", True),  # "Two children (24 and 21)"
    (rf"(?=, \d)(?:(?<=[A-Za-zé])|(?<=\b(?:19|20)\d\d)), {AGE_NUMBER}(?=[,.;:]|{AND}\d{{2}}\b)", True),
    (rf"(?<=\d\d){AND}{AGE_NUMBER}(?=[,.;:)])", True),
    (rf"\b(?:[Aa]ged?)\s+{AGE_WORD_NUMBER}\b", False),
    (rf"(?<![\w-])(?=[A-Za-z]+(?:[- ][a-z]+)?[- ]years?[- ]old){AGE_WORD_NUMBER}[- ]years?[- ]old\b", False),
    (rf"\b(?:is|was|[Bb]oth|[Tt]urns|turned|retir\w*\s+at|at|by|after|until)\s+{AGE_WORD_NUMBER}(?![\w-]){CLAUSE_END}",
     True),
    (rf"(?<=[A-Za-z]), {AGE_WORD_NUMBER}(?=[,.;:])", True),
]
AGES = [(re.compile(pattern), bare) for pattern, bare in AGES]
YEAR = re.compile(
    r"(?<![\w.,'’/&$€£])(?<!§ )(?P<figure>(?:19[89]\d|20\d\d|2100))(?![\w%'’]|[.,]\d)"
    r"(?!\s*(?:shares|units|options|RSUs|employees|people|hours|days|miles|km|acres|sq|square|feet|ft|m2|m²)\b)"
)
NOT_YEAR_BEFORE = re.compile(r"(?:\b(?:[Ss]ection|[Ff]orm|IRC|Art\.?|[Aa]rticle|No\.?)|§)\s*$")


def find_quantities(text: str) -> list[Quantity]:
    """Every amount, percent, age and year in the text, in order of appearance, non-overlapping.

    Where two readings overlap, an amount wins over a percent, a percent over an age, an age over a year, and a
    currency written before the figure over one written after ("in 2029 CHF 500k" is CHF 500k and the year 2029).
    """
    text = text or ""
    taken = []
    found = []

    def free(start, end):
        return all(end <= s or start >= e for s, e in taken)

    def add(items):
        for q in items:
            if q.start < q.end and free(q.start, q.end):
                taken.append((q.start, q.end))
                found.append(q)

    before, words_before, after, words_after = _patterns()
    add(_amounts(text, before, currency_first=True))
    add(_word_amounts(text, words_before))
    add(_amounts(text, after, currency_first=False))
    add(_word_amounts(text, words_after))
    add(_percents(text))
    add(_ages(text))
    add(_years(text))
    return sorted(found, key=lambda q: q.start)


def _amounts(text, pattern, currency_first):
    for m in pattern.finditer(text):
        code = _currency(m["currency"])
        if currency_first and m["named"] and m["currency"] == "$":  # "$3 million Canadian dollars"
            code = _currency(m["named"]) or code
        if not currency_first and _a_year_in_money(m):
            continue
        exponent = SCALES[m["scale"]] if m["scale"] else 0
        first = decimal_of(m["figure"])
        if first is None:
            continue
        if not m["scale"] and re.fullmatch(r"\d{1,3}\.\d{3}", m["figure"]):  # "EUR 1.250": a German thousands dot
            first = decimal_of(m["figure"].replace(".", ""))
        sign = -1 if m["sign"] else 1
        spans = [(first, sign, m.start(), m.end())]
        if m["figure2"] and (second := decimal_of(m["figure2"])):  # a range: each figure its own span
            first_start = m.start() if currency_first else m.start("figure")
            spans = [(first, sign, first_start, m.end("figure")), (second, 1, m.start("figure2"), m.end())]
        for (number, decimals), sign, start, end in spans:
            value = float(sign * number * Decimal(10) ** exponent)
            precision = _half_unit(decimals, exponent)
            yield Quantity("amount", value, code, start, end, text[start:end], precision, bool(m["scale"]))


def _a_year_in_money(m):
    """"in 2024 dollars", "2025 euro rates": a year before a currency's name, not an amount."""
    figure = m["figure"]
    return (
        not m["scale"]
        and re.fullmatch(r"\d{4}", figure) is not None
        and YEARS[0] <= int(figure) <= YEARS[1]
        and not re.fullmatch(r"[A-Z]{3}|\W+|[A-Z]*\W+", m["currency"])
    )


def _word_amounts(text, pattern):
    for m in pattern.finditer(text):
        value = words_value(m["words"])
        if value is None:
            continue
        groups = m.groupdict()
        exponent = SCALES[groups["scale"]] if groups.get("scale") else 0
        value *= 10**exponent
        shown = [t for t in re.split(r"[\s-]+", m["words"].lower()) if t in MULTIPLIERS] + (["x"] if exponent else [])
        unit_exponent = max([len(str(MULTIPLIERS.get(t, 10**exponent))) - 1 for t in shown], default=0)
        start, end = m.start(), m.end()
        yield Quantity(
            "amount",
            float(value),
            _currency(m["currency"]),
            start,
            end,
            text[start:end],
            _half_unit(0, unit_exponent),
            bool(shown),
        )


def _percents(text):
    for m in PERCENT.finditer(text):
        read = decimal_of(m["figure"])
        if read is None:
            continue
        number, decimals = read
        if number > 100 and re.fullmatch(r"\d{1,3},\d{3}", m["figure"]) and text[m.end("figure") : m.start("unit")] == " ":
            number, decimals = Decimal(m["figure"].replace(",", ".")), 3  # "26,375 %": a decimal comma, as Germans write
        if m["figure2"] and (second := decimal_of(m["figure2"])):
            start = m.start("sign") if m["sign"] else m.start("figure")
            yield Quantity("percent", float(-number if m["sign"] else number), "%", start, m.end("figure"),
                           text[start : m.end("figure")], _half_unit(decimals), False)  # fmt: skip
            yield Quantity("percent", float(second[0]), "%", m.start("figure2"), m.end(),
                           text[m.start("figure2") : m.end()], _half_unit(second[1]), False)  # fmt: skip
            continue
        yield Quantity("percent", float(-number if m["sign"] else number), "%", m.start(), m.end(),
                       m[0], _half_unit(decimals), False)  # fmt: skip
    for m in PERCENT_WORDS.finditer(text):
        value = words_value(m["words"])
        if value is not None and value <= 1000:  # "four and a half percent": 4.5
            yield Quantity("percent", float(value) + (0.5 if m["half"] else 0), "%", m.start(), m.end(), m[0], 0.5, False)


def _ages(text):
    for pattern, bare in AGES:
        for m in pattern.finditer(text):
            figure = m["figure"]
            if figure[0].isdigit():
                value = float(figure.rstrip("½")) + (0.5 if figure.endswith("½") else 0)
            else:
                value = words_value(figure)
            low, high = BARE_AGES if bare else (1, 120)
            if value is None or not low <= value <= high:
                continue
            start, end = m.start("figure"), m.end("figure")
            yield Quantity("age", float(value), "years", start, end, text[start:end], 0.5, False)


def _years(text):
    for m in YEAR.finditer(text):
        if NOT_YEAR_BEFORE.search(text[: m.start()]):
            continue
        yield Quantity("year", float(m["figure"]), "", m.start(), m.end(), m[0], 0.5, False)


# ---- one figure alone, matching, writing -------------------------------------------------------------------------


def parse_amount(text: str) -> tuple[float, str] | None:
    """One amount alone, with its currency: "CHF 1'800'000" -> (1800000.0, "CHF"); None for anything else."""
    stripped = (text or "").strip()
    found = find_quantities(stripped)
    if len(found) == 1 and found[0].kind == "amount" and found[0].text == stripped.rstrip("."):
        return found[0].value, found[0].unit
    return None


BARE = re.compile(rf"^\s*(?P<sign>[-−])?(?P<figure>{FIGURE})\s?(?P<scale>{SCALE})?\s*$")


def parse_number(text: str) -> float | None:
    """A figure with an optional scale and no unit: "3.2M" -> 3200000.0, "1'800'000" -> 1800000.0, "70" -> 70.0."""
    m = BARE.match(text or "")
    read = m and decimal_of(m["figure"])
    if not read:
        return None
    value = read[0] * Decimal(10) ** (SCALES[m["scale"]] if m["scale"] else 0)
    return float(-value if m["sign"] else value)


def matches(q: Quantity, value: float, unit: str) -> bool:
    """The same unit, and the value within what the figure as written can mean (half a unit of its last digit)."""
    if q.unit != (unit or "") or value is None:
        return False
    return abs(q.value - float(value)) <= q.precision + EPS * max(1.0, abs(q.value))


def _trim(number, places):
    return f"{number:,.{places}f}".rstrip("0").rstrip(".") if places else f"{number:,.0f}"


def format_amount(value: float, unit: str) -> str:
    """One canonical style, read back exactly by find_quantities: the ISO code, then the figure with its scale.

    Whole units (cents under 1,000); "bn" for whole millions from a billion, "M" for whole thousands from a
    million (up to three decimals), "k" for whole thousands, else the figure in full with "," groups:
    "USD 3.2M", "USD 2.24M", "CHF 650k", "EUR 1.2bn", "USD 746,667", "USD 99.5".
    """
    number = float(value)
    sign, number = ("-", -number) if number < 0 else ("", number)
    whole = round(number) if number >= 1000 else round(number, 2)
    if whole >= 1e9 and whole % 1e6 == 0:
        figure = _trim(whole / 1e9, 3) + "bn"
    elif whole >= 1e6 and whole % 1e3 == 0:
        figure = _trim(whole / 1e6, 3) + "M"
    elif whole >= 1e3 and whole % 1e3 == 0:
        figure = _trim(whole / 1e3, 0) + "k"
    else:
        figure = _trim(whole, 0 if float(whole).is_integer() else 2)
    return f"{unit} {sign}{figure}".strip()


def format_percent(value: float) -> str:
    """A percent to three significant digits, never fewer than its whole part: "70%", "44.4%", "0.25%"."""
    number = float(value)
    digits = len(str(int(abs(number)))) if abs(number) >= 1 else 0
    places = max(0, 3 - digits) if abs(number) >= 1 else 2 + max(0, -int(f"{abs(number):e}".split("e")[1]) - 1)
    return _trim(round(number, places), places).replace(",", "") + "%"
