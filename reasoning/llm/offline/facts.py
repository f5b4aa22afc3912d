"""The client's facts as the offline model writes from them: the prompt's CLIENT FACTS sheet, read back.

The offline model never reads figures, places or names from the problem text: everything it states comes from the
sheet (reasoning/facts/sheet.py, `read_sheet`). A figure it prints carries its label ("the portfolio (USD 3.2M)");
a figure it derives carries the arithmetic from facts ("70% of the USD 3.2M portfolio = USD 2.24M"); a percent is
applied only to its own base, and only within one currency. An empty sheet gives words without any money figure.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from reasoning.facts.places import EXONYMS, country_of, place_name
from reasoning.facts.quantities import format_amount, format_percent
from reasoning.facts.regimes import NO_WAGE_TAX  # US states with no income tax on wages or gains
from reasoning.facts.sheet import Fact, read_sheet
from reasoning.facts.terms import CLASS_NOUN

# ---- amounts and places as text ----------------------------------------------------------------------------------


def the(label):
    """A label as a noun phrase: "portfolio" -> "the portfolio"; "her salary", "Keller AG" stay as they are."""
    words = label.split()
    if not words or words[0].lower() in ("the", "a", "an", "her", "his", "their", "its", "our", "my"):
        return label
    if all(w[:1].isupper() or not w[:1].isalpha() for w in words):  # a name: "Keller Metallbau AG", "LVMH"
        return label
    return f"the {label}"


# ---- places -----------------------------------------------------------------------------------------------------

# A country's rules in the banks carry its tag; a subdivision (a US state, a Swiss canton) adds its own tag.
TAG_OF_COUNTRY = {"CH": "ch", "LI": "ch", "US": "us", "DE": "de", "GB": "uk"}


def place_of_code(code):
    """ "US-CA" -> "California", "CH-ZH" -> "Zurich": the place's English name, without its country."""
    exonym = next((name for name, coded in EXONYMS.items() if coded == code and "-" in code), None)
    return exonym or (place_name(code) or code).split(",")[0]


# ---- the sheet read ---------------------------------------------------------------------------------------------

WHOLE = re.compile(r"\b(?:portfolio|wealth|net worth|assets|estate|savings|total|fortune|investable|mandate)\b", re.I)
FLOW = re.compile(
    r"\b(?:salary|income|earnings|spending|withdrawals?|drawings?|draw|expenses|rent|dividends?|contributions?|bonus|fees?|"
    r"living costs|pension payments?)\b",
    re.I,
)
BASIS = re.compile(r"\b(?:basis|cost|purchase price|paid)\b", re.I)
# A goal to hold less of something: "sell", "trim", "diversify", "get the single-stock position below 20%".
REDUCING = re.compile(
    r"\b(?:sell|trim|reduce|exit|unwind|diversif|lower)\w*|\b(?:get|bring|cut)\b[^.;]{0,40}\b(?:below|under|down)\b",
    re.I,
)
LIMIT = re.compile(r"\b(?:target|limit|cap|maximum|max|threshold|ceiling|below|at most)\b", re.I)
SHARE_WORDS = re.compile(r"\s+(?:share|weight|stake|allocation|percentage|percent|fraction|portion|position)$", re.I)
HOLDING = re.compile(
    r"\b(?:stocks?|shares|position|holding|company|stake|bonds?|property|building|real estate|equit(?:y|ies)|"
    r"business|LLC|AG|SA|GmbH|Inc|Ltd|plc)\b"
)
GAINS = re.compile(r"\b(?:gains?|loss(?:es)?|room|allowance|balance|reserve|floor)\b", re.I)


@dataclass(frozen=True)
class Figure:
    """An amount the text may print: a fact as the sheet gives it, or derived from facts with its arithmetic."""

    label: str
    value: float
    unit: str
    how: str = ""  # the arithmetic from facts that gives it ("70% of the USD 3.2M portfolio = USD 2.24M")

    @property
    def shown(self):
        return format_amount(self.value, self.unit)

    def named(self):
        """ "the portfolio (USD 3.2M)"; a derived figure with its arithmetic in the brackets."""
        return f"{the(self.label)} ({self.how or self.shown})"

    def as_base(self):
        """ "the USD 3.2M portfolio": the figure as what a percent is taken of."""
        label = self.label
        if label.split()[0].lower() == "the":
            label = label.split(" ", 1)[1]
        return f"the {self.shown} {label}"


@dataclass(frozen=True)
class Move:
    """A holding brought to a target or limit on the same base: how much is sold (or bought), with the working."""

    holding: Figure
    level: Figure  # the target or limit as an amount ("20% of the USD 3.2M portfolio = USD 640k")
    amount: Figure  # holding - level (a sale), or level - holding (a purchase)
    limit_label: str
    sale: bool


@dataclass
class Case:
    """What the sheet says, ready to write from: labelled figures, the places and what the client listed."""

    facts: list = field(default_factory=list)
    amounts: list = field(default_factory=list)  # Figures of the sheet's amounts
    percents: list = field(default_factory=list)  # the sheet's percent Facts
    derived: list = field(default_factory=list)  # Figures: a percent applied to its own base
    moves: list = field(default_factory=list)
    goal_limits: dict = field(default_factory=dict)  # id of a percent fact -> the goal that states it as a limit
    places: list = field(default_factory=list)  # ISO 3166 codes
    instruments: list = field(default_factory=list)
    accounts: list = field(default_factory=list)
    goals: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    obligations: list = field(default_factory=list)  # Figures of the commitments and liabilities (to be provided for)
    ages: list = field(default_factory=list)  # (label, age)
    years: list = field(default_factory=list)  # (label, year)

    @property
    def empty(self):
        return not self.facts

    @property
    def countries(self):
        return list(dict.fromkeys(country_of(c) for c in self.places))

    @property
    def currencies(self):
        return list(dict.fromkeys(f.unit for f in self.amounts))

    @property
    def listed(self):
        """(kind, name) of everything the client listed that an answer addresses by name (constraints too: every
        answer says it keeps to them)."""
        return (
            [("instrument", n) for n in self.instruments]
            + [("account", n) for n in self.accounts]
            + [("goal", n) for n in self.goals]
            + [("constraint", n) for n in self.constraints]
            + [("obligation", f"{f.label} ({format_amount(f.value, f.unit)})") for f in self.obligations]
        )

    def whole(self):
        """The client's whole wealth as the sheet gives it (portfolio, estate, net worth), else None."""
        wholes = [f for f in self.amounts if WHOLE.search(f.label) and not FLOW.search(f.label)]
        return max(wholes, key=lambda f: f.value) if wholes else None

    def holdings(self):
        """Amounts that are a position or a sum to act on: neither the whole, a flow like a salary, nor a cost basis."""
        own = [f for f in self.amounts if not (WHOLE.search(f.label) or FLOW.search(f.label) or BASIS.search(f.label))]
        return self.derived_holdings() + own

    def derived_holdings(self):
        return [f for f in self.derived if not LIMIT.search(f.label) and f.label != "the client's limit"]

    def scope(self):
        """The amount the plan acts on: a sale the sheet implies, else a holding, else the whole, else None."""
        if self.moves:
            return self.moves[0].amount
        holdings = self.holdings()
        return holdings[0] if holdings else self.whole()

    def goal_holding(self):
        """The holding a goal names by its noun ("pass the Freiburg flat" names the "rental flat"), else None."""
        goals = " ".join(self.goals).lower()
        for f in self.holdings() + ([self.whole()] if self.whole() else []):
            noun = f.label.lower().split()[-1] if f.label else ""
            if len(noun) > 3 and not FLOW.search(noun) and re.search(rf"\b{re.escape(noun)}s?\b", goals):
                return f
        return None

    def asset(self):
        """The name of the holding the plan is about: a label that names a holding ("employer stock", "GmbH
        stake"), else a percent's subject or another position; None when the sheet names none."""
        labels = [f.label for f in self.holdings()] + [holding_name(p.label) for p in self.percents]
        labels = [label for label in labels if not LIMIT.search(label) and not GAINS.search(label)]
        named = [label for label in labels if HOLDING.search(label)]
        return (named or labels or [None])[0]

    def tags(self):
        """The tags the bank templates fit by: jurisdictions from the sheet's places only, and the client's case."""
        tags = {TAG_OF_COUNTRY.get(c, c.lower()) for c in self.countries}
        tags |= {code.lower() for code in self.places if "-" in code}
        if len(self.countries) > 1:
            tags.add("cross-border")
        if any(code in NO_WAGE_TAX for code in self.places):
            tags.add("no-state-tax")
        words = " ".join(f"{f.label} {f.value}" for f in self.facts).lower()
        if re.search(r"\b(?:company|business|founder|firm|ag|gmbh|inc|ltd|sa)\b", words):
            tags.add("business")
        if re.search(r"\bwidow", words):
            tags.add("widow")
        elif re.search(r"\b(?:spouse|husband|wife|married|couple|partner)\b", words):
            tags.add("couple")
        return tags


def holding_name(label):
    """ "employer stock share" -> "employer stock": the holding a share-of label is about."""
    return SHARE_WORDS.sub("", label).strip() or label


@functools.lru_cache(maxsize=256)
def _read(sheet):
    return tuple(read_sheet(sheet))


def read_case(sheet):
    """The Case of a prompt's CLIENT FACTS section; every call of a session reads the same sheet, so it is kept
    (callers read it, never change it)."""
    return _case(sheet)


@functools.lru_cache(maxsize=256)
def _case(sheet):
    facts = list(_read(sheet))
    case = Case(facts=facts)
    for fact in facts:
        value = fact.value
        if fact.kind == "amount" and isinstance(value, int | float) and fact.unit:
            case.amounts.append(Figure(fact.label, float(value), fact.unit))
            if fact.role in ("commitment", "liability"):
                case.obligations.append(Figure(fact.label, float(value), fact.unit))
        elif fact.kind == "percent" and isinstance(value, int | float):
            case.percents.append(fact)
        elif fact.kind == "limit" and fact.unit == "%" and fact.role in ("cap", "maximum") and isinstance(value, int | float):
            # "below 20% of the portfolio": a cap in percent is a limit on a share, of the whole it is a share of
            label = fact.label if LIMIT.search(fact.label) else f"{fact.label} limit"
            case.percents.append(Fact(label=label, kind="percent", value=value, unit="%", text=fact.text, base="?"))
        elif fact.kind == "place" and value:
            case.places.append(str(value))
        elif fact.kind in ("instrument", "account", "goal", "constraint") and value:
            getattr(case, fact.kind + "s").append(str(value))
        elif fact.kind == "age" and isinstance(value, int | float):
            case.ages.append((fact.label, int(value)))
        elif fact.kind == "year" and isinstance(value, int | float):
            case.years.append((fact.label, int(value)))
    # A cap's base is what it applies to ("the single-stock position"); its percent is of the whole the shares are of.
    wholes = {p.base for p in case.percents if p.base and p.base != "?"}
    for p in case.percents:
        if p.base == "?":
            p.base = next(iter(wholes)) if len(wholes) == 1 else ""
    case.goal_limits = {id(p): goal for p in case.percents if (goal := _goal_limit(p, case))}
    case.derived = [f for f in (_applied(p, case.amounts, case) for p in case.percents) if f]
    case.moves = _moves(case)
    return case


def _goal_limit(percent, case):
    """The goal or constraint that states this percent as a limit ("get the employer stock below 20% of the
    portfolio"), when its own label does not say so; None otherwise."""
    if LIMIT.search(percent.label):
        return None
    written = format_percent(percent.value)
    return next((g for g in case.goals + case.constraints if written in g and LIMIT.search(g)), None)


def base_of(percent, amounts):
    """The amount a percent is a share of: the one its `base` names (never a guess when it names none)."""
    if not percent.base:
        return None
    wanted = percent.base.lower().removeprefix("the ").strip()
    exact = [f for f in amounts if f.label.lower().removeprefix("the ").strip() == wanted]
    if exact:
        return exact[0]
    near = [f for f in amounts if wanted in f.label.lower() or f.label.lower() in wanted]
    return near[0] if len(near) == 1 else None


def _applied(percent, amounts, case=None):
    base = base_of(percent, amounts)
    if base is None:
        return None
    value = base.value * float(percent.value) / 100
    how = f"{format_percent(percent.value)} of {base.as_base()} = {format_amount(value, base.unit)}"
    limit = case is not None and id(percent) in case.goal_limits
    return Figure("the client's limit" if limit else holding_name(percent.label), value, base.unit, how)


def _moves(case):
    """Each holding with a target or limit on the same base: the sale (or purchase) that brings it there."""
    moves = []
    for limit in (p for p in case.percents if LIMIT.search(p.label) or id(p) in case.goal_limits):
        base = base_of(limit, case.amounts)
        holding = _holding_for(limit, base, case)
        if base is None or holding is None or holding.unit != base.unit:
            continue
        level_value = base.value * float(limit.value) / 100
        level = Figure(
            limit.label,
            level_value,
            base.unit,
            f"{format_percent(limit.value)} of {base.as_base()} = {format_amount(level_value, base.unit)}",
        )
        sale = holding.value > level.value
        high, low = (holding, level) if sale else (level, holding)
        gap = high.value - low.value
        if gap <= 0:
            continue
        how = f"{high.shown} - {low.shown} = {format_amount(gap, base.unit)}"
        label = f"{'sale' if sale else 'purchase'} of {holding.label}"
        goal = case.goal_limits.get(id(limit))
        limit_label = f"limit the client set ({goal})" if goal else limit.label
        moves.append(Move(holding, level, Figure(label, gap, base.unit, how), limit_label, sale))
    return moves


ASSET_CLASS = re.compile(CLASS_NOUN.pattern.replace("|exposure|positions?|holdings?", ""), re.I)


def _holding_for(limit, base, case):
    """The holding a target or limit concerns: one on the same base sharing a word with it, or the only one."""
    if base is None:
        return None
    same_base = [
        f
        for p, f in zip(case.percents, [_applied(p, case.amounts) for p in case.percents])
        if f and p is not limit and not LIMIT.search(p.label) and id(p) not in case.goal_limits
        and base_of(p, case.amounts) == base
    ]
    # A stated amount counts only when its label names a position ("company stock"): a drawing or a reserve is no
    # part of the base a limit caps.
    stated = [f for f in case.holdings() if not f.how and HOLDING.search(f.label) and f.unit == base.unit]
    candidates = same_base or [f for f in stated if f.value < base.value]
    words = {w[:4] for w in re.findall(r"[a-z]{4,}", limit.label.lower())} - {"targ", "limi", "maxi", "thre", "ceil"}
    sharing = [f for f in candidates if words & {w[:4] for w in re.findall(r"[a-z]{4,}", f.label.lower())}]
    if len(sharing) == 1:
        return sharing[0]
    if not sharing and ASSET_CLASS.search(limit.label):
        return None  # "bonds target 40%" limits no equity holding, though the equities are the only one read
    return candidates[0] if len(candidates) == 1 else None


# ---- the case as words a template is filled with ---------------------------------------------------------------


def key_numbers(case, limit=8):
    """The sheet's figures, each with its label, and what follows from them with the arithmetic shown: a sale a
    each percent applied to its own base first, then a sale a target implies, then the amounts as stated."""
    found = [f"{f.label}: {f.how}" for f in case.derived]
    found += [f"{m.amount.label}: {m.amount.how}" for m in case.moves]
    shown = " ".join(found)
    # an amount already written as a base ("72% of the CHF 12M portfolio") is not listed again on its own
    found += [f"{f.label}: {f.shown}" for f in case.amounts if f"{f.shown} {f.label}" not in shown]
    found += drifts(case, [m.holding.label for m in case.moves])
    for fact in case.percents:
        if base_of(fact, case.amounts) is None:  # a percent whose base is not on the sheet stays unapplied
            found.append(f"{fact.label}: {format_percent(fact.value)}" + (f" of the {fact.base}" if fact.base else ""))
    return list(dict.fromkeys(found))[:limit]


def drifts(case, moved=()):
    """Each weight against its target, in points ("equity weight now 58% against the equity target 50%: 8 points
    over"): a percent with no base on the sheet is compared, never applied to an amount. A holding whose sale or
    purchase to the target is already listed (`moved`, by label) is not compared again."""
    found = []
    for target in (p for p in case.percents if "target" in p.label.lower()):
        stems = _stems(target.label) - {"targ"}
        for now in case.percents:
            if now is target or LIMIT.search(now.label) or not stems & _stems(now.label):
                continue
            if holding_name(now.label) in moved:
                continue
            gap = float(now.value) - float(target.value)
            side = "over" if gap > 0 else "under"
            found.append(
                f"{now.label} {format_percent(now.value)} against the {target.label} {format_percent(target.value)}: "
                f"{format_percent(abs(gap))[:-1]} points {side}"
            )
    return found


def _stems(label):
    return {w[:4] for w in re.findall(r"[a-z]{4,}", label.lower())}


class Words(dict):
    def __missing__(self, key):
        return ""  # a template naming an unknown placeholder reads a little thinner instead of failing


# The sum a kind's plan acts on, in order of preference: a sale or purchase a target implies, a holding, the whole.
SCOPE = {
    "allocation-rebalance": ("move", "whole", "holding"),
    "wealth-transfer": ("whole",),  # an estate with no total on the sheet is "the estate", never one of its parts
}
DEFAULT_SCOPE = ("move", "holding", "whole")
# A state's own rule on gains, named only when the sheet places the client in that state.
STATE_RULES = {"US-CA": "California taxes gains as ordinary income, at up to 13.3%"}


def scope_of(case, kind):
    for choice in SCOPE.get(kind, DEFAULT_SCOPE):
        if choice == "move" and case.moves:
            return case.moves[0].amount, chain(case.moves[0])
        if (named := case.goal_holding()) and choice in ("holding", "whole"):
            return named, named.how  # "pass the Freiburg flat to the children": the flat, whatever else is larger
        if choice == "holding" and case.holdings():
            figure = case.holdings()[0]
            return figure, figure.how
        if choice == "whole" and case.whole():
            return case.whole(), ""
    return None, ""


def chain(move):
    """Every piece of arithmetic a move rests on, from the facts: the holding, the level, the difference."""
    return "; ".join(x for x in (move.holding.how, move.level.how, move.amount.how) if x)


def words(case, kind, default_amount, default_asset):
    """The placeholders a bank template is filled with, from the sheet alone; plain words where it has no figure."""
    scope, how = scope_of(case, kind)
    whole = case.whole()
    w = Words(
        amount=f"{the(scope.label)} ({how or scope.shown})" if scope else default_amount,
        figure=scope.shown if scope else "",
        whole=whole.named() if whole else "the client's assets",
        asset=the(case.asset()) if case.asset() else default_asset,
        cur=(scope or whole or Figure("", 0, "")).unit or (case.currencies[:1] or ["the home currency"])[0],
        place=place_of(case),
        client=client_of(case),
        horizon=horizon_of(case),
        band=band_of(case),
        pillar_ages=pillar_ages(age_of(case)),
        tranche=tranche_of(scope, how) if not (kind == "allocation-rebalance" and scope is whole) else "",
        move=move_text(case.moves[0]) if case.moves else "",
        state_rule=state_rule(case),
        tags=case.tags() | ({"move"} if case.moves else set()) | ({"sale"} if selling(case) else set()),
    )
    return w


def selling(case):
    """Whether the plan sells down a holding: a limit the sheet sets implies a sale, or a goal asks to hold less."""
    return any(m.sale for m in case.moves) or any(REDUCING.search(goal) for goal in case.goals)


def place_of(case):
    """The client's place by name, a state or canton before its country; plain words when the sheet has none."""
    if not case.places:
        return "the client's jurisdiction"
    ordered = sorted(case.places, key=lambda code: "-" not in code)
    return place_of_code(ordered[0])


CLIENT_AGE = re.compile(r"^(?:the )?(?:client'?s? )?age$|^age of the client$", re.I)
AHEAD = re.compile(r"\b(?:retire\w*|move|sale|end|deadline|purchase|exit|access|start|target)\b", re.I)
HORIZON = re.compile(r"\b(?:over|within|during) (the next [^,.;]{1,30}?\b(?:years?|months?))\b", re.I)


def age_of(case):
    """The client's own age: a fact labelled as the client's age, never a spouse's, child's or a target age."""
    ages = [age for label, age in case.ages if CLIENT_AGE.match(label.strip())]
    return ages[0] if ages else None


def client_of(case):
    if "widow" in case.tags():
        return "the widow"
    age = age_of(case)
    return f"the {age}-year-old client" if age else "the client"


def horizon_of(case):
    """The period a goal or constraint names ("over the next three to four years"), else the years to a date ahead
    the sheet names (a retirement or a move, never a past year), else plain words."""
    for text in case.goals + case.constraints:
        found = HORIZON.search(text)
        if found:
            return found[1]
    ahead = [(label, year) for label, year in case.years if AHEAD.search(label)]
    if ahead:
        return f"the years to the {ahead[0][0]} ({ahead[0][1]})"
    return "the planning horizon"


def band_of(case):
    targets = [p for p in case.percents if "target" in p.label.lower()]
    if not targets:
        return "5 points either side of each target weight"
    target = targets[0]
    base = base_of(target, case.amounts)
    of = f" of {base.as_base()}" if base else (f" of the {target.base}" if target.base else "")
    return f"5 points either side of the {target.label} ({format_percent(target.value)}{of})"


def pillar_ages(age):
    """Three yearly 3a withdrawals: the earliest allowed ages (from 60) that are still ahead of the client."""
    if not age:
        return "three consecutive years around retirement"
    start = max(age + 1, 60)
    return f"{start}, {start + 1} and {start + 2}" if start + 2 <= 70 else "the next three tax years"


def tranche_of(scope, how):
    """ " (USD 2.24M / 3 = USD 746,667 each)", with the arithmetic the sum rests on; "" with no sum."""
    if scope is None:
        return ""
    third = f"{scope.shown} / 3 = {format_amount(scope.value / 3, scope.unit)} each"
    return f" ({how}; {third})" if how else f" ({third})"


def move_text(move):
    verb = "sell" if move.sale else "buy"
    return f"{verb} {move.amount.shown} of {the(move.holding.label)} ({chain(move)})"


def state_rule(case):
    """The state tax on gains, for the sheet's own US state only; never another state's rule."""
    states = [code for code in case.places if code.startswith("US-")]
    if not states:
        return "state tax on gains depends on the state of residence, which the client's facts do not give"
    code = states[0]
    if code in NO_WAGE_TAX:
        return f"{place_of_code(code)} has no state income tax, so the federal tax is the whole bill"
    return STATE_RULES.get(code, f"{place_of_code(code)} taxes gains under its own rules, on top of the federal tax")
