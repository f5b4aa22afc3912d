"""How the offline model reads a rendered prompt: its `### NAME` sections, the steps so far, the step number and k."""

import re
from dataclasses import dataclass, field

from reasoning.llm.offline.banks import BANKS

HEADER = re.compile(r"^### (.+)$", re.MULTILINE)
STEP_LINE = re.compile(r"^\s*(\d+)\.\s+(.*)$")
BUILDS_ON = re.compile(r"\s*Builds on step \d+ \([^)]*\)\.\s*$")


@dataclass
class Prompt:
    contract: str = ""
    kind: str = "general"
    problem: str = ""
    rubric: str = ""
    steps: list = field(default_factory=list)
    last_step: str = ""
    step: int = 1
    depth: int = 4
    k: int = 3
    sections: dict = field(default_factory=dict)  # every `### NAME` section, for contracts with sections of their own


def sections(text):
    """Section name -> body; the first occurrence of a name wins (a retry repeats the prompt)."""
    found = {}
    headers = list(HEADER.finditer(text))
    for here, after in zip(headers, headers[1:] + [None]):
        end = after.start() if after else len(text)
        found.setdefault(here[1].strip().upper(), text[here.end() : end].strip())
    return found


def read_prompt(text):
    s = sections(text)
    kind = (s.get("PROBLEM KIND", "").split() or ["general"])[0].lower()
    numbers = [int(n) for n in re.findall(r"\d+", s.get("STEP NUMBER", ""))]
    steps = parse_steps(s.get("STEPS SO FAR") or s.get("CHOSEN STEPS") or "")
    k = int((re.findall(r"\d+", s.get("K", "")) or [3])[0])
    return Prompt(
        contract=(s.get("CONTRACT", "").split() or [""])[0],
        kind=kind if kind in BANKS else "general",
        problem=s.get("PROBLEM", ""),
        rubric=s.get("RUBRIC", ""),
        steps=steps,
        last_step=s.get("LAST STEP", ""),
        step=numbers[0] if numbers else len(steps) + 1,
        depth=numbers[1] if len(numbers) > 1 else 4,
        k=min(8, max(1, k)),
        sections=s,
    )


def parse_steps(text):
    """The numbered steps of format_path(); continuation lines belong to the step above them."""
    steps = []
    for line in text.splitlines():
        match = STEP_LINE.match(line)
        if match:
            steps.append(match[2].strip())
        elif steps and line.strip():
            steps[-1] += " " + line.strip()
    return steps
