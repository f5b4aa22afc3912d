"""Reply shapes several strategies share, and the checks that make a reply count as an answer.

A small model can return valid JSON that says nothing: the prompt's own placeholder echoed back
("<one next step, at most 80 words>"), template braces, a lone symbol, a score off the scale. Each is a
broken contract (asked again once, then recorded on the node), never an answer. The checks read the
prompt from pydantic's validation context. Fewer thoughts than asked for are fewer children, not a breach.
"""

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, ValidationInfo

PLACEHOLDER = re.compile(r"<[^<>\n]{3,}>")
WORD = re.compile(r"\w+")


def _echo(text, info):
    prompt = (info.context or {}).get("prompt") or ""
    for placeholder in PLACEHOLDER.findall(text):
        if placeholder in prompt or PLACEHOLDER.fullmatch(text.strip()):
            return f"repeats the prompt's placeholder {placeholder[:60]} instead of filling it in"
    if "{{" in text or "}}" in text:
        return "is template text, not an answer"
    return None


def prose(min_words):
    """Text that says something: not empty, not a placeholder or template, with words (or numbers) in it."""

    def check(text: str, info: ValidationInfo) -> str:
        text = text.strip()
        problem = _echo(text, info)
        if problem:
            raise ValueError(problem)
        if len(WORD.findall(text)) < min_words:
            raise ValueError(
                f"is not prose: at least {min_words} word{'s' * (min_words > 1)} needed" if text else "is empty"
            )
        return text

    return check


def optional_prose(text: str, info: ValidationInfo) -> str:
    """May be left empty, but not filled with the prompt's placeholder."""
    problem = _echo(text.strip(), info) if text.strip() else None
    if problem:
        raise ValueError(problem)
    return text.strip()


Prose = Annotated[str, AfterValidator(prose(1))]
Recommendation = Annotated[str, AfterValidator(prose(3))]  # an answer a client reads is more than a word or two
OptionalProse = Annotated[str, AfterValidator(optional_prose)]


class ScoreOut(BaseModel):
    # Off the scale is a broken contract: clamping would turn every 7 or 10 into a perfect 1.0.
    score: float = Field(ge=0, le=1)
    reason: OptionalProse = Field(default="", max_length=4000)


class AnswerOut(BaseModel):
    answer: Recommendation = Field(min_length=1, max_length=20000)


class ThoughtOut(BaseModel):
    thought: Prose = Field(min_length=1, max_length=4000)
    # Any keys are kept; the schema names the one the prompts ask for, so a grammar-bound model writes that one.
    state: dict = Field(default_factory=dict, json_schema_extra={"properties": {"summary": {"type": "string"}}})


class ThoughtsOut(BaseModel):
    # Fewer thoughts than asked for are fewer children (a small board has few distinct moves), never a broken reply.
    thoughts: list[ThoughtOut] = Field(min_length=1, max_length=20)
