"""The client's constraints checked: limits, horizons and commitments on the sheet against a step or an answer.

`findings(text, facts, final)` returns Findings of kind "constraint", failed ones and kept ones (ok=True, naming the
constraint, so a badge can say "4 constraints kept"). Pure: no Django, no litellm. Whatever it cannot tie to a
constraint it leaves alone; each rule says what it reads.

- limit, floor or minimum on cash: a reserve stated in months (or years) of expenses below a floor in months ("keep
  6 months of expenses in cash" under 18), or a cash level as an amount below the floor's money ("hold CHF 120k in
  cash" under CHF 200k; a months floor in money when the sheet has the monthly or yearly expenses or a spending rate
  of an amount; a percent of an account when the account is on the sheet). A level is read only in its own forms
  ("keep/hold/leave X in cash", "cash (reserve) of/at/down to X", "X as a reserve", "N months of expenses"), or as
  cash spent down ("put the EUR 300k cash into equities": the cash holding less the amount); a flow ("move CHF 50k
  into cash"), an extra pot, today's level and other currencies are left alone. Cash run to nothing ("no cash kept
  back", "spend the cash down to zero") is a level of 0; so is the whole of the one liquid account given away where
  the sheet lists no cash ("put the whole brokerage account into a trust": words.toml [liquid]).
- limit, cap or maximum: a percent tied to the limit's object ("12% in one issuer", "a 15% position", "cap each
  issuer at 12%") above the cap, or an amount put into one named issuer above the cap's money ("buy USD 12M of
  Microsoft" for 3% of USD 310M), or into one fund above a cap per fund ("EUR 600k into one equity fund" for 20% of
  EUR 2.4M). Today's shares, trades, the level being cut, classes and places are not.
- horizon over N: the plan's own timing ("three steps over six weeks", "immediately", "this quarter") under half of
  N or over 1.5 times N; within N: a longer timing; by/before a date: a date that starts after the deadline ("by
  2035", "Q4 2027" for "by June 2027"); before/by an age: "after retiring", "in retirement" or a later age in a
  sentence that acts, "keep working until 64" for a retirement at 60. A timing is read after a timing word (over,
  within, in, across, during, the next ...) or as "a N-year plan"; "a 2-year GRAT", "every 6 months", a part's
  timing ("the first tranche within 30 days") and an obligation's schedule say nothing about the horizon. A
  horizon is tied to the clause that names what it governs (its label, base and words; "rebalancing" brings the
  targets' classes); with several duration horizons on the sheet, a sentence must name the horizon's object. A date
  for a duration horizon's subject that starts after the horizon ends, counted from today, breaks it ("push the
  closing to spring 2028" under "within 9 months").
- a split into tranches, thirds or equal parts of an amount of the sheet that is not the amount to be moved (the
  sheet's amount for the trades, or the drift of current shares above their targets times their base), and a new
  commitment to a class the uncalled commitments already take to its target.
- statutory limits (statutes.py): a bracket to stay within, and the Swiss buy-in lock before a planned lump sum.
- final answers only: each commitment or liability (amounts with role commitment / liability) is provided for: a
  sentence names it (its words, a synonym: capital calls, uncalled, mortgage, loan; or its amount) and acts on it
  (`addressed`).

Measures that presuppose what the sheet rules out (tax-loss harvesting for a Swiss private investor) belong to the
jurisdiction table (rules.py), not here.

`addressed(text, start, end)` (acting.py) says whether the sentence around a mention acts on it; the coverage
(text, facts)` is today's coverage rule (check.py) that requires it, for the checker to wire in; both are importable
from here. Sentences, durations and dates are read in phrases.py.
"""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

from reasoning.facts import statutes
from reasoning.facts.acting import ACTIONS, acts, addressed, verbs
from reasoning.facts.phrases import (
    MONTH_NAMES,
    MONTHS,
    START,
    clause_at,
    deadlines,
    durations,
    sentence_at,
    sentences,
    timings,
)
from reasoning.facts.quantities import Quantity, find_quantities, format_amount, format_percent
from reasoning.facts.sheet import Fact, Finding, display

__all__ = ["addressed", "findings"]


def _deadline(horizon):
    """The end of a calendar horizon, as a fractional year: "by June 2027" 2027.5, "by 2031" 2032.0 (its end),
    "before 2031" 2031.0."""
    year = float(horizon.value)
    m = re.search(rf"\b({MONTH_NAMES})\.?\s+{int(year)}\b", horizon.text or "", re.IGNORECASE)
    if m:
        n = next(i for i, name in enumerate(MONTHS) if name.startswith(m[1].lower()[:3]))
        return year + (n + 1) / 12 if horizon.role != "before" else year + n / 12
    return year if horizon.role in ("before", "after") else year + 1


# ---- the constraints ----------------------------------------------------------------------------------------------


def findings(text: str, facts: list[Fact], final: bool) -> list[Finding]:
    """Each statement of the text about a limit or horizon of the sheet, kept or broken; on a final answer, each
    commitment or liability provided for or not, and a split of an amount that is not the one to be moved."""
    text = text or ""
    found = []
    limits = [f for f in facts if f.kind == "limit" and isinstance(f.value, int | float)]
    horizons = [f for f in facts if f.kind == "horizon" and isinstance(f.value, int | float)]
    for limit in limits:
        found += _limit(text, limit, facts)
    spans = [f for f in horizons if f.unit in ("months", "years")]
    for horizon in horizons:
        found += _horizon(text, horizon, len(spans) > 1 and horizon in spans, facts)
    found = [f for f in found if not _about_obligation(text, f, facts)]
    found += _splits(text, facts) + _tranches(text, facts) + _new_commitments(text, facts) + statutes.findings(text, facts)
    found += [f for limit in limits for f in _over_cap(text, limit, facts)]
    if final:
        found += _commitments(text, facts)
    unique = {}
    for f in found:
        unique.setdefault((f.start, f.end, f.detail), f)
    return sorted(unique.values(), key=lambda f: (f.start, f.end))


def _about_obligation(text, finding, facts):
    """A horizon's timing in a sentence about a commitment or liability ("meet the calls over the next 18 months")
    is the obligation's schedule, not the plan's."""
    if finding.start < 0 or not any(f.kind == "horizon" and _name(f) in finding.detail for f in facts):
        return False
    obligations = [f for f in facts if f.kind == "amount" and f.role in ("commitment", "liability")]
    if not obligations:
        return False
    s, e = sentence_at(text, finding.start)
    return any(_mentions(text[s:e], _obligation_words(f)) for f in obligations)


def _name(fact):
    return f"{fact.label} ({display(fact)})"


def _negated(text, start):
    return (
        re.search(
            r"\b(?:not|rather\s+than|instead\s+of|than|never|from)\s+(?:just\s+|only\s+|the\s+)?$",
            text[max(0, start - 20) : start],
            re.IGNORECASE,
        )
        is not None
    )


def _verdict(limit, value, span, text, shown):
    """A finding for one stated level against the limit: below a floor or minimum, above a cap or maximum."""
    low = limit.role in ("floor", "minimum")
    broken = value < limit.value - 1e-9 if low else value > limit.value + 1e-9
    bound = "below" if low else "above"
    if broken:
        detail = f"{shown} is {bound} the client's {_name(limit)}"
    else:
        detail = f"{shown} keeps the client's {_name(limit)}"
    return Finding("constraint", not broken, text[span[0] : span[1]], detail, span[0], span[1])


EXPENSES = (
    r"(?:(?:annual|yearly|monthly|living|household|running|the\s+family's|her|his|their|the|of)\s+)*"
    r"(?:expenses|costs|spending|outgoings|expenditure|living\s+costs|burn|needs|cash\s+needs|withdrawals)\b"
)
CASH_WORDS = (
    r"(?:cash|liquidity|money[-\s]market|deposits?|reserves?|buffer|cushion|runway|(?:working|cash|liquid|bank)\s+balance"
    r"|(?:emergency|rainy[-\s]day)\s+(?:fund|pot)|current\s+account|checking(?:\s+account)?|Tagesgeld)"
)
# "A $200k bank balance is enough": a level the sentence calls sufficient
ENOUGH_AFTER = re.compile(
    rf"^\s*(?:of\s+)?{CASH_WORDS}\s+(?:is|are|would\s+be|will\s+be|should\s+be)\s+(?:enough|sufficient|plenty|ample)\b",
    re.IGNORECASE,
)
MONTHS_LEVEL_AFTER = re.compile(
    rf"^\s*(?:of\s+{EXPENSES}|(?:of\s+)?(?:cash|liquidity)\s*(?:reserve|buffer|cushion|runway)?"
    r"|[\s-]*(?:(?:cash|liquidity)\s+)?(?:reserve|buffer|cushion|runway|floor)"
    r"|[\s-]*(?:emergency|rainy[-\s]day)\s+(?:fund|reserve|pot|account|cash))",
    re.IGNORECASE,
)
MONTHS_LEVEL_BEFORE = re.compile(
    rf"\b(?:{CASH_WORDS}|floor)\s+(?:reserve\s+|buffer\s+)?"
    r"(?:of|for|covers?|covering|to\s+cover|lasts?|worth|equal\s+to|at|to|:)\s+"
    r"(?:at\s+least\s+|only\s+|just\s+|about\s+|roughly\s+|around\s+)?$",
    re.IGNORECASE,
)
AMOUNT_LEVEL_BEFORE = re.compile(
    rf"(?:\b(?:keep|keeps|keeping|hold|holds|holding|leave|leaves|leaving|retain|retaining|maintain|maintaining|park"
    rf"|set\s+aside|reserve|earmark)\s+(?:only\s+|just\s+|about\s+|roughly\s+|around\s+|at\s+least\s+)?"
    rf"|\b{CASH_WORDS}\s*(?:reserve|buffer|cushion|floor|position|holdings?)?\s*"
    rf"(?:(?:could|can|would|will|may|might|should)\s+(?:be\s+)?)?(?:of|at|:|to|=|stays?\s+at"  # "cash could be run down to"
    rf"|remains?\s+at|falls?\s+to|drops?\s+to|(?:go|goes|run|runs|drawn|brought|cut|dip|dips|sink|sinks)\s+(?:down\s+)?to|down\s+to"
    rf"|is)\s+(?:only\s+|just\s+|about\s+|roughly\s+|around\s+)?)$",
    re.IGNORECASE,
)
AMOUNT_LEVEL_AFTER = re.compile(
    rf"^\s*(?:in\s+(?:the\s+|a\s+)?{CASH_WORDS}|(?:of\s+)?{CASH_WORDS}\b"
    r"|as\s+(?:a\s+|the\s+)?(?:cash\s+)?(?:reserve|buffer|cushion))",
    re.IGNORECASE,
)


def _limit(text, limit, facts):
    if limit.unit in ("months", "years"):
        return _months_floor(text, limit, facts)
    if limit.unit == "%":
        whole = _whole(limit, facts)
        money = whole and Fact(
            **{**limit.__dict__, "value": round(limit.value / 100 * whole.value), "unit": whole.unit}
        )
        capped = _capped_of(text, limit, whole, facts)
        if money and _cashy(limit):  # "at least 10% of the brokerage account in cash": a cash level in money
            return _amount_limit(text, money, shown_limit=limit, facts=facts) + capped
        extra = (
            _issuer_amounts(text, money, limit) + _fund_amounts(text, money, limit) + _manager_amounts(text, money, limit)
            if money else []
        )  # fmt: skip
        return _percent_limit(text, limit, facts) + extra + capped
    if re.fullmatch(r"[A-Z]{3}", limit.unit or ""):
        return _amount_limit(text, limit, facts=facts)
    return []


CASHY = {"cash", "liquidity", "reserve", "reserves", "buffer", "deposits", "deposit", "liquid", "savings", "emergency",
         "tagesgeld", "festgeld", "sparbuch", "checking"}


def _cashy(limit):
    return bool((_content(limit.base) | _content(limit.label) | _content(limit.text)) & CASHY)


def _whole(limit, facts):
    """The amount a percent limit is a share of: the one its base or words name ("of the endowment"), else the one
    the sheet's percents share."""
    amounts = [f for f in facts if f.kind == "amount" and isinstance(f.value, int | float) and f.value > 0]
    words = _content(limit.base) | _content(limit.text)
    named = [f for f in amounts if _content(f.label) and _content(f.label) <= words]
    if named:
        return max(named, key=lambda f: len(_content(f.label)))
    bases = [f.base for f in facts if f.kind == "percent" and f.base]
    common = max(set(bases), key=bases.count) if bases else ""
    return next((f for f in amounts if f.label == common), None)


ISSUER_AMOUNT = re.compile(
    r"\s*(?:(?:into|in|of)\s+(?:the\s+)?)(?P<name>[A-Z][\w&.’'-]+)(?P<next>\s+[\w-]+)?",
)
NOT_ONE_ISSUER = set(
    "swiss us uk eu european global emerging japanese german french italian chinese american asian world international "
    "treasury treasuries bund bunds gilts gold the a an".split()
)
FUND_WORDS = set("fund funds etf etfs index tracker portfolio account trust sleeve mandate".split())  # and CLASSES
BUY_WORDS = re.compile(r"\b(?:put|puts|putting|buy|buys|buying|invest\w*|add\w*|hold\w*|keep\w*|allocat\w*)\b", re.I)


FUND_AFTER = re.compile(
    r"(?:\s+[\w&.’'-]+){0,4}?\s+(?:[A-Z]{2,}\b|S&P|(?i:funds?|etfs?|index|tracker|ucits|trust|portfolio)\b)"
)


def _issuer_amounts(text, money, limit):
    """An amount put into one named issuer against a cap in percent of the whole: "Put CHF 600k into Nestlé" when
    the cap is 8% of CHF 5.2M (CHF 416k). Funds, classes and places ("into Swiss equities") are left alone."""
    issuer = _content(limit.base) & {"issuer", "issuers", "name", "single", "position", "stock", "company"}
    if not issuer or limit.role not in ("cap", "maximum"):
        return []
    out = []
    for q in find_quantities(text):
        m = ISSUER_AMOUNT.match(text, q.end) if q.kind == "amount" and q.unit == money.unit else None
        if not m or m["name"].lower() in NOT_ONE_ISSUER or m["name"].isupper():
            continue
        if m["next"] and m["next"].strip().lower() in FUND_WORDS | CLASSES | {"and", "or", "&"}:
            continue  # "in Apple and Microsoft": the amount is shared
        if FUND_AFTER.match(text, m.end("name")):
            continue  # "in Vanguard FTSE All-World": a fund
        s, e = sentence_at(text, q.start)
        if not BUY_WORDS.search(text, s, q.start) or _negated(text, q.start):
            continue
        finding = _verdict(money, q.value, (q.start, q.end), text, f"{q.text} in {m['name']}")
        finding.detail = finding.detail.replace(
            _name(money), f"{_name(limit)}, {format_amount(money.value, money.unit)}"
        )
        out.append(finding)
    return out


ONE_FUND = re.compile(
    r"\s*(?:into|in|to)\s+(?:one|a\s+single|a|an|the|one\s+single)\s+(?:[\w&.’'-]+\s+){0,4}?"
    r"(?:fund|ETF|tracker|index\s+fund|mutual\s+fund|UCITS|SICAV)\b",
    re.IGNORECASE,
)


def _fund_amounts(text, money, limit):
    """An amount put into one fund against a cap per fund in percent of the whole: "Put EUR 600k into one global
    equity fund" when the cap is 20% of EUR 2.4M (EUR 480k). Amounts shared by several funds are left alone."""
    if not _content(limit.base) & {"fund", "funds", "etf", "etfs"} or limit.role not in ("cap", "maximum"):
        return []
    out = []
    for q in find_quantities(text):
        if q.kind != "amount" or q.unit != money.unit or not ONE_FUND.match(text, q.end):
            continue
        s, e = sentence_at(text, q.start)
        if not BUY_WORDS.search(text, s, q.start) or _negated(text, q.start):
            continue
        span = (q.start, ONE_FUND.match(text, q.end).end())
        finding = _verdict(money, q.value, span, text, f"{q.text} in one fund")
        finding.detail = finding.detail.replace(
            _name(money), f"{_name(limit)}, {format_amount(money.value, money.unit)}"
        )
        out.append(finding)
    return out


MANAGER_WORDS = {"manager", "managers", "mandate", "mandates"}
ONE_MANAGER = re.compile(r"\b(?:manager|mandate)\b(?!s)", re.IGNORECASE)
GIVE_WORDS = re.compile(
    rf"{BUY_WORDS.pattern}|\b(?:give|gives|giving|award\w*|hand\w*|entrust\w*|assign\w*|hire\w*|appoint\w*)\b",
    re.IGNORECASE,
)
RULE_WORDS = re.compile(r"(?<![\w-])(?:cap|caps|capped|limit|max|maximum|at\s+most|per\s+manager)\b", re.IGNORECASE)


def _manager_amounts(text, money, limit):
    """An amount given to one manager against a cap per manager in percent of the whole: "Give the new small-cap
    manager a $6M mandate" when the cap is 5% of $85M ($4.25M). The cap's own statement is left alone."""
    if not (_content(limit.base) | _content(limit.label)) & MANAGER_WORDS or limit.role not in ("cap", "maximum"):
        return []
    out = []
    for s, e in sentences(text):
        sentence = text[s:e]
        if not ONE_MANAGER.search(sentence) or not GIVE_WORDS.search(sentence) or RULE_WORDS.search(sentence):
            continue
        for q in find_quantities(sentence):
            if q.kind != "amount" or q.unit != money.unit or _negated(text, s + q.start):
                continue
            finding = _verdict(money, q.value, (s + q.start, s + q.end), text, f"{q.text} with one manager")
            finding.detail = finding.detail.replace(
                _name(money), f"{_name(limit)}, {format_amount(money.value, money.unit)}"
            )
            out.append(finding)
    return out


DRAIN = re.compile(
    r"\b(?:put|puts|putting|move|moving|invest|investing|use|using|deploy|deploying|spend|spending|give|giving"
    r"|transfer|transferring|shift|shifting|sweep|allocate|switch|pour)\s+(?P<what>(?:all\s+(?:of\s+)?|the\s+(?:whole|full|"
    r"entire)\s+|the\s+|her\s+|his\s+|their\s+|its\s+)*"
    # the amount's words, never a comparison's: "spending (£336,000) against cash" spends no cash
    r"(?:(?!(?:against|versus|vs|compared|than|beside)\b)(?:[^\s,;.]|[.,'’](?=\d))+[kKmM]?\s+){0,2}?"
    r"(?:of\s+)?(?:the\s+|her\s+"
    r"|his\s+|their\s+)?(?:brokerage\s+)?(?:cash|deposits?|liquidity|savings))\b(?!\s+(?:reserve|buffer|floor))",
    re.IGNORECASE,
)


ABOVE_FLOOR = re.compile(
    r"\s*(?:\w+\s+){0,2}?(?:above|beyond|over|in\s+excess\s+of|except|but|less|minus|apart\s+from|beside|save)\b",
    re.IGNORECASE,
)


def _drained(text, limit, facts):
    """Cash spent down below the floor: "Put the EUR 300k cash into equities" when the cash is EUR 300k and the
    minimum EUR 200k; "use the whole EUR 300k of deposits"; the level left is the cash holding less the amount."""
    holdings = [
        f
        for f in facts
        if f.kind == "amount" and f.unit == limit.unit and f.role in ("", "holding") and _content(f.label) & CASHY
    ]
    out = [] if holdings else _given_away(text, limit, facts)
    for m in [*DRAIN.finditer(text), *TAKEN_FROM.finditer(text)]:
        what = m["what"]
        amounts = [q for q in find_quantities(what) if q.kind == "amount" and q.unit == limit.unit]
        whole = re.search(r"\b(?:all|whole|full|entire)\b", what, re.IGNORECASE)
        if _negated(text, m.start()) or not (amounts or whole) or ABOVE_FLOOR.match(text, m.end()):
            continue  # "invest all cash above the USD 450k floor" keeps the floor
        holding = holdings[0].value if holdings else None
        if amounts and holding is not None:
            left = holding - amounts[0].value
        elif whole and (holding is not None or not amounts):
            left = 0
        else:
            continue
        shown = f"{m[0]} (leaves {format_amount(max(left, 0), limit.unit)})"
        out.append(_verdict(limit, max(left, 0), m.span(), text, shown))
    return out


# "take EUR 60,000 from savings", "withdraw CHF 80k out of the cash": an amount taken out of the cash holding
TAKEN_FROM = re.compile(
    r"\b(?:take|takes|taking|took|withdraw|withdraws|withdrawing|pull|pulls|pulling|draw|draws|drawing)\s+"
    r"(?P<what>(?:[A-Z]{3}\s)?(?:[^\s,;.]|[.,'’](?=\d))+[kKmM]?(?:\s+(?:million|thousand|[A-Z]{3}))?)\s+"
    r"(?:out\s+)?(?:of|from)\s+"
    r"(?:the\s+|her\s+|his\s+|their\s+)?(?:cash|deposits?|liquidity|savings|Tagesgeld)\b(?!\s+(?:reserve|buffer|floor))",
    re.IGNORECASE,
)
SPENT_WHOLE = r"(?:the\s+whole|the\s+entire|all\s+(?:of\s+)?(?:the|her|his|their))"
ZERO_LEVEL = re.compile(
    rf"\bno\s+{CASH_WORDS}\s+(?:is\s+|at\s+all\s+)?(?:kept|left|held|retained|set\s+aside)(?:\s+back)?\b"
    rf"|\b(?:keep|keeps|keeping|hold|holds|holding|leave|leaves|leaving|retain\w*)\s+no\s+{CASH_WORDS}"
    rf"|\b(?:keep|keeps|keeping|leave|leaves|leaving)\s+nothing\s+(?:in|as)\s+(?:the\s+|a\s+)?{CASH_WORDS}"
    rf"|\b{CASH_WORDS}\s+(?:[\w-]+\s+){{0,2}}?(?:down\s+)?to\s+(?:zero|nil|nothing|nought)\b"
    rf"|\b(?:with|from|using|use|uses|spend|spends|spending)\s+{SPENT_WHOLE}\s+{CASH_WORDS}"  # "fund it with the whole Tagesgeld"
    r"|\b(?:empty|emptying|empties|drain|drains|draining|exhaust|exhausts|exhausting)\s+(?:the\s+|all\s+)?"
    rf"{CASH_WORDS}(?!\s+(?:down\s+)?to\s+\S*\d)(?!\s+down\s+to\s+[a-z]+\s+(?:thousand|hundred|million))",  # "down to CHF 30k": a level
    re.IGNORECASE,
)


def _zero_levels(text, limit, named):
    """Cash run to nothing: "no cash kept back", "spend the cash down to zero", "keep no reserve": a level of 0
    under any floor or minimum."""
    if limit.role not in ("floor", "minimum"):
        return []
    out = []
    for m in ZERO_LEVEL.finditer(text):
        before = text[max(0, m.start() - 30) : m.start()]
        if _negated(text, m.start()) or re.search(r"\b(?:never|not|don't|avoid)\b", before, re.I):
            continue
        finding = _verdict(limit, 0, m.span(), text, f"{m[0]} (leaves none)")
        finding.detail = finding.detail.replace(_name(limit), _name(named))
        out.append(finding)
    return out


ACTIONS_SET = frozenset(ACTIONS) | {
    "push", "pushes", "delay", "delays", "defer", "defers", "wait", "receive", "receives"
}  # fmt: skip
_AS_OF = tomllib.loads((Path(__file__).with_name("data") / "jurisdictions.toml").read_text())["meta"]["as_of"]
_LIQUID = tomllib.loads((Path(__file__).with_name("data") / "words.toml").read_text())["liquid"]
GIVE_ALL = re.compile(
    r"\b(?:put|puts|putting|give|gives|giving|gift|gifts|gifting|transfer|transfers|transferring|move|moving|settle"
    r"|settling|donate|donating|contribute|contributing|pledge|pledging)\s+(?:all\s+(?:of\s+)?(?:the\s+|her\s+|his\s+"
    r"|their\s+)?|the\s+(?:whole|full|entire)\s+|(?:her|his|their)\s+(?:whole|entire)\s+)",
    re.IGNORECASE,
)


def _liquid_holding(facts, unit):
    """The one holding in the currency whose label names a liquid account, when the sheet lists no cash: where
    the client's cash sits. None when there are several or none."""
    def has(label, words):
        return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", label, re.IGNORECASE) for w in words)

    found = [
        f for f in facts
        if f.kind == "amount" and f.unit == unit and f.role in ("", "holding") and isinstance(f.value, int | float)
        and has(f.label, _LIQUID["accounts"]) and not has(f.label, _LIQUID["not_liquid"])
    ]  # fmt: skip
    return found[0] if len(found) == 1 else None


# "Move €95,000 from the conto corrente", "verser les 120 000 € depuis le compte courant", "with all £150,000 of
# cash": an amount taken out of one named account, whose floor the level left must keep.
FROM_ACCOUNT = re.compile(
    r"\b(?:from|out\s+of|depuis|dal|dalla|dallo|vom|von|aus|of)\s+(?:the\s+|her\s+|his\s+|their\s+|le\s+|la\s+|l['’]|"
    r"il\s+|lo\s+|dem\s+|der\s+)?(?P<account>[A-Za-zÀ-ÿ][\w'’-]*(?:\s+(?!(?:into|to|for|in|on|and|so|as|at|"
    r"pour|dans|nach|für|zu|per|à|a|e|et|und|then)\b)[A-Za-zÀ-ÿ][\w'’-]*){0,2})",
    re.IGNORECASE,
)
MOVE_VERB = re.compile(
    r"\b(?:move|moves|moving|transfer\w*|take|takes|taking|withdraw\w*|pull\w*|draw|draws|drawing|pay|pays|paying|"
    r"fund|funds|funding|use|uses|using|spend\w*|verser|virer|prélever|payer|spostare|prelevare|versare|pagare|"
    r"überweisen|entnehmen|zahlen|with)\b",
    re.IGNORECASE,
)


def _taken_from_account(text, limit, facts):
    """A floor on one named account (its base), and an amount the text moves out of that account in one go: the
    account less the amount is the level left. The account is named by its label or by the words the problem
    wrote it with ("conto corrente" for the Italian account)."""
    if limit.role not in ("floor", "minimum") or not re.fullmatch(r"[A-Z]{3}", limit.unit or ""):
        return []
    base = _content(limit.base)
    accounts = [f for f in facts if f.kind == "amount" and f.role in ("", "holding") and f.unit == limit.unit
                and base and base <= _content(f.label) and isinstance(f.value, int | float)]  # fmt: skip
    if len(accounts) != 1:
        return []
    account = accounts[0]
    names = _content(account.label) | _content(account.text)
    out = []
    for m in FROM_ACCOUNT.finditer(text):
        said = _content(m["account"])
        if not said or not said <= names | STOP or not said & names:
            continue
        s, e = sentence_at(text, m.start())
        amounts = [q for q in find_quantities(text[s : m.start()]) if q.kind == "amount" and q.unit == limit.unit]
        if not amounts or not MOVE_VERB.search(text, s, m.start()) or _negated(text, m.start()):
            continue
        q = amounts[-1]
        if re.match(r"\s*(?:a|per|each|every|/)\s*(?:year|month|quarter|week)\b", text[s + q.end :], re.I):
            continue  # a flow, not one move
        left = account.value - q.value
        shown = f"{q.text} out of the {account.label} (leaves {format_amount(max(left, 0), limit.unit)})"
        out.append(_verdict(limit, max(left, 0), (s + q.start, m.end()), text, shown))
    return out


def _given_away(text, limit, facts):
    """The whole of the account the cash sits in given away: "Put the whole $8.2mm brokerage account into a
    trust" when it is the sheet's only liquid account and no cash is listed: no cash is left."""
    holding = _liquid_holding(facts, limit.unit)
    if holding is None:
        return []
    out = []
    for m in GIVE_ALL.finditer(text):
        c0, c1 = clause_at(text, m.start(), m.end())
        rest = text[m.end() : c1]
        at = re.search(rf"\b{re.escape(holding.label)}\b", rest[:60], re.IGNORECASE)
        if not at or _negated(text, m.start()) or re.match(r"\s*(?:into|to)\s+(?:the\s+)?cash", rest[at.end() :], re.I):
            continue
        if re.search(r"\b(?:except|but|less|minus|above|beyond|apart\s+from|save|other\s+than)\b", rest, re.I):
            continue  # "all of the brokerage account except the USD 750k reserve" keeps the floor
        end = m.end() + at.end()
        shown = f"{text[m.start() : end]} (the {holding.label} holds the cash: leaves none)"
        out.append(_verdict(limit, 0, (m.start(), end), text, shown))
    return out


RESERVE = re.compile(rf"\b(?:{CASH_WORDS}|floor|emergency|keep\w*|hold\w*|set\s+aside|savings)\b", re.IGNORECASE)


def _months_floor(text, limit, facts):
    """ "6 months of expenses in cash", "a 12-month cash reserve", "a cash reserve of one year"; and, when the sheet
    has the monthly or yearly expenses, a cash level as an amount against the floor's amount."""
    floor = limit.value * (12 if limit.unit == "years" else 1)
    out = []
    for d in durations(text):
        before, after = text[max(0, d.start - 60) : d.start], text[d.end :]
        if not (MONTHS_LEVEL_AFTER.match(after) or MONTHS_LEVEL_BEFORE.search(before)) or _negated(text, d.start):
            continue
        if re.search(r"\b(?:every|each|per)\s+$", before, re.IGNORECASE):
            continue
        s, e = sentence_at(text, d.start)
        if (
            not RESERVE.search(text, s, e)
            or NOW.search(text, *clause_at(text, d.start, d.end))
            or GENERAL.search(text, s, e)
        ):
            continue  # "the first 6 months of expenses come from the salary": no reserve is stated; or today's
        floor_fact = Fact(**{**limit.__dict__, "value": floor, "unit": "months"})
        finding = _verdict(floor_fact, d.low, (d.start, d.end), text, d.text)
        finding.detail = finding.detail.replace(_name(floor_fact), _name(limit))
        out.append(finding)
    out += _zero_levels(text, limit, limit)
    monthly = _monthly_expenses(facts)
    if monthly:
        money = Fact(**{**limit.__dict__, "value": round(floor * monthly[0]), "unit": monthly[1]})
        out += _amount_limit(text, money, shown_limit=limit, facts=facts)
    return out


def _monthly_expenses(facts):
    """(amount a month, currency) from an expense fact whose label or words say monthly or yearly."""
    for f in facts:
        if f.kind != "amount" or not isinstance(f.value, int | float):
            continue
        words = f"{f.label} {f.text}".lower()
        if f.role != "expense" and not re.search(r"\b(?:expenses|spending|costs|outgoings)\b", words):
            continue
        if re.search(r"month", words):
            return f.value, f.unit
        if re.search(r"\b(?:year|yearly|annual|annually|p\.a\.|a year)\b", words):
            return f.value / 12, f.unit
    amounts = {f.label: f for f in facts if f.kind == "amount" and isinstance(f.value, int | float)}
    for f in facts:  # "Spending: 4.5% of the endowment a year"
        if f.kind == "percent" and f.role == "spending" and f.base in amounts and isinstance(f.value, int | float):
            return amounts[f.base].value * f.value / 100 / 12, amounts[f.base].unit
    return None


EXTRA = re.compile(
    r"\b(?:additional|extra|on\s+top|in\s+addition|besides|another|further|more|earmark\w*|separate)\b", re.IGNORECASE
)


KEEP_VERB = r"\b(?:keep|hold|leave|retain|maintain)\w*\s+(?:only\s+|just\s+|about\s+|roughly\s+|around\s+)?$"
BOUND_BEFORE = r"\b(?:to|at|of|:|max\w*|cap\w*|limit\w*|at\s+least)\s*$"
LISTED = re.compile(r"^[^\d]*(?:\band|\bplus|\+)\s*(?:another\s+|a\s+further\s+)?$")


def _amount_limit(text, limit, shown_limit=None, facts=()):
    """A cash level stated as an amount: "hold CHF 120k in cash", "cash reserve of CHF 150k", "CHF 150k as a
    reserve". Other currencies and flows ("move CHF 50k into cash") are left alone."""
    named = shown_limit or limit
    base = _content(limit.base) | _content(limit.label)
    cashy = not base or {w.lower() for w in base} & CASHY
    out, levels = [], []
    for q in find_quantities(text):
        if q.kind != "amount" or q.unit != limit.unit or _negated(text, q.start):
            continue
        before, after = text[max(0, q.start - 50) : q.start], text[q.end :]
        if cashy:
            kept_in_cash = re.search(KEEP_VERB, before, re.IGNORECASE) and AMOUNT_LEVEL_AFTER.match(after)
            named_level = AMOUNT_LEVEL_BEFORE.search(before) and (
                AMOUNT_LEVEL_AFTER.match(after) or re.search(CASH_WORDS, before, re.IGNORECASE)
            )
            level = kept_in_cash or named_level or ENOUGH_AFTER.match(after)
        else:
            s, e = clause_at(text, q.start, q.end)
            level = base & _content(text[s:e]) and re.search(BOUND_BEFORE, before, re.IGNORECASE)
        if not level:
            continue
        c0, c1 = clause_at(text, q.start, q.end)
        if (
            NOW.search(text, c0, c1)
            or EXTRA.search(text, c0, c1)
            or EXTRA.search(before[-20:])
            or any(x.end > q.start for x in levels)
            or re.search(SPENT_WHOLE + r"(?:\s+[\w'’-]+){1,3}?(?:\s+of)?\s*$", before, re.IGNORECASE)  # all of it, spent
        ):
            continue  # "an extra CHF 150k in cash for the capital calls": not the reserve
        levels.append(q)
    by_sentence = {}
    for q in levels:
        by_sentence.setdefault(sentence_at(text, q.start), []).append(q)
    for (s, e), group in by_sentence.items():  # a level and the amounts listed with it ("... and CHF 100k at ZKB")
        for r in find_quantities(text[group[-1].end : e]):
            r_start = group[-1].end + r.start
            between = text[group[-1].end : r_start]
            if r.kind == "amount" and r.unit == limit.unit and LISTED.search(between) and len(between) <= 40:
                group.append(
                    Quantity(r.kind, r.value, r.unit, r_start, r_start + len(r.text), r.text, r.precision, r.scaled)
                )
    for group in by_sentence.values():  # "CHF 120k in cash at UBS and CHF 100k at ZKB": the reserve is their sum
        q, value = group[0], sum(x.value for x in group)
        start, end = group[0].start, group[-1].end
        finding = _verdict(
            limit, value, (start, end), text, text[start:end] if len(group) == 1 else format_amount(value, limit.unit)
        )
        if shown_limit is not None:
            finding.detail = finding.detail.replace(
                _name(limit), f"{_name(named)}, {format_amount(limit.value, limit.unit)}"
            )
        out.append(finding)
    if cashy and named.unit not in ("months", "years"):  # a months floor reads its own zero levels
        out += _zero_levels(text, limit, named)
    out += _taken_from_account(text, limit, facts)
    if cashy:
        for finding in _drained(text, limit, facts):
            if shown_limit is not None:
                finding.detail = finding.detail.replace(
                    _name(limit), f"{_name(named)}, {format_amount(limit.value, limit.unit)}"
                )
            out.append(finding)
    return out


ISSUER = set(
    "issuer issuers name names stock position positions company holding line single security securities stake share "
    "shares counterparty bank exposure weight concentration".split()
)
CLASSES = set(
    "equities equity bonds bond alternatives cash gold real estate hedge funds fixed income private markets "
    "commodities stocks portfolio".split()
)
# A trade ("sell 5% of"), the level being reduced ("reduce the 35% position"), or today's ("is 35%", "the current
# 35%"): not the plan's level.
TRADE_BEFORE = re.compile(
    r"(?:\b(?:sell|sells|selling|buy|buying|add|adding|trim|trimming|by|another|extra|of|reduce|reducing|cut|cutting"
    r"|unwind|unwinding|lower|lowering|shrink|diversify|diversifying|down)\s+(?:the\s+|her\s+|his\s+|their\s+|its\s+"
    r"|this\s+|that\s+)?|\b(?:current|existing|today's|present|is|are|was|were|makes\s+up|represents|accounts\s+for"
    r"|stands\s+at|sits\s+at)\s+(?:now\s+|currently\s+|about\s+|roughly\s+|around\s+|some\s+|over\s+|nearly\s+"
    r"|almost\s+)?)$",
    re.IGNORECASE,
)
NOW = re.compile(
    r"\b(?:is\s+now|now\s+is|currently|today|at\s+present|stands\s+at|has\s+grown\s+to|at\s+the\s+moment)\b",
    re.IGNORECASE,
)


CAP_WORDS = {"cap", "limit", "maximum", "max", "floor", "minimum", "min", "no", "more", "than", "at", "most", "least"}
WHOLE_WORDS = {"assets", "wealth", "portfolio", "holdings", "everything", "estate", "investable"}
PERCENT_OF = re.compile(r"\s*(?:of|on)\s+(?:(?:the|her|his|their|its|all)\s+)?$", re.IGNORECASE)


def _capped_of(text, limit, whole, facts):
    """The limit's percent taken of another amount than its whole, in a sentence about the limit: "20% of the CHF
    14.4M equity target" for a cap of 20% of all the assets (CHF 48M); "25% of the EUR 3.6M portfolio" for a cap of
    the liquid assets, where the portfolio is one of several liquid holdings."""
    words = _content(limit.text) | _content(limit.base)
    holdings = [f for f in facts if f.kind == "amount" and f.role == "holding" and isinstance(f.value, int | float)]
    many = bool(words & WHOLE_WORDS) and len(holdings) > 1  # "of their liquid assets": more than one holding
    if whole is not None and many and not _content(whole.label) <= words:
        whole = None  # the sheet's usual base is a guess; the limit says "all their liquid assets"
    if whole is None and not many:
        return []
    tie = (_content(limit.base) - CAP_WORDS, _content(limit.label) - CAP_WORDS)
    out, found = [], find_quantities(text)
    for q, x in zip(found, found[1:]):
        if q.kind != "percent" or abs(q.value - limit.value) > 1e-9 or x.kind != "amount":
            continue
        if not PERCENT_OF.fullmatch(text[q.end : x.start]):
            continue
        s, e = sentence_at(text, q.start)
        said = _content(text[s:e]) | {w.rstrip("s") for w in _content(text[s:e])}
        if not any(t and t <= said for t in tie):
            continue
        if whole is not None and x.unit == whole.unit:
            wrong = abs(x.value - whole.value) > 0.02 * whole.value
        else:
            wrong = whole is None and any(f.unit == x.unit and abs(f.value - x.value) <= 0.01 * f.value for f in holdings)
        if wrong:
            of = f"{display(whole)}" if whole is not None else "all the holdings it names, not one of them"
            detail = f"{q.text} of {x.text}: the client's {_name(limit)} is a share of {of}"
            out.append(Finding("constraint", False, text[q.start : x.end], detail, q.start, x.end))
    return out


def _percent_limit(text, limit, facts):
    """A percent tied to the limit's object, above a cap or below a floor: "12% in one issuer", "a 15% single-stock
    position", "cap each issuer at 12%". The client's current shares and trades are left alone."""
    base = _content(limit.base) | (
        _content(limit.label) - {"cap", "limit", "maximum", "max", "floor", "minimum", "min"}
    )
    issuer = bool(base & {"issuer", "issuers", "name", "single", "position", "stock", "company"})
    shares = [f for f in facts if f.kind == "percent" and f.role in ("share", "") and isinstance(f.value, int | float)]
    out = []
    for q in find_quantities(text):
        if q.kind != "percent" or _negated(text, q.start) or TRADE_BEFORE.search(text[max(0, q.start - 40) : q.start]):
            continue
        s, e = clause_at(text, q.start, q.end)
        clause = _content(text[s:e])
        if NOW.search(text, s, e) or any(q.value == f.value and _content(f.label) & clause for f in shares):
            continue  # the client's situation today, not the plan
        if issuer and OF_THE_POSITION.match(text, q.end):
            continue  # "a gain of about 85% of the position": a part of the position, not its weight
        ties = clause & (ISSUER if issuer else base)
        if issuer and clause & CLASSES - {"stocks"} and not clause & {"issuer", "issuers", "single", "position"}:
            continue  # "60% equities": a class, not one issuer
        if issuer and clause & {"allocation", "sleeve", "bucket", "quota", "mix", "stocks"}:
            continue  # "the US stock allocation to 45%"
        if not ties or (not issuer and not base <= clause):
            continue
        if issuer and not (
            clause & {"issuer", "issuers", "single", "one", "any", "each", "every", "position", "stake", "name"}
            or re.search(r"(?<=[a-z,] )[A-Z][a-zé]+", text[s:e])  # a name, not the clause's first word
        ):
            continue
        out.append(_verdict(limit, q.value, (q.start, q.end), text, q.text))
    return out


OF_THE_POSITION = re.compile(
    r"\s*of\s+(?:(?:the|her|his|their|its|this|that)\s+)?(?:[\w-]+\s+)?(?:position|stake|holding|shares|stock)\b",
    re.IGNORECASE,
)


def _content(text):
    return {w.lower().removesuffix("'s") for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", str(text or ""))} - STOP


STOP = set(
    "the a an of in on at to for and or with by from as is are was be this that it its her his their our "
    "client client's one any each every per".split()
) - {"one", "any", "each", "every"}


# ---- horizons -----------------------------------------------------------------------------------------------------

# The words that tie a sentence to a horizon (reasoning/facts/data/words.toml, [horizons]).
_HORIZONS = tomllib.loads((Path(__file__).with_name("data") / "words.toml").read_text())["horizons"]
GENERIC = set(_HORIZONS["generic"])
SUBJECT_GROUPS = tuple(" ".join(group) for group in _HORIZONS["subject_groups"])
SUBJECT = {}  # a word in several groups brings them all ("sales": a sale, a diversification, a rebalancing)
for _group in SUBJECT_GROUPS:
    for _word in _group.split():
        SUBJECT.setdefault(_word, set()).update(_group.split())
FILLER_WORDS = set(_HORIZONS["filler"])
PLAN_WORDS = set(_HORIZONS["plan_words"])
BRINGS = [(SUBJECT[a], SUBJECT[b]) for a, b in _HORIZONS["brings"]]


def _subject(horizon, facts=()):
    """What the horizon governs: its label's, base's and text's words, and the objects of the clause it was stated
    in (the goal whose text holds the horizon's: "buy a house on Lake Como within 12 months" brings house, Como)."""
    words = _content(horizon.label) | _content(horizon.base) | {w for w in _content(horizon.text) if len(w) > 3}
    words |= {w for f in _stated_in(horizon, facts) for w in _content(f.value) | _content(f.text) if len(w) > 3}
    words = {w for w in words if w not in GENERIC and w not in FILLER_WORDS}
    return set().union(*(SUBJECT.get(w, {w}) for w in words)) if words else set()


def _stated_in(horizon, facts):
    said = (horizon.text or "").strip().lower()
    if len(said) < 6:
        return []
    return [f for f in facts if f.kind == "goal" and said in f"{f.value} {f.text}".lower()]


def _relevant(sentence, horizon, specific, facts=()):
    """Whether a sentence is about what the horizon governs: its object ("villa") where several spans compete, else
    its subject ("rebalancing": the trades and the classes of the targets), else any plan word."""
    words = _content(sentence) | {w.lower() for w in re.findall(r"[A-Za-z-]+", sentence)}
    if specific and horizon.base:
        return bool(_content(horizon.base) & words)
    subject = _subject(horizon, facts)
    if not specific:
        subject |= set().union(*(brought for group, brought in BRINGS if subject & group))
    if subject & SUBJECT["rebalancing"]:
        subject |= {w for f in facts if f.kind == "percent" and f.role == "target" for w in _content(_class(f.label))}
    if subject:
        return bool(subject & words)
    return not specific and bool(PLAN_WORDS & words)


GENERAL = re.compile(
    r"\b(?:most|many|typical(?:ly)?|usual(?:ly)?|commonly|often|generally|rule\s+of\s+thumb|conventional(?:ly)?"
    r"|standard\s+advice|other\s+(?:families|clients|investors))\b",
    re.IGNORECASE,
)


def _horizon(text, horizon, specific, facts=()):
    out = []
    for s, e in sentences(text):
        sentence = text[s:e]
        if horizon.unit != "age" and not _relevant(sentence, horizon, specific, facts):
            continue
        if GENERAL.search(sentence):
            continue  # "Most families hold 3-6 months": what others do, not the plan
        if horizon.unit in ("months", "years") and verbs(sentence):
            found = _span(text, s, e, horizon) + _dated(text, s, e, horizon, facts)
            out += [f for f in found if _itsclause_at(text, f, horizon, specific, facts)]
        elif horizon.unit == "year" and verbs(sentence):
            out += [f for f in _calendar(text, s, e, horizon) if _itsclause_at(text, f, horizon, specific, facts)]
        elif horizon.unit == "age":
            out += _age(text, s, e, horizon, facts)
    return out


def _itsclause_at(text, finding, horizon, specific, facts):
    """A timing belongs to the horizon's subject when its clause names it, or has no verb of its own ("Sell the stock
    in two steps, the last in 2031"); "After the villa sale, reinvest the proceeds over 12 months" times another act."""
    s, e = clause_at(text, finding.start, finding.end)
    clause = text[s:e]
    return _relevant(clause, horizon, specific, facts) or not verbs(clause)


PART = re.compile(
    r"\b(?:first|initial|opening|second|third|fourth|next|each|every|per|one)\s+(?:[\w-]+\s+)?"
    r"(?:tranche|step|trade|sale|instalment|installment|buy-?in|purchase|leg|batch|block|order|gift)s?\b",
    re.IGNORECASE,
)


def _span(text, s, e, horizon):
    """A duration horizon: over N (a span far shorter or longer is a contradiction), within N (longer is)."""
    months = horizon.value * (12 if horizon.unit == "years" else 1)
    out = []
    for t in timings(text, s, e):
        if _negated(text, t.start):
            continue
        c0, c1 = clause_at(text, t.start, t.end)
        if horizon.role == "over" and (PART.search(text, c0, c1) or START.search(text, c0, c1)):
            continue  # "the first tranche within 30 days": a part's timing, not the plan's span
        if horizon.role == "over":
            broken = t.high < months * 0.5 or t.low > months * 1.5
        elif horizon.role in ("within", "by", "before"):
            broken = t.low > months + 1e-9
        else:  # after: not before N
            broken = t.high < months - 1e-9
        verb = "contradicts" if broken else "keeps"
        detail = f"the plan's timing '{t.text}' {verb} the client's {_name(horizon)}"
        out.append(Finding("constraint", not broken, t.text, detail, t.start, t.end))
    return out


def _now():
    """Today as a fractional year, never before the rule table's year: a date is judged against the latest "now" the
    text can have been written at, so a deadline read from it is never too early."""
    today = date.today()
    return max(today.year + (today.month - 1) / 12, float(_AS_OF))


# "hold the gift back until 2029", "wait until 2029 with the purchase": the act is put off to the date
DEFERRING = re.compile(
    r"\b(?:hold\w*\s+(?:\w+\s+){0,3}?back|wait\w*|delay\w*|postpon\w*|defer\w*|put\w*\s+off|push\w*\s+back"
    r"|hold\w*\s+off)\b",
    re.IGNORECASE,
)


def _dated(text, s, e, horizon, facts=()):
    """A date for what a duration horizon governs that starts after the horizon ends, counted from today: "push
    the closing to spring 2028" under "closing within 9 months". Only breaks are read: a date inside the window
    says nothing of when the text was written."""
    if horizon.role not in ("within", "by", "before"):
        return []
    deadline = _now() + horizon.value * (1 if horizon.unit == "years" else 1 / 12)
    out = []
    for span, cue in deadlines(text, s, e):
        put_off = cue in ("until", "till") and DEFERRING.search(text, s, span.start)
        if cue in ("from", "starting", "after", "beginning", "into", "until", "till", "through", "thru", "before"):
            if not put_off:
                continue
        if span.low >= deadline and not _negated(text, span.start) and _acted_on(text, s, span.start, horizon, facts):
            detail = f"'{span.text}' contradicts the client's {_name(horizon)} (counted from today)"
            out.append(Finding("constraint", False, span.text, detail, span.start, span.end))
    return out


def _acted_on(text, s, at, horizon, facts=()):
    """The last act before a date is on the horizon's subject: "push the closing to 2028" dates the closing; "close
    within 9 months and receive the earn-out in 2028" dates the earn-out."""
    acts_before = [m for m in re.finditer(r"[A-Za-z][A-Za-z'’-]*", text[s:at]) if m[0].lower() in ACTIONS_SET]
    words = text[s + acts_before[-1].start() : at] if acts_before else text[s:at]
    return _relevant(words, horizon, False, facts)


def _calendar(text, s, e, horizon):
    """A deadline: a date that starts after it breaks "by"/"before"/"within" ("Q4 2027" for "by June 2027"); a date
    that ends before it keeps it; a date across it is left alone ("in 2027" for "by June 2027")."""
    out = []
    deadline = _deadline(horizon)
    for span, cue in deadlines(text, s, e):
        earliest, latest = span.low, span.high
        if cue in ("after",):
            earliest = latest
        if horizon.role == "after":  # not before the date: acting earlier breaks it
            broken = latest <= deadline + 1e-9 and cue not in ("after", "from", "starting", "beginning")
            kept = earliest >= deadline - 1e-9
        elif cue in ("from", "starting", "after", "beginning", "into"):
            broken, kept = earliest >= deadline - 1e-9, False
        else:
            broken, kept = earliest >= deadline - 1e-9, latest <= deadline + 1e-9
        if broken or kept:
            verb = "contradicts" if broken else "keeps"
            detail = f"'{span.text}' {verb} the client's {_name(horizon)}"
            out.append(Finding("constraint", not broken, span.text, detail, span.start, span.end))
    return out


AFTER_RETIRING = re.compile(
    r"\b(?:after|once|following)\s+(?:(?:she|he|they|the\s+client|[A-Z][a-z]+)\s+(?:has\s+|have\s+)?)?"
    r"(?:retir\w*|stops?\s+working)|\bin\s+retirement\b|\bpost-retirement\b"
    r"|\bin\s+the\s+first\s+years?\s+of\s+retirement",
    re.IGNORECASE,
)
BEFORE_RETIRING = re.compile(
    r"\b(?:before|ahead\s+of|prior\s+to|until)\s+(?:(?:she|he|they|the\s+client|[A-Z][a-z]+)\s+)?retir\w*"
    r"|\bpre-retirement\b|\bwhile\s+(?:she|he|they|[A-Z][a-z]+)\s+(?:is|are|still)\s+(?:still\s+)?working\b",
    re.IGNORECASE,
)
AGE_CUE = re.compile(
    r"\b(?P<cue>at|by|after|from|when\s+(?:she|he|they)\s+turns?|aged?|turning|before)\s+(?:age\s+)?"
    r"(?P<age>\d{2})\b(?![%\d])",
    re.IGNORECASE,
)
OTHER_PEOPLE = re.compile(
    r"\b(?:son|daughter|child|children|grandchild\w*|kids?|heirs?|nephew|niece|husband|wife|spouse|partner)\b",
    re.IGNORECASE,
)
PENSION_DRAW = re.compile(
    r"\b(?:draw\w*|withdraw\w*|receiv\w*|annuity|annuities|pays|paid|begins?|starts?|claim\w*|AHV|AVS|social\s+security"
    r"|benefits?|RMDs?|lump\s+sum|live\s+on)\b",
    re.IGNORECASE,
)


RETIRE_AT = re.compile(
    r"\b(?:retir\w*|keep\w*\s+working|continu\w*\s+(?:to\s+work|working)|stay\w*\s+(?:at\s+work|employed)|work\w*"
    r"|delay\w*\s+(?:retirement|retiring))\s+(?:at|until|till|to|past|beyond)\s+(?:age\s+)?(?P<age>\d{2})\b(?![%\d])",
    re.IGNORECASE,
)


def _others(sentence, facts):
    """Whether the sentence is about someone else than the client: a child, a spouse, a person the sheet names."""
    if OTHER_PEOPLE.search(sentence):
        return True
    names = {f.label for f in facts if f.kind == "person" and f.role not in ("", "client")}
    return any(re.search(rf"\b{re.escape(name)}\b", sentence) for name in names)


START_WORDS = re.compile(r"\b(?:start|starts|begin|begins|from|when\s+(?:she|he|they)\s+turns?)\b", re.IGNORECASE)


def _a_start(horizon):
    """A horizon that says when something begins ("draw start", "when he turns 59"): acting from that age keeps it,
    whatever role the sheet wrote ("by")."""
    return bool(START_WORDS.search(f"{horizon.label} {horizon.text}"))


def _age(text, s, e, horizon, facts=()):
    """ "before retiring at 61": acting after retiring or at a later age contradicts it; before retiring keeps it;
    "keep working until 65" or "retire at 65" contradicts a retirement at 60."""
    sentence = text[s:e]
    if _others(sentence, facts):
        return []
    out = []
    if horizon.role in ("before", "by", "within") and _subject(horizon) & SUBJECT["retirement"]:
        for m in RETIRE_AT.finditer(text, s, e):
            age = int(m["age"])
            if age >= horizon.value:
                verb = "contradicts" if age > horizon.value else "keeps"
                detail = f"'{m[0]}' {verb} the client's {_name(horizon)}"
                out.append(Finding("constraint", age <= horizon.value, m[0], detail, m.start(), m.end()))
    if not acts(sentence):
        return out
    if horizon.role in ("before", "by", "within"):
        for m in AFTER_RETIRING.finditer(text, s, e):
            if PENSION_DRAW.search(sentence):
                continue  # drawing the pension in retirement is what retirement is for
            detail = f"'{m[0]}' contradicts the client's {_name(horizon)}"
            out.append(Finding("constraint", False, m[0], detail, m.start(), m.end()))
        for m in BEFORE_RETIRING.finditer(text, s, e):
            out.append(
                Finding("constraint", True, m[0], f"'{m[0]}' keeps the client's {_name(horizon)}", m.start(), m.end())
            )
    for m in AGE_CUE.finditer(text, s, e):
        age, cue = int(m["age"]), m["cue"].lower()
        if PENSION_DRAW.search(sentence) or not 40 <= age <= 90 or any(f.start <= m.start() < f.end for f in out):
            continue
        if horizon.role in ("before", "by", "within") and not _a_start(horizon):
            broken = age > horizon.value or (cue in ("after", "from") and age >= horizon.value)
            kept = age < horizon.value and cue not in ("after", "from")
        else:
            broken, kept = age < horizon.value and cue not in ("after", "from"), age >= horizon.value
        if broken or kept:
            verb = "contradicts" if broken else "keeps"
            out.append(
                Finding(
                    "constraint", not broken, m[0], f"'{m[0]}' {verb} the client's {_name(horizon)}", m.start(), m.end()
                )
            )
    return out


# ---- commitments and the amount to be moved (final answers) ------------------------------------------------------

OBLIGATION_GROUPS = (
    "commitment commitments call calls capital-call capital-calls uncalled unfunded undrawn",
    "mortgage mortgages hypothec hypothek home-loan",
    "loan loans credit lombard borrowing debt",
    "pledge pledges pledged",
    "liability liabilities obligation obligations",
    "tax bill",
)
OBLIGATION = {w: set(g.split()) for g in OBLIGATION_GROUPS for w in g.split()}


def _obligation_words(fact):
    words = _content(fact.label) | _content(fact.text if len(str(fact.text).split()) <= 8 else "")
    heads = set().union(*(OBLIGATION[w] for w in words if w in OBLIGATION)) if words & set(OBLIGATION) else set()
    return heads or {w for w in words if len(w) > 3}


def _mentions(text, words):
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    pattern = re.compile(r"(?<![\w-])(?:" + alternatives + r")(?![\w-])", re.IGNORECASE)
    spaced = [w.replace("-", " ") for w in words if "-" in w]
    found = [(m.start(), m.end()) for m in pattern.finditer(text)]
    for w in spaced:
        found += [(m.start(), m.end()) for m in re.finditer(rf"\b{re.escape(w)}s?\b", text, re.IGNORECASE)]
    return sorted(found)


def _commitments(text, facts):
    out = []
    for fact in facts:
        if fact.kind != "amount" or fact.role not in ("commitment", "liability"):
            continue
        spans = _mentions(text, _obligation_words(fact))
        if isinstance(fact.value, int | float):
            spans += [
                (q.start, q.end)
                for q in find_quantities(text)
                if q.kind == "amount"
                and q.unit == fact.unit
                and abs(q.value - fact.value) <= max(q.precision, 1e-9 * fact.value)
            ]
        acting = next(((s, e) for s, e in sorted(spans) if addressed(text, s, e)), None)
        name = f"{fact.label} ({display(fact)})"
        if acting:
            detail = f"the answer provides for the {name}"
            out.append(Finding("constraint", True, text[acting[0] : acting[1]], detail, *acting))
        elif spans:
            s, e = spans[0]
            detail = f"the answer names the {name} but never provides for it"
            out.append(Finding("constraint", False, text[s:e], detail, s, e))
        else:
            out.append(Finding("constraint", False, "", f"the answer never provides for the {name}", -1, -1))
    return out


NEW_COMMITMENT = re.compile(
    r"\b(?:commit|commits|committing|new\s+commitments?\s+(?:of|worth)|fresh\s+commitments?\s+(?:of|worth))\b"
    # "a new GBP 1.7M commitment", "a fresh $5M infrastructure commitment": the amount before the noun
    r"|\b(?:new|fresh|further|additional|another)(?=\s+(?:[A-Z]{3}\s?|[$€£])?\d[\d.,']*\s?"
    r"(?:k|m|M|mn|mm|bn|million|billion|Mio\.?|Mrd\.?)?"
    r"\s+(?:[\w-]+\s+)?commitments?\b)",
    re.IGNORECASE,
)


def _words_of(label):
    return {w for w in re.split(r"[\s-]+", label.lower()) if w} - {
        "uncalled",
        "unfunded",
        "undrawn",
        "commitments",
        "commitment",
        "target",
        "the",
        "of",
        "open",
    }


COMMIT_WORDS = re.compile(
    r"\s*(?:(?:a|an|another|further|additional|fresh|new|up\s+to|roughly|about|some|of|worth)\s+)*", re.IGNORECASE
)


def _new_commitments(text, facts):
    """A new commitment to a class the uncalled commitments already take to its target: "commit a fresh CHF 2.4M to
    new funds" when private markets are 5% of CHF 48M, the target 10% and CHF 3.5M still to be called (12.3%)."""
    amounts = {f.label: f for f in facts if f.kind == "amount" and isinstance(f.value, int | float)}
    out = []
    for fact in facts:
        if fact.kind != "amount" or fact.role != "commitment" or not isinstance(fact.value, int | float):
            continue
        words = _words_of(fact.label)
        targets = [f for f in facts if f.kind == "percent" and f.role == "target" and _words_of(f.label) & words]
        for target in targets[:1]:
            share = next(
                (
                    f
                    for f in facts
                    if f.kind == "percent"
                    and f.role == "share"
                    and f.base == target.base
                    and _words_of(f.label) == _words_of(target.label)
                ),
                None,
            )
            whole = amounts.get(target.base)
            if share is None or whole is None or whole.unit != fact.unit:
                continue
            projected = share.value + fact.value / whole.value * 100
            if projected < target.value - 0.5:
                continue  # the calls leave room: a new commitment may be right
            for m in NEW_COMMITMENT.finditer(text):
                s, e = sentence_at(text, m.start())
                if _negated(text, m.start()) or re.search(
                    r"\b(?:no|not|don't|avoid|stop)\b", text[s : m.start()], re.I
                ):
                    continue
                new = [q for q in find_quantities(text[m.end() : e]) if q.kind == "amount" and q.unit == fact.unit]
                if not new or abs(new[0].value - fact.value) <= new[0].precision:
                    continue
                if not COMMIT_WORDS.fullmatch(text[m.end() : m.end() + new[0].start]):
                    continue  # "we commit to rebalancing the USD 310M endowment": no amount committed
                at = m.end() + new[0].start
                detail = (
                    f"a new commitment of {new[0].text} on top of the {_name(fact)}, which already take "
                    f"{_class(share.label)} to {format_percent(projected)} of the {whole.label} against a "
                    f"{format_percent(target.value)} target"
                )
                out.append(
                    Finding(
                        "constraint",
                        False,
                        text[m.start() : at + len(new[0].text)],
                        detail,
                        m.start(),
                        at + len(new[0].text),
                    )
                )
    return out


MOVE_WORDS = re.compile(
    r"\b(?:trades?|rebalancing|to\s+(?:be\s+)?(?:move|moved|sell|sold|rebalance|deploy|invest)\w*|"
    r"sale|proceeds|overweight|excess|drift|to\s+stage|staged)\b",
    re.IGNORECASE,
)
SPLIT = re.compile(
    r"\b(?:split|splits|splitting|divide|dividing|break|stage|staging|phase|phasing|deploy|deploying|invest|investing"
    r"|move|moving|sell|selling|spread|cut|tranche)\b(?P<what>(?:[^.;:\n]|[.:](?=\d)){0,80}?)"
    r"\b(?:into|in|over|across)\s+"
    r"(?P<parts>(?:\w+|\d+)\s+(?:equal\s+|monthly\s+|quarterly\s+|yearly\s+|annual\s+|weekly\s+)?"
    r"(?:tranches|steps|stages|instalments|installments|parts|slices|pieces|batches|chunks)"
    r"|thirds|halves|quarters|(?:\w+)\s+equal\s+(?:parts|amounts))\b",
    re.IGNORECASE,
)


def _moved(facts):
    """The amount to be moved: an amount the sheet names as the trades, else the drift of current shares above their
    targets times their base. None when the sheet says neither."""
    for f in facts:
        if f.kind == "amount" and isinstance(f.value, int | float) and MOVE_WORDS.search(f"{f.label} {f.text}"):
            return f.value, f.unit, f.label
    amounts = {f.label: f for f in facts if f.kind == "amount" and isinstance(f.value, int | float)}
    percents = [f for f in facts if f.kind == "percent" and isinstance(f.value, int | float) and f.base in amounts]
    targets = {_class(f.label): f for f in percents if f.role == "target"}
    drift = {}
    for f in percents:
        if f.role != "target" and _class(f.label) in targets:
            drift.setdefault(f.base, 0.0)
            drift[f.base] += max(0.0, f.value - targets[_class(f.label)].value)
    for base, points in drift.items():
        if points > 0:
            whole = amounts[base]
            return (
                whole.value * points / 100,
                whole.unit,
                f"rebalancing trades ({format_percent(points)} of the {base})",
            )
    return None


def _class(label):
    return " ".join(w for w in label.lower().split() if w not in ("target", "current", "share", "today"))


TRANCHES = re.compile(
    r"\b(?P<n>\d{1,2}|two|three|four|five|six|seven|eight|nine|ten|twelve|zwei|drei|vier|fünf|sechs|acht|zehn)\s+"
    r"(?:equal\s+|gleiche\s+)?(?:(?:annual|yearly|quarterly|monthly|jährliche|vierteljährliche)\s+)?"
    r"(?:tranches|instalments|installments|steps|sales|slices|payments|parts|Tranchen|Raten|Schritte)\s+"
    r"(?:of|à|a|zu|von|de)\s+(?:about\s+|around\s+|roughly\s+|je\s+|rund\s+|ca\.\s+)?",
    re.IGNORECASE,
)
PART_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
               "twelve": 12, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "acht": 8, "zehn": 10}  # fmt: skip


def _tranches(text, facts):
    """"Sell the CHF 240'500 of equities in four equal tranches of CHF 65'000": so many tranches of an amount that
    do not add up to the amount the sentence (or the sheet, as the amount to be moved) says they split."""
    out, moved = [], _moved(facts)
    quantities = [q for q in find_quantities(text) if q.kind == "amount"]
    for m in TRANCHES.finditer(text):
        each = next((q for q in quantities if q.start == m.end()), None)
        if each is None:
            continue
        n = int(m["n"]) if m["n"].isdigit() else PART_COUNTS[m["n"].lower()]
        s, e = sentence_at(text, m.start())
        wholes = [q for q in quantities if s <= q.start < e and q is not each and q.unit == each.unit
                  and q.value > each.value]  # fmt: skip
        whole = (wholes[0].value, wholes[0].text) if len(wholes) == 1 else None
        if whole is None and moved is not None and moved[1] == each.unit and not quantities_between(quantities, s, e, each):
            whole = moved[0], f"the {moved[2]}"
        if whole is None:
            continue
        slack = max(n * each.precision, 0.03 * whole[0])
        if abs(n * each.value - whole[0]) > slack:
            detail = (f"{n} × {each.text} is {format_amount(n * each.value, each.unit)}, not {whole[1]} "
                      f"({format_amount(whole[0], each.unit)}) that the tranches split")  # fmt: skip
            out.append(Finding("constraint", False, text[m.start() : each.end], detail, m.start(), each.end))
    return out


def quantities_between(quantities, s, e, each):
    """Other amounts in the sentence: then the tranches split one of them, not the sheet's amount to be moved."""
    return any(s <= q.start < e and q is not each for q in quantities)


# What a cap's object is done with: a plan amount after one of these verbs, in a clause naming the object, is its level.
CAP_OBJECTS = {
    "sale": "sell sells sold selling sale sales", "sales": "sell sells sold selling sale sales",
    "spending": "spend spends spent spending grant grants", "income": "take taking draw drawing income withdraw",
    "usd": "usd dollar dollars", "eur": "eur euro euros", "gbp": "gbp sterling pound pounds", "chf": "chf franc francs",
    "gift": "gift gifts give giving gifting", "withdrawal": "withdraw withdrawal draw take",
}  # fmt: skip
PLAN_VERB = re.compile(
    r"\b(?:sell\w*|sold|spend\w*|spent|tak\w+|took|draw\w*|drew|withdraw\w*|keep\w*|kept|hold\w*|leav\w+|give|"
    r"giv\w+|gift\w*|put|invest\w*|move\w*|convert\w*|pay\w*|paid)\b",
    re.IGNORECASE,
)
OBJECT_REACH = 3  # words before the amount: "sell EUR 772.700", "in dollars, USD 1.62M", not "after all gifts ... EUR 800k"
CAP_SAID_BEFORE = re.compile(r"\b(?:no\s+more\s+than|at\s+most|up\s+to|max\w*|cap\w*|limit\w*|below|under|within)\s*$", re.I)


def _over_cap(text, limit, facts):
    """A plan amount for a capped object above the cap: "sell EUR 772.700 of the portafoglio" where no more than 30 %
    of its EUR 2.3M may be sold, "the board could spend ... $952,000" under a USD 900k spending cap. The cap in money
    is the limit itself or its percent of the one amount its base names; the object is read from the limit's words."""
    if limit.role not in ("cap", "maximum"):
        return []
    cap = _cap_amount(limit, facts)
    if cap is None:
        return []
    value, unit = cap
    base = {w.lower() for w in _content(limit.base)}
    words = {w.lower() for w in _content(limit.label)} - {"cap", "limit", "maximum", "max"}
    words = (words - base) or words  # "gift cap" of the securities account: the gift is capped, the account measures
    objects = set().union(*(set(CAP_OBJECTS.get(w, w).split()) for w in words))
    yearly = bool(YEARLY.search(f"{limit.label} {limit.text or ''}"))
    held = [f.value for f in facts if f.kind in ("amount", "limit") and isinstance(f.value, int | float)]
    out = []
    for q in find_quantities(text):
        if q.kind != "amount" or q.unit != unit or any(abs(q.value - v) <= q.precision for v in held):
            continue
        s, _e = sentence_at(text, q.start)  # the sentence: "keep the whole earn-out in dollars, USD 1.62M" is one act
        near = {w.lower() for w in re.findall(r"[A-Za-z]+", text[s : q.start])[-OBJECT_REACH:]}
        if not objects & near or not PLAN_VERB.search(text, s, q.start) or CAP_SAID_BEFORE.search(text, s, q.start):
            continue  # the object (a verb or a noun of it) right before the amount: "sell EUR 772.700", "in dollars, USD"
        verb = list(PLAN_VERB.finditer(text, s, q.start))[-1]
        if yearly and not ONE_YEAR.search(text, verb.start(), sentence_at(text, q.start)[1]):
            continue  # a yearly cap against an amount the plan does not put in one year: a total, spread over years
        if q.value > value * 1.01 + q.precision and not _negated(text, q.start):
            detail = f"{q.text} is above the client's {_name(limit)}: at most {format_amount(value, unit)}"
            out.append(Finding("constraint", False, q.text, detail, q.start, q.end))
    return out


YEARLY = re.compile(
    r"\b(?:a|per|each|pro|par|all['’])\s*(?:year|Jahr|an|anno)\b|\bannual|\byearly|\bjährlich|\bannuel", re.I
)
# The sentence puts the amount in one year: "this year", "now", "at once", or per year itself.
ONE_YEAR = re.compile(
    r"\b(?:this|next|the\s+first|in\s+one|within\s+a|a|per|each|every)\s+year\b|\b(?:now|today|immediately|at\s+once|"
    r"in\s+one\s+go|in\s+one\s+tranche|up\s+front|upfront|in\s+20\d\d|dieses\s+Jahr|sofort|cette\s+année|"
    r"quest['’]anno|annually|yearly)\b",
    re.I,
)


def _cap_amount(limit, facts):
    """(value, unit) of a cap in money: the limit's own, or its percent of the one amount its base names."""
    if limit.unit != "%":
        return (float(limit.value), limit.unit) if re.fullmatch(r"[A-Z]{3}", limit.unit or "") else None
    base = _content(limit.base)
    wholes = [f for f in facts if f.kind == "amount" and f.role in ("", "holding") and isinstance(f.value, int | float)
              and base and {w.lower() for w in base} <= {w.lower() for w in _content(f.label)}]  # fmt: skip
    return (wholes[0].value * limit.value / 100, wholes[0].unit) if len(wholes) == 1 else None


def _splits(text, facts):
    moved = _moved(facts)
    if moved is None:
        return []
    value, unit, label = moved
    wholes = [
        f
        for f in facts
        if f.kind == "amount"
        and isinstance(f.value, int | float)
        and f.unit == unit
        and f.value > value * 1.2
        and f.role in ("", "holding")
    ]
    out = []
    for m in SPLIT.finditer(text):
        what = m["what"]
        amounts = [q for q in find_quantities(what) if q.kind == "amount"]
        split = None
        if amounts:
            q = amounts[0]
            if q.unit == unit and abs(q.value - value) <= max(q.precision, value * 0.02):
                split = "kept"
            split = split or next((f for f in wholes if abs(q.value - f.value) <= max(q.precision, 1e-9)), None)
        else:
            words = _content(what)
            split = next((f for f in wholes if _content(f.label) - {"total", "whole", "value"} & words), None)
            if split is None and MOVE_WORDS.search(what):
                split = "kept"
        if split == "kept":
            detail = f"the answer stages the amount to be moved ({label}, {format_amount(value, unit)})"
            out.append(Finding("constraint", True, m[0], detail, m.start(), m.end()))
        elif split is not None:
            detail = (
                f"the answer splits the {split.label} ({format_amount(split.value, split.unit)}) into "
                f"{m['parts']}; the amount to be moved is the {label} ({format_amount(value, unit)})"
            )
            out.append(Finding("constraint", False, m[0], detail, m.start(), m.end()))
    return out
