"""The client's fact sheet: what the client told us, as facts a checker and a prompt can both read.

A Fact is one figure, place or named thing from the problem text, labelled ("salary", "employer stock share"),
of one kind, with its value normalised (an amount in base units with its ISO currency, a percent as a number of
percent, a place as an ISO 3166 code or subdivision), the exact span it came from, and who stated it (read from
the text, or an advisor). A Finding is one result of checking a text against the sheet.

Nothing here imports Django or litellm: the offline model, the strategies' engine and the checker all read it.
The sheet travels in every prompt as lines `render_sheet` writes and `read_sheet` reads back, so the offline model
writes from the same sheet a real model is shown.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

KINDS = (
    "amount", "percent", "age", "year", "place", "account", "instrument", "goal", "constraint",
    "person", "limit", "horizon",
)  # fmt: skip
NUMERIC = ("amount", "percent", "age", "year", "person", "limit", "horizon")
# What a fact is for, where its kind alone does not say (docs/FACTS.md, "Roles"):
ROLES = {
    "amount": ("", "holding", "commitment", "liability", "income", "expense", "goal"),
    "percent": ("", "share", "target", "spending", "tax", "growth", "return", "fee"),
    "person": ("", "client", "spouse", "partner", "child", "grandchild", "heir", "parent", "sibling", "beneficiary"),
    "age": ("", "client", "spouse", "partner", "child", "grandchild", "heir", "parent", "sibling", "beneficiary"),
    "limit": ("floor", "cap", "minimum", "maximum"),
    "horizon": ("over", "within", "by", "before", "after"),
    "place": ("", "residence", "citizenship", "domicile", "seat", "property", "assets", "situs"),
}
# A limit's or a horizon's unit: a duration, a calendar year, an age, a currency (ISO 4217) or a percent.
DURATION_UNITS = ("months", "years")
SOURCES = ("extracted", "advisor")
CHECK_KINDS = ("figure", "arithmetic", "currency", "jurisdiction", "label", "coverage", "constraint")


@dataclass
class Fact:
    label: str  # what the figure or thing is, in the client's terms: "salary", "employer stock share"
    kind: str  # one of KINDS
    value: float | str | None  # amount: base units; percent: 70.0; age/year: a number; place: "US-CA"; else a name
    unit: str = ""  # amount: ISO 4217 code; percent: "%"; age: "years"; place: "ISO 3166"; else ""
    text: str = ""  # the exact span of the problem text it came from ("" for an advisor's fact with none)
    start: int = -1  # where that span starts in the problem text (-1: not from the text)
    end: int = -1
    source: str = "extracted"  # extracted | advisor
    base: str = ""  # a percent's base (the label of the amount it is a share of); a limit's object ("cash")
    role: str = ""  # what it is for (ROLES): a percent's "target" or "share", a person's "spouse", a limit's "floor"
    id: str = ""  # the stored fact's id, once stored

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        """From a stored or an API row: a text field the row leaves empty (null: "no base", "no role") is "", and the
        row's id (a number there) is the text the sheet names facts by."""
        fields = cls.__dataclass_fields__
        texts = {name for name, f in fields.items() if isinstance(f.default, str)}
        read = {k: ("" if v is None and k in texts else v) for k, v in data.items() if k in fields}
        if "id" in read:
            read["id"] = str(read["id"])
        return cls(**read)


@dataclass
class Finding:
    """One check of a text against the sheet: `ok` False is a failed check; `text` is the span it concerns. A check
    that cannot decide says so: ok True, verified False, and a detail saying why; it never counts as checked."""

    kind: str  # one of CHECK_KINDS
    ok: bool
    text: str  # the span of the checked text
    detail: str  # what was found, in a sentence an advisor reads ("$450k is the salary, not NIIT")
    start: int = -1  # where the span starts in the checked text
    end: int = -1
    verified: bool = True  # False: the check could not decide (ok stays True, the detail says why)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Sheet:
    """The facts of one case, in the order the problem states them."""

    facts: list[Fact] = field(default_factory=list)

    def of_kind(self, *kinds):
        return [f for f in self.facts if f.kind in kinds]

    def labelled(self, label):
        return next((f for f in self.facts if f.label == label), None)


# ---- the sheet in a prompt ------------------------------------------------------------------------------------

LINE = re.compile(r"^- (?P<label>.+?) \[(?P<kind>[a-z]+)(?:, (?P<role>[a-z]+))?\]: (?P<display>.*)$")
EMPTY = "(no facts were read from the problem)"


def display(fact):
    """The value as the prompt shows it: an amount in full with its ISO code, a percent with its base, a place with
    its code first; the shape read_sheet reads back."""
    value = fact.value
    if fact.kind == "amount" and isinstance(value, int | float):
        return f"{fact.unit} {_figure(value)}".strip()
    if fact.kind == "percent" and isinstance(value, int | float):
        return f"{_figure(value)}%" + (f" of {fact.base}" if fact.base else "")
    if fact.kind == "age" and isinstance(value, int | float):
        return f"{_figure(value)} years"
    if fact.kind == "year" and isinstance(value, int | float):
        return _figure(value)
    if fact.kind == "person" and isinstance(value, int | float):
        return f"{_figure(value)} {'person' if value == 1 else 'people'}"
    if fact.kind in ("limit", "horizon") and isinstance(value, int | float):
        return _measure(value, fact.unit) + (f" of {fact.base}" if fact.base else "")
    return str(value if value not in (None, "") else fact.text)


def _measure(value, unit):
    """A limit's or horizon's figure with its unit as people read it: "18 months", "CHF 200,000", "10%", "2031",
    "age 61"."""
    if unit == "%":
        return f"{_figure(value)}%"
    if unit == "year":
        return str(int(value)) if float(value).is_integer() else _figure(value)
    if unit == "age":
        return f"age {_figure(value)}"
    if len(unit) == 3 and unit.isupper():
        return f"{unit} {_figure(value)}"
    return f"{_figure(value)} {unit}".strip()


def render_sheet(facts):
    """The facts as prompt lines: `- label [kind]: value`, with the words they came from."""
    if not facts:
        return EMPTY
    return "\n".join(
        f"- {f.label} [{f.kind}{', ' + f.role if f.role else ''}]: {display(f)}" + (f'  (the client wrote "{_one_line(f.text)}")' if f.text else "")
        for f in facts
    )


QUOTED = re.compile(r'\s+\(the client wrote "(?P<text>.*)"\)$')


def read_sheet(text):
    """The facts a prompt's sheet section lists (render_sheet's lines; other lines are ignored)."""
    facts = []
    for line in (text or "").splitlines():
        quoted = QUOTED.search(line)
        match = LINE.match(line[: quoted.start()] if quoted else line)
        if not match or match["kind"] not in KINDS:
            continue
        kind, shown = match["kind"], match["display"].strip()
        fact = Fact(label=match["label"], kind=kind, value=shown, text=quoted["text"] if quoted else "")
        fact.role = match["role"] or ""
        _read_value(fact, shown)
        facts.append(fact)
    return facts


AMOUNT = re.compile(r"^(?P<unit>[A-Z]{3}) (?P<figure>-?[\d,]+(?:\.\d+)?)$")
PERCENT = re.compile(r"^(?P<figure>-?[\d,]+(?:\.\d+)?)%(?: of (?P<base>.+))?$")
NUMBER = re.compile(r"^(?P<figure>-?[\d,]+(?:\.\d+)?)(?: years)?$")
PEOPLE = re.compile(r"^(?P<figure>[\d,]+) (?:person|people)$")
MEASURE = re.compile(
    r"^(?:(?P<code>[A-Z]{3}) (?P<amount>-?[\d,]+(?:\.\d+)?)|age (?P<age>[\d,]+(?:\.\d+)?)"
    r"|(?P<figure>-?[\d,]+(?:\.\d+)?)(?P<percent>%)?(?: (?P<unit>[a-z]+))?)(?: of (?P<base>.+))?$"
)


def _read_value(fact, shown):
    if fact.kind == "amount" and (m := AMOUNT.match(shown)):
        fact.value, fact.unit = _number(m["figure"]), m["unit"]
    elif fact.kind == "percent" and (m := PERCENT.match(shown)):
        fact.value, fact.unit, fact.base = _number(m["figure"]), "%", m["base"] or ""
    elif fact.kind in ("age", "year") and (m := NUMBER.match(shown)):
        fact.value, fact.unit = _number(m["figure"]), "years" if fact.kind == "age" else ""
    elif fact.kind == "place":
        fact.value, fact.unit = shown.split(" ")[0], "ISO 3166"
    elif fact.kind == "person" and (m := PEOPLE.match(shown)):
        fact.value, fact.unit = _number(m["figure"]), "people"
    elif fact.kind in ("limit", "horizon") and (m := MEASURE.match(shown)):
        if m["code"]:
            fact.value, fact.unit = _number(m["amount"]), m["code"]
        elif m["age"]:
            fact.value, fact.unit = _number(m["age"]), "age"
        else:
            fact.value = _number(m["figure"])
            fact.unit = "%" if m["percent"] else m["unit"] or ("year" if fact.kind == "horizon" else "")
        fact.base = m["base"] or ""


def _number(figure):
    value = float(figure.replace(",", ""))
    return int(value) if value.is_integer() else value


def _figure(value):
    """12,345.6 -> "12,345.6"; whole numbers without decimals."""
    number = float(value)
    return f"{int(number):,}" if number.is_integer() else f"{number:,.4f}".rstrip("0").rstrip(".")


def _one_line(text):
    return " ".join(str(text).split()).replace('"', "'")
