"""Prompt templates, one per strategy step, and the output contract each one names.

A template's first section names its contract; the contract is a pydantic model that the
model's reply must satisfy. Templates use `$name` placeholders so JSON braces stay literal.
"""

import json
import re
from functools import cache
from pathlib import Path
from string import Template

from pydantic import BaseModel, Field, ValidationError, field_validator

HERE = Path(__file__).resolve().parent


class ProposedThought(BaseModel):
    thought: str = Field(min_length=1, max_length=4000)
    state: dict = Field(default_factory=dict)


class ProposeOut(BaseModel):
    thoughts: list[ProposedThought] = Field(min_length=1, max_length=20)


class EvaluateOut(BaseModel):
    score: float
    reason: str = Field(default="", max_length=4000)

    @field_validator("score")
    @classmethod
    def clamp(cls, value):
        # Models drift outside the scale; a clamped score keeps ranking meaningful.
        return min(1.0, max(0.0, value))


class SynthesizeOut(BaseModel):
    answer: str = Field(min_length=1, max_length=20000)


CONTRACTS = {
    "tot.propose": ProposeOut,
    "tot.evaluate": EvaluateOut,
    "tot.synthesize": SynthesizeOut,
}

TEMPLATES = {
    "tot.propose": "tot_propose.txt",
    "tot.evaluate": "tot_evaluate.txt",
    "tot.synthesize": "tot_synthesize.txt",
}


class ParseError(ValueError):
    pass


@cache
def _template(contract):
    return Template((HERE / TEMPLATES[contract]).read_text())


def render(contract, **fields):
    return _template(contract).safe_substitute({k: str(v) for k, v in fields.items()})


def format_path(thoughts):
    if not thoughts:
        return "(none yet: this is the first step)"
    return "\n".join(f"{i}. {t}" for i, t in enumerate(thoughts, 1))


FENCED = re.compile(r"\{.*\}", re.DOTALL)


def parse(contract, text):
    """Parse a reply against its contract: strict JSON first, then the outermost {...} in the text.

    Returns (model, how) where how is "strict" or "extracted"; raises ParseError.
    """
    schema = CONTRACTS[contract]
    try:
        return schema.model_validate_json(text), "strict"
    except ValidationError as strict_error:
        match = FENCED.search(text or "")
        if not match:
            raise ParseError(f"no JSON object in the reply ({_first_error(strict_error)})") from None
        try:
            return schema.model_validate(json.loads(match.group(0))), "extracted"
        except (ValueError, ValidationError) as error:
            raise ParseError(_first_error(error)) from None


def _first_error(error):
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return f"{where}: {first['msg']}"
    return str(error)[:200]
