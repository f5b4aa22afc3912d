"""The client's facts read from a problem text, deterministically; and a model's facts checked against the text.

extract(problem) reads, in the order the text states them:
- amounts, percents, ages and years (quantities.py), each labelled from the words around it ("salary of $450k",
  "$400k basis", "a $1.8M house in Zug"); a percent gets a `base` when the text ties it to an amount ("70% of her
  $3.2M portfolio", "of which forty percent", "his $1.9M 401(k) is 80% equities");
- places (places.py), one fact per code and role at its first mention, labelled by role there: residence,
  property location, citizenship, asset location, seat / domicile / situs (a foundation's, company's, fund's or
  trust's: never a citizenship), else place; a market ("Swiss equities") is no place;
- then the case's terms (terms.py): slash allocations and each percent's base and role, people with their ages and
  counts, limits, horizons, and what an amount is for (commitment, liability, income, expense);
- accounts and instruments from the vocabulary kept as data (data/vocabulary.toml, read by vocabulary.py), one
  fact per canonical name at its first mention, value the canonical name and text the words as written ("IRAs",
  "Depot", "munis");
- goals: the clause after "wants to", "would like to", "aims to", "plans to", "goal is to", "hopes to" (any person
  or tense), or the thing wanted ("want a withdrawal order that ...", "are looking for an income of ..."), trigger
  excluded; constraints: the clause from "must", "cannot", "can't", "without", "no more than",
  "at least", "needs to keep", "may not", "is not allowed to", trigger included. A clause ends at a full stop,
  semicolon, colon, question mark, ", ", " but ", or where another goal trigger starts (or, for a goal, a
  constraint trigger); a bound inside a constraint ("must keep at least") does not start a second one.

ground(facts, problem) keeps a model's fact only where the problem bears it out, with the problem's own span.
"""

from __future__ import annotations

import re
from functools import lru_cache

from reasoning.facts import places as placelib
from reasoning.facts import regimes, terms, vocabulary
from reasoning.facts.quantities import find_quantities, matches, parse_amount, parse_number
from reasoning.facts.sheet import NUMERIC, ROLES, Fact

# ---- accounts and instruments -------------------------------------------------------------------------------------

# canonical name -> how it is written (a regex; case-insensitive unless it starts with (?-i:...)), from the data in
# reasoning/facts/data/vocabulary.toml (vocabulary.py): add a name there, not here.
ACCOUNTS, INSTRUMENTS = vocabulary.tables()
# The instruments an amount was labelled "<name> balance" by before the vocabulary grew ("trust balance").
LEGACY_INSTRUMENTS = {
    "exchange fund", "charitable remainder trust", "donor-advised fund", "collar", "prepaid variable forward",
    "covered calls", "ETF", "municipal bonds", "annuity", "family foundation", "GRAT", "trust", "life insurance",
    "mortgage", "Roth conversion",
}  # fmt: skip

# ---- goals and constraints -----------------------------------------------------------------------------------------

GOAL = re.compile(
    r"\b(?:(?:wants?|wanted|wanting|would\s+like|aims?|aimed|aiming|plans?|planned|planning|hopes?|hoped|hoping)"
    r"|(?<=['’])d\s+like|(?:goal|aim|objective|plan)\s+(?:is|was)|(?:goals?|aims?|objectives?)\s*:)\s+to\b"
    # "They want a withdrawal order that ...": the thing wanted is the goal, its article included
    r"|\b(?:wants?|wanted|would\s+like|(?:is|are)\s+looking\s+for)\s+(?=an?\s)",
    re.I,
)
CONSTRAINT = re.compile(
    r"\b(?:must|cannot|can['’]t|can\s+not|without|no\s+more\s+than|at\s+least|needs?\s+to\s+keep|may\s+not|"
    r"(?:is|are)\s+not\s+allowed\s+to|not\s+allowed\s+to)\b",
    re.I,
)
NOT_A_PLAN = re.compile(r"\b(?:a|an|the|this|that|529|savings|pension|\w+-)\s*$", re.I)  # "a plan to", "529 plan to"
ABBREVIATIONS = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Fr|SFr|vs|No|approx|ca|Nr|e\.g|i\.e|etc|incl|Inc|Ltd|p\.a)|\b\w)$")
TRAILING = re.compile(r"(?:[\s,;:]+|\s+(?:and|or|but|while|so|then)\s*)+$", re.I)


def sentence_ends(text):
    """Positions where a clause ends for good: . ? ! ; : followed by a space or the end (not "vs." or "Fr. 9")."""
    ends = []
    for m in re.finditer(r"[.?!;:](?=\s|$)|\n(?=\s*(?:[-*•·]|\d+[.)])\s)", text):  # a list item ends at the next item
        if m[0] == "\n":
            ends.append(m.start())
            continue
        if m[0] == "." and re.search(r"\b(?:min|max|ca|approx)$", text[: m.start()], re.I) and re.match(r"\s+(?:[A-Z]{3}\s?\d|[$€£¥]|\d|S?Fr\.)", text[m.end() :]):
            continue  # "Liquidity min. CHF 10 Mio.": an abbreviation before a figure ends nothing
        if m[0] == "." and ABBREVIATIONS.search(text[: m.start()]):
            following = text[m.end() :].lstrip()
            if not following or not (following[0].isupper() and not text[: m.start()].endswith(("Fr", "SFr"))):
                continue
        if m[0] == "." and re.match(r"\s+[a-z]", text[m.end() :]):  # "Mio. in a Swiss portfolio"
            continue
        ends.append(m.start())
    return ends + [len(text)]


def clauses(problem):
    """Goals and constraints as Facts (label and kind "goal" or "constraint", value the clause as written)."""
    triggers = [(m.start(), m.end(), "goal") for m in GOAL.finditer(problem) if not _a_plan_noun(problem, m)]
    triggers += [(m.start(), m.end(), "constraint") for m in CONSTRAINT.finditer(problem)]
    triggers.sort()
    ends = sentence_ends(problem)
    facts, open_until = [], -1
    for start, end, kind in triggers:
        if start < open_until:
            if kind == "constraint" or facts[-1].kind == "goal":
                continue  # a bound inside a constraint, or a trigger already closed into a clause
        clause_start = end if kind == "goal" else start
        while clause_start < len(problem) and problem[clause_start].isspace():
            clause_start += 1
        stop = min(e for e in ends if e >= clause_start)
        cut_by = None
        for later_start, _later_end, later_kind in triggers:
            if clause_start < later_start < stop and (kind == "goal" or later_kind == "goal"):
                stop, cut_by = later_start, later_kind
                break
        comma = re.search(r",\s|\s+but\s", problem[clause_start:stop])
        later = None
        if comma:
            # "would like to withdraw $120k a year, staying within the bracket, and to give $30k": a second goal
            later = AND_TO.search(problem, clause_start + comma.start(), stop) if kind == "goal" else None
            stop = clause_start + comma.start()
        words = TRAILING.sub("", problem[clause_start:stop])
        if not words.strip():
            continue
        if kind == "goal" and cut_by == "constraint" and len(words.split()) == 1:
            continue  # "wants to keep at least two million francs liquid": the bound says it all, "keep" is no goal
        stop = clause_start + len(words)
        if kind == "goal" and (more := AND_TO.search(words)):  # "hand over the AG ... and to treat the others equally"
            first = TRAILING.sub("", words[: more.start()])
            second_start = clause_start + more.end()
            facts.append(Fact(kind, kind, first, "", first, clause_start, clause_start + len(first)))
            words, clause_start = problem[second_start:stop], second_start
        facts.append(Fact(kind, kind, words, "", words, clause_start, stop))
        open_until = stop
        if later and (second := _clause_from(problem, later.end(), ends)):
            facts.append(second)
            open_until = second.end
    return facts


def _clause_from(problem, start, ends):
    """The goal said from `start` to its sentence's end or its next comma ("and to give $30k a year to charity")."""
    stop = min(e for e in ends if e >= start)
    comma = re.search(r",\s|\s+but\s", problem[start:stop])
    words = TRAILING.sub("", problem[start : start + comma.start() if comma else stop])
    return Fact("goal", "goal", words, "", words, start, start + len(words)) if words.strip() else None


AND_TO = re.compile(r",?\s+and\s+to\s+(?=[a-z])")


def _a_plan_noun(problem, m):
    return m[0].lower().startswith("plan") and bool(NOT_A_PLAN.search(problem[: m.start()]))


# ---- named things --------------------------------------------------------------------------------------------------


def named(problem, table, kind):
    """One fact per canonical name of `table`, at its first mention; the longest writing wins where two overlap."""
    hits = []
    for canonical, pattern in table.items():
        for m in re.finditer(pattern, problem, re.I):
            hits.append((m.start(), -(m.end() - m.start()), m.end(), canonical))
    hits.sort()
    taken, seen, facts = [], set(), []
    for start, _length, end, canonical in hits:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        if canonical in seen:
            continue
        seen.add(canonical)
        facts.append(Fact(canonical, kind, canonical, "", problem[start:end], start, end))
    return facts


def named_things(problem):
    """Accounts and instruments; an instrument overlapping an account ("pension fund") is the account, unless it is
    the longer writing ("Pensionskasse buy-in": the account and the buy-in)."""
    accounts = named(problem, ACCOUNTS, "account")
    instruments = [
        f
        for f in named(problem, INSTRUMENTS, "instrument")
        if not any(f.start < a.end and a.start < f.end and f.end - f.start <= a.end - a.start for a in accounts)
    ]
    kept = []
    for f in instruments:  # "the Hofmann Privatstiftung ... the foundation holds": the family foundation again
        if not any(g.start < f.start and str(g.value).endswith(" " + str(f.value)) for g in kept):
            kept.append(f)
    return accounts + kept


# ---- places ---------------------------------------------------------------------------------------------------------

PERSON = (
    r"client|clients|kunde|kundin|mandant|mandantin|cliente?|couple|family|retiree|retirees|grandparents|investor|"
    r"widow|widower|founder|exec|executive|entrepreneur|household|doctor|physician|engineer|patriarch|matriarch|"
    r"professional|owner|heir|heiress|banker|surgeon|lawyer|partner|he|she|they|we|i"
)
RELATIVE = r"son|sons|daughter|daughters|child|children|kids|brother|sister|mother|father|parents|nephew|niece|grandchild\w*|grandkids|eldest|youngest"
HOME = r"apartment|flat|house|home|villa|chalet|condo|building|property|properties|real\s+estate|mehrfamilienhaus|haus|wohnung|immobilie|appartement|maison|estate|farm|ranch|cabin|residence"
FINANCIAL = r"account|accounts|bank|broker|brokerage|custodian|portfolio|depot|securities|holdings|assets|equities|stocks|shares|bonds|fund|funds|custody"

CITIZEN_BEFORE = re.compile(r"\b(?:is|are|am|was|both)\s+(?:a\s+|also\s+)?$|\b(?:citizen|national)s?\s+of\s+(?:the\s+)?$", re.I)
CITIZEN_AFTER = re.compile(r"^\s+(?:passport|citizen|citizens|citizenship|national|nationality)\b", re.I)
HOME_BEFORE = re.compile(rf"\b(?:{HOME})s?\b[^.;,]{{0,30}}?\b(?:in|near|at|on|outside)\s+(?:the\s+)?$", re.I)
# "Washington estate tax", "Swiss real estate law": a rule, not a home there
HOME_AFTER = re.compile(rf"^\s+(?:{HOME})\b(?!\s+(?:tax|taxes|duty|law|laws|rules?|planning|plan)\b)", re.I)
ASSET_BEFORE = re.compile(rf"\b(?:{FINANCIAL})\b[^.;,]{{0,30}}?\b(?:in|at|with)\s+(?:the\s+)?$", re.I)
ASSET_AFTER = re.compile(rf"^\s+(?:\w+\s+)?(?:{FINANCIAL})\b", re.I)
LIVES_BEFORE = re.compile(
    r"\b(?:lives?|living|lived|resides?|residing|resident|based|domiciled|wohnt|lebt|wohnhaft|habite|domicilié\w*)"
    r"\s+(?:in|at|à)\s+(?:the\s+)?$",
    re.I,
)
RESIDENT_AFTER = re.compile(r"^(?:-based|\s+(?:resident|residents|based)\b)", re.I)
# A place of the client's past is no tie: "from her years in Munich", "he grew up in Turin", "formerly of Lyon".
PAST_BEFORE = re.compile(
    r"\b(?:years|time|days|decades|career|childhood|youth)\s+(?:in|at)\s+(?:the\s+)?$"
    r"|\b(?:formerly|previously|once|used\s+to\s+(?:live|work)|grew\s+up|was\s+born|born|studied|worked)\b"
    r"[^.;]{0,30}?\b(?:in|at|of)\s+(?:the\s+)?$",
    re.I,
)
PERSON_BEFORE = re.compile(rf"\b(?:{PERSON})\s+(?:in|from|de|aus|à)\s+(?:the\s+)?$", re.I)
PERSON_AFTER = re.compile(rf"^\s+(?:[\w-]+\s+){{0,2}}?(?:{PERSON})\b", re.I)
FIRST_WORDS = re.compile(r"(?:^|[.;:]\s*)(?:(?:A|An|Our|New|new|The)\s+)*(?:(?:client|Kunde|Kundin)\s*,\s*)?$")
RELATIVE_IN_SENTENCE = re.compile(rf"\b(?:{RELATIVE})\b", re.I)


ENTITY = (
    r"(?:family\s+)?(?:foundation|stiftung|fondation|trust|company|firm|corporation|corp|holding|GmbH|AG|SA|LLC|"
    r"S\s*corp|C\s*corp|partnership|LP|FLP|KG|endowment|charity|fund)"
)
COMPANY = r"company|firm|corporation|corp|holding|GmbH|AG|SA|LLC|partnership|LP|FLP|KG"
ENTITY_AFTER = re.compile(rf"^(?:-based)?\s+(?:[\w-]+\s+){{0,2}}?{ENTITY}\b", re.I)
ENTITY_BASED = re.compile(
    rf"\b{ENTITY}\b(?:[^.;,]{{0,25}}\b(?:based|domiciled|registered|incorporated|seated|headquartered|established|set\s+up))?\s+in\s+(?:the\s+)?$",
    re.I,
)
OPENING_NAME = re.compile(r"^\s*(?:[A-ZÀ-Ý][\w'-]*\s+){1,3}(?:\(\d{1,3}\)|,\s*(?:\d{1,3}|[a-z-]+)\s*,)?[\s,:(]*(?:[a-z]+\s+){0,4}$")
ENTITY_OPENING = re.compile(rf"\b{ENTITY}\b[^.;]{{0,40}}$", re.I)
PLACE_ROLES = {"residence": "residence", "situs": "situs", "citizenship": "citizenship", "property location": "property",
               "asset location": "assets", "domicile": "domicile", "seat": "seat", "place": ""}  # fmt: skip


MARKET_AFTER = re.compile(
    r"^\s+(?:(?:small|mid|large|blue)[- ]?caps?\s+|listed\s+|government\s+|corporate\s+|dividend\s+)?(?:equit\w*|stocks?|shares|bonds?|"
    r"tech|treasur\w*|gilts|real\s+estate|REITs?|munis|large-caps|small-caps|blue\s+chips|dividend|index|market|"
    r"exposure|dollars?|francs?|government\s+bonds|property\s+funds?|Bunds)\b",
    re.I,
)


def place_facts(problem, markets=False):
    """One place fact per code and role at its first mention, labelled by its role there; a market ("Swiss
    equities") is no place unless `markets` (the old sets' convention counted it)."""
    facts, seen = [], set()
    ends = sentence_ends(problem)
    for place in placelib.find_places(problem):
        if markets:
            pass
        elif MARKET_AFTER.match(problem[place.end :]) and placelib.is_demonym(place.text) or re.fullmatch(r"US|UK|EU", place.text) and MARKET_AFTER.match(problem[place.end :]):
            continue  # "Swiss equities", "US tech": a market, not a place of the client's
        role = _role(problem, place, ends)
        if place.code in seen and (role == "place" or (place.code, role) in seen):
            continue  # one fact per place and role, at its first mention ("Italian" citizen, "Bologna" home)
        seen.add(place.code)
        seen.add((place.code, role))
        opening = problem[: place.start]
        if role == "place" and not facts and place.start < ends[0] and not RELATIVE_IN_SENTENCE.search(opening):
            if re.search(rf"\b(?:{PERSON})\b", opening, re.I) or OPENING_NAME.match(opening):
                role = "residence"  # an advisor's note opens with the client: "Widow, 81, Geneva.", "Claire (63), Lyon"
            elif ENTITY_OPENING.search(opening):
                role = "seat"  # "St. Brendan Hospital Foundation, Ohio:"
        facts.append(Fact(role, "place", place.code, "ISO 3166", place.text, place.start, place.end, role=PLACE_ROLES[role]))
    return facts


def _role(problem, place, ends):
    sentence_start = max([e + 1 for e in ends if e < place.start], default=0)
    sentence_end = min(e for e in ends if e >= place.end)
    before = problem[sentence_start : place.start]
    after = problem[place.end : sentence_end]
    demonym = placelib.is_demonym(place.text)
    # A foundation, a trust or a company is no person: a nationality next to it is its seat, never a citizenship.
    if (entity := ENTITY_AFTER.match(after)) or (entity := ENTITY_BASED.search(before)):
        if re.search(r"\btrust\b", entity[0], re.I):
            return "situs"  # a trust's place is its situs
        return "domicile" if re.search(r"\bfund\b", entity[0], re.I) else "seat"  # a foundation's or company's seat
    if (demonym and CITIZEN_BEFORE.search(before)) or CITIZEN_AFTER.match(after):
        return "citizenship"
    # A people next to the client: a nation's is citizenship ("Deutsche Kundin"), a region's residence ("Zürcher").
    next_to_person = PERSON_AFTER.match(after) or re.search(rf"\b(?:{PERSON})\s+$", before, re.I)
    if demonym and (next_to_person or FIRST_WORDS.search(before)):
        return "residence" if "-" in place.code else "citizenship"
    if HOME_BEFORE.search(before) or HOME_AFTER.match(after):
        return "property location"
    amount_before = any(q.kind == "amount" and sentence_start <= q.start < place.start for q in _quantities(problem))
    if amount_before and (ASSET_BEFORE.search(before) or ASSET_AFTER.match(after)):
        return "asset location"
    if PAST_BEFORE.search(before):
        return "place"  # a past address: no tie of the client's now
    if LIVES_BEFORE.search(before):
        return "place" if RELATIVE_IN_SENTENCE.search(before) else "residence"
    if re.search(r"[A-ZÀ-Ý]\w+\s*\(\s*\d{1,3}\s*\)\s*,\s*$", before) or re.search(r"[A-ZÀ-Ý][\w'’]+,\s*\d{2}\s*,\s*$", before):
        return "residence"  # "Client Alicia (52), Denver", "Megan O'Neill, 52, Portland": a person's town, as noted
    if RESIDENT_AFTER.match(after) or PERSON_BEFORE.search(before) or PERSON_AFTER.match(after):
        return "residence"
    return "place"


@lru_cache(maxsize=16)
def _quantities(problem):
    """The problem's quantities, read once for its figures and its places' roles (a tuple: never changed)."""
    return tuple(find_quantities(problem))


# ---- labels for figures ---------------------------------------------------------------------------------------------

# head words an amount is "of": the longest first; the label is the value.
AMOUNT_NOUNS = {
    "cost basis": "cost basis", "basis": "cost basis", "salary": "salary", "base salary": "salary",
    "bonus": "bonus", "income": "income", "rental income": "rental income", "pension": "pension",
    "social security": "Social Security benefit", "portfolio": "portfolio", "net worth": "net worth",
    "estate": "estate", "house": "house", "home": "home", "main home": "main home", "apartment": "apartment",
    "flat": "flat", "villa": "villa", "chalet": "chalet", "condo": "condo", "building": "building",
    "property": "property", "real estate": "real estate", "securities": "securities", "cash": "cash",
    "savings": "savings", "stake": "stake", "shares": "shares", "stock": "stock", "company stock": "company stock",
    "employer stock": "employer stock", "business": "business", "proceeds": "proceeds", "gains": "gains",
    "unrealized gains": "unrealized gains", "unrealised gains": "unrealised gains", "loan": "loan", "debt": "debt",
    "gift": "gift", "gifts": "gifts", "inheritance": "inheritance", "assets": "assets", "free assets": "free assets",
    "total assets": "total assets", "liquid assets": "liquid assets", "mandate": "mandate", "holdings": "holdings",
    "spending": "spending", "expenses": "expenses", "living costs": "living costs", "contribution": "contribution",
    "donation": "donation", "bonds": "bonds", "equities": "equities", "fund": "fund", "policy": "policy",
    "death benefit": "death benefit", "rsus": "RSUs", "options": "options", "dividends": "dividends",
    "rent": "rent", "allowance": "allowance", "exemption": "exemption", "deduction": "deduction",
    "purchase price": "purchase price", "sale price": "sale price", "value": "value", "worth": "value",
    "market value": "value", "verkehrswert": "value", "liquidity": "liquidity", "reserve": "reserve",
    "family llc": "family LLC", "llc": "LLC", "company": "company", "gmbh": "GmbH", "trust": "trust",
    "account": "account balance", "accounts": "account balance", "bank": "bank account",
    "funds": "funds", "shares": "shares", "salary income": "salary", "loans": "loans", "spending need": "spending",
    "wealth": "wealth", "endowment": "endowment", "mehrfamilienhaus": "building", "haus": "house", "appartement": "apartment", "stocks": "stocks", "land": "land", "ranch": "ranch", "practice": "practice", "firm": "firm",
}  # fmt: skip
VERBS = {
    "earns": "salary", "earning": "salary", "makes": "salary", "spends": "spending", "spend": "spending", "spending": "spending",
    "inherited": "inheritance", "sold": "sale price", "bought": "purchase price", "paid": "payment",
    "gave": "gifts", "gifted": "gifts", "draw": "drawing", "withdraw": "withdrawal", "contributes": "contribution",
    "invest": "investment", "brought": "proceeds", "brachte": "proceeds", "give": "giving", "gives": "giving",
}  # fmt: skip
FILLER = r"(?:a|an|the|her|his|their|its|it|my|our|of|in|into|with|about|roughly|around|approximately|some|total|totalling|worth|near|nearly|almost|over|under|is|was|are|at|per|each|this|that|year|more|less|than|least|most|up|to|below|above|:)"
_NOUNS = "|".join(re.escape(n) for n in sorted(AMOUNT_NOUNS, key=len, reverse=True))
_NAMES = "|".join(f"(?:{p})" for p in list(ACCOUNTS.values()) + list(INSTRUMENTS.values()))
ADJECTIVE = r"(?:(?:taxable|joint|private|local|global|liquid|index|tax-free|personal|listed|main|holiday|second|vacation|rental|traditional|general|current|premium|pre-IPO|Swiss|US|German|euro|Italian|government|tech|(?-i:[A-Z][\w-]*))\s+){0,2}(?:(?!(?:FILLER|plus|and|or|but|with|then|while|if|so)\b)[a-z][\w-]*\s+)??".replace("FILLER", FILLER)
NOUN_AFTER = re.compile(rf"^\s*(?:{FILLER}\s+){{0,3}}{ADJECTIVE}(?P<noun>{_NOUNS}|{_NAMES})(?!\w)", re.I)
TOTAL_NOUN_BEFORE = re.compile(rf"\b(?P<noun>{_NAMES})\s+(?:\w+\s+){{0,3}}$", re.I)  # "3a accounts with about"
TOTAL_AFTER = re.compile(r"^\s*(?:across|in\s+total|total|combined|altogether|overall|split\s+between)\b", re.I)
# words between a thing and its figure: "pension fund holds", "Hypothek noch", "a flat in Zug (", "spending will be"
LINK = r"(?:holds?|pays?|has|had|be|will|were|still|noch|über|it|for|balance|accounts?|vesting|approx\.?)"
PLACE_WORDS = r"(?:(?:in|near|at|on|à)\s+(?:Lake\s+)?[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý][\w'’-]*)?\s*)"
NOUN_BEFORE = re.compile(
    rf"\b(?P<noun>{_NOUNS}|{_NAMES})\s*(?:(?:(?:{FILLER}|{LINK})(?![\w(])|\(|this|year)\s*|{PLACE_WORDS}){{0,3}}$", re.I
)
VERB_BEFORE = re.compile(rf"\b(?P<verb>{'|'.join(VERBS)})\s+(?:(?:{FILLER}|for)\s+){{0,2}}$", re.I)
# "sold her dental practice for", "a villa near Nice bought for", "buy a flat for about": the price of a deal
DEAL_BEFORE = re.compile(
    r"\b(?P<verb>sold|sells?|selling|bought|buys?|buying|purchased?)\b[^.;,]{0,45}?\bfor\s+(?:(?:about|around|roughly|approx\.?|some)\s+)?$",
    re.I,
)
# "a chalet in Verbier worth", "a firm valued at around": the thing before "worth" is what the figure is
WORTH_BEFORE = re.compile(
    rf"(?:^|\b(?:a|an|the|her|his|their|its|my|our|owns|also)\s+|[:,]\s*)(?!(?:a|an|the|her|his|their|its|my|our)\b)(?P<thing>[\w&'’-]+(?:\s+(?!(?:is|are|was|were)\b)[\w&'’-]+)?)(?<!\bnet)\s+{PLACE_WORDS}?"
    r"(?:(?:is|are|was|were)\s+)?(?:worth|valued(?:\s+at)?|insured\s+for)\s+(?:(?:about|around|roughly|approx\.?|some|maybe|near|nearly|close\s+to|almost)\s+)?$",
    re.I,
)
PERIOD_AFTER = re.compile(r"^\s*(?:a|per|each|every|/)\s*(?P<period>year|month|annum|yr|mo)\b|^\s*(?P<pa>p\.a\.)", re.I)


def _canonical(noun):
    for canonical, pattern in ACCOUNTS.items():
        if re.fullmatch(pattern, noun, re.I):
            return canonical, True
    for canonical, pattern in INSTRUMENTS.items():
        if re.fullmatch(pattern, noun, re.I):  # "$2M in a GRAT": the GRAT's; "$300k of US REITs": as written
            return (canonical, True) if canonical in LEGACY_INSTRUMENTS else (_words(noun), False)
    return AMOUNT_NOUNS.get(noun.lower(), _words(noun)), False


def _words(noun):
    return " ".join(w if any(c.isupper() for c in w[1:]) or w.isupper() else w.lower() for w in noun.split())  # "UK flat", "PEA"


# "His CPF balance is", "a Bausparvertrag of", "Distributions last year were", "Tagesgeld" (a list item): the words
# just before a figure name it when no known noun or verb does; they follow a clause start, "a", "his", "and", ...
LINK_AFTER_NAME = re.compile(
    r"\s+(?:(?:is|are|was|were|of|de)\s+)?(?:(?:about|roughly|around|approx\.?|some|nearly|almost)\s+)?$", re.I
)
NAME_START = {"a", "an", "the", "his", "her", "their", "its", "my", "our", "and", "plus", "also", "two", "three", "both"}
NOT_A_NAME = set(
    "a an the of in at to is are was were be been will would must need needs keep keeps has have had holds hold "
    "plus and or but with about roughly around more less than least most over under below above up some nearly "
    "almost also another other each per from for into by on his her their its my our this that these those it "
    "he she they we i client cliente clients couple kunde kundin mandant mandantin total each one two three "
    "davon dont zusammen together maybe now still only cannot can't put down fall let sell buy pay give take spend "
    "invest move leave approx approx. de near".split()
)


def _named_before(before):
    words = re.sub(LINK_AFTER_NAME, "", re.sub(r"\s*\(\s*$", " ", " " + before)).split()  # "the two VCTs ("
    name = []
    while words and len(name) < 3 and re.fullmatch(r"[A-Za-zÀ-ÿ][\w'’.-]*", words[-1]):
        acronym = len(words[-1]) > 1 and words[-1].isupper()  # "PER", not "per"
        if not acronym and (words[-1].lower() in NOT_A_NAME or words[-1].lower().rstrip(".") in NOT_A_NAME):
            break
        name.insert(0, words.pop())
    if not name or (words and words[-1].lower() not in NAME_START and not words[-1].endswith((":", "("))):
        return ""
    known = [i for i, w in enumerate(name) if w.lower() in AMOUNT_NOUNS]
    if known:
        name = name[: known[-1] + 1]  # "Annual expenses run around": the name ends at its noun, before the verb
    return " ".join(w if any(c.isupper() for c in w[1:]) else w.lower() for w in name)


FLOOR_BEFORE = re.compile(
    rf"\b(?P<noun>{_NOUNS})\s+(?:(?:to|must|may|should|can|cannot|can't|not|never|let)\s+){{0,3}}(?:falls?|drops?|go|goes)\s+(?:below|under)\s+$", re.I
)
OWNER_OF_PARENTHESIS = re.compile(rf"\b(?P<noun>{_NOUNS}|{_NAMES})\s*(?:{PLACE_WORDS})?$", re.I)
BUY_BEFORE = re.compile(r"\b(?:buy|buys|buying|purchase|purchasing|fund|funding)\s+(?:(?:a|an|the|their|his|her|its)\s+)?(?:\w+\s+)?$", re.I)
NOW_BEFORE = re.compile(r"\(\s*now\s+(?:(?:maybe|about|around|roughly|perhaps|worth|probably)\s+)*$", re.I)
STARTS_AT_BEFORE = re.compile(rf"\b(?P<noun>{_NOUNS})\s+(?:starts?|begins?|kicks\s+in)\b[^.;,()]{{0,25}}\bat\s+$", re.I)
KEEP_BEFORE = re.compile(r"\bkeep\s+(?:at\s+least\s+)?$", re.I)
# "the X endowment in Austin, Texas, stands at": a verb of size says the figure is its subject's, however far back
SIZE_VERB_BEFORE = re.compile(
    r"\b(?:stands?|stood|sits?|totals?|totall?ed|amounts?\s+to|comes?\s+to)\s+(?:at\s+)?(?:(?:about|around|roughly|approx\.?|some|nearly|almost|just\s+over|just\s+under)\s+)?$",
    re.I,
)
# "The Fondation X in Geneva manages CHF 62M": what a body manages or oversees is its assets
MANAGES_BEFORE = re.compile(r"\b(?:manages?|managed|oversees?|administers?|stewards?)\s+(?:(?:about|around|roughly|some|nearly|almost)\s+)?$", re.I)
# "$5 million bond ladder,", "a $5 million bond ladder and $2 million in T-bills": the words up to a mark or "and"
WORDS_AFTER = re.compile(r"^\s+(?P<np>[a-z][\w-]*(?:\s+(?!and\b|or\b)[a-z][\w-]*)?)(?=\s*(?:$|[.,;:)]|\s(?:and|or|plus)\s))")
NOT_A_THING_AFTER = set(
    "net netto gross brutto together combined total overall apiece annually monthly yearly today now ago "
    "before after later yet already invested liquid left remaining outstanding last next this year years month "
    "months".split()
)
IN_AFTER = re.compile(
    r"^\s*(?:in|of)\s+(?:(?:a|an|the|her|his|their|its|my|our)\s+)?(?P<np>\d{3}\([a-z]\)|[A-Za-zÀ-ÿ][\w'’-]*(?:\s+[A-Za-zÀ-ÿ][\w'’-]*)?)(?=\s*(?:$|[.,;:()]|\s(?:and|with|at|for|from|in|plus)\b))",
    re.I,
)



def _a_place(words):
    """ "in Malaysia" says where a figure is, not what it is."""
    return any(p.start == 0 and p.end == len(words) for p in placelib.find_places(words))


def _nearer_before(before, after_match):
    """A noun right against the figure before it ("Salary $450k plus RSUs") beats a later one after it; not one a
    preposition of movement parts from it ("equities to a CHF 18m family portfolio": the equities go into it)."""
    m = NOUN_BEFORE.search(before)
    if not m or PARTED.search(before[m.end("noun") :]):
        return False
    return len(before) - m.end("noun") < after_match.start("noun")


PARTED = re.compile(r"\b(?:to|into|onto|towards?|from|than|versus|vs)\b", re.I)


def amount_label(problem, q, ends):
    """The words an amount is of: the noun right after it, else the noun or verb just before it in its clause."""
    sentence_start = max([e + 1 for e in ends if e < q.start], default=0)
    sentence = problem[sentence_start : q.start]
    before = sentence[max(sentence.rfind(","), sentence.rfind(";")) + 1 :]
    sentence_before = before
    if not before.strip() and problem[:sentence_start].endswith(":"):  # a note: "Cash: $250k"
        heading = problem[max([e + 1 for e in ends if e < sentence_start - 1], default=0) : sentence_start]
        if re.fullmatch(r"\s*[^\W\d][\w'’ -]{0,40}:", heading):
            before = heading + " "  # a heading names a figure only where nothing after it does
    after = problem[q.end : min(e for e in ends if e >= q.end)]
    if q.end - 1 in ends:
        after = ""  # "CHF 310 Mio. Policy 35/35": the figure's own period ends its sentence
    after_clause = re.split(r"[,;]", after)[0]
    label = ""
    if TOTAL_AFTER.match(after_clause):
        label = "total assets"
        if m := TOTAL_NOUN_BEFORE.search(before) or NOUN_BEFORE.search(before):  # "IRAs $2.2M combined"
            noun, is_account = _canonical(m["noun"])
            label = f"{noun} balance" if is_account else noun
    elif m := WORTH_BEFORE.search(before):
        noun, is_account = _canonical(m["thing"])
        label = f"{noun} balance" if is_account else noun
    elif m := DEAL_BEFORE.search(before):
        label = "sale price" if m["verb"].lower().startswith("s") else "purchase price"
    elif (m := NOUN_AFTER.match(after_clause)) and not (before.strip() and _nearer_before(sentence_before, m)):
        noun, is_account = _canonical(m["noun"])
        label = f"{noun} balance" if is_account else noun
    elif NOW_BEFORE.search(before) and (nouns := list(re.finditer(rf"\b(?:{_NOUNS})\b", before, re.I))):
        label = f"{_canonical(nouns[-1][0])[0]} value"  # "a villa bought for 850 000 € (now maybe €1.4m)"
    elif m := STARTS_AT_BEFORE.search(before):  # "Social Security starts next year at $3,800"
        label = _canonical(m["noun"])[0]
    elif m := FLOOR_BEFORE.search(before):  # "liquid assets fall below $400k"
        noun, _is_account = _canonical(m["noun"])
        label = f"{noun} floor"
    elif WITH_BEFORE.search(before) and (m := IN_AFTER.match(after_clause)) and _a_thing(m["np"]):
        label = _as_written(m["np"])  # "an account with $180k of unrealised losses": the losses, not the account
    elif m := NOUN_BEFORE.search(before):
        noun, is_account = _canonical(m["noun"])
        label = f"{noun} balance" if is_account else noun
        if re.match(r"\s+with\s*$", before[m.end("noun") :]) and BUY_BEFORE.search(before[: m.start("noun")]):
            label = f"{noun} contribution"  # "help their son buy a house with $200k": money toward it, not its price
    elif (m := SIZE_VERB_BEFORE.search(before)) and (thing := _subject_noun(sentence[: len(sentence) - len(before) + m.start()])):
        label = thing
    elif MANAGES_BEFORE.search(before):
        label = "managed assets"  # not the bare "assets", which a later pass names from the words before it
    elif KEEP_BEFORE.search(before) and re.match(r"\s+liquid\b", after_clause):  # "keep Fr. 400'000 liquid"
        label = "liquidity reserve"
    elif KEEP_BEFORE.search(before) and (m := re.match(r"\s+in\s+(?:the\s+)?(\w[\w\s]*?)(?=\s+(?:for|to|as)\b|$)", after_clause)) and _a_place(m[1]):
        label = "reserve"  # "keep RM 5 million in Malaysia for ..."
    elif m := VERB_BEFORE.search(before):
        label = VERBS[m["verb"].lower()]
    elif thing := _named_before(before):
        label = thing
    elif (m := IN_AFTER.match(after_clause)) and _a_thing(m["np"]):  # "$2 million in T-bills", "S$2.4m of S-REITs"
        label = _as_written(m["np"])
    elif m := WORDS_AFTER.match(after_clause):  # "ISOs with a $2.1M spread.", "$5 million bond ladder,"
        if not any(w.lower() in NOT_A_NAME or w.lower() in NOT_A_THING_AFTER for w in m["np"].split()):
            label = m["np"].lower()
    if not label:
        return "amount"
    if label == "value" and (m := OWNER_OF_PARENTHESIS.search(sentence[: sentence.rfind("(")])) and "(" in sentence:
        label = f"{_canonical(m['noun'])[0]} value"  # "a building in Leipzig (Verkehrswert EUR 3.4M", "stock (basis $30k, value $200k"
    if (p := PERIOD_AFTER.match(after)) and not label.startswith(("annual", "monthly")):
        label = ("monthly " if (p["period"] or "").lower().startswith("mo") else "annual ") + label
    return label


WITH_BEFORE = re.compile(r"\bwith\s+(?:about\s+|roughly\s+|some\s+|around\s+)?$", re.I)


def _a_thing(words):
    """Words after "in"/"of" that name a thing: no function word, no place ("in T-bills", not "in Zurich")."""
    return not any(w.lower() in NOT_A_NAME for w in words.split()) and not _a_place(words)


def _as_written(words):
    """A label in lower case, but a word with capitals inside as written ("S-REITs", "T-bills")."""
    return " ".join(w if any(c.isupper() for c in w[1:]) else w.lower() for w in words.split())


def _subject_noun(words):
    """The last known noun or account in the words before a verb of size ("the endowment in Austin, Texas,")."""
    nouns = list(re.finditer(rf"\b(?P<noun>{_NOUNS}|{_NAMES})(?!\w)", words, re.I))
    if not nouns:
        return ""
    noun, is_account = _canonical(nouns[-1]["noun"])
    return f"{noun} balance" if is_account else noun


RETIRE = re.compile(r"\bretir\w*\b[^.;,]{0,20}$", re.I)
RELATIVE_BEFORE = re.compile(rf"\b(?P<who>{RELATIVE}|husband|wife|spouse|partner)\b[^.;,]{{0,20}}$", re.I)
YEAR_WORDS = {
    "retir": "retirement year", "mov": "move year", "relocat": "move year", "bought": "purchase year",
    "purchas": "purchase year", "found": "founding year", "gift": "gift year", "sold": "sale year", "sale": "sale year",
    "lockup": "lockup end", "vest": "vesting year", "inherit": "inheritance year", "born": "birth year",
}  # fmt: skip


def age_label(problem, q, ends, count):
    sentence_start = max([e + 1 for e in ends if e < q.start], default=0)
    before = problem[sentence_start : q.start]
    if RETIRE.search(before):
        return "retirement age"
    if m := RELATIVE_BEFORE.search(before):
        return f"{m['who'].lower()}'s age"
    if re.search(r"\b(?:from|at)\s+age\s*$", before, re.I):
        return "start age"
    if re.search(r"\b\w+\s+at\s*$", before) and count:
        return re.search(r"\b(\w+)\s+at\s*$", before)[1].lower() + " age"
    if count and (m := re.search(r"\b(he|she)\s+(?:is|was|'s)\s*$", before, re.I)):
        return "his age" if m[1].lower() == "he" else "her age"
    return "age"


def year_label(problem, q, ends):
    sentence_start = max([e + 1 for e in ends if e < q.start], default=0)
    before = problem[sentence_start : q.start].lower()
    best, at = "year", -1
    for stem, label in YEAR_WORDS.items():
        position = before.rfind(stem)
        if position > at:
            best, at = label, position
    return best


PERCENT_OF = re.compile(r"^\s*of\s+(?:(?:her|his|their|the|its|our|my|this|that|these|those|total)\s+)?", re.I)
OF_THAT = re.compile(r"^\s*of\s+(?:that|it|this|them|which)\b", re.I)
OF_FRONTED = re.compile(r"^\s*Of\s+([^,;]{1,60}),\s*(?:(?:about|roughly|around|some|nearly|almost|over|only)\s+)?$")
# "of which 60%", "of which he plans to take 50 %": the percent is of the amount before "of which"
OF_WHICH_BEFORE = re.compile(r"\bof\s+which\s+(?:[\w'’-]+\s+){0,5}$|\b(?:davon|dont|di\s+cui)\s+$", re.I)  # de, fr, it
IS_BEFORE = re.compile(r"\s(?:is|are|was|sits|invested)\s+(?:(?:about|roughly|around|already|now|still|only)\s+)?$", re.I)
THING_AFTER = re.compile(
    r"^\s*(?:(?:is|are|sits?|sit|was|invested|held)\s+)?(?:(?:already|currently|still|mostly|largely)\s+)?(?:(?:in|of|en|au|aux|in|im|dans)\s+)?(?:(?:her|his|their|the|a|an|one|its|local|inherited|any|single|each|every|some)\s+)*"
    r"(?!(?:after|before|over|for|from|since|until|by|to|and|or|in|of|is|are|overall|a|the|now|then|year|month|annum|"
    r"within|during|next|per|each|every|this|annually|yearly|while|against|versus|vs|compared)\b)"
    r"(?P<thing>[A-Za-zÀ-ÿ&'’.-]+(?:\s+(?!in\b|of\b|and\b|with\b|for\b|to\b|by\b|is\b|are\b|on\b|at\b|a\b|the\b|against\b|versus\b|vs\b|compared\b|back\b|toward\b|towards\b)[A-Za-zÀ-ÿ&'’.-]+){0,2})",
)
NOUN_JUST_BEFORE = re.compile(r"(?:^|\s)(\w+)\s+(?:of\s+)?$")
NOT_A_THING = {"is", "at", "to", "of", "and", "about", "roughly", "around", "by", "than", "least", "most"}
LIMIT_BEFORE = re.compile(r"\b(?:no\s+more\s+than|more\s+than|at\s+most|max(?:imum)?|cap|limit|up\s+to)\b[^.;,]{0,25}$", re.I)
# "get the single-stock position below 20%", "bring equities under 60%": a bound the client sets.
BOUND_BEFORE = re.compile(
    r"\b(?:get|gets|getting|bring|brings|bringing|cut|cuts|cutting|reduce|reduces|reducing|trim|trims|keep|keeps|"
    r"keeping|take|takes|taking)\s+(?P<np>[^.;,]{1,40}?)\s+(?:below|under|beneath)\s+$",
    re.I,
)
DETERMINERS = {"a", "an", "the", "her", "his", "their", "its", "our", "my", "this", "that", "all", "of"}
# "the 3.8% NIIT", "a 40% inheritance tax": the percent is the rule's rate, not a share of something.
RATE_THING = re.compile(
    r"(?:\b(?:tax|taxes|surtax|levy|duty|rate|fee|fees|charge|yield|coupon)$|^(?-i:[A-Z]{2,5})$)", re.I
)
TARGET_BEFORE = re.compile(r"\btarget\w*\b[^.;]{0,40}$", re.I)


PERCENT_SUBJECT = re.compile(
    r"\b(?P<np>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)\s+(?:is|are|was|were|above|below|under|over|of)\s+"
    r"(?:(?:at\s+least|at\s+most|about|roughly|around|only|no\s+more\s+than)\s+)?$",
    re.I,
)


CLASS_TO_TARGET = re.compile(
    r"\b(?P<np>equit\w*|stocks?|bonds?|cash|gold|alternatives|real\s+estate|fixed\s+income|private\s+equity)\s+(?:back\s+)?"
    r"(?:to|towards?)\s+(?:the\s+|its\s+|their\s+|a\s+)?target(?:\s+(?:weight|allocation|share))?(?:\s+of)?\s*$",
    re.I,
)
DRIFT_FILLER = {"has", "have", "whose", "the", "its", "their", "her", "his", "that", "which"}
TARGET_WORD = re.compile(r"(?i:target|policy|benchmark|guideline|goal)")
DRIFTED_BEFORE = re.compile(
    r"\b(?P<np>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)\s+(?:has\s+|have\s+)?(?:drifted|risen|rose|fallen|fell|grown|grew|"
    r"climbed|slipped|crept|sunk|sank)(?:\s+(?:up|down|back))?\s+to\s+$",
    re.I,
)


def percent_label_and_base(problem, q, amounts, ends):
    """(label, base) of a percent: its base is the amount the text ties it to, its label what it is a share of."""
    sentence_start = max([e + 1 for e in ends if e < q.start], default=0)
    sentence_end = min(e for e in ends if e >= q.end)
    before, after = problem[sentence_start : q.start], problem[q.end : sentence_end]
    earlier = [a for a in amounts if a.end <= q.start]
    base, rest = "", after
    if OF_THAT.match(after) or OF_WHICH_BEFORE.search(before):
        base = earlier[-1].label if earlier else ""
        rest = after[OF_THAT.match(after).end() :] if OF_THAT.match(after) else after
    elif m := PERCENT_OF.match(after):
        of = after[m.end() :]
        inside = [a for a in amounts if q.end + m.end() <= a.start <= q.end + m.end() + 12]
        if inside:
            base, rest = inside[0].label, problem[inside[0].end : sentence_end]
            rest = re.sub(rf"^\s*(?:{_NOUNS}|{_NAMES})\b", "", rest, flags=re.I)
        else:
            for amount in earlier[::-1]:
                head = amount.label.replace(" balance", "")
                if re.match(rf"{re.escape(head)}\b", of, re.I):
                    base, rest = amount.label, of[len(head) :]
                    if not THING_AFTER.match(rest) or re.match(r"\s*(?:a|per|each)\s+(?:year|month)\b", rest):
                        rest = head  # "50% of the shares": a share of the shares
                    break
    elif (m := OF_FRONTED.match(before)) and (inside := [a for a in earlier if a.start >= sentence_start + m.start(1)]):
        base = inside[0].label  # "Of her $3.2M portfolio, about 70% is her employer's stock"
    elif IS_BEFORE.search(before):
        clause = before[max(before.rfind(";"), before.rfind(",")) + 1 :]
        mine = [a for a in earlier if a.start >= sentence_start + len(before) - len(clause)]
        if len(mine) == 1:
            base = mine[0].label
    thing = ""
    if bound := BOUND_BEFORE.search(before):  # "get the single-stock position below 20%": the position's limit
        words = [w for w in bound["np"].split() if w.lower() not in DETERMINERS]
        thing = " ".join(words[-3:])
    elif m := THING_AFTER.match(rest):  # "70% of her portfolio in her employer's stock" -> "employer stock"
        thing = " ".join(re.sub(r"['’]s$", "", w) for w in m["thing"].split()).strip(".")
        thing = thing if len(thing) > 1 else ""
    named, aimed = False, False
    if TARGET_WORD.fullmatch(thing):
        thing, aimed = "", True  # "versus a 55% target": the target is the percent, not a thing it is a share of
    if not thing and (m := DRIFTED_BEFORE.search(before)):
        thing = " ".join(w for w in m["np"].split() if w.lower() not in DRIFT_FILLER)  # "equities drifted to 72%"
    if not thing and (m := PERCENT_SUBJECT.search(before)) and not NOT_A_NAME & {w.lower() for w in m["np"].split()}:
        thing, named = m["np"], True  # "the platform fee is 0.35%", "a dividend yield above 3.5%"
    if thing.lower() in ("", "target") and (m := CLASS_TO_TARGET.search(before)):
        thing = m["np"]  # "bring equities back to target 70%": the equities' target
    if not thing and (m := NOUN_JUST_BEFORE.search(before.rstrip(": "))) and m[1].lower() not in NOT_A_THING:
        thing = m[1]  # "equities drifted to 58%" reads nothing after; "target 50%" the word before
    kind = "" if named else "share"
    if TARGET_BEFORE.search(before) or aimed:
        kind = "target"
    elif LIMIT_BEFORE.search(before) or BOUND_BEFORE.search(before):
        kind = "limit"
    elif thing and not named and not OF_WHICH_BEFORE.search(before) and (RATE_THING.search(thing) or regimes.find_regimes(thing)):
        kind = "rate"  # "the 3.8% NIIT" is the NIIT rate
    elif re.search(r"\b(?:at\s+least|no\s+less\s+than|minimum(?:\s+of)?)\s+$", before, re.I):
        kind = "minimum"  # "must receive at least 3% a year"
    thing = " ".join(w if w.isupper() else w.lower() for w in thing.split())
    return (f"{thing} {kind}".strip() if thing else kind if kind not in ("share", "") else "percent"), base


# ---- extract -----------------------------------------------------------------------------------------------------


RATE_PAIR = re.compile(r"\b([A-Z]{3})\s?/\s?$")


def extract(problem: str) -> list[Fact]:
    """The facts a problem states, in the order it states them."""
    problem = problem or ""
    ends = sentence_ends(problem)
    quantities = _quantities(problem)
    facts, amounts, labels, ages = [], [], {}, 0
    for q in quantities:
        pair = RATE_PAIR.search(problem, max(0, q.start - 8), q.start) if q.kind == "amount" else None
        if pair and pair[1] != q.unit:
            label = f"{pair[1]}/{q.unit} exchange rate"  # "GBP/CHF 1.12": the checker reads its way from the label
        elif q.kind == "amount":
            label = amount_label(problem, q, ends)
        elif q.kind == "age":
            label = age_label(problem, q, ends, ages)
            ages += 1
        elif q.kind == "year":
            label = year_label(problem, q, ends)
        else:
            label = ""
        fact = Fact(label, q.kind, q.value, q.unit, q.text, q.start, q.end)
        facts.append(fact)
        if q.kind == "amount":
            amounts.append(fact)
    for fact in facts:
        if fact.kind == "percent":
            fact.label, fact.base = percent_label_and_base(problem, fact, amounts, ends)
    facts = terms.refine(problem, facts, ends)
    for fact in sorted(facts, key=lambda f: f.start):  # labels unique within a case: "salary", "salary 2"
        count = labels.get(fact.label, 0) + 1
        labels[fact.label] = count
        if count > 1:
            fact.label = f"{fact.label} {count}"
    limits = [f for f in facts if f.kind == "limit"]
    # a clause that only states a bound is the limit, not also a constraint ("no more than 10% in one issuer")
    said = [
        piece
        for c in clauses(problem)
        for piece in (_split_constraint(c) if c.kind == "constraint" and any(c.start <= f.start < c.end for f in limits) else [c])
        if not (piece.kind == "constraint" and any(piece.start <= f.start < piece.end for f in limits))
    ]
    facts += place_facts(problem) + named_things(problem) + said
    return sorted(facts, key=lambda f: (f.start, -f.end))


AND_CONSTRAINT = re.compile(r"\s+(?:and|but)\s+(?=(?:must|cannot|can['’]t|may\s+not|needs?\s+to\s+keep|is\s+not\s+allowed)\b)", re.I)


def _split_constraint(clause):
    """ "must not run out of money before 95 and must keep at least $4M": two constraints, one of them a limit."""
    pieces, start = [], 0
    for m in list(AND_CONSTRAINT.finditer(clause.text)) + [None]:
        end = m.start() if m else len(clause.text)
        words = clause.text[start:end]
        pieces.append(Fact("constraint", "constraint", words, "", words, clause.start + start, clause.start + end))
        start = m.end() if m else start
    return pieces


# ---- ground -------------------------------------------------------------------------------------------------------

TEXT_KINDS = ("account", "instrument", "goal", "constraint")


def ground(facts: list[Fact], problem: str) -> list[Fact]:
    """The facts the problem bears out, each with the problem's own span; the rest dropped. Nothing is invented.

    A numeric fact needs a quantity of its kind with its unit and value (quantities.matches); a place, a place
    find_places reads with its code; an account, instrument, goal or constraint, its words in the problem
    (case-insensitive, spacing aside).
    """
    problem = problem or ""
    quantities = find_quantities(problem)
    found_places = placelib.find_places(problem)
    kept, used = [], set()
    for fact in facts:
        span = None
        if fact.kind in ("person", "limit", "horizon"):
            span = _pick([m for m in _measures(problem, fact.kind) if _measure_matches(m, fact)], fact, used)
            if span is not None:
                fact.value, fact.unit = span.value, span.unit
                fact.role = fact.role if fact.role in ROLES.get(fact.kind, ()) else span.role
        elif fact.kind in NUMERIC:
            value = _number(fact)
            candidates = [
                q
                for q in quantities
                if q.kind == fact.kind and value is not None and matches(q, value, _unit(fact, q))
            ]
            if not candidates and fact.kind == "percent" and value is not None:  # "60/40": the reader's allocations
                candidates = [f for f in extract(problem) if f.kind == "percent" and abs(f.value - value) < 1e-9]
            span = _pick(candidates, fact, used)
            if span is not None:
                fact.value, fact.unit = span.value, span.unit
        elif fact.kind == "place":
            code = str(fact.value or "").strip()
            span = _pick([p for p in found_places if p.code == code], fact, used)
            fact.unit = "ISO 3166"
        elif fact.kind in TEXT_KINDS:
            span = _find_words(problem, fact.text) or _find_words(problem, str(fact.value or ""))
        if span is None:
            continue
        if fact.role and fact.role not in ROLES.get(fact.kind, (fact.role,)):
            fact.role = ""  # a role the kind does not have: the fact stands, its role does not
        fact.text, fact.start, fact.end = problem[span.start : span.end], span.start, span.end
        key = (fact.kind, fact.start, fact.end, str(fact.value))
        if key in used:
            continue
        used.add(key)
        used.add((fact.kind, fact.start, fact.end))
        kept.append(fact)
    return kept


def _measures(problem, kind):
    """What a person, limit or horizon can be read from in the problem: the reader's own facts of that kind, then any
    quantity or duration with a unit the kind takes (a limit of 10% needs a "10%" in the text; a person a name or a
    count the reader finds there)."""
    own = [f for f in extract(problem) if f.kind == kind]
    if kind == "person":
        return own
    spans = [_Measure(f.value, f.unit, f.start, f.end, f.text, f.role) for f in own]
    for q in _quantities(problem):
        unit = {"percent": "%", "amount": q.unit, "year": "year", "age": "age"}[q.kind]
        if kind == "limit" and q.kind in ("percent", "amount") or kind == "horizon" and q.kind in ("year", "age"):
            spans.append(_Measure(q.value, unit, q.start, q.end, q.text, "", q))
    for start, end, value, unit in terms.durations(problem):
        spans.append(_Measure(value, unit, start, end, problem[start:end], ""))
    return spans


class _Measure:
    def __init__(self, value, unit, start, end, text, role, quantity=None):
        self.value, self.unit, self.start, self.end, self.text, self.role = value, unit, start, end, text, role
        self.quantity = quantity


def _measure_matches(span, fact):
    """A model's person, limit or horizon against a span: the same unit and value (a person: and the same name)."""
    if fact.kind == "person":
        value = parse_number(str(fact.value)) if not isinstance(fact.value, int | float) else fact.value
        words = set(str(fact.label).lower().split()) | set(str(fact.text).lower().split())
        return value is not None and float(value) == float(span.value) and bool(words & set(str(span.label).lower().split()))
    value = fact.value if isinstance(fact.value, int | float) else parse_number(str(fact.value).replace("%", "").strip())
    unit = (fact.unit or "").strip()
    if value is None or unit != span.unit:
        return False
    if span.quantity is not None and span.quantity.kind in ("percent", "amount"):
        return matches(span.quantity, value, span.quantity.unit)
    return abs(float(value) - float(span.value)) < 1e-9


def _number(fact):
    value = fact.value
    if isinstance(value, int | float):
        return float(value)
    text = str(value or "").strip().replace("%", "").strip() if fact.kind == "percent" else str(value or "").strip()
    if fact.kind == "amount" and (read := parse_amount(text)):
        if not fact.unit:
            fact.unit = read[1]
        return read[0]
    return parse_number(text)


def _unit(fact, q):
    if fact.kind == "amount":
        return (fact.unit or "").upper()
    return q.unit  # percent "%", age "years", year "": the kind says it


def _pick(candidates, fact, used):
    """The candidate the fact's own words point to (same text, then same span), else the first not yet used."""
    free = [c for c in candidates if (fact.kind, c.start, c.end) not in used]
    for test in (
        lambda c: c.start == fact.start and c.end == fact.end,
        lambda c: fact.text and c.text == fact.text,
        lambda c: fact.text and fact.text in c.text or c.text in (fact.text or ""),
        lambda c: True,
    ):
        for c in free:
            if test(c):
                return c
    return None


class _Span:
    def __init__(self, start, end):
        self.start, self.end = start, end


def _find_words(problem, words):
    """Where the words occur in the problem, case-insensitive and whatever the spacing; None if nowhere."""
    words = " ".join((words or "").split())
    if len(words) < 2:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words.split(" "))
    m = re.search(pattern, problem, re.I)
    return _Span(m.start(), m.end()) if m else None
