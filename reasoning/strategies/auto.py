"""Auto mode: pick a strategy by problem kind (the seed card's mapping), or by the problem's own words, and say why."""

import re

from . import available_modes

PREFERRED = {
    "investment-thesis": ("tot", "an investment thesis needs alternative lines of argument compared side by side"),
    "allocation-rebalance": ("lats", "a rebalancing plan is a multi-period search that MCTS explores well"),
    "tax-optim-sequence": ("reflexion", "a tax sequence improves by critiquing and refining whole attempts"),
    "wealth-transfer": ("tot", "a wealth transfer has alternative paths worth comparing"),
    "data-driven-research": ("react", "research needs tools and observations interleaved with reasoning"),
}
# For kinds the card does not name: what the problem says it needs, first match wins.
FEATURES = [
    (
        r"\b(look up|lookup|data|research|screen|compare (?:the )?(?:funds|prices)|prices?|holdings)\b",
        "react",
        "it asks for facts to be looked up, which ReAct does with tools",
    ),
    (
        r"\b(rebalanc\w*|drift\w*|allocation|glide ?path)\b",
        "lats",
        "it is a rebalancing search that MCTS explores well",
    ),
    (
        r"\b(tax\w*|sequence|realis\w+|realiz\w+|withdrawal order)\b",
        "reflexion",
        "a tax sequence improves by critiquing and refining whole attempts",
    ),
    (
        r"\b(refine|improve|review|draft|memo)\b",
        "trm",
        "it asks to refine an answer, which recursive refinement does step by step",
    ),
]
DEFAULT = ("tot", "nothing in it calls for another strategy, so Tree of Thoughts compares alternatives")


def pick_mode(problem_kind, problem_text=""):
    """Return (mode, reason): by the seed card's mapping for its kinds, else by features of the problem text."""
    if problem_kind in PREFERRED:
        mode, why = PREFERRED[problem_kind]
        source = f"{problem_kind}"
    else:
        mode, why = next(
            ((m, w) for pattern, m, w in FEATURES if re.search(pattern, problem_text or "", re.IGNORECASE)), DEFAULT
        )
        source = f"a '{problem_kind}' problem, by its text"
    if mode in available_modes():
        return mode, f"auto: {mode} for {source}, because {why}"
    return "tot", f"auto: {mode} would suit {source} ({why}), but it is not available, so tot"
