"""The case.facts contract: the reply schema, its prompt, and a reply turned into grounded, normalised Facts."""

import json

import pytest

from reasoning.facts.contract import CASE_FACTS, FactOut, FactsOut, facts_from_reply
from reasoning.llm.contracts import ParseError
from reasoning.prompts import render

PROBLEM = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock, cost basis $400k, salary $450k. "
    "She wants to diversify without a large tax bill. An exchange fund or a collar?"
)


def reply(*facts):
    return CASE_FACTS.parse(json.dumps({"facts": list(facts)}))[0]


def test_the_contract_and_its_prompt():
    assert (CASE_FACTS.name, CASE_FACTS.schema, CASE_FACTS.max_tokens) == ("case.facts", FactsOut, 2000)
    prompt = render(CASE_FACTS, problem=PROBLEM)
    assert prompt.splitlines()[:2] == ["### CONTRACT", "case.facts"]
    assert PROBLEM in prompt and "$problem" not in prompt
    for section in ("### ROLE", "### PROBLEM", "### OUTPUT"):
        assert section in prompt
    output = prompt.split("### OUTPUT", 1)[1]
    for field in FactOut.model_fields:
        assert f'"{field}"' in output
    assert '"facts"' in output


def test_the_schema_refuses_an_unknown_kind():
    with pytest.raises(ParseError):
        CASE_FACTS.parse('{"facts": [{"label": "x", "kind": "opinion", "value": "y", "text": "y"}]}')


def test_a_reply_is_normalised_and_grounded():
    parsed = reply(
        {"label": "Portfolio", "kind": "amount", "value": "3.2M", "unit": "usd", "text": "$3.2M"},
        {"label": "salary", "kind": "amount", "value": "$450k", "text": "$450k"},
        {"label": "cost basis", "kind": "amount", "value": 400000, "unit": "USD", "text": "$400k"},
        {"label": "employer stock share", "kind": "percent", "value": "70%", "text": "70%", "base": "portfolio"},
        {"label": "age", "kind": "age", "value": 58, "text": "58"},
        {"label": "residence", "kind": "place", "value": "California", "text": "Californian"},
        {"label": "exchange fund", "kind": "instrument", "value": "exchange fund", "text": "exchange fund"},
        {"label": "goal", "kind": "goal", "value": "diversify", "text": "diversify"},
        {"label": "constraint", "kind": "constraint", "value": "x", "text": "without a large tax bill"},
    )
    facts = facts_from_reply(parsed, PROBLEM)
    assert [(f.label, f.kind, f.value, f.unit, f.text) for f in facts] == [
        ("residence", "place", "US-CA", "ISO 3166", "Californian"),
        ("age", "age", 58, "years", "58"),
        ("employer stock share", "percent", 70, "%", "70%"),
        ("portfolio", "amount", 3_200_000, "USD", "$3.2M"),
        ("cost basis", "amount", 400_000, "USD", "$400k"),
        ("salary", "amount", 450_000, "USD", "$450k"),
        ("goal", "goal", "diversify", "", "diversify"),
        ("constraint", "constraint", "x", "", "without a large tax bill"),
        ("exchange fund", "instrument", "exchange fund", "", "exchange fund"),
    ]
    assert all(PROBLEM[f.start : f.end] == f.text for f in facts)
    assert facts[2].base == "portfolio"


def test_an_invented_fact_is_dropped():
    parsed = reply(
        {"label": "bonus", "kind": "amount", "value": "999k", "unit": "USD", "text": "$999k"},
        {"label": "salary", "kind": "amount", "value": "450k", "unit": "EUR", "text": "$450k"},
        {"label": "residence", "kind": "place", "value": "US-NY", "text": "New York"},
        {"label": "annuity", "kind": "instrument", "value": "annuity", "text": "annuity"},
        {"label": "age", "kind": "age", "value": "sixty", "text": "sixty"},
        {"label": "portfolio", "kind": "amount", "value": "lots", "unit": "USD", "text": "lots"},
    )
    assert facts_from_reply(parsed, PROBLEM) == []


WHOLE_CASE = (
    "Anna (58) and her husband Marc (61) have three children. Foundation assets CHF 40M: target 60/40. Keep a cash "
    "floor of 18 months of expenses; no more than 10% in one issuer. Sell the villa by 2031. CHF 3M of "
    "infrastructure commitments not yet called."
)


def test_people_limits_horizons_roles_and_allocations_are_grounded_like_any_figure():
    parsed = reply(
        {"label": "Anna", "kind": "person", "value": 1, "text": "Anna", "role": "client"},
        {"label": "children", "kind": "person", "value": "3", "text": "three children", "role": "child"},
        {"label": "cousins", "kind": "person", "value": 2, "text": "two cousins", "role": "heir"},
        {"label": "equities target", "kind": "percent", "value": 60, "text": "60", "base": "foundation assets",
         "role": "target"},
        {"label": "cash floor", "kind": "limit", "value": 18, "unit": "month", "text": "18 months", "base": "expenses",
         "role": "floor"},
        {"label": "issuer cap", "kind": "limit", "value": "10%", "unit": "percent", "text": "10%", "base": "one issuer",
         "role": "cap"},
        {"label": "liquidity floor", "kind": "limit", "value": 24, "unit": "months", "text": "24 months", "role": "floor"},
        {"label": "sale deadline", "kind": "horizon", "value": 2031, "unit": "years", "text": "2031", "role": "by"},
        {"label": "uncalled infrastructure commitments", "kind": "amount", "value": "CHF 3M", "unit": "CHF",
         "text": "CHF 3M", "role": "commitment"},
        {"label": "spouse", "kind": "person", "value": 1, "text": "Marc", "role": "husband-ish"},
    )
    facts = facts_from_reply(parsed, WHOLE_CASE)
    shown = [(f.label, f.kind, f.value, f.unit, f.base, f.role) for f in facts]
    assert shown == [
        ("Anna", "person", 1, "people", "", "client"),
        ("spouse", "person", 1, "people", "", "spouse"),  # a role the kind has not: the reader's
        ("children", "person", 3, "people", "", "child"),
        ("equities target", "percent", 60, "%", "foundation assets", "target"),
        ("cash floor", "limit", 18, "months", "expenses", "floor"),
        ("issuer cap", "limit", 10, "%", "one issuer", "cap"),
        ("sale deadline", "horizon", 2031, "year", "", "by"),
        ("uncalled infrastructure commitments", "amount", 3_000_000, "CHF", "", "commitment"),
    ]  # the cousins and a 24-month floor are in no word of the problem: dropped
    assert all(WHOLE_CASE[f.start : f.end] == f.text for f in facts)
