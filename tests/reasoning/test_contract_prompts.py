"""Every contract's prompt asks for the shape its schema holds the model to: each field the schema names (nested
ones too) is named, quoted, in the prompt's OUTPUT section; and ReAct's schema lists the registered tools."""

import re
from string import Template

import pytest

from reasoning.prompts import DECLARE_FIGURES, HERE
from reasoning.strategies import STRATEGIES, get_strategy


def field_names(schema, defs=None):
    """Every property name in a JSON schema, $refs and arrays followed."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return field_names(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    names = set()
    for name, sub in schema.get("properties", {}).items():
        names |= {name} | field_names(sub, defs)
    if "items" in schema:
        names |= field_names(schema["items"], defs)
    for sub in schema.get("anyOf", []):
        names |= field_names(sub, defs)
    return names


CONTRACTS = [c for mode in STRATEGIES for c in get_strategy(mode).contracts if c.structured]


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.name for c in CONTRACTS])
def test_the_prompt_names_every_field_its_schema_holds_the_model_to(contract):
    template = (HERE / contract.template).read_text()
    output = template.split("### OUTPUT", 1)[1]
    text = Template(output).safe_substitute(declare_figures=DECLARE_FIGURES)  # as render() fills it
    if contract.name == "react.step":  # each tool's arguments are named where the prompt lists the tools
        from reasoning import tools

        text += tools.catalogue() + template.split("### TOOLS", 1)[1]
    missing = [name for name in field_names(contract.structured.model_json_schema()) if f'"{name}"' not in text]
    assert not missing, f"{contract.name}: the OUTPUT section never names {missing}"


def test_reacts_schema_offers_exactly_the_registered_tools():
    from reasoning import tools
    from reasoning.strategies.react import FINAL, STEP

    schema = STEP.structured.model_json_schema()
    calls = [schema["$defs"][ref["$ref"].rsplit("/", 1)[1]] for ref in schema["properties"]["action"]["anyOf"]]
    offered = [c["properties"]["tool"]["const"] for c in calls]
    assert offered == [t.name for t in tools.available()] + [FINAL]
    assert not re.search(r"MEADOWER", str(calls))
