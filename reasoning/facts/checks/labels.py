"""label: a figure of the client's under another fact's label, a rule's name or a role no fact has.

A fact's figure attached to another fact's label ("the cost basis of USD 450k" when USD 450k is the salary), to a
rule ("USD 450k of NIIT") or to a role no fact has ("70% (the target)"); a percent fact applied to another base
than its own ("70% of USD 450k" when it is 70% of the portfolio). Attached means next to it (words.attached_labels);
labels are compared by their content words, with the synonyms of reasoning/facts/data/words.toml.

    fails:  "the cost basis of USD 450k"  (USD 450k is the salary)    passes: "a salary of USD 450k"
"""

from __future__ import annotations

import re

from reasoning.facts import regimes
from reasoning.facts.checks.doc import (
    Doc,
    amount_facts,
    close_to,
    fact_of,
    in_sentence,
    owners_of,
    percent_facts,
    positions,
    sentence_of,
)
from reasoning.facts.checks.figures import proposed
from reasoning.facts.checks.words import (
    AFTER_OF,
    DETERMINER,
    OPERATOR_AFTER,
    POSSESSIVE,
    PORTIONS,
    RATE_WORDS,
    ROLES,
    SHARE_BEFORE,
    WEAK,
    WORDS_AT,
    attached_labels,
    content_words,
    covers,
    figure_at,
    label_term,
    named_fact,
    phrases,
    raw_words,
    table,
)
from reasoning.facts.quantities import format_amount, matches
from reasoning.facts.sheet import Finding

SUM_AFTER = OPERATOR_AFTER  # "Cash above the floor: EUR 300k − 200k": the label is the sum's

KIND = "label"
FINAL_ONLY = False


def run(doc: Doc) -> list[Finding]:
    findings = _taxed_proceeds(doc) + _taxed_whole(doc) + _limit_in_money(doc)
    mentions = doc.mentions
    amounts, percents = amount_facts(doc), percent_facts(doc)
    for q in doc.quantities:
        if (q.start, q.end) in doc.statutory:
            continue
        owners = owners_of(q, amounts if q.kind == "amount" else percents)
        if owners:
            for detail in _mislabels(doc, q, owners, mentions):
                findings.append(Finding("label", False, q.text, detail, q.start, q.end))
        if q.kind == "percent" and not any(_said_here(doc, q, f) for f in owners):
            findings += _applied_elsewhere(doc, q)  # none, or a class's share met by chance ("5%" beside "issuer cap")
    return findings


def _rates_with_a_base(doc):
    """(value, label, base fact) for each percent the sheet ties to one of the client's amounts: a limit in percent
    ("cash minimum 10% of the brokerage account"), a spending rate, and the gap between a target and today's share
    of one base (15% target, 10% today: 5 points of the liquid portfolio)."""
    amounts = amount_facts(doc)

    holdings = [f for f in amounts if f.role == "holding"]

    def base_of(label):
        if content_words(label) <= {"wealth"} and len(holdings) > 1:
            return None  # "20% of investable assets": all of them, not the one holding called a portfolio
        found = [f for f in amounts if content_words(label) and content_words(label) <= content_words(f.label)]
        found = found or [p for p in positions(doc) if content_words(label) and content_words(label) <= content_words(p.label)]
        return found[0] if len(found) == 1 else None  # "10 % of the shares": the LVMH position the sheet's 45 % makes

    found = []
    for f in doc.facts:
        if f.kind in ("limit", "percent") and f.unit == "%" and f.role not in ("share", "target", "") and f.base:
            found.append((f.value, f.label, base_of(f.base)))
    shares = {f.label.lower(): f for f in percent_facts(doc) if f.role == "share"}
    for t in percent_facts(doc):
        share = shares.get(t.label.lower().removesuffix(" target").strip()) if t.role == "target" else None
        if share and share.base == t.base and share.value != t.value:
            found.append((abs(t.value - share.value), f"{share.label} gap to target", base_of(t.base)))
    return [(v, label, base) for v, label, base in found if base is not None]


MEANS = re.compile(r"\b(?:means?|allows?|represents?|is|are|comes?\s+to|equals?|gives?|amounts?\s+to|caps?\s+\w+\s+at)\b"
                   r"(?:\s+(?:about|roughly|around|some|up\s+to|at\s+most))*\s*[~≈]?\s*$", re.I)


REMAINING_BASE = re.compile(r"\b(?:remaining|rest|after|left|net|balance\s+after)\b", re.I)


def _limit_in_money(doc):
    """"The 25 % cap allows EUR 497.350 of sales" where the cap is 25 % of the Depot (EUR 410.000): a limit's or a
    target's percent, named by its words, said to mean an amount that is not that percent of the one amount its base
    names."""
    found = []
    rated = [f for f in doc.facts if f.unit == "%" and isinstance(f.value, int | float) and f.base
             and (f.kind == "limit" or (f.kind == "percent" and f.role == "target"))
             and not REMAINING_BASE.search(f.text or "")]  # "4% of the remaining pot": a base the sheet does not hold
    for q in (q for q in doc.quantities if q.kind == "percent") if rated else ():
        start, end = sentence_of(doc, q.start)
        said = content_words(doc.text[start:end])
        facts = [f for f in rated if abs(f.value - q.value) <= q.precision and (content_words(f.label) - LIMIT_GENERIC) & said]
        if len(facts) != 1:
            continue
        bases = [a for a in amount_facts(doc) if content_words(facts[0].base) and content_words(facts[0].base) <= content_words(a.label)]
        x = next((x for x in in_sentence(doc, q.end, end, "amount") if MEANS.search(doc.text, q.end, x.start)), None)
        if len(bases) != 1 or x is None or x.unit != bases[0].unit or fact_of(x, amount_facts(doc)):
            continue
        right = bases[0].value * q.value / 100
        seen = _widened(x) if re.search(r"(?:about|roughly|around|some|~|≈)\s*$", doc.text[q.end : x.start]) else x
        if not close_to(seen, right):
            detail = (f"{x.text} is not {q.text} of the {bases[0].label} ({format_amount(bases[0].value, bases[0].unit)}), "
                      f"the {facts[0].label}'s base: that is {format_amount(right, x.unit)}")  # fmt: skip
            found.append(Finding("label", False, x.text, detail, x.start, x.end))
    return found


LIMIT_GENERIC = frozenset(content_words("cap limit maximum minimum floor rate gap target share"))


def _applied_elsewhere(doc, q):
    """"Spending at 4.5% of the $158M public-equity sleeve" when the spending rate is 4.5% of the $310M endowment:
    a percent the sheet ties to one amount, applied to another amount the text writes after "of"."""
    m = AFTER_OF.match(doc.text, q.end)
    figure = figure_at(doc, m.end()) if m else None
    if figure is None or figure.kind != "amount":
        return []
    candidates = [(label, base) for value, label, base in _rates_with_a_base(doc) if abs(value - q.value) <= q.precision]
    candidates += [(f.label, whole) for f, whole in _caps_of_the_whole(doc, q) if abs(f.value - q.value) <= q.precision]
    sentence = doc.text[slice(*sentence_of(doc, q.start))]
    said, taxed = content_words(sentence), TAXED.search(sentence)
    candidates = [(label, base) for label, base in candidates if not taxed or (content_words(label) - LIMIT_GENERIC) & said
                  or not content_words(label) - LIMIT_GENERIC]  # "60 % of EUR 1.85M" taxable: a tax's share, no equity cap
    if len({base.label for _label, base in candidates}) != 1:
        return []  # no such percent, or several with other bases: nothing says which it is
    label, base = candidates[0]
    other = fact_of(figure, amount_facts(doc))  # "10% of the CHF 2M chalet" for a cap of the EUR shares: another holding
    if (base.unit != figure.unit and not (other and other.label != base.label)) or matches(figure, base.value, base.unit):
        return []
    detail = f"{q.text} is the {label}, a share of the {base.label} ({format_amount(base.value, base.unit)}), not of {figure.text}"
    return [Finding("label", False, doc.text[q.start : figure.end], detail, q.start, figure.end)]


def _mislabels(doc, q, owners, mentions):
    owner = owners[0]
    mine = set().union(*(content_words(f.label) for f in owners))
    problems, fine = [], False
    named = named_fact(doc, q, [f for f in doc.facts if f.kind == q.kind]) if q.kind == "amount" else None
    if named and named not in owners:  # "brokerage account balance: USD 1.8M" when USD 1.8M is the IRA balance
        return [f"{q.text} is the {owner.label}, not the {named.label}"] + _wrong_base(doc, q, owners)
    for form, term, start, end in attached_labels(doc, q):
        words = content_words(term)
        if form == "prefix" and POSSESSIVE.search(term) and q.kind == "amount":
            form = "bare"  # "Lucia's $3.6M": a possessive names whose figure it is
        elif form == "of" and q.kind == "amount" and _names_kind(doc, q, start):
            form = "bare"  # "their EUR 800,000 of assurance-vie": no portion of it, but what it is
        if not words or form in ("colon", "prefix"):
            continue  # "a pension pays $4,200": words before a figure with no mark between are too loose here
        if form == "before" and SHARE_BEFORE.search(doc.text, max(0, start - 24), start):
            continue  # "one seventh of the estate: $2.4M": a share of the estate, not the estate
        if words & mine:
            fine = True
            continue
        if q.kind == "percent" and (words & RATE_WORDS or form == "of"):
            continue  # a rate, or a share of something else: the base is checked on figures below
        regime = next((m for m in mentions if m.start < end and start < m.end), None)
        if regime and q.kind == "amount":
            if not any(covers(raw_words(" ".join(_regime_names(regime))), raw_words(f.label)) for f in owners):
                problems.append(f"{q.text} is the {owner.label}, not {regime.name}")
            continue
        if q.kind == "percent" and words <= {"wealth"}:
            continue  # "a quarter of the portfolio (26%)": the share's base, not its label
        if form in ("before", "colon") and SUM_AFTER.match(doc.text, q.end):
            continue  # "Financial assets: £1.4M + £420k + ...": the label is the sum's
        if form == "of" or words <= PORTIONS:
            continue  # "USD 450k of employer stock", "a share of USD 3.2M": a portion of a holding, not its label
        others = [f for f in doc.facts if f.kind == q.kind and f not in owners]
        if q.kind == "amount":  # the client's money limits, and the positions the sheet's percents make of its amounts
            others = amount_facts(doc) + positions(doc)
            others = [f for f in others if f not in owners and not matches(q, f.value, f.unit)]
        other = next((f for f in others if covers(content_words(f.label), words)), None)
        if other:
            problems.append(f"{q.text} is the {owner.label}, not the {other.label}")
        elif words & ROLES and not any(words & ROLES & content_words(f.label) for f in doc.facts):
            problems.append(f"{q.text} is the {owner.label}, not {_a(term)}")
    if fine:
        problems = []
    problems = list(dict.fromkeys(problems))
    if q.kind == "percent":
        problems += _wrong_base(doc, q, owners)
    return problems


ARTICLE_AFTER_OF = re.compile(r"(?:the|a|an|her|his|their|its|our|your|this|that|these|those)\b", re.IGNORECASE)


def _names_kind(doc, q, at):
    """"EUR 800,000 of assurance-vie", "GBP 6.8M of uncalled commitments": "of" with no article after it, the figure
    not proposed, names what the figure is; "USD 500k of the portfolio", "sell $1M of employer stock" are portions."""
    return not ARTICLE_AFTER_OF.match(doc.text, at) and not proposed(doc, q)


PROCEEDS = re.compile(rf"\b(?:{phrases(table('words')['proceeds_words'])})\b", re.IGNORECASE)
BASIS = re.compile(rf"\b(?:{phrases(table('words')['basis_words'])})\b", re.IGNORECASE)
TAXED = re.compile(rf"(?<![\w-])(?:{phrases(table('words')['tax_words'])})(?![\w-])", re.IGNORECASE)
GAINS_KINDS = frozenset({"capital_gains", "capital_income", "real_estate_gains", "income"})
TAKEN_OF = re.compile(r"\s*(?:\([^()]{0,40}\)\s*)?(?:of|in|on)\s+")  # a tax's rate "on" its base too
GAIN_LABEL = re.compile(r"\b(?:gain|gains|unreali[sz]ed)\b", re.IGNORECASE)


def _taxed_proceeds(doc):
    """A tax on gains applied to a sale's proceeds where the sheet makes the gain smaller (a cost basis, an
    acquisition cost, a gain of its own): "26.375% of the EUR 180,000 sold", "60% of the EUR 12M price is taxable",
    "at 20% the federal tax on the sale is about $4.8M" (20% of the $24M price). Taxes on value (wealth, estate,
    transfer duties) are left alone, and so is a sentence that names the gain."""
    from reasoning.facts import rules

    if not any(BASIS.search(f.label) for f in amount_facts(doc)):
        return []
    found = []
    for start, end in doc.sentences:
        sentence = doc.text[start:end]
        if not TAXED.search(sentence) or BASIS.search(sentence) or rules._topics(sentence) - GAINS_KINDS:
            continue
        for q in in_sentence(doc, start, end, "percent"):
            target = _proceeds_after(doc, q) or _proceeds_in(doc, q, start, end) or _whole_holding_in(doc, q, start, end)
            if target:
                detail = f"{q.text} is a tax on the gain, but the text applies it to {target}"
                detail += "" if target.endswith("the whole holding") else ", the proceeds"
                found.append(Finding("label", False, doc.text[q.start : q.end], detail, q.start, q.end))
    return found


ABOVE = re.compile(rf"\b(?:{phrases(table('words')['above_exemption_words'])})\b|[−-]\s*\$|\bminus\b", re.IGNORECASE)
TIMES = re.compile(r"\s*(?:×|x|\*|times|of(?:\s+(?:the|his|her|their|its))?)\s*(?:[\w'’-]+\s+){0,1}?", re.IGNORECASE)


def _taxed_whole(doc):
    """An estate or inheritance tax's rate applied to a whole above its exemption with nothing taken off ("Estate
    tax: 40% of his $18M net estate" where the federal exemption is USD 13.99M). A sentence that speaks of the part
    above ("above the exemption", "the excess", a subtraction) is left alone."""
    from reasoning.facts import rules

    taxes = rules.exempt_taxes(doc.facts)
    found = []
    for start, end in doc.sentences if taxes else ():
        sentence = doc.text[start:end]
        if not rules._topics(sentence) & {"estate", "inheritance"} or ABOVE.search(sentence):
            continue
        for q in in_sentence(doc, start, end, "percent"):
            m = TIMES.match(doc.text, q.end)
            whole = figure_at(doc, m.end()) if m else None
            if whole is None or whole.kind != "amount":
                continue
            for tax, exempt, unit in taxes:
                if unit == whole.unit and whole.value > exempt and tax.fits(q.value, q.precision or 0.5):
                    detail = (f"{q.text} is the {tax.name}'s rate, levied only above its exemption "
                              f"({format_amount(exempt, unit)}): on {whole.text} it is about "
                              f"{format_amount((whole.value - exempt) * q.value / 100, unit)}")  # fmt: skip
                    found.append(Finding("label", False, doc.text[q.start : whole.end], detail, q.start, whole.end))
                    break
    return found


def _proceeds_after(doc, q):
    """"26.375% of the EUR 180,000 sold", "60% of the EUR 12M price", "26,375 % on the EUR 1.150.000 Depot" (whose
    gain the sheet gives): the proceeds or the whole value the percent is taken of."""
    m = TAKEN_OF.match(doc.text, q.end)
    figure = figure_at(doc, m.end()) if m else None
    if figure is None or figure.kind != "amount":
        return ""
    said = doc.text[max(0, figure.start - 12) : min(len(doc.text), figure.end + 16)]
    fact = fact_of(figure, amount_facts(doc))
    if PROCEEDS.search(said) or (fact and PROCEEDS.search(fact.label)):
        return figure.text
    # "26,375 % on the EUR 1.150.000 Depot" where the sheet gives the Depot's own gain (EUR 310.000): its whole value
    gains = [f for f in amount_facts(doc) if GAIN_LABEL.search(f.label) and fact and f.unit == fact.unit]
    return f"{figure.text}, the whole holding" if fact and any(g.value < fact.value for g in gains) else ""


def _proceeds_in(doc, q, start, end):
    """"At 20% the tax on the sale is about $4.8M": an amount of the sentence that is the percent of a proceeds fact."""
    if not PROCEEDS.search(doc.text, start, end):
        return ""
    for fact in amount_facts(doc):
        if not PROCEEDS.search(fact.label):
            continue
        for x in in_sentence(doc, start, end, "amount"):
            if x.unit == fact.unit and close_to(_widened(x), fact.value * q.value / 100):
                return f"the {fact.label} ({format_amount(fact.value, fact.unit)})"
    return ""


def _whole_holding_in(doc, q, start, end):
    """"Cashing in the entire £260,000 GIA means £62,400 of CGT at the 24% rate" where the sheet gives the GIA's own
    gain (£72,000): an amount of the sentence that is the percent of a holding the sentence names, whole."""
    said = content_words(doc.text[start:end])
    for fact in amount_facts(doc):
        mine = content_words(fact.label) - WEAK
        gains = [g for g in amount_facts(doc) if g is not fact and GAIN_LABEL.search(g.label) and g.unit == fact.unit
                 and mine and mine <= content_words(g.label) and g.value < fact.value]  # fmt: skip
        if fact.role != "holding" or not gains or not mine & said:
            continue
        for x in in_sentence(doc, start, end, "amount"):
            if x.unit == fact.unit and close_to(_widened(x), fact.value * q.value / 100):
                return f"the whole {fact.label} ({format_amount(fact.value, fact.unit)}), the whole holding"
    return ""


def _widened(x):
    from dataclasses import replace

    return replace(x, precision=max(x.precision, 0.02 * abs(x.value)))


def _caps_of_the_whole(doc, q):
    """(limit, whole) for each limit in percent whose base is no amount but what it caps ("5% in one issuer", "20%
    in one name"): a share of the client's whole, here its largest holding. Only where the sentence names the limit
    ("the 8% issuer cap"), since a percent of the text meets such a limit by chance."""
    holdings = [f for f in amount_facts(doc) if f.role == "holding"]
    amounts = amount_facts(doc)
    found = []
    for f in doc.facts:
        if f.kind != "limit" or f.unit != "%" or not holdings or not _said_here(doc, q, f):
            continue
        if any(content_words(f.base) and content_words(f.base) <= content_words(a.label) for a in amounts):
            continue  # a base on the sheet: _rates_with_a_base reads it
        found.append((f, max(holdings, key=lambda h: h.value)))
    return found


def _said_here(doc, q, fact):
    """The sentence of q names the fact ("Spending at 4.5% of ..."), or the fact is a rate of its own (a spending
    rate, a fee) rather than a class's share, which a percent of the text meets by chance ("trim 5% of ...")."""
    start, end = sentence_of(doc, q.start)
    words = content_words(fact.label) - content_words("target share rate")
    return bool(words) and words <= content_words(doc.text[start:end])


def _base_amount(doc, percents):
    """The one amount of the sheet all these percents are shares of (their base names it), or None."""
    found = {f.label: f for p in percents for f in amount_facts(doc)
             if content_words(p.base) and content_words(p.base) <= content_words(f.label)}  # fmt: skip
    return next(iter(found.values())) if len(found) == 1 else None


def _regime_names(mention):
    table = next((r for r in regimes.REGIMES if r.name == mention.name), None)
    return table.names if table else (mention.name,)


def _a(term):
    words = DETERMINER.sub("", term.strip())
    return f"{'an' if words[:1].lower() in 'aeiou' else 'a'} {words}"


def _wrong_base(doc, q, owners):
    """"70% of USD 450k" when 70% is a share of the portfolio and USD 450k the salary."""
    bases = [f for f in owners if f.base]
    m = AFTER_OF.match(doc.text, q.end)
    if not bases or not m:
        return []
    base_words = set().union(*(content_words(f.base) | content_words(f.label) for f in bases))
    figure = figure_at(doc, m.end())
    if figure is not None:
        if figure.kind != "amount":
            return []
        named = [f for f in amount_facts(doc) if matches(figure, f.value, f.unit)]
        base_only = set().union(*(content_words(f.base) - WEAK for f in bases))  # "ISA balance" is no "SIPP balance"
        if not named:  # "4.5% of the $158M public-equity sleeve": a figure of its own, where the base is on the sheet
            bases = [f for f in bases if _said_here(doc, q, f)]
            whole = _base_amount(doc, bases) if bases else None
            if whole is None or whole.unit != figure.unit or matches(figure, whole.value, whole.unit):
                return []
            label = bases[0].label
            return [f"{q.text} is the {label}, a share of the {whole.label} ({format_amount(whole.value, whole.unit)}), "
                    f"not of {figure.text}"]  # fmt: skip
        if any((content_words(f.label) - WEAK) & base_only for f in named):
            return []
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {named[0].label} ({figure.text})"]
    words = WORDS_AT.match(doc.text, m.end())
    term = content_words(label_term(words[0])) if words else set()
    if not term or term & base_words:
        return []
    other = next((f for f in doc.facts if f.kind == "amount" and covers(content_words(f.label), term)), None)
    if other and not _product_follows(doc, q, other):
        return [f"{q.text} is the {bases[0].label} of the {bases[0].base}, not of the {other.label}"]
    return []


def _product_follows(doc, q, other):
    """The sentence writes q's share of the other amount right after ("capped at 30 % of AGI: $270,000"): the percent
    is the other's own (a limit of the law's), not the sheet's share met by chance."""
    _start, end = sentence_of(doc, q.start)
    after = in_sentence(doc, q.end, end, "amount")[:1]
    return bool(after) and after[0].unit == other.unit and close_to(after[0], other.value * q.value / 100)


