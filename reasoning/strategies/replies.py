"""Reply shapes several strategies share, and the checks that make a reply count as reasoning.

A small model can return valid JSON that says nothing. These are broken contracts (asked again, then recorded on
the node), never thoughts or answers:

- the prompt's own placeholder ("<one next step, at most 80 words>") or template braces;
- an echo: text that repeats our own refusal or re-ask messages ("Value error, is template text"), or whose words
  come mostly (half or more, in runs of four or more) from the prompt's instructions or rubric, or that copies
  twelve or more of their words in a row;
- a score off the scale.

A thought or step must not be mostly punctuation, must hold a word of prose (not "1", "3,5" or a field name such as
"thoughts"; a worked figure such as "13 - 9 = 4" counts), and must not be the prompt's own heading or a short
instruction of it ("1. TRIED FROM HERE"). An answer a client reads must also say something about this
problem: three words or numbers at least, no markup or JSON fragments, and (a first-pass relevance check) at least one
content word or number shared with the problem itself that is not a word any text may hold (GENERIC: "make", "plan",
"clear" ...; a beach trip passed on "make" alone), so a line of steps that drifted off the problem cannot carry its
answer along. The check is lexical, so it has limits: an on-topic answer written only in synonyms is refused, and an
off-topic one that reuses one specific word of the problem passes; it catches what a weak model writes when it loses
the thread, not a wrong recommendation: the task's own checks (a puzzle's arithmetic, the client's facts and goals)
decide whether an answer is solved. The checks read the prompt from pydantic's validation context.
Fewer thoughts than asked for are fewer children, not a breach.
"""

import functools
import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, ValidationInfo

PLACEHOLDER = re.compile(r"<[^<>\n]{3,}>")
WORD = re.compile(r"\w+")
SYMBOL = re.compile(r"[^\w\s]|_")  # what str.isalnum() and str.isspace() both refuse
SPACE = re.compile(r"\s")
TOKEN = re.compile(r"[a-z]+|\d+(?:[.,'’]\d+)*")
SECTION = re.compile(r"^### (.+)$", re.MULTILINE)
# Phrases only our own refusals and re-asks use: a reply repeating one answers our error, not the problem.
OWN_MESSAGES = (
    "your last reply was refused",
    "last response was refused",
    "broke the output contract",
    "reply again with json",
    "value error",
    "is template text",
    "repeats the prompt s placeholder",
    "instead of filling it in",
    "is not prose",
    "words needed",
    "echoes the prompt",
    "says nothing about the problem",
)
INSTRUCTIONS = (
    "CONTRACT",
    "ROLE",
    "RUBRIC",
    "OUTPUT",
    "YOUR LAST REPLY WAS REFUSED",
)  # what the prompt tells, not asks
SUBJECT = ("PROBLEM", "CHOSEN STEPS", "STEPS SO FAR", "LAST STEP", "ATTEMPT")  # what an answer must be about
ECHO_RUN, ECHO_SHARE, ECHO_LONGEST = 4, 0.5, 12
MARKUP = re.compile(r"```|^\s*#{2,}|[{}]|^\s*[\[\]]|\"\w+\"\s*:", re.MULTILINE)
STOPWORDS = set(
    "that this with from into have each what which when where will would their them they there these those about "
    "also more most much well only over under should must than then your very such some other both".split()
)
# Words any text may hold whatever it is about: a beach trip "makes a clear plan" as a rebalancing does, so sharing
# them says nothing about the problem (ToT answered a beach trip that passed on the word "make" alone).
GENERIC = set(
    "make makes making made plan plans planning clear clearly time times first next last good best better need needs "
    "want wants like take takes keep keeps give gives help helps find found work works look full long short high "
    "right sure start step steps thing things done able back just even ever many every year years today".split()
)


def sections(prompt, names):
    """The text of the prompt's `### NAME` sections with these names, joined."""
    heads = list(SECTION.finditer(prompt))
    found = []
    for here, after in zip(heads, heads[1:] + [None]):
        if here[1].strip().upper() in names:
            found.append(prompt[here.end() : after.start() if after else len(prompt)])
    return "\n".join(found)


def tokens(text):
    return TOKEN.findall(text.lower().replace("’", "'"))


@functools.lru_cache(maxsize=64)
def instruction_grams(prompt, run=ECHO_RUN):
    """The runs of `run` words in the prompt's instructions and rubric: read once per prompt, not once per item."""
    return grams_of(tokens(sections(prompt, INSTRUCTIONS)), run)


def grams_of(words, run=ECHO_RUN):
    return frozenset(tuple(words[i : i + run]) for i in range(len(words) - run + 1))


def copied(text_words, grams, run=ECHO_RUN):
    """(share of the text's words inside runs of `run`+ words found in the source's `grams` (grams_of), the longest
    such run)."""
    covered, longest, streak = [False] * len(text_words), 0, 0
    for i in range(len(text_words) - run + 1):
        if tuple(text_words[i : i + run]) in grams:
            covered[i : i + run] = [True] * run
            streak += 1
            longest = max(longest, streak + run - 1)
        else:
            streak = 0
    return (sum(covered) / len(text_words) if text_words else 0.0), longest


def _echo(text, info, instructions=True):
    """Why the text echoes instead of reasoning, or None; `instructions`: also refuse a copy of the prompt's
    instructions or rubric (a reason or a critique may quote the rubric's criteria: that is its job)."""
    prompt = (info.context or {}).get("prompt") or ""
    for placeholder in PLACEHOLDER.findall(text):
        if placeholder in prompt or PLACEHOLDER.fullmatch(text.strip()):
            return f"repeats the prompt's placeholder {placeholder[:60]} instead of filling it in"
    if "{{" in text or "}}" in text:
        return "is template text, not an answer"
    words = tokens(text)
    joined = " ".join(words)
    own = next((m for m in OWN_MESSAGES if f" {m} " in f" {joined} "), None)
    if own:
        return f"echoes our own message ('{own}') instead of reasoning about the problem"
    share, longest = copied(words, instruction_grams(prompt)) if instructions else (0.0, 0)
    if (share >= ECHO_SHARE and len(words) >= ECHO_RUN) or longest >= ECHO_LONGEST:
        return "echoes the prompt's instructions or rubric instead of reasoning about the problem"
    return _prompt_part(words, prompt) if instructions else None


def _prompt_part(words, prompt):
    """Why the words are the prompt's own heading or a short instruction of it ("1. TRIED FROM HERE"), or None: the
    numbering a list puts before them aside. Longer copies are the echo share's to find."""
    while words and words[0].isdigit():
        words = words[1:]
    said = tuple(words)
    if not said:
        return None
    if said in _headings(prompt):
        return f"is the prompt's own section header ('{' '.join(said).upper()}'), not a thought"
    if said in _instruction_sentences(prompt):
        return "is one of the prompt's own instructions, not a thought"
    return None


@functools.lru_cache(maxsize=64)
def _headings(prompt):
    return frozenset(tuple(tokens(name)) for name in SECTION.findall(prompt))


@functools.lru_cache(maxsize=64)
def _instruction_sentences(prompt):
    parts = re.split(r"[.:;!?\n]+", sections(prompt, INSTRUCTIONS))
    return frozenset(tuple(tokens(part)) for part in parts if tokens(part))


# The words of the replies' own JSON: a "thought" that is one of them names a field, it says nothing.
FIELD_WORDS = {"thought", "thoughts", "step", "steps", "answer", "action", "args", "tool", "score", "reason", "state",
               "summary", "json", "null", "true", "false", "none"}
PROSE_WORD = re.compile(r"[^\W\d_]{2,}")
NAME = re.compile(r"^\s*[A-Z](?:\d[\w]*)?\s*$")  # "A", "B2", "A1x": a line named, as scripts and outlines name them
ARITHMETIC = re.compile(r"\d\s*[-+*/×÷=]\s*\(?\s*\d")  # a Game of 24 step may be all figures: "13 - 9 = 4"


def has_prose(text):
    """A word of prose (two letters or more, not a field name of the reply's JSON), a worked figure, or a line's name
    ("A", "B2"): "1", "3,5" and "thoughts" have none, whatever score a judge gives them."""
    if ARITHMETIC.search(text) or NAME.match(text):
        return True
    return any(w.lower() not in FIELD_WORDS for w in PROSE_WORD.findall(text))


GENERIC_STEMS = {word[:6] for word in GENERIC}


def content(text):
    """The words that carry meaning (4+ letters, not filler, compared by their first 6 letters) and the numbers."""
    found = set()
    for token in tokens(text):
        if token[0].isdigit():
            found.add(re.sub(r"[,'’]", "", token))
        elif len(token) >= 4 and token not in STOPWORDS:
            found.add(token[:6])
    return found


def about(text, subject):
    """Whether a text shares with its subject (the problem) a content word or figure that is not one any text may hold:
    the answer's first-pass relevance check, also what keeps a step that drifted off the problem out of a plan."""
    words = content(subject)
    return not words - GENERIC_STEMS or bool((content(text) & words) - GENERIC_STEMS)


def _off_topic(text, info, answer=False):
    """Why a reply says nothing about its problem, or None (no problem in the context: nothing to compare).

    A step may build on the steps before it; an answer must share something with the problem itself, so a line of
    steps that drifted off the problem cannot carry its answer along."""
    if MARKUP.search(text):
        return "holds markup or JSON fragments, not reasoning in plain words"
    symbols, visible = len(SYMBOL.findall(text)), len(text) - len(SPACE.findall(text))
    if symbols * 2 > visible:
        return "is mostly punctuation, not reasoning in plain words"
    if not answer:
        return None  # a step is judged by the evaluator; only its form is checked here
    prompt = (info.context or {}).get("prompt") or ""
    subject = sections(prompt, ("PROBLEM",)) or sections(prompt, SUBJECT)
    share, _ = copied(tokens(text), grams_of(tokens(sections(prompt, ("PROBLEM",)))))
    if share >= ECHO_SHARE and len(tokens(text)) >= ECHO_RUN:
        return "restates the problem instead of answering it"
    words = content(subject)
    shared = content(text) & words
    if subject.strip() and not about(text, subject):
        if shared:
            common = ", ".join(sorted(shared))
            return f"says nothing about the problem: it shares only words any text may hold ({common})"
        return "says nothing about the problem: it shares no word or figure with it"
    return None


def prose(min_words, answer=False, commentary=False):
    """Text that says something: not empty, not a placeholder, template or echo, with words (or numbers) in it; a
    step or an `answer` must also be about its problem; `commentary` (a critique, a finding) may quote the rubric."""

    def check(text: str, info: ValidationInfo) -> str:
        text = text.strip()
        problem = _echo(text, info, instructions=not commentary)
        if problem:
            raise ValueError(problem)
        if len(WORD.findall(text)) < min_words:
            raise ValueError(
                f"is not prose: at least {min_words} word{'s' * (min_words > 1)} needed" if text else "is empty"
            )
        problem = None if commentary else _off_topic(text, info, answer)
        if problem:
            raise ValueError(problem)
        if not commentary and not has_prose(text):  # a thought, a step or an answer
            raise ValueError(f"is not prose: no word in it ('{text[:40]}')")
        return text

    return check


def optional_prose(text: str, info: ValidationInfo) -> str:
    """May be left empty (a judgement's reason), but not filled with a placeholder or our own messages."""
    problem = _echo(text.strip(), info, instructions=False) if text.strip() else None
    if problem:
        raise ValueError(problem)
    return text.strip()


Prose = Annotated[str, AfterValidator(prose(1))]  # a thought or a step
Commentary = Annotated[str, AfterValidator(prose(1, commentary=True))]  # a critique, a reflection, a finding
Recommendation = Annotated[str, AfterValidator(prose(3, answer=True))]  # more than a word or two, and on topic
OptionalProse = Annotated[str, AfterValidator(optional_prose)]


class ScoreOut(BaseModel):
    # Off the scale is a broken contract: clamping would turn every 7 or 10 into a perfect 1.0.
    score: float = Field(ge=0, le=1)
    reason: OptionalProse = Field(default="", max_length=4000)


class FigureOut(BaseModel):
    """One figure the text writes, declared with where it comes from; the checker computes the derivation exactly
    (reasoning/facts/derivation.py). A bad derivation is a finding on the node, never a broken reply."""

    label: str = Field(min_length=1, max_length=120, description="What the figure is: 'equity to sell'.")
    value: float | str = Field(description="The figure as the text writes it, in full: 256000, 36.1.")
    unit: str = Field(default="", max_length=8, description="An ISO currency code, '%', or '' for a plain number.")
    derivation: str = Field(
        default="",
        max_length=300,
        description="A fact's label, or an expression over facts, earlier figures and written values with + - x / "
        "and brackets: 'portfolio x (equity share - equity target)', 'GBP 420k x GBP/CHF 1.12' (1 GBP = 1.12 CHF).",
    )


# Every reply that writes figures declares them here (an empty list: none declared, the prose is read instead).
Figures = Annotated[list[FigureOut], Field(default_factory=list, max_length=40)]


class AnswerOut(BaseModel):
    answer: Recommendation = Field(min_length=1, max_length=20000)
    figures: Figures


class ThoughtOut(BaseModel):
    thought: Prose = Field(min_length=1, max_length=4000)
    figures: Figures
    # Any keys are kept; the schema names the one the prompts ask for, so a grammar-bound model writes that one.
    state: dict = Field(default_factory=dict, json_schema_extra={"properties": {"summary": {"type": "string"}}})


class ThoughtsOut(BaseModel):
    # Fewer thoughts than asked for are fewer children (a small board has few distinct moves), never a broken reply.
    thoughts: list[ThoughtOut] = Field(min_length=1, max_length=20)
