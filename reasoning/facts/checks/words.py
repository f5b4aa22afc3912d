"""How the checker reads labels: the word tables (reasoning/facts/data/words.toml) and the words a text attaches
to a figure ("the cost basis of USD 400k", "SGD target: 45%", "USD 450k (salary)").

Labels are compared by their content words (stop words dropped, plurals made singular, synonyms read as their
group: portfolio ~ assets ~ wealth). A label is attached to a figure when it is next to it: "<fig> of <term>",
"<term> of <fig>", "<term>: <fig>", "<term> (<fig>)", "<fig> (<term>)", "<fig> <term>".
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from reasoning.facts.quantities import currency_tables, matches

DATA = Path(__file__).resolve().parent.parent / "data"


@lru_cache(maxsize=None)
def table(name: str) -> dict:
    """One data file of reasoning/facts/data/ ("words" reads words.toml)."""
    with open(DATA / f"{name}.toml", "rb") as file:
        return tomllib.load(file)


def phrases(words) -> str:
    """A regex alternation of words or phrases from a data file, longest first, each taken literally."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@lru_cache(maxsize=None)
def any_of(words: tuple) -> re.Pattern:
    """One of the words or phrases, whole (not inside a longer word or a hyphenated one), in any case."""
    return re.compile(rf"(?<![\w-])(?:{phrases(words)})(?![\w-])", re.IGNORECASE)


_WORDS = table("words")
STOPWORDS = set(_WORDS["stop_words"])
SYNONYMS = _WORDS["synonyms"]
GROUP = {word: group for group, words in SYNONYMS.items() for word in words}
ROLES = set(_WORDS["role_words"])  # roles only a fact can fill
PORTIONS = set(_WORDS["portion_words"])
RATE_WORDS = set(_WORDS["rate_words"])
TIME_WORDS = set(_WORDS["time_words"])
FUNCTION = STOPWORDS - set(_WORDS["label_words"]) - TIME_WORDS | set(_WORDS["function_words"])
LEADING = set(_WORDS["leading"])
WEAK = frozenset(_WORDS["weak_words"])  # "the 401(k) ($1.5M)" names the 401(k) balance
WORDS = r"[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,3}"
WORDS_AT = re.compile(WORDS)
OF_WORDS = re.compile(r"\s*of\s+((?:[\w'’-]+\s*){1,3})")
ARTICLES = re.compile(r"(?:(?:the|her|his|their|its|a|an)\s+)*")
CONTENT_WORD = re.compile(r"[^\W_][\w'’()-]*")  # letters of any language: 'Einkaufslücke' is one word
AFTER_OF = re.compile(r"\s*(?:\([^()]{0,40}\)\s*)?(?:of|in)\s+")
AFTER_PAREN = re.compile(r"\s*\(\s*([^()\d]{1,40})\)")
AFTER_BARE = re.compile(rf"[ \t]+({WORDS})")
# Words after a figure that compare it with something else rather than name it: "lie below the allowance".
COMPARED = re.compile(
    r"\b(?:below|under|above|over|beyond|within|exceeds?|unter|über|unterhalb|oberhalb|innerhalb|sous|au-dessus|"
    r"au-dessous|dépasse\w*|sotto|sopra|entro)\b",
    re.IGNORECASE,
)
ARTICLE_FIRST = re.compile(r"(?:the|a|an|this|that|these|those)\s", re.IGNORECASE)
MARKER_BEFORE = re.compile(r"(?:\s+of\s+(?:about\s+|around\s+|roughly\s+)?|\s*:\s*|\s*\(\s*)(?:~|≈|c\.)?\s*$")


@lru_cache(maxsize=4096)
def content_words(text):
    words = set()
    for word in CONTENT_WORD.findall(text.lower().replace("’", "'")):
        word = word.removesuffix("'s")
        if word in STOPWORDS:
            continue
        if word not in GROUP and len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(GROUP.get(word, word))
    return frozenset(words)


def label_term(text, from_end=False):
    """The label words of a phrase: up to the first function word (or from the last one backwards). "worth" and
    "valued" are verbs ("a flat worth CHF 1.4M") except in "net worth"; a currency code ends a term read forwards
    ("USD 450k plus CHF ...") but belongs to one read backwards ("SGD target: 40%")."""
    words = text.split()
    if not from_end:
        while words and words[0].lower() in LEADING:
            words = words[1:]
    order = list(reversed(words)) if from_end else words
    kept = []
    for i, word in enumerate(order):
        low = word.lower().strip("'’")
        verb = low in ("worth", "valued") and not _after_net(order, i, from_end)
        if low in FUNCTION or verb or (not from_end and word in currency_tables()[0]):
            break
        kept.append(word)
    kept = list(reversed(kept)) if from_end else kept
    return " ".join(kept)


def _after_net(order, i, from_end):
    before = i + 1 if from_end else i - 1  # the word written just before order[i]
    return 0 <= before < len(order) and order[before].lower() == "net"


@lru_cache(maxsize=1024)
def raw_words(text):
    """The content words as written, singular: "ISAs" -> "isa"."""
    words = (w.removesuffix("'s") for w in CONTENT_WORD.findall(text.lower().replace("’", "'")))
    return frozenset(_singular(w) for w in words if w not in STOPWORDS)


def _singular(word):
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def covers(label_words, words):
    return bool(label_words) and len(words & label_words) * 2 >= len(words)


def attached_labels(doc, q):
    """(form, term, start, end) for each label the text attaches to the figure q."""
    key = (q.start, q.end)
    if key not in doc.attached:
        doc.attached[key] = _labels_around(doc, q)
    return doc.attached[key]


def _labels_around(doc, q):
    text, found = doc.text, []
    m = AFTER_OF.match(text, q.end)
    if m and not figure_at(doc, m.end()):
        words = WORDS_AT.match(text, m.end())
        if words:
            term = label_term(words[0])
            found.append(("of", term, m.end(), m.end() + len(term)))
    m = AFTER_PAREN.match(text, q.end)
    if m:
        found.append(("paren", m[1], m.start(1), m.end(1)))
    m = AFTER_BARE.match(text, q.end)
    if m and not ARTICLE_FIRST.match(m[1]) and not COMPARED.search(m[1]):  # "At 20% of $7.104M the position may
        term = label_term(m[1])  # be": a new clause's subject; "120.000 EUR liegen unter dem Freibetrag": a comparison
        found.append(("bare", term, m.start(1), m.start(1) + len(term)))
    before = _before(text, q.start)
    if before and _follows_a_figure(doc, before[1] - len(before[0])):
        before = None  # "tax on a $200K conversion: $48K": "conversion" is the label of the $200K, not of the $48K
    if before:
        term = label_term(before[0], from_end=True)
        found.append(("before", term, before[1] - len(term), before[1]))
        if text[before[1] : q.start].strip().startswith(":"):  # "apartment in Lyon: EUR 1.1M": the whole label
            found.append(("colon", before[0], before[1] - len(before[0]), before[1]))
    else:
        end = len(text[: q.start].rstrip(" \t"))
        words = _words_before(text, end, 3) if end < q.start else ""  # "the equity target 50%"
        term = label_term(words, from_end=True)
        if term:
            found.append(("prefix", term, end - len(term), end))
    return found


def _follows_a_figure(doc, start):
    """The words at `start` come right after a figure (spaces between only): they are its label."""
    end = len(doc.text[:start].rstrip(" \t"))
    return end < start and any(x.end == end for x in doc.quantities)


WORD = re.compile(r"(?:[A-Za-z]|\d+[A-Za-z]|\d{3}\([a-z]\))[\w'’-]*$")  # "pillar 3a", "401(k) balance" too


def _words_before(text, end, count):
    """Up to `count` words ending exactly at `end`, separated by spaces only ("" when a mark comes first)."""
    words = text[max(0, end - 60) : end].split(" ")
    kept = []
    for word in reversed(words):
        if len(kept) == count or not WORD.match(word):
            break
        kept.append(word)
    return " ".join(reversed(kept))


def _before(text, start):
    """The words of "<term> of <fig>", "<term>: <fig>" or "<term> (<fig>)" before a figure, and where they end."""
    tail = text[max(0, start - 24) : start]
    marker = MARKER_BEFORE.search(tail)
    if not marker:
        return None
    end = start - len(tail) + marker.start()
    words = _words_before(text, end, 4)
    return (words, end) if words else None


def figure_at(doc, position):
    at = ARTICLES.match(doc.text, position).end()
    return next((q for q in doc.quantities if q.start == at), None)


def named_fact(doc, q, facts):
    """The fact whose whole label the text attaches to the figure ("SGD target: 45%", "the cost basis of USD 400k");
    of several ("his SIPP", "her SIPP": both read "SIPP"), the one the figure matches, if any."""
    named = []
    for form, term, start, _end in attached_labels(doc, q):
        if form == "of" or SHARE_BEFORE.search(doc.text, max(0, start - 24), start) or SHARE_OF.search(term):
            continue  # "5-10% of wealth (USD 160k to USD 320k)": the share's value, not the wealth
        if form in ("before", "colon") and OPERATOR_AFTER.match(doc.text, q.end):
            continue  # "Basis per share: $1.1M / 40,000 = $27.50": the label is the expression's, not its first figure
        if form == "prefix" and PER_ON_BEFORE.search(doc.text, max(0, start - 20), start):
            continue  # "Gain per share €12.80", "on the whole position €1.2M": a quantity per or on the item, not it
        words = raw_words(term)
        near = raw_words(_edge(term, form))  # the label ends next to the figure: "portfolio yields $75k" names none
        # "IRA" for "traditional IRA"; a bare name is no label ("Iain £95,000 from his pension"), a possessive is
        loose = [f for f in facts if f.kind == "amount" and (words - _names(doc.facts) or POSSESSIVE.search(term))
                 and _all_but_one(f.label, words)]
        named += [f for f in facts if (label_in(f.label, words) or f in loose) and near & raw_words(f.label)]
    return next((f for f in named if matches(q, f.value, f.unit)), named[0] if named else None)


PER_ON_BEFORE = re.compile(r"\b(?:per|on|je|pro|par)\s+(?:the\s+|each\s+|whole\s+|entire\s+)*$", re.I)
OPERATOR_AFTER = re.compile(r"\s*(?:[+×*/÷−]|[-–x]\s|(?:plus|minus|less|times|divided\s+by)\b)", re.I)


def _names(facts):
    """The words of the client's people's names ("Iain", "Morag Drummond")."""
    return frozenset().union(*(raw_words(f.label) for f in facts if f.kind == "person"))


def _all_but_one(label, words):
    """"IRA" names the "traditional IRA": every word said is the label's, and one of the label's at most is left out."""
    mine = raw_words(label) - WEAK
    said = words - WEAK
    return bool(said - ROLES) and len(mine) >= 2 and said <= mine and len(mine - said) == 1  # not "target" alone


def _edge(term, form):
    """The word of a term next to its figure: the last before it, the first after it."""
    words = term.split()
    if not words:
        return ""
    return words[-1] if form in ("before", "prefix", "colon") else words[0]


SHARE_BEFORE = re.compile(
    rf"(?<!\bwhat\s)(?<!\bwhich\s)(?:%|\b(?:{phrases(_WORDS['share_of_words'])})s?)\s+of\s+"
    r"(?:the\s+|her\s+|his\s+|their\s+|its\s+)?$",
    re.IGNORECASE,
)  # "70% of the", "one seventh of the": the figure after the label is a share of it ("what share of": a question)
SHARE_OF = re.compile(rf"(?:%|\b(?:{phrases(_WORDS['share_of_words'])})s?)\s+of\b", re.IGNORECASE)



def label_in(label, words):
    """Every word of the label as written (but balance, value, ...) is in the words."""
    needed = {w for w in raw_words(label) - WEAK if not w.isdigit()} or raw_words(label)  # "SIPP balance 2": the SIPP
    return bool(needed) and needed <= words


DETERMINER = re.compile(r"^(?:(?:a|an|the|her|his|their|its|some|one|two)\s+)+", re.IGNORECASE)


POSSESSIVE = re.compile(r"[A-Za-z]['’]s$")  # "Lucia's": whose figure it is
