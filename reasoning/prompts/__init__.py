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


# What every prompt that writes figures asks of them (`$declare_figures`): the reply's `figures` list, which the
# checker evaluates (reasoning/facts/derivation.py) instead of guessing at the prose.
DECLARE_FIGURES = (
    'Beside each "thought" (or "answer") you write, give "figures": one object for each amount it writes, with '
    '"label" (what it is), "value" (the number in full: 256000), "unit" (a currency code, "%" or "") and '
    '"derivation": the label of the client\'s fact it is, or an expression over the facts\' labels, earlier figures\' '
    'labels and written values with + - x / and brackets ("portfolio x (equity share - equity target)", "GBP 420k x '
    'GBP/CHF 1.12", where GBP/CHF 1.12 means 1 GBP = 1.12 CHF), or "" for an amount you propose. No amounts: [].'
)


def render(contract, **fields):
    """The contract's prompt with the fields filled in; a `### SECTION` whose fields are all None is left out (a
    section with nothing to say for this task, such as a puzzle's client facts)."""
    template = _template(contract_of(contract).template)
    if any(v is None for v in fields.values()):
        template = Template(without_empty_sections(template.template, {k for k, v in fields.items() if v is None}))
    filled = {"declare_figures": DECLARE_FIGURES} | {k: str(v) for k, v in fields.items() if v is not None}
    if not filled["declare_figures"]:
        # Not asked (a puzzle's prompts): its line goes too, so the prompt is the one written before figures were
        # asked for, byte for byte. A blank line left in its place redrew every draw of the offline model, which
        # keys them on the prompt's text without the request (reasoning/llm/offline_answers.py).
        template = Template(template.template.replace("\n$declare_figures", ""))
    return template.safe_substitute(filled)


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
