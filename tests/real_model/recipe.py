"""The README's local-server recipe, read from the README itself: what a user is told to run is what the real-model
tests and bench/real_model.py run with."""

import json
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_recipe():
    """(REASONING_MODELS, the other REASONING_* settings, the server's flags) from the README's local-server block."""
    block = next(b for b in re.findall(r"```sh\n(.*?)```", README.read_text(), re.DOTALL) if "llama_cpp.server" in b)
    models = json.loads(re.search(r"REASONING_MODELS='(.*?)'", block, re.DOTALL)[1])
    others = dict(re.findall(r"export (REASONING_(?!MODELS=|MODEL_PRIMARY)\w+)=(\S+)", block))
    server = block.split("llama_cpp.server", 1)[1].split("&", 1)[0]
    return models, others, server


def settings_for(model, base):
    """The REASONING settings the recipe gives, with its model entry under `model` and served at `base`."""
    models, others, _ = readme_recipe()
    entry = {**models["openai/smollm2"], "api_base": base}
    values = {name.removeprefix("REASONING_"): float(value) for name, value in others.items()}
    values = {
        name: int(value) if value.is_integer() and name.endswith(("RETRIES", "TOKENS")) else value
        for name, value in values.items()
    }
    return values | {"MODELS": {model: entry}}


# Each strategy as small as it goes: a 135M model on two cores takes a few seconds a call.
SMALL = {
    "tot": {"depth": 2, "branching": 2, "keep": 1},
    "lats": {"iterations": 2, "children": 2, "rollout_depth": 1, "max_depth": 2},
    "reflexion": {"max_attempts": 2, "steps": 2},
    "react": {"max_steps": 3},
    "trm": {"max_steps": 2},
}
REBALANCE = "Rebalance a CHF 3m portfolio drifted to 70% equities back to 60/40 within a year, tax-aware."
PUZZLE = "Use the numbers 4 9 10 13 and basic arithmetic operations (+ - * /) to obtain 24."
# The issue 24 recipe: every mode (auto too) on a Game of 24 puzzle and on a rebalancing problem, 12 sessions.
JUNK_PROBLEMS = {"game24": PUZZLE, "rebalance": REBALANCE}


def junk_sessions():
    """(mode, problem name) for each of the 12 sessions; auto runs at the params of the mode it picks."""
    from reasoning.strategies import modes

    return [(mode, name) for mode in modes() for name in JUNK_PROBLEMS]


def small_params(mode, problem):
    from reasoning.services import resolve_mode

    return SMALL[resolve_mode(mode, "general", problem)[0]]
