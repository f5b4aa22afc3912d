"""Declared figures, each evaluated exactly from its derivation over the client's facts and earlier figures.

A model that writes a figure may declare it: a label, the value it wrote, its unit, and where it comes from, either
a fact of the sheet ("portfolio") or an expression over facts, earlier figures and written values ("portfolio ×
(equity share − equity target)", "GBP 420k × GBP/CHF 1.12"). The expression is read with Python's `ast`, restricted
to names, numbers, + − × ÷ and brackets, and computed with Decimal: never eval.

Values carry their units as exponents of currencies ("CHF": 1); a percent is a pure number (70% is 0.7) that
remembers the amount it is a share of. A rate carries its direction: "GBP/CHF 1.12" is 1 GBP = 1.12 CHF, a value of
1.12 CHF per GBP, so GBP times it is CHF and CHF times it is no currency at all: applying a rate the wrong way, adding
two currencies or applying a percent to another amount than its base is a unit error, found, never raised.

    evaluate([{"label": "sale", "value": 160000, "unit": "USD", "derivation": "portfolio × (equity share − equity
    target)"}], facts)  ->  [Evaluated(label="sale", ok=True, facts=[...], ...)]
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

from reasoning.facts.quantities import decimal_of, find_quantities

SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
MAX_DERIVATION = 300  # characters: a derivation is a line of working, not a program
# "× x * ·" multiply, "÷ /" divide, "− –" subtract; "of" (70% of the portfolio) multiplies; "the" says nothing.
OPERATORS = [(re.compile(r"[×·✕]|(?<=\s)x(?=\s)"), "*"), (re.compile(r"÷"), "/"), (re.compile(r"[−–—]"), "-"),
             (re.compile(r"\bof\b", re.I), "*"), (re.compile(r"\bthe\b", re.I), " ")]  # fmt: skip
RATE = re.compile(r"(?P<a>[A-Z]{3}|[$€£])\s?/\s?(?P<b>[A-Z]{3}|[$€£])\s*(?:=\s*)?(?P<n>\d+(?:\.\d+)?)")
NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")


class DerivationError(ValueError):
    """A derivation that cannot be evaluated, or whose units do not agree; the message says why in plain words."""


@dataclass(frozen=True)
class Value:
    amount: Decimal
    unit: tuple = ()  # sorted (code, exponent) pairs; () is a pure number (a percent, a count)
    facts: frozenset = frozenset()  # the ids of the facts it rests on
    fact: object = None  # the fact itself, when the value is one fact alone (a percent's base is checked on it)
    rate: str = ""  # "GBP/CHF" when the value is a rate, for the message on a wrong direction
    rates: tuple = ()  # every rate applied in it
    base: str = ""  # a percent's base (a fact's, kept through a difference of two shares of the same base)
    name: str = ""  # an amount's label: a fact's or an earlier figure's


@dataclass
class Evaluated:
    """One declared figure, checked: what JSON the tree and the session carry of it (`to_dict`)."""

    label: str
    value: float | None
    unit: str
    derivation: str
    facts: list = field(default_factory=list)
    ok: bool = True
    detail: str = ""
    computed: str = ""  # the exact value of the derivation, in the declared unit ("" when it could not be computed)
    verified: bool = True  # False: the model's own figure, with no derivation to check

    def to_dict(self):
        return {"label": self.label, "value": self.value, "unit": self.unit, "derivation": self.derivation,
                "facts": [int(i) if i.isdigit() else i for i in self.facts], "ok": self.ok, "detail": self.detail, "computed": self.computed,
                "verified": self.verified}  # fmt: skip


def evaluate(declared, facts) -> list[Evaluated]:
    """Each declared figure (a dict, or a model with those fields) checked in order; a later one may name an earlier."""
    names = _fact_names(facts)
    done = []
    for item in declared or []:
        data = item if isinstance(item, dict) else item.model_dump()
        figure = _one(data, names)
        done.append(figure)
        if figure.label and figure.value is not None and _unit_of(figure.unit) is not None:
            _name(names, figure)  # a later derivation may name it, as declared (a failed one has its own finding)
    return done


def _one(data, names):
    label = " ".join(str(data.get("label") or "").split())[:120]
    derivation = " ".join(str(data.get("derivation") or "").split())
    unit = SYMBOLS.get(str(data.get("unit") or "").strip(), str(data.get("unit") or "").strip())
    figure = Evaluated(label, None, unit, derivation)
    written = _declared_value(data.get("value"))
    if written is None:
        return _failed(figure, f"{label or 'a figure'}: its value is not a number")
    figure.value = float(written)
    if not derivation:
        figure.verified = False
        figure.detail = f"{label}: the model's own figure, with no derivation to check"
        return figure
    try:
        result = compute(derivation, names)
    except DerivationError as error:
        return _failed(figure, f"{label}: {error}")
    figure.facts = sorted(result.facts)
    wanted = _unit_of(unit)
    if wanted is None:
        return _failed(figure, f"{label}: '{unit}' is no unit (a currency code, % or nothing)")
    if result.unit != wanted[0]:
        return _failed(figure, f"{label}: {_unit_mismatch(result, wanted[0], unit)}")
    exact = result.amount * wanted[1]
    figure.computed = _plain(exact)
    if abs(exact - written) > _rounding(written):
        how = f"{derivation} = {_plain(exact)}{' ' + unit if unit else ''}"
        return _failed(figure, f"{label}: declared {_plain(written)}, but {how}")
    figure.detail = f"{label}: {derivation} = {_plain(exact)}{' ' + unit if unit else ''}"
    return figure


def _failed(figure, detail):
    figure.ok, figure.detail = False, detail
    return figure


def compute(derivation, names) -> Value:
    """The derivation's value: `names` maps a lower-case fact label, fact id or figure label to its Value."""
    if len(derivation) > MAX_DERIVATION:
        raise DerivationError(f"the derivation is longer than {MAX_DERIVATION} characters")
    text, values = _tokens(derivation, names)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise DerivationError(f"'{derivation}' is not an expression of facts, figures and + − × ÷") from None
    with localcontext() as context:
        context.prec = 28
        return _value(tree.body, values)


def _tokens(derivation, names):
    """The derivation with each name, rate, amount, percent and number replaced by a placeholder (v0, v1 ...)."""
    values = {}

    def keep(value):
        key = f"v{len(values)}_"
        values[key] = value
        return f" {key} "

    text = derivation
    for name in sorted(names, key=len, reverse=True):  # "employer stock share" before "employer stock"
        pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.IGNORECASE)
        text = pattern.sub(lambda m, n=name: keep(names[n]), text)
    text = RATE.sub(lambda m: keep(_rate(m)), text)
    for q in reversed([q for q in find_quantities(text) if q.kind in ("amount", "percent")]):
        text = text[: q.start] + keep(_literal(q)) + text[q.end :]
    for pattern, operator in OPERATORS:
        text = pattern.sub(operator, text)
    text = NUMBER.sub(lambda m: keep(Value(decimal_of(m[0])[0])), text)
    return text, values


def _rate(m):
    base, quote = (SYMBOLS.get(m[k], m[k]) for k in ("a", "b"))
    pair = f"{base}/{quote}"
    return Value(Decimal(m["n"]), _units({quote: 1, base: -1}), rate=pair, rates=(f"{pair} {m['n']}",))


def _literal(q):
    amount = Decimal(repr(q.value))
    if q.kind == "percent":
        return Value(amount / 100)
    return Value(amount, ((q.unit, 1),))


ALLOWED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _value(node, values) -> Value:
    if isinstance(node, ast.Name) and node.id in values:
        return values[node.id]
    if isinstance(node, ast.Name):
        raise DerivationError(f"'{node.id}' is neither a fact of the sheet nor an earlier figure")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand, values)
        return _with(inner, -inner.amount if isinstance(node.op, ast.USub) else inner.amount, inner.unit)
    if isinstance(node, ast.BinOp) and type(node.op) in ALLOWED:
        return _binary(type(node.op), _value(node.left, values), _value(node.right, values))
    raise DerivationError("only facts, figures, numbers, + − × ÷ and brackets may be used")


def _binary(op, a, b):
    if op in (ast.Add, ast.Sub):
        if a.unit != b.unit:
            raise DerivationError(f"adds {_unit_name(a.unit)} to {_unit_name(b.unit)}: no rate converts them")
        joined = _joined(a, b, a.amount + b.amount if op is ast.Add else a.amount - b.amount, a.unit)
        same_base = a.base if a.base and _same_label(a.base, b.base or "") else ""
        return Value(joined.amount, joined.unit, joined.facts, rates=joined.rates, base=same_base)
    if op is ast.Mult:
        _check_base(a, b)
        _check_base(b, a)
        return _joined(a, b, a.amount * b.amount, _combine(a.unit, b.unit, 1))
    try:
        return _joined(a, b, a.amount / b.amount, _combine(a.unit, b.unit, -1))
    except (DivisionByZero, InvalidOperation):
        raise DerivationError("divides by zero") from None


def _check_base(percent, amount):
    """A percent of the sheet with a base (or a difference of two shares of one base), applied to another amount
    than that base: one of the client's, or an earlier figure."""
    if not percent.base or percent.unit or not amount.name or len(amount.unit) != 1:
        return
    if _same_label(percent.base, amount.name):
        return
    what = f"the {percent.fact.label}" if percent.fact is not None else "the difference of shares"
    raise DerivationError(f"{what} is a share of the {percent.base}, applied here to the {amount.name}")


def _same_label(a, b):
    def plain(s):
        return " ".join(s.lower().removeprefix("the ").split())

    return plain(a) == plain(b) or plain(a) in plain(b) or plain(b) in plain(a)


def _joined(a, b, amount, unit):
    return Value(amount, unit, a.facts | b.facts, rates=a.rates + b.rates)


def _with(v, amount, unit):
    return Value(amount, unit, v.facts, v.fact, v.rate, v.rates, v.base, v.name)


def _combine(a, b, sign):
    exponents = dict(a)
    for code, power in b:
        exponents[code] = exponents.get(code, 0) + sign * power
    return _units(exponents)


def _units(exponents):
    return tuple(sorted((code, power) for code, power in exponents.items() if power))


def _unit_name(unit):
    if not unit:
        return "a plain number"
    if len(unit) == 1 and unit[0][1] == 1:
        return unit[0][0]
    def power(code, p):
        return code + ("²" if abs(p) == 2 else f"^{abs(p)}" if abs(p) > 2 else "")

    top = "·".join(power(c, p) for c, p in unit if p > 0) or "1"
    bottom = "·".join(power(c, p) for c, p in unit if p < 0)
    return f"{top} per {bottom}" if bottom else top


def _unit_mismatch(result, wanted, unit):
    if result.rates and any(abs(p) > 1 for _, p in result.unit) or (result.rates and len(result.unit) > 1):
        return f"applies the rate {', '.join(result.rates)} the wrong way (it gives {_unit_name(result.unit)})"
    return f"gives {_unit_name(result.unit)}, declared {unit or 'a plain number'}"


def _unit_of(unit):
    """(units, factor): a currency code is (("CHF", 1),), 1; a percent is (), 100; no unit is (), 1."""
    if unit == "%":
        return (), Decimal(100)
    if not unit:
        return (), Decimal(1)
    if re.fullmatch(r"[A-Z]{3}", unit):
        return ((unit, 1),), Decimal(1)
    return None


def _declared_value(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return Decimal(repr(value)) if value == value and abs(value) != float("inf") else None
    read = decimal_of(str(value).strip()) if re.fullmatch(r"-?[\d,.'’]+", str(value).strip()) else None
    return read[0] if read else None


def _rounding(written):
    """Half a unit of the declared value's last significant digit: 2240000 may be 2.24M rounded (±5,000), 746667
    is exact to ±0.5, 36.1 to ±0.05."""
    sign, digits, exponent = written.normalize().as_tuple()
    if not isinstance(exponent, int) or not any(digits):
        return Decimal("0.5")
    return Decimal(5) * Decimal(10) ** (exponent - 1)


def _plain(value):
    text = f"{value.quantize(Decimal('0.0001')) if abs(value) < 10**15 else value:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _fact_names(facts):
    """Each numeric fact by its label and its id: an amount in its currency, a percent as a share of 1."""
    names = {}
    for f in facts or []:
        if not isinstance(f.value, int | float) or isinstance(f.value, bool):
            continue
        key = f.id or f.label
        amount = Decimal(repr(float(f.value)))
        if f.kind == "percent" or f.unit == "%":
            # a limit's base is its object ("cash"), not the amount it is a share of: only a percent's is checked
            value = Value(amount / 100, (), frozenset({key}), f, base=(f.base or "") if f.kind == "percent" else "")
        elif re.fullmatch(r"[A-Z]{3}", f.unit or ""):
            value = Value(amount, ((f.unit, 1),), frozenset({key}), f, name=f.label if f.kind == "amount" else "")
        else:
            value = Value(amount, (), frozenset({key}), f)
        names.setdefault(f.label.lower(), value)
        if f.id:
            names.setdefault(str(f.id).lower(), value)
    return names


def _name(names, figure):
    """A figure by its label, for the derivations after it; a fact of money or a share keeps its label (a figure
    "percent" derived from the fact "percent" is not that fact), a fact of another measure ("cash floor": 12 months)
    gives its label to the figure that states it in money."""
    have = names.get(figure.label.lower())
    if have is not None and have.fact is not None and (have.unit or have.fact.kind == "percent" or have.fact.unit == "%"):
        return
    names[figure.label.lower()] = _as_value(figure)


def _as_value(figure):
    unit, factor = _unit_of(figure.unit) or ((), Decimal(1))
    return Value(Decimal(repr(figure.value)) / factor, unit, frozenset(figure.facts), name=figure.label)
