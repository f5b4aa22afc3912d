"""Prompt templates, one per strategy step; each names its output contract on its first line.

The contracts themselves are declared by the strategies that own them (a Contract: name, reply
schema, token limit, parser); a template is found by its contract's name. Templates use `$name`
placeholders so JSON braces stay literal.
"""

from functools import cache
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


def render(contract, **fields):
    return _template(contract_of(contract).template).safe_substitute({k: str(v) for k, v in fields.items()})


def parse(contract, text):
    """Parse a reply against its contract; returns (model, how); raises ParseError."""
    return contract_of(contract).parse(text)


def format_path(thoughts):
    if not thoughts:
        return "(none yet: this is the first step)"
    return "\n".join(f"{i}. {t}" for i, t in enumerate(thoughts, 1))
