"""The model's own reading of the client's facts: the "case.facts" contract, and its reply turned into Facts.

A model lists the facts it reads in the problem (FactsOut); facts_from_reply normalises each value through the
deterministic parsers (a model may write "3.2M", "$3.2M" or 3200000 for an amount, "70%" for a percent, "Basel"
or "CH-BS" for a place) and grounds them (extract.ground): a fact the problem does not bear out is dropped, and a
kept fact carries the problem's own span. Nothing a model invents reaches the sheet.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from reasoning.facts import places as placelib
from reasoning.facts.extract import ground
from reasoning.facts.quantities import parse_amount, parse_number
from reasoning.facts.sheet import Fact
from reasoning.llm.contracts import Contract

Kind = Literal[
    "amount", "percent", "age", "year", "place", "account", "instrument", "goal", "constraint", "person", "limit",
    "horizon",
]
UNITS = {"percent": "%", "age": "years", "year": "", "place": "ISO 3166", "person": "people"}
# A limit's or horizon's unit as a model may write it -> the sheet's ("month" -> "months", "percent" -> "%").
MEASURE_UNITS = {"month": "months", "months": "months", "mo": "months", "year": "years", "years": "years",
                 "yr": "years", "yrs": "years", "%": "%", "percent": "%", "calendar year": "year", "date": "year",
                 "age": "age"}  # fmt: skip


class FactOut(BaseModel):
    label: str = Field(max_length=200)  # the client's own terms: "salary", "employer stock share"
    kind: Kind
    value: str | float  # amount in base units or as written ("3.2M"); percent 70; place "US-CA"; else a name
    unit: str = Field("", max_length=20)  # ISO 4217 code for an amount; else what the kind says
    text: str = Field(max_length=1000)  # the words as written in the problem
    base: str = Field("", max_length=200)  # a percent's base: the label of the amount it is a share of; a limit's object
    role: str = Field("", max_length=40)  # what it is for: a percent's target/share, a person's spouse, a limit's floor


class FactsOut(BaseModel):
    facts: list[FactOut] = Field(default_factory=list, max_length=80)


CASE_FACTS = Contract("case.facts", FactsOut, max_tokens=2000)  # an allocation is a fact a share


def facts_from_reply(parsed: FactsOut, problem: str) -> list[Fact]:
    """The reply's facts, normalised and grounded in the problem; in the order the problem states them."""
    facts = [fact for item in parsed.facts if (fact := _normalised(item)) is not None]
    return sorted(ground(facts, problem), key=lambda f: (f.start, -f.end))


def _normalised(item: FactOut):
    fact = Fact(
        label=" ".join(item.label.split()).lower() or item.kind,
        kind=item.kind,
        value=item.value,
        unit=UNITS.get(item.kind, item.unit.strip().upper() if item.kind == "amount" else ""),
        text=item.text,
        base=" ".join(item.base.split()).lower() if item.kind in ("percent", "limit") else "",
        role=item.role.strip().lower(),
    )
    if item.kind == "person":
        fact.label = " ".join(item.label.split()) or "person"
    value = item.value
    if item.kind == "amount":
        if isinstance(value, str):
            read = parse_amount(value)
            if read:
                value, fact.unit = read[0], fact.unit or read[1]
                if fact.unit != read[1]:
                    return None  # "CHF 3.2M" said to be in USD: no reading to trust
            else:
                value = parse_number(value.replace(fact.unit, "").strip()) if fact.unit else parse_number(value)
        if value is None or not fact.unit:
            return None
    elif item.kind in ("person", "limit", "horizon"):
        if isinstance(value, str):
            value = parse_number(value.replace("%", "").strip()) if item.kind != "person" or value.strip()[:1].isdigit() else 1
        unit = item.unit.strip()
        if item.kind == "limit" and (read := parse_amount(str(item.value))) and isinstance(item.value, str):
            value, unit = read
        if item.kind != "person":
            fact.unit = unit.upper() if re.fullmatch(r"[A-Za-z]{3}", unit) and unit.lower() not in MEASURE_UNITS else MEASURE_UNITS.get(unit.lower(), unit)
            if item.kind == "horizon" and fact.unit == "years" and isinstance(value, int | float) and 1900 < value < 2101:
                fact.unit = "year"  # "by 2031" said in "years"
        if value is None:
            return None
    elif item.kind in ("percent", "age", "year"):
        if isinstance(value, str):
            value = parse_number(value.replace("%", "").replace("years", "").strip())
        if value is None:
            return None
    elif item.kind == "place":
        value = _place_code(str(value))
        if not value:
            return None
    else:
        value = " ".join(str(value).split())
        if not value and not item.text.strip():
            return None
    fact.value = value
    return fact


def _place_code(value):
    """A code as given ("US-CA", "ch-bs") or the code of a place named ("Basel", "California")."""
    value = value.strip()
    if placelib.is_code(value.upper()):
        return value.upper()
    found = placelib.find_places(value) or placelib.find_places(f"in {value}")  # "Georgia" alone needs a cue
    return found[0].code if found else ""
