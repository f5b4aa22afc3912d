"""Prompt templates, one per strategy step; each names its output contract on its first line.

The contracts themselves are declared by the strategies that own them (a Contract: name, reply
schema, token limit, parser); a template is found by its contract's name. Templates use `$name`
placeholders so JSON braces stay literal.
"""

import re
from functools import cache
from itertools import pairwise
from pathlib import Path
from string import Template

from reasoning.llm.contracts import Contract, ParseError  # noqa: F401  (ParseError: raised by parse)

HERE = Path(__file__).resolve().parent


def contract_of(contract):
    """A Contract, given one or its name (names are looked up among the declared strategies)."""
    if isinstance(contract, Contract):
        return contract
    from reasoning.strategies import contract_named  # the registry imports every strategy, so only when asked

    return contract_named(contract)


@cache
def _template(name):
    return Template((HERE / name).read_text())


SECTION = re.compile(r"^### .+$", re.MULTILINE)
FIELD = re.compile(r"\$(\w+)")


def render(contract, **fields):
    """The contract's prompt with the fields filled in; a `### SECTION` whose fields are all None is left out (a
    section with nothing to say for this task, such as a puzzle's client facts)."""
    template = _template(contract_of(contract).template)
    if any(v is None for v in fields.values()):
        template = Template(without_empty_sections(template.template, {k for k, v in fields.items() if v is None}))
    return template.safe_substitute({k: str(v) for k, v in fields.items() if v is not None})


def without_empty_sections(text, empty):
    """The template's text without the sections whose every placeholder names an empty field."""
    starts = [m.start() for m in SECTION.finditer(text)] + [len(text)]
    kept = [text[: starts[0]]]
    for start, end in pairwise(starts):
        names = set(FIELD.findall(text[start:end]))
        if not (names and names <= empty):
            kept.append(text[start:end])
    return "".join(kept)


def parse(contract, text):
    """Parse a reply against its contract; returns (model, how); raises ParseError."""
    return contract_of(contract).parse(text)


def format_path(thoughts):
    if not thoughts:
        return "(none yet: this is the first step)"
    return "\n".join(f"{i}. {t}" for i, t in enumerate(thoughts, 1))
