"""The offline model's replies: plausible, deterministic JSON for each prompt contract, with no network.

`answer(prompt, seed)` reads the `### NAME` sections of a rendered prompt, picks the handler registered
for its contract, and returns JSON text that satisfies that contract. Game of 24 problems get a real
solver (game24.py); wealth problems get text built from per-kind step banks (offline_banks.py) filled
with the amounts, ages, places and assets found in the problem.
"""

import functools
import hashlib
import importlib
import json
import pkgutil
import random
import re
from dataclasses import dataclass, field

from reasoning.llm import game24
from reasoning.llm.offline_banks import BANKS, DEFAULT_AMOUNT, DEFAULT_ASSET, NOTES, RELATED, STAGES, STOPWORDS

HEADER = re.compile(r"^### (.+)$", re.MULTILINE)
STEP_LINE = re.compile(r"^\s*(\d+)\.\s+(.*)$")
BUILDS_ON = re.compile(r"\s*Builds on step \d+ \([^)]*\)\.\s*$")


@dataclass
class Prompt:
    contract: str = ""
    kind: str = "general"
    problem: str = ""
    rubric: str = ""
    steps: list = field(default_factory=list)
    last_step: str = ""
    step: int = 1
    depth: int = 4
    k: int = 3
    sections: dict = field(default_factory=dict)  # every `### NAME` section, for contracts with sections of their own


def answer(prompt: str, seed: int, noise: float = 0.0, sample: int = 0) -> str:
    """The offline model's reply to one prompt: JSON text; the same (prompt, seed, noise, sample) always gives the same
    text. At `noise` > 0 it errs as puzzle.py and noise.py say; each `sample` of one request is drawn on its own."""
    from reasoning.llm import noise as mistakes
    from reasoning.llm import puzzle, puzzle_replies

    p = read_prompt(prompt or "")
    key = f"{seed}:{prompt}" if not sample else f"{seed}:{sample}:{prompt}"
    rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest(), "big"))
    if game24.puzzle_numbers(p.problem) and p.contract in puzzle_replies.HANDLERS:
        return json.dumps(puzzle_replies.HANDLERS[p.contract](p, puzzle.Player(rng, noise)), ensure_ascii=False)
    reply = HANDLERS.get(p.contract, unknown_contract)(p, rng)
    return json.dumps(mistakes.disturb(reply, rng, noise), ensure_ascii=False)


# Reading the prompt.


def sections(text):
    """Section name -> body; the first occurrence of a name wins (a retry repeats the prompt)."""
    found = {}
    headers = list(HEADER.finditer(text))
    for here, after in zip(headers, headers[1:] + [None]):
        end = after.start() if after else len(text)
        found.setdefault(here[1].strip().upper(), text[here.end() : end].strip())
    return found


def read_prompt(text):
    s = sections(text)
    kind = (s.get("PROBLEM KIND", "").split() or ["general"])[0].lower()
    numbers = [int(n) for n in re.findall(r"\d+", s.get("STEP NUMBER", ""))]
    steps = parse_steps(s.get("STEPS SO FAR") or s.get("CHOSEN STEPS") or "")
    k = int((re.findall(r"\d+", s.get("K", "")) or [3])[0])
    return Prompt(
        contract=(s.get("CONTRACT", "").split() or [""])[0],
        kind=kind if kind in BANKS else "general",
        problem=s.get("PROBLEM", ""),
        rubric=s.get("RUBRIC", ""),
        steps=steps,
        last_step=s.get("LAST STEP", ""),
        step=numbers[0] if numbers else len(steps) + 1,
        depth=numbers[1] if len(numbers) > 1 else 4,
        k=min(8, max(1, k)),
        sections=s,
    )


def parse_steps(text):
    """The numbered steps of format_path(); continuation lines belong to the step above them."""
    steps = []
    for line in text.splitlines():
        match = STEP_LINE.match(line)
        if match:
            steps.append(match[2].strip())
        elif steps and line.strip():
            steps[-1] += " " + line.strip()
    return steps


# Facts from the problem text.

CURRENCY = r"(CHF|USD|EUR|GBP|SFr\.?|Fr\.|\$|€|£)"
FIGURE = r"(\d{1,3}(?:[,'’]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
SCALE = r"(?:\s?(bn|billion|mn|mio|million|m|k|thousand)(?![A-Za-z]))?"
MONEY_BEFORE = re.compile(CURRENCY + r"\s?" + FIGURE + SCALE)
MONEY_AFTER = re.compile(FIGURE + SCALE + r"\s?(?:Swiss\s|US\s)?(CHF|USD|EUR|GBP|francs|dollars|euros)\b")
SCALES = {"bn": 1e9, "billion": 1e9, "mn": 1e6, "mio": 1e6, "million": 1e6, "m": 1e6, "k": 1e3, "thousand": 1e3}
CODES = {
    "$": "USD",
    "€": "EUR",
    "£": "GBP",
    "SFr": "CHF",
    "SFr.": "CHF",
    "Fr.": "CHF",
    "francs": "CHF",
    "dollars": "USD",
    "euros": "EUR",
}
PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)")
AGE = re.compile(r"\baged?\s+(\d{2})\b|\b(\d{2})[- ]years?[- ]old\b|\b(\d{2})\s+years?\s+old\b")
HORIZON = re.compile(r"\b(\d{1,2})[- ](?:years?|yrs?)\b(?![- ]old)")
YEAR = re.compile(r"\b(?:by|until|before|in)\s+(20\d\d)\b")
PLACES = (
    "Zurich Zürich Geneva Genève Vaud Zug Bern Berne Basel Lucerne Luzern Ticino Schwyz Valais Fribourg "
    "Neuchâtel Graubünden Aargau Thurgau Solothurn Schaffhausen Appenzell Glarus Nidwalden "
    "Obwalden Jura Lausanne Lugano"
).split() + ["St. Gallen"]
COUNTRIES = (
    "Switzerland",
    "Liechtenstein",
    "Germany",
    "France",
    "Italy",
    "Austria",
    "Spain",
    "Portugal",
    "United Kingdom",
    "UK",
    "United States",
    "USA",
    "US",
    "Singapore",
    "Monaco",
    "Luxembourg",
    "Netherlands",
    "Belgium",
    "UAE",
    "Dubai",
)
# Regions outside Switzerland a problem may name, by jurisdiction; a demonym stands for its place.
REGIONS = {
    "us": "California New York Texas Florida Washington Massachusetts Illinois Nevada Oregon Colorado Arizona "
    "Georgia Virginia Connecticut".split()
    + ["New Jersey", "San Francisco", "Los Angeles", "Seattle", "Boston"],
    "de": "Munich München Berlin Hamburg Frankfurt Cologne Köln Stuttgart Düsseldorf Bavaria".split(),
    "uk": "London Manchester Edinburgh Scotland England Wales".split(),
}
DEMONYMS = {
    "Californian": "California",
    "Texan": "Texas",
    "New Yorker": "New York",
    "American": "United States",
    "German": "Germany",
    "Bavarian": "Bavaria",
    "British": "United Kingdom",
    "Swiss": "Switzerland",
}
JURISDICTION_OF_COUNTRY = {
    "Switzerland": "ch",
    "Liechtenstein": "ch",
    "Germany": "de",
    "United Kingdom": "uk",
    "UK": "uk",
    "United States": "us",
    "USA": "us",
    "US": "us",
}
CURRENCY_OF = {"ch": "CHF", "us": "USD", "de": "EUR", "uk": "GBP"}
AUTHORITY = {
    "ch": "the cantonal tax authority",
    "us": "the IRS and the state",
    "de": "the German tax office",
    "uk": "HMRC",
}
BUSINESS = re.compile(r"\b(?:AG|SA|GmbH|Inc|Ltd|plc|company|firm|business|founder|entrepreneur|shares of)\b", re.I)
WIDOW = re.compile(r"\bwidow(?:er)?\b|\blate husband\b|\blate wife\b", re.I)
COUPLE = re.compile(r"\b(?:couple|married|spouse|husband|wife|partners?)\b", re.I)
NAME = r"[A-ZÀ-ÖØ-Þ][\w&'’-]*"
COMPANY = re.compile(rf"\b({NAME}(?:\s{NAME}){{0,3}}\s(?:AG|SA|Inc\.?|Ltd|GmbH|plc|Holding|Group))\b")
HELD_AS = re.compile(rf"\b({NAME}(?:\s{NAME}){{0,2}})\s+(?:shares|stock|stocks|stake|position|holding|bonds|notes)\b")
TICKER = re.compile(r"\b[A-Z]{2,5}\b")
NOT_TICKERS = set(
    "CHF USD EUR GBP JPY ETF ETFS ESG AHV AVS BVG LPP IRA USA UK US EU UAE CEO CFO AG SA GDP CPI "
    "SNB ECB FED FX IPO REIT OK II III IV VI".split()
)
LEADING = set("The A An Her His Their Its In Of Our My Your With And Mr Mrs Ms Dr".split())
NOT_NAMES = set("Swiss US UK European Global Emerging Government Corporate Pillar Bank Company Family".split())


class Facts(dict):
    def __missing__(self, key):
        return ""  # a template naming an unknown fact reads a little thinner instead of failing


def money_spans(text):
    """(text as written, value, currency code) for each money amount, in order of appearance."""
    found = []
    for match in MONEY_BEFORE.finditer(text):
        found.append((match.start(), match[0].strip(), _value(match[2], match[3]), CODES.get(match[1], match[1])))
    for match in MONEY_AFTER.finditer(text):
        found.append((match.start(), match[0].strip(), _value(match[1], match[2]), CODES.get(match[3], match[3])))
    return [(written, value, code) for _, written, value, code in sorted(found)]


def _value(figure, scale):
    return float(re.sub(r"[,'’]", "", figure)) * SCALES.get((scale or "").lower(), 1)


def money(value, code):
    if value >= 1e9:
        return f"{code} {_trim(value / 1e9)}bn"
    if value >= 1e6:
        return f"{code} {_trim(value / 1e6)}m"
    if value >= 1e3:
        return f"{code} {round(value / 1e3):,}k"
    return f"{code} {round(value):,}"


def _trim(number):
    return f"{number:.2f}".rstrip("0").rstrip(".")


def first_asset(text):
    """A named company, a name followed by 'shares'/'stake'/..., or a ticker; never a person or a place."""
    for pattern in (COMPANY, HELD_AS):
        for match in pattern.finditer(text):
            words = match[1].split()
            while words and words[0] in LEADING:
                words = words[1:]
            name = " ".join(words)
            if name and name not in NOT_NAMES and name not in PLACES and name not in COUNTRIES:
                return name
    tickers = [t for t in TICKER.findall(text) if t not in NOT_TICKERS and t not in COUNTRIES]
    return tickers[0] if tickers else ""


def _hits(text, names):
    return [(m.start(), name) for name in names for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text)]


def first_place(text):
    """The first place the problem names: a canton or town, a region elsewhere, a demonym's place, or a country."""
    regions = [name for names in REGIONS.values() for name in names]
    for names in (PLACES, regions):
        hits = _hits(text, names)
        if hits:
            return min(hits)[1]
    demonyms = _hits(text, DEMONYMS)
    if demonyms:
        return DEMONYMS[min(demonyms)[1]]
    hits = _hits(text, COUNTRIES)
    return min(hits)[1] if hits else ""


def jurisdictions(text):
    """Every jurisdiction the problem names (ch, us, de, uk), the first named first; else the one its money implies."""
    found = [(at, "ch") for at, _ in _hits(text, PLACES + ["Swiss", "canton", "pillar 3a"])]
    for code, names in REGIONS.items():
        found += [(at, code) for at, _ in _hits(text, names)]
    found += [(at, JURISDICTION_OF_COUNTRY.get(DEMONYMS[name], "")) for at, name in _hits(text, DEMONYMS)]
    found += [(at, JURISDICTION_OF_COUNTRY.get(name, "")) for at, name in _hits(text, COUNTRIES)]
    ordered = list(dict.fromkeys(code for _, code in sorted(found) if code))
    if ordered:
        return ordered
    codes = {code for _, _, code in money_spans(text)}
    by_money = [j for j, code in CURRENCY_OF.items() if code in codes]
    return by_money[:1] or ["ch"]


TO_DEPLOY = re.compile(
    r"\b(?:invest|add|deploy|allocat|put|commit|buy|rebalanc|transfer|gift)\w*\W+(?:\w+\W+){0,3}$", re.IGNORECASE
)


def main_amount(problem):
    """The amount the decision is about: one right after an invest/add/transfer verb, else the largest one."""
    amounts = money_spans(problem)
    for written, value, code in amounts:
        if TO_DEPLOY.search(problem[: problem.find(written)]):
            return written, value, code
    return max(amounts, key=lambda a: a[1]) if amounts else None


TARGET_PERCENT = (
    re.compile(r"(\d+(?:\.\d+)?)\s?%\s*(?:\w+\s+)?target", re.IGNORECASE),
    re.compile(r"target\D{0,20}?(\d+(?:\.\d+)?)\s?%", re.IGNORECASE),
    # a split such as "a 60/40 target": the first figure is the growth (equity) share
    re.compile(r"\b(\d{1,2})\s?/\s?\d{1,2}\s*(?:\w+\s+)?(?:target|mix|allocation|portfolio)", re.IGNORECASE),
    re.compile(r"target\D{0,20}?\b(\d{1,2})\s?/\s?\d{1,2}\b", re.IGNORECASE),
    PERCENT,
)


def target_percent(problem):
    """The weight a drift band is drawn around: a percentage called a target, else the first plausible one."""
    for pattern in TARGET_PERCENT:
        values = [float(m[1]) for m in pattern.finditer(problem)]
        value = next((v for v in values if 10 <= v <= 90), None)
        if value is not None:
            return value
    return None


POSITION = re.compile(
    r"(\d+(?:\.\d+)?)\s?%\s+(?:(?:\w|-)+\s+){0,3}?(?:position|stake|holding|allocation|of (?:it|the portfolio) in)\b",
    re.IGNORECASE,
)


def in_scope(problem):
    """(written, value, code, derivation) of the amount the decision is about: an amount after an invest/add/transfer
    verb; else a position given as a share of the whole (5% of CHF 12m: CHF 600k); else the largest amount."""
    amounts = money_spans(problem)
    for written, value, code in amounts:
        if TO_DEPLOY.search(problem[: problem.find(written)]):
            return written, value, code, ""
    if not amounts:
        return None
    written, value, code = max(amounts, key=lambda a: a[1])
    share = POSITION.search(problem)
    if share and 0 < float(share[1]) < 100:
        part = value * float(share[1]) / 100
        return money(part, code), part, code, f"{_trim(float(share[1]))}% of {money(value, code)} = {money(part, code)}"
    return written, value, code, ""


def facts(problem, kind):
    """Placeholder values for the step templates, from the problem text, with readable fallbacks.

    Every call of a session asks again for the same problem: the reading is kept, and each caller gets its own copy.
    """
    found = _facts(problem, kind)
    return Facts({name: set(value) if isinstance(value, set) else value for name, value in found.items()})


@functools.lru_cache(maxsize=256)
def _facts(problem, kind):
    found = in_scope(problem)
    written, value, code, derivation = found or (DEFAULT_AMOUNT[kind], 0.0, "CHF", "")
    places = jurisdictions(problem)
    amounts = money_spans(problem)
    home = max(amounts, key=lambda a: a[1])[2] if amounts else CURRENCY_OF.get(places[0], "CHF")
    ages = [int(next(g for g in m.groups() if g)) for m in AGE.finditer(problem)]
    age = next((a for a in ages if 18 <= a <= 99), None)
    years = [int(m[1]) for m in HORIZON.finditer(problem) if int(m[1]) != age]
    target_year = YEAR.search(problem)
    band_base = target_percent(problem)
    widow = bool(WIDOW.search(problem))
    tags = {places[0]}
    tags |= {"cross-border"} if len(places) > 1 else set()
    tags |= {"business"} if BUSINESS.search(problem) else set()
    tags |= {"widow"} if widow else ({"couple"} if COUPLE.search(problem) else set())
    tags |= {"de"} if "de" in places else set()  # German tax reaches an estate when one side lives there
    f = Facts(
        amount=" ".join(written.split()),
        amount_value=value,
        derivation=derivation,
        cur=home,
        asset=first_asset(problem) or DEFAULT_ASSET[kind],
        place=first_place(problem) or ("the client's canton" if places[0] == "ch" else "the client's jurisdiction"),
        authority=AUTHORITY.get(places[0], "the tax authority"),
        client=(f"the {age}-year-old client" if age else "the client") if not widow else "the widow",
        horizon=f"{years[0]} years"
        if years
        else (f"the period to {target_year[1]}" if target_year else "the planning horizon"),
        band=(
            f"{_trim(band_base - 5)}-{_trim(band_base + 5)}% around the {_trim(band_base)}% target"
            if band_base
            else "target ±5 points"
        ),
        pillar_ages=_pillar_ages(age),
        tags=tags,
    )
    shares = {"third": 3, "tenth": 10, "twentieth": 20}
    for name, parts in shares.items():
        f[name] = (
            money(value / parts, code)
            if value
            else {"third": "a third of the assets", "tenth": "10% of the assets", "twentieth": "5% of the assets"}[name]
        )
    wealth = max(amounts, key=lambda a: a[1]) if amounts else None  # "of wealth" is of the whole, not of the position
    f["cap_range"] = (
        f"5-10% of wealth ({money(wealth[1] * 0.05, wealth[2])} to {money(wealth[1] * 0.1, wealth[2])})"
        if wealth
        else "5-10% of wealth"
    )
    return f


TAGS = re.compile(r"^\[([^\]]*)\]\s*")


def fits(template, f):
    """A template fits the facts when the problem has each of its tags and none of its "!" tags."""
    match = TAGS.match(template)
    if not match:
        return True
    have = f.get("tags") or set()
    wanted = [tag.strip() for tag in match[1].split(",") if tag.strip()]
    return all((tag[1:] not in have) if tag.startswith("!") else (tag in have) for tag in wanted)


def fill(template, f):
    """The template's text with its tags removed and the facts filled in."""
    return TAGS.sub("", template).format_map(f)


def fitting(group, f):
    """The templates of a stage that fit the problem, in bank order."""
    return [template for template in group if fits(template, f)]


def _pillar_ages(age):
    """Three yearly 3a withdrawals: the earliest allowed ages (from 60) that are still ahead of the client."""
    if not age:
        return "three consecutive years around retirement"
    start = max(age + 1, 60)
    return f"{start}, {start + 1} and {start + 2}" if start + 2 <= 70 else "the next three tax years"


# tot.propose


def stage_index(step, depth):
    """Step 1 frames the problem, the last step sets controls, the steps between act and then sequence."""
    if step <= 1:
        return 0
    if step >= depth:
        return 3
    return 1 if (step - 1) / (depth - 1) <= 0.5 else 2


def title_of(thought):
    thought = TAGS.sub("", thought)
    head, colon, _ = thought.partition(":")
    return head.strip() if colon and len(head.split()) <= 6 else " ".join(thought.split()[:5])


def candidates(kind, stage, steps, rng, f=None):
    """Templates for this step that fit the problem, this kind's own stage first, then the general bank, then nearby
    stages."""
    taken = " ".join(steps).lower()
    order = []
    for distance in range(4):
        for bank in dict.fromkeys((kind, "general")):
            for s in sorted({stage - distance, stage + distance} & set(range(4))):
                group = fitting(BANKS[bank][s], f) if f is not None else list(BANKS[bank][s])
                rng.shuffle(group)
                order += group
    unique = {}
    for template in order:
        title = title_of(template)
        if title.lower() not in taken:
            unique.setdefault(title, template)
    return list(unique.values())


def tot_propose(p, rng):
    f = facts(p.problem, p.kind)
    stage = stage_index(p.step, p.depth)
    previous = f" Builds on step {len(p.steps)} ({title_of(p.steps[-1])})." if p.steps else ""
    thoughts = []
    proposed = parse_steps(p.sections.get("ALREADY PROPOSED", ""))  # an expand by hand asks for new siblings
    for template in candidates(p.kind, stage, p.steps + proposed, rng, f)[: p.k]:
        title = title_of(template)
        thoughts.append(
            {
                "thought": fill(template, f) + previous,
                "state": {
                    "summary": f"after step {p.step}: {title.lower()} for {f['amount']}",
                    "approach": title,
                    "stage": STAGES[stage],
                    "step": p.step,
                },
            }
        )
    return {"thoughts": thoughts}


# tot.evaluate

CRITERION = re.compile(r"^\s*-\s*(.+?)\s*\(weight\s*([\d.]+)\)\s*:?\s*(.*)$", re.MULTILINE)
NUMERIC = ("number", "figure", "quanti", "concre", "specif")
THEMES = ("risk", "tax", "liquid", "cost")


def keywords(text):
    """Word stems of a rubric text, widened by RELATED so plain synonyms in a step also count."""
    stems = {w[:6] for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in STOPWORDS}
    return stems | {extra for root, more in RELATED.items() if any(s.startswith(root) for s in stems) for extra in more}


def rubric_criteria(rubric):
    """(name, weight, name stems, description stems) for each `- Name (weight W): description` line."""
    return list(_rubric_criteria(rubric))


@functools.lru_cache(maxsize=64)
def _rubric_criteria(rubric):  # every evaluation of a session reads the same rubric; the stems are only read
    return tuple(
        (name, float(weight), keywords(name), keywords(description))
        for name, weight, description in CRITERION.findall(rubric)
    )


def meets(criterion, text):
    """A criterion counts as met if the step uses a word of its name, or two words of its description."""
    _, _, name_stems, description_stems = criterion
    low = text.lower()
    starts = _word_starts(low)

    def used(stem):  # a stem counts at the start of a word only: "gain" must not match "against"
        return stem in low if " " in stem else stem in starts

    if re.search(r"\d", text) and any(s.startswith(NUMERIC) for s in name_stems | description_stems):
        return True
    return any(map(used, name_stems)) or sum(map(used, description_stems)) >= 2


@functools.lru_cache(maxsize=1024)
def _word_starts(low):
    """Every beginning of every word of a text (each criterion of a rubric asks about the same step)."""
    words = re.findall(r"[a-z]+", low)
    return frozenset(w[:i] for w in words for i in range(len(w) + 1)) if words else frozenset()


def tot_evaluate(p, rng):
    text = p.last_step
    criteria = rubric_criteria(p.rubric)
    met = [c for c in criteria if meets(c, text)]
    missed = [c for c in criteria if c not in met]
    words = len(text.split())
    has_numbers = bool(re.search(r"\d", text))
    score = 0.3 + 0.12 * has_numbers + 0.05 * min(3, sum(t in text.lower() for t in THEMES))
    total = sum(c[1] for c in criteria)
    score += 0.3 * sum(c[1] for c in met) / total if total else 0.1
    score += 0.04 if facts(p.problem, p.kind)["amount"] in text else 0
    score += -0.15 if words < 8 else (-0.1 if words > 110 else 0.04)
    repeated = bool(p.steps) and title_of(text).lower() in " ".join(p.steps).lower()
    score -= 0.2 if repeated else 0
    score = round(min(0.98, max(0.02, score + rng.uniform(-0.05, 0.05))), 3)
    return {"score": score, "reason": _reason(score, met, missed, has_numbers, repeated)}


def _named(criteria):
    names = [f"{name} (weight {weight:g})" for name, weight, _, _ in criteria]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _reason(score, met, missed, has_numbers, repeated):
    verdict = "Strong" if score >= 0.75 else ("Plausible" if score >= 0.5 else "Weak")
    figures = "with concrete figures" if has_numbers else "but without figures"
    if not met and not missed:
        return (
            f"{verdict}: no rubric criteria given, so judged on concreteness ({figures}) and on coverage of "
            "risk, tax, liquidity and cost."
        )
    first = f"{verdict}: meets {_named(met)} {figures}." if met else f"{verdict}: addresses none of the criteria."
    second = f" Does not address {_named(missed)}." if missed else ""
    return first + second + (" It repeats an earlier step." if repeated else "")


# tot.synthesize


def _short(step, limit=32):
    """One action line: the step without its back-reference, cut at a clause boundary when long, never mid-phrase (no
    open bracket or quotation left behind)."""
    words = BUILDS_ON.sub("", step).split()
    if len(words) <= limit:
        return " ".join(words)
    head = " ".join(words[:limit])
    cut = max(head.rfind("; "), head.rfind(", "), head.rfind(". "))  # "EUR 400,000" is one figure, not two clauses
    return _closed(head[:cut] if cut > len(head) // 2 else head).rstrip(",;:. ") + "."


def _closed(text):
    """The text up to any bracket or quotation it opens and does not close."""
    opened = [i for i, ch in enumerate(text) if ch in "(“"]
    for at in reversed(opened):
        closer = ")" if text[at] == "(" else "”"
        if closer not in text[at:]:
            text = text[:at]
    if text.count('"') % 2:
        text = text[: text.rfind('"')]
    return text.rstrip()


PERCENT_RANGE = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?%")


def key_numbers(problem, steps=()):
    """The problem's own figures and what follows from them, each with its arithmetic shown ("12% of CHF 12m = CHF
    1.44m"), so no figure can be read as something it is not; the steps' derived amounts are left to the steps."""
    amounts = money_spans(problem)
    found = [" ".join(w.split()) for w, _, _ in amounts]
    scope = in_scope(problem)
    if scope and scope[3]:
        found.append(scope[3])
    total = max(amounts, key=lambda a: a[1]) if amounts else None
    percents = [float(m[1]) for m in PERCENT.finditer(problem)]
    target = target_percent(problem)
    for pct in dict.fromkeys(percents + ([target] if target and target not in percents else [])):
        if total and 0 < pct <= 100 and not (scope and scope[3].startswith(f"{_trim(pct)}% of")):
            label = " (the target)" if pct == target else ""
            found.append(
                f"{_trim(pct)}%{label} of {money(total[1], total[2])} = {money(total[1] * pct / 100, total[2])}"
            )
        elif not total:
            found.append(f"{_trim(pct)}%")
    drifted = [pct for pct in percents if target and pct != target and 10 <= pct <= 90]
    if total and target and drifted:
        gap = (drifted[0] - target) / 100 * total[1]
        side = "above" if gap > 0 else "below"
        found.append(f"{_trim(abs(drifted[0] - target))} points {side} target = {money(abs(gap), total[2])} to move")
    return list(dict.fromkeys(found))[:7]


# The goal a problem states, when it is not the kind's usual one: the recommendation leads with it.
GOAL_LEADS = (
    (
        re.compile(r"\b(?:tax[- ]loss|harvest)", re.I),
        "Realise the losses in {amount} before the tax year ends and "
        "keep the market exposure, within the rules that apply in {place}",
    ),
    (
        re.compile(r"\b(?:sell|sold|sale|trim|reduce|exit|unwind)\w*\b", re.I),
        "Sell {amount} of {asset} in stages, "
        "at the lowest tax and market cost, keeping the rest of the portfolio on its plan",
    ),
)


def lead_of(p, f):
    """The recommendation's lead: the problem's own goal when it names one the kind's note does not."""
    usual = NOTES[p.kind][0]
    for pattern, lead in GOAL_LEADS:
        if pattern.search(p.problem) and not pattern.search(usual):
            return fill(lead, f)
    return fill(usual, f)


def tot_synthesize(p, rng):
    f = facts(p.problem, p.kind)
    _, risk, mitigation = (fill(text, f) for text in NOTES[p.kind])
    lead = lead_of(p, f)
    steps = p.steps or [fill(rng.choice(fitting(BANKS[p.kind][s], f) or BANKS["general"][s]), f) for s in range(4)]
    titles = ", then ".join(title_of(s).lower() for s in steps)
    numbers = key_numbers(p.problem, steps)
    for limit in (32, 20, 12, 8):
        actions = "\n".join(f"{i}. {_short(s, limit)}" for i, s in enumerate(steps, 1))
        text = (
            f"Recommendation: {lead}, following this line: {titles}.\n\nSequence of actions:\n{actions}\n\n"
            f"Key numbers: {'; '.join(numbers) if numbers else 'none stated in the problem'}.\n\n"
            f"Main risk: {risk}. Mitigation: {mitigation}."
        )
        if len(text.split()) <= 250:
            break
    return {"answer": text}


def unknown_contract(p, rng):
    named = f"the '{p.contract}' contract" if p.contract else "a prompt without a contract"
    return {
        "answer": f"The offline model has no script for {named}, so it cannot reason about this step; "
        "run the session with a real model for a substantive answer."
    }


HANDLERS = {
    "tot.propose": tot_propose,
    "tot.evaluate": tot_evaluate,
    "tot.synthesize": tot_synthesize,
}


# Each other strategy's offline answers live in a module of their own (reasoning/llm/offline_<strategy>.py),
# each a HANDLERS dict by contract name: a new strategy adds its module and nothing here.
def _load_strategy_handlers():
    package = importlib.import_module("reasoning.llm")
    for module in pkgutil.iter_modules(package.__path__, "reasoning.llm."):
        if module.name.rsplit(".", 1)[1].startswith("offline_") and module.name != __name__:
            HANDLERS.update(getattr(importlib.import_module(module.name), "HANDLERS", {}))


_load_strategy_handlers()
