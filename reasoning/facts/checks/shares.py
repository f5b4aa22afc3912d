"""figure (shares): a share the text states between two of the client's holdings, named by their labels; and a
percent the text takes of an amount, where the sheet says what it should be taken of.

"The euro account is roughly a third of their liquid wealth", "Bonds are a quarter of the account today", "The
earn-out is 25% of the price": the subject and the whole are read as the sheet's labels (a holding, or a percent
fact with its base), and the share is recomputed. A fraction word is read to 3 points, hedged or not ("about a
quarter" passes 22-28%), a percent to its precision, 2.5 points more when hedged ("about", "roughly", "over"). A subject or whole the sheet
does not name, or two currencies, is left alone: nothing is claimed about it.

    fails:  "Equities are two-thirds of the account" (60%)    passes: "Equity funds are ~59% of the portfolio"

A percent taken of an amount ("60 % of his EUR 12,6 Mio.", "27,5 % on the EUR 330.000 sold", "at 15 %, selling
$120K ... costs $18K": the product written) is a wrong base where it is a tax on gains and the amount is a sale's
proceeds while the sheet knows a basis, an acquisition cost or a gain (the gain is smaller). A percent in a tax
sentence that is no fact of the sheet, taken of an amount, is unverified: nothing on the sheet says what it is
charged on. (labels.py flags a percent the sheet knows with another base, and a gains tax "of the price".)

    fails:  "KESt of 27,5 % on the EUR 330.000 sold comes to EUR 90.750" (the sheet has the unrealised gains)
"""

from __future__ import annotations

import re

from reasoning.facts.checks.doc import (
    Doc,
    amount_facts,
    close_to,
    fact_of,
    in_currency,
    in_sentence,
    percent_facts,
    sentence_of,
)
from reasoning.facts.checks.words import WEAK, content_words, phrases, table
from reasoning.facts.quantities import format_amount, format_percent
from reasoning.facts.quantities import matches as same_figure
from reasoning.facts.sheet import Finding

KIND = "figure"
FINAL_ONLY = False

FRACTIONS = {
    "half": 1 / 2, "a half": 1 / 2, "one half": 1 / 2, "a third": 1 / 3, "one third": 1 / 3, "two thirds": 2 / 3,
    "a quarter": 1 / 4, "one quarter": 1 / 4, "three quarters": 3 / 4, "a fifth": 1 / 5, "one fifth": 1 / 5,
    "two fifths": 2 / 5, "three fifths": 3 / 5, "four fifths": 4 / 5, "a sixth": 1 / 6, "a seventh": 1 / 7,
    "an eighth": 1 / 8, "a tenth": 1 / 10, "one tenth": 1 / 10,
}  # fmt: skip
FRACTION = "|".join(sorted((k.replace(" ", r"[\s-]") for k in FRACTIONS), key=len, reverse=True))
# "one dollar in four", "one pound in five": a fraction in a reader's words
IN_EVERY = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "ten": 10}
ONE_IN = rf"one\s+(?:[a-z]+\s+)?in\s+(?:{'|'.join(IN_EVERY)})"
HEDGE = (
    r"(?P<hedge>(?:(?:about|roughly|around|nearly|almost|approximately|just|a\s+little|some|over|under|"
    r"more\s+than|less\s+than|~)\s*)*)"
)
SHARE = rf"(?P<share>{ONE_IN}|{FRACTION}|\d+(?:\.\d+)?\s?%)"
# the whole after the share: "of the Depot", "the size of the SIPP", or "half the Depot"
OF_WHOLE = (
    r"(?:\s+of|\s+the\s+size\s+of|(?=\s+(?:the|her|his|their|its|our|your)\s))\s+"
    r"(?:(?:the|her|his|their|its|our|your)\s+)?(?P<whole>[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,2})"
)
SUBJECT = r"(?P<subject>(?:[\w][\w'’-]*\s+){0,3}(?:[\w][\w'’()-]*|\([\w'’ -]+\)))"  # "Government bonds (BTP)"
STATEMENT = re.compile(
    rf"{SUBJECT}(?:\s*,[^,;]{{1,30}},)?\s+"
    r"(?:is|are|makes?\s+up|represents?|accounts?\s+for|sits?\s+at|comes?\s+to|equals?|amounts?\s+to"
    r"|(?:is|are)\s+worth)\s+"
    rf"{HEDGE}{SHARE}{OF_WHOLE}",
    re.IGNORECASE,
)
# the share first: "one dollar in four of the estate sits in Harold's IRA"
INVERTED = re.compile(
    rf"{HEDGE}{SHARE}\s+of\s+(?:(?:the|her|his|their|its|our|your)\s+)?"
    r"(?P<whole>[A-Za-z][\w'’-]*(?:\s+[A-Za-z][\w'’-]*){0,2}?)\s+"
    r"(?:sits?|is\s+held|are\s+held|lies|lie|is|are)\s+(?:with|in|at)\s+(?:the\s+)?"
    r"(?P<subject>[\w][\w'’-]*(?:\s+[\w][\w'’()-]*){0,2}?)(?=\s*[.,;:]|\s*$)",
    re.IGNORECASE,
)
# "the", "so", and a person's name before the holding ("Harold's IRA": the IRA)
LEADING = re.compile(
    r"^(?:(?:the|her|his|their|its|our|your|a|an|so|and|but|today|now|[A-Z][a-z]+['’]s)\s+)+", re.IGNORECASE
)
FIGURE_OF = re.compile(r"(?:\s+(?:of|in)\s+(?:(?:the|her|his|their|its)\s+)?)?")  # "EUR 144,000 of draws"
FRACTION_SLACK, HEDGE_SLACK = 3.0, 2.5  # points
# a word that names a holding of its own: "the savings portfolio" is no "portfolio" with an adjective
CLASS_WORDS = content_words(" ".join(table("words")["synonyms"]["cash"] + table("words")["synonyms"]["stock"])) | {
    "bond", "equitie", "equities", "gold", "pension", "crypto", "property", "real", "fund", "gain", "cost", "basi"}


# Between two written amounts: "$456,000, about a fifth of her $3.8M", "the $900,000 cap is about 5.2% of $17.2M".
BETWEEN = re.compile(
    r"\s*(?:,\s*|(?:[\w'’-]+\s+){0,2}?(?:is|are|was|were|represents?|makes?\s+up|comes?\s+to|amounts?\s+to|equals?"
    r"|accounts?\s+for)\s+)"
    rf"{HEDGE}{SHARE}\s+of\s+(?:(?:the|her|his|their|its|our|your|this|that)\s+)?(?:[A-Za-z][\w'’-]*\s+){{0,2}}$",
    re.IGNORECASE,
)


PERIOD = re.compile(r"\b(?:a|per|each|every)\s+(?:year|month|quarter|week)\b|\b(?:annually|monthly|yearly)\b|/", re.I)


def run(doc: Doc) -> list[Finding]:
    return _statements(doc) + _written_shares(doc) + _applied(doc) + _banded(doc) + _other_base(doc)


def _written_shares(doc):
    """A share stated between two amounts the text writes: the first must be that share of the second, whatever the
    sheet holds ("the gifts total $456,000, about a fifth of her $3.8M of investments": 12%, an eighth)."""
    findings = []
    for start, end in {sentence_of(doc, q.start) for q in doc.quantities if q.kind == "amount"}:
        amounts = in_sentence(doc, start, end, "amount")
        for a, b in zip(amounts, amounts[1:]):
            m = BETWEEN.fullmatch(doc.text, a.end, b.start)
            if m is None or a.unit != b.unit or b.value <= 0 or PERIOD.search(doc.text, a.end, m.start("share")):
                continue  # "CHF 4,000 a month is about 5% of ...": a year's worth of it, most likely
            stated, slack = _stated(m["share"])
            slack += HEDGE_SLACK if m["hedge"].strip() and m["share"].endswith("%") else 0.0
            actual = 100 * a.value / b.value
            span = (m.start("share") - len(m["hedge"]), m.end("share"))
            text = doc.text[span[0] : span[1]]
            if abs(actual - stated) <= slack + 100 * (a.precision / b.value):
                findings.append(Finding(KIND, True, text, f"{text}: {a.text} is {format_percent(actual)} of {b.text}",
                                        *span))  # fmt: skip
            else:
                detail = f"{a.text} is not {text} of {b.text}: it is {format_percent(actual)}"
                findings.append(Finding(KIND, False, text, detail, *span))
    return findings


def _statements(doc):
    findings = []
    matches = list(STATEMENT.finditer(doc.text))
    matches += [m for m in INVERTED.finditer(doc.text) if not any(m.start() < o.end() and o.start() < m.end()
                                                                   for o in matches)]
    for m in matches:
        part = _holding(doc, LEADING.sub("", m["subject"]))
        whole_words = m["whole"]
        if part is None:
            continue
        value, unit, base, label = part
        written = [q for q in doc.quantities if q.kind == "amount" and q.end <= m.end("subject")
                   and FIGURE_OF.fullmatch(doc.text, q.end, max(q.end, m.start("subject")))]  # fmt: skip
        if not base and written and written[0].unit == unit and not same_figure(written[0], value, unit):
            value, label = written[0].value, written[0].text  # "The EUR 144,000 of draws": that figure, not a draw's
        if base:  # a percent fact: its share of its base
            if not _same(base, whole_words):
                continue
            actual = value
        else:
            wholes = _wholes(doc, part, whole_words, m.start())
            if not wholes:
                continue
            actuals = [100 * value / w for w in wholes]
        stated, slack = _stated(m["share"])
        slack += HEDGE_SLACK if m["hedge"].strip() and m["share"].endswith("%") else 0.0
        actual = actuals[0] if not base else value
        if not base:
            actual = min(actuals, key=lambda a: abs(a - stated))  # of several readings of the whole, the kindest
        span = (m.start("share") - len(m["hedge"]), m.end("share"))
        text = doc.text[span[0] : span[1]]
        ok = abs(actual - stated) <= slack
        detail = (
            f"{text} checks out: the {label} is {format_percent(actual)} of the {whole_words}"
            if ok
            else f"{text} is not the {label}'s share: it is {format_percent(actual)} of the {whole_words}"
        )
        findings.append(Finding(KIND, ok, text, detail, span[0], span[1]))
    return findings


def _stated(share):
    """The share written, in percent, and the slack its form allows."""
    words = " ".join(share.lower().replace("-", " ").split())
    if words.startswith("one ") and words.split()[-1] in IN_EVERY:
        return 100 / IN_EVERY[words.split()[-1]], FRACTION_SLACK
    if words in FRACTIONS:
        return 100 * FRACTIONS[words], FRACTION_SLACK
    number = share.rstrip("% ").strip()
    decimals = len(number.split(".")[1]) if "." in number else 0
    return float(number), 0.5 * 10**-decimals


def _same(label, phrase):
    """The phrase names the label: its words (but "balance", "value" ...) are the label's, with at most one of the
    label's left out ("unrealised gains" for "unrealised GIA gains", "the account" for "securities account"), or the
    phrase is the label's initials ("GIA")."""
    alias = re.search(r"\(([^()]+)\)", phrase)  # "Government bonds (BTP)": the name in brackets names it too
    if alias and _same(label, alias[1]):
        return True
    mine, said = content_words(label), content_words(phrase)
    key = (said - WEAK) or said
    if key and key <= mine and len(mine - said) <= 1:
        return True
    initials = "".join(w[0] for w in label.lower().replace("-", " ").split() if w)
    return len(initials) >= 2 and phrase.strip().lower() == initials


def _one_word_more(label, phrase):
    """ "his personal portfolio" is the portfolio: the label's words and one word more that names no holding of its
    own. Tried only where no label is named outright ("the dollar bonds" are the dollar bonds, not the bonds)."""
    mine, said = content_words(label), content_words(phrase)
    return bool(mine - WEAK) and mine <= said and len(said - mine) == 1 and not (said - mine) & CLASS_WORDS


def _described(fact, phrase):
    """The phrase names the fact by a word of its label and otherwise only words of its line on the sheet."""
    said = content_words(phrase) - WEAK
    label = content_words(fact.label)
    return bool(said & label) and said <= label | content_words(fact.text or "")


def _wholes(doc, part, phrase, at):
    """What the whole may be, in the part's currency: the holding the phrase names, with the part added where the
    part is a holding of its own (in another currency: the euro account is no part of the CHF portfolio); where the
    phrase names no holding but a whole ("their liquid wealth", "her estate"), the total of the client's holdings,
    net of debts, or only the liquid ones (reasoning/facts/data/words.toml). [] when nothing says."""
    value, unit, _base, label = part
    whole = _holding(doc, phrase, amounts_only=True)
    start, end = sentence_of(doc, at)
    if whole is not None:
        named = in_currency(doc, whole[0], whole[1], unit, start, end)
        if whole[1] != unit:
            return [w + value for w in named]  # "the euro account is a quarter of their liquid wealth"
        return named if whole[3] != label else []
    holdings = [f for f in amount_facts(doc) if f.role == "holding"]
    if REAL_ESTATE.fullmatch(phrase.strip()):  # "their real estate": the homes, flats and studios together
        homes = [f for f in holdings if PROPERTY.search(f.label)]
        values = [in_currency(doc, f.value, f.unit, unit, start, end) for f in homes]
        return [sum(v[0] for v in values)] if label in {f.label for f in homes} and all(values) else []
    if not WHOLE.search(phrase):
        return []
    debts = sum(f.value for f in amount_facts(doc) if f.role == "liability" and f.unit == unit)
    if label not in {f.label for f in holdings}:
        return []  # a part that is no holding of its own: no total says what it is a share of
    liquid = [f for f in holdings if not ILLIQUID.search(f.label)]
    found = []
    for group in (holdings, liquid):
        values = [in_currency(doc, f.value, f.unit, unit, start, end) for f in group]
        if group and all(values):
            total = sum(v[0] for v in values)
            found += [total, total - debts] if debts else [total]
    return [w for w in found if w > value]


CURRENCY_NAMES = table("words")["currency_names"]
CURRENCY_WORDS = set(CURRENCY_NAMES)


def _currency_named(phrase):
    """The ISO code a label phrase names its holding by ("GBP account", "the euro account"), or ""."""
    for word in phrase.replace("-", " ").split():
        if re.fullmatch(r"[A-Z]{3}", word):
            return word
        if word.lower() in CURRENCY_NAMES:
            return CURRENCY_NAMES[word.lower()]
    return ""


WHOLE = re.compile(rf"\b(?:{phrases(table('words')['whole_words'])})\b", re.IGNORECASE)
REAL_ESTATE = re.compile(rf"(?:{phrases(table('words')['real_estate_wholes'])})", re.IGNORECASE)
PROPERTY = re.compile(rf"\b(?:{phrases(table('words')['property_words'])})\b", re.IGNORECASE)
ILLIQUID = re.compile(rf"\b(?:{phrases(table('words')['illiquid_words'])})", re.IGNORECASE)


def _holding(doc, phrase, amounts_only=False):
    """(value, unit, base, label) of the one fact the phrase names: an amount, or a percent fact (not a target,
    unless the phrase says target) with its base; None when it names none or several."""
    amounts = [f for f in amount_facts(doc) if _same(f.label, phrase)]
    if not amounts:  # "the Lyon studio": the label's word with words of the sheet's own line ("studio let in Lyon")
        amounts = [f for f in amount_facts(doc) if _described(f, phrase)]
    if not amounts:
        amounts = [f for f in amount_facts(doc) if _one_word_more(f.label, phrase)]
    if not amounts:  # "the GBP account", "the euro account": the one holding in that currency
        code = _currency_named(phrase)
        amounts = [f for f in amount_facts(doc) if code and f.unit == code and f.role == "holding"]
        amounts = amounts if len(amounts) == 1 and not set(content_words(phrase)) - WEAK - {code.lower(), *CURRENCY_WORDS} else []
    if len(amounts) > 1:  # "the savings account" names the savings account, not the savings minimum beside it
        exact = [f for f in amounts if f.label.lower() == phrase.strip().lower()]
        held = [f for f in amounts if f.role == "holding"]
        amounts = exact if len(exact) == 1 else held if len(held) == 1 else amounts
    targeted = "target" in phrase.lower()
    percents = [] if amounts_only else [
        f for f in percent_facts(doc)
        if f.base and _same(f.label, phrase) and (("target" in f.label.lower()) == targeted)
    ]  # fmt: skip
    found = amounts + percents
    if len(found) != 1:
        return None
    f = found[0]
    return f.value, f.unit, f.base if f.kind == "percent" else "", f.label


# ---- a percent taken of an amount ----------------------------------------------------------------------------------

_TABLE = table("words")
TAXED = re.compile(rf"(?<!\w)(?:{phrases(_TABLE['tax_words'])})(?!\w)", re.IGNORECASE)  # "income-tax part" too
PROCEEDS = re.compile(rf"\b(?:{phrases(_TABLE['proceeds_words'] + _TABLE['sale_verbs'])})\b", re.IGNORECASE)
BASIS = re.compile(rf"\b(?:{phrases(_TABLE['basis_words'])})\b", re.IGNORECASE)
# "60 % of his", "12.8 % income-tax part on the", "4 % of each child's": the words between a percent and its amount
TAKEN_OF = re.compile(
    r"\s*(?:[\w'’-]+\s+){0,3}?(?:of|on)\s+(?:(?:the|his|her|their|its|each|this|that)\s+)?(?:[\w'’-]+\s+)??$",
    re.IGNORECASE,
)
GAINS_KINDS = frozenset({"capital_gains", "capital_income", "real_estate_gains", "income"})


def _applied(doc):
    """Each percent of a tax sentence taken of an amount: failed where it is a gains tax on proceeds the sheet can
    net (labels.py's own reading of it left alone), unverified where the percent is no fact of the sheet."""
    from reasoning.facts import rules
    from reasoning.facts.checks.labels import _taxed_proceeds

    flagged = {(f.start, f.end) for f in _taxed_proceeds(doc)}
    bases = [f for f in amount_facts(doc) if BASIS.search(f.label)]
    found = []
    for start, end in doc.sentences:
        sentence = doc.text[start:end]
        if not TAXED.search(sentence):
            continue
        gains_tax = bool(bases) and not BASIS.search(sentence) and not rules._topics(sentence) - GAINS_KINDS
        for q in in_sentence(doc, start, end, "percent"):
            x = _taken_of(doc, q, start, end)
            if x is None or (q.start, q.end) in flagged:
                continue
            if gains_tax and _proceeds(doc, x):
                detail = (f"{q.text} is a tax on the gain, but the text takes it of {x.text}, the proceeds (the sheet "
                          f"has the {bases[0].label})")
                found.append(Finding(KIND, False, doc.text[q.start : x.end], detail, q.start, x.end))
            elif not fact_of(q, percent_facts(doc)):
                detail = (f"unverified: {q.text} is not on the fact sheet, so what it is charged on ({x.text}) is not "
                          f"checked")
                found.append(Finding(KIND, True, doc.text[q.start : x.end], detail, q.start, x.end, verified=False))
    return found


def _taken_of(doc, q, start, end):
    """The amount a percent is taken of: the one right after "of" or "on" ("60 % of his EUR 12,6 Mio."), else one
    the sentence multiplies by it, the product written after it ("at 15 %, selling $120K ... costs $18K")."""
    amounts = [x for x in in_sentence(doc, start, end, "amount") if x.start > q.end]
    for x in amounts[:1]:
        if TAKEN_OF.fullmatch(doc.text, q.end, x.start):
            return x
    for i, x in enumerate(amounts):
        product = x.value * q.value / 100
        if any(y.unit == x.unit and close_to(_widened(y), product) for y in amounts[i + 1 :]):
            return x
    return None


def _widened(y):
    from dataclasses import replace

    return replace(y, precision=max(y.precision, 0.02 * abs(y.value)))


def _proceeds(doc, x):
    """Whether an amount is what a sale brings in: the words around it ("the EUR 330.000 sold", "selling $120K", "the
    €6.5M price"), the fact it is, or the fact the text derived it from ("EUR 12,6 Mio.": 70% of the sale price)."""
    said = doc.text[max(0, x.start - 14) : x.end + 16]
    fact = fact_of(x, amount_facts(doc))
    how = doc.derived.get((x.start, x.end)) or ""
    return bool(PROCEEDS.search(said) or (fact and PROCEEDS.search(fact.label)) or PROCEEDS.search(str(how)))


# ---- a band's rate taken of the whole ------------------------------------------------------------------------------

SLICE = re.compile(r"\b(?:above|over|beyond|exceeding|excess|slice|portion|part|band|between|from)\b", re.IGNORECASE)


def _banded(doc):
    """A rate of a banded scale (IFI, Welsh LTT, SDLT: data/jurisdictions.toml `bands`) the sentence names, taken of a whole
    that reaches into the lower bands: "LTT at 7.5% of £450,000" taxes the first £400,000 at 7.5% too."""
    from reasoning.facts import rules

    codes = [f.value for f in doc.facts if f.kind == "place" and isinstance(f.value, str) and f.value]
    places = rules._known(rules.reach(codes)) if codes else []
    taxes = [t for p in places for t in p.taxes if t.bands]
    found = []
    for start, end in doc.sentences:
        sentence = doc.text[start:end]
        for tax in taxes:
            if not any(re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", sentence, re.I) for a in tax.aliases):
                continue
            for q in in_sentence(doc, start, end, "percent"):
                x = _taken_of(doc, q, start, end)
                band = next((b for b in tax.bands if abs(b[1] - q.value) < 1e-9), None)
                if x is None or band is None or not band[0] or x.unit != tax.band_unit or x.value <= band[0]:
                    continue
                if SLICE.search(doc.text, q.end, x.start) or SLICE.search(doc.text, x.end, min(end, x.end + 12)):
                    continue  # "0.7% on the part above EUR 1.3M": the band's own slice
                lower = format_amount(band[0], tax.band_unit)
                due = format_amount(due_by_bands(tax.bands, x.value), tax.band_unit)
                detail = (f"{q.text} of {x.text}: {tax.name} charges {q.text} only on the part above {lower}; the "
                          f"bands below are taxed at their own rates (charged by bands: {due})")
                found.append(Finding(KIND, False, doc.text[q.start : x.end], detail, q.start, x.end))
    return found


def due_by_bands(bands, base):
    """The tax on a base charged slice by slice: each band's rate on the part of the base inside it."""
    due = 0.0
    for (lo, rate), nxt in zip(bands, [*bands[1:], [float("inf"), 0]]):
        if base > lo:
            due += (min(base, nxt[0]) - lo) * rate / 100
    return due


# ---- a percent's product taken of another amount than the one it is of ----------------------------------------------

FROM_HOLDING = re.compile(
    r"\s+(?:[\w-]+\s+){0,3}?(?:from|of|on|in|out\s+of)\s+(?:(?:the|her|his|their|its)\s+)?"
    r"(?P<name>[A-Za-z][\w'’()-]*(?:\s+[A-Za-z][\w'’()-]*){0,2})",
    re.IGNORECASE,
)


def _other_base(doc):
    """A percent whose base the sentence or the sheet names, with a product written that is the percent of another
    amount: "A 3% yearly distribution from the SLAT would be $660k" (3% of the $22M estate, not of the $6M SLAT);
    "the 10 % cash target on all liquid assets of CHF 1.37 Mio. means CHF 137'000" (the target is of the Depot)."""
    found = []
    for start, end in doc.sentences:
        amounts = in_sentence(doc, start, end, "amount")
        for q in in_sentence(doc, start, end, "percent"):
            base = _base_of(doc, q, start, end)
            if base is None:
                continue
            right = base.value * q.value / 100
            if any(close_to(_widened(a), right) for a in amounts):
                continue  # the right product is written: other figures are other steps
            for y in (a for a in amounts if a.start > q.end and a.unit == base.unit):
                if close_to(_widened(y), right) or not _product_of_other(doc, q, y, base, amounts):
                    continue
                detail = (f"{y.text} is not {q.text} of the {base.label} ({display_amount(base)}): that is "
                          f"{format_amount(right, base.unit)}")
                found.append(Finding(KIND, False, doc.text[q.start : y.end], detail, q.start, y.end))
    return found


# Nouns for what a holding yields or costs: "the portfolio gain" is the gain, not the portfolio.
YIELDED = {
    "gain", "gains", "income", "yield", "return", "returns", "growth", "proceeds", "profit", "profits", "dividend",
    "dividends", "interest", "coupon", "coupons", "payout", "payouts", "distribution", "distributions", "fee", "fees",
    "tax", "taxes", "loss", "losses", "rent", "rents",
}  # fmt: skip


def _base_of(doc, q, start, end):
    """The amount fact the percent is of: the sheet's percent it is, by value and label words in the sentence, with
    its base; or the holding named right after it ("3% ... from the SLAT")."""
    words = content_words(doc.text[start:end])
    for f in percent_facts(doc):
        if f.base and abs(f.value - q.value) < 1e-9 and content_words(f.label) <= words:
            bases = [a for a in amount_facts(doc) if a.label == f.base]
            if len(bases) == 1:
                return bases[0]
    m = FROM_HOLDING.match(doc.text, q.end, end)
    if m and not fact_of(q, percent_facts(doc)):
        words = LEADING.sub("", m["name"]).split()
        for n in range(len(words), 0, -1):  # "the SLAT to Joan": the longest words that name one holding
            named = [a for a in amount_facts(doc) if _same(a.label, " ".join(words[:n]))]
            if len(named) == 1:
                # "the portfolio gain": what the holding yields, not the holding
                return None if n < len(words) and words[n].lower() in YIELDED else named[0]
    return None


def _product_of_other(doc, q, y, base, amounts):
    """The written figure is the percent of another amount: one the sentence writes, or one of the sheet's."""
    others = [a.value for a in amounts if a is not y and a.unit == y.unit and abs(a.value - base.value) > 1e-9]
    others += [f.value for f in amount_facts(doc) if f.unit == y.unit and f.label != base.label]
    return any(abs(y.value - v * q.value / 100) <= max(y.precision, 0.01 * y.value) for v in others)


def display_amount(fact):
    return format_amount(fact.value, fact.unit)
