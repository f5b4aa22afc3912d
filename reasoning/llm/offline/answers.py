"""The offline model's replies: plausible, deterministic JSON for each prompt contract, with no network.

`answer(prompt, seed)` reads the `### NAME` sections of a rendered prompt (prompt.py), picks the handler registered for
its contract, and returns JSON text that satisfies that contract. Each strategy's replies live in a module of their own
in this package (reasoning/llm/offline/<strategy>.py): a HANDLERS dict by contract name for wealth problems (their text
from wealth.py), and a PUZZLE_HANDLERS dict for the contracts it answers on a Game of 24 (a puzzle player that errs,
puzzle_replies.py). A new strategy adds its module and nothing here.
"""

import hashlib
import importlib
import json
import pkgutil
import random

from reasoning.llm import game24
from reasoning.llm.offline import puzzle
from reasoning.llm.offline import noise as mistakes
from reasoning.llm.offline.figures import carried_reply, declared_reply
from reasoning.prompts import DECLARE_FIGURES
from reasoning.llm.offline.prompt import Prompt, parse_steps, read_prompt, sections  # noqa: F401  (the readers)
from reasoning.llm.offline.wealth import case_of, facts  # noqa: F401  (what tests and the replies read)

HANDLERS = {}  # contract name -> reply on a wealth problem
PUZZLE_HANDLERS = {}  # contract name -> reply on a Game of 24 puzzle


def answer(prompt: str, seed: int, noise: float = 0.0, sample: int = 0, log: list | None = None) -> str:
    """The offline model's reply to one prompt: JSON text; the same (prompt, seed, noise, sample) always gives the same
    text. At `noise` > 0 it errs as puzzle.py and noise.py say (`log` receives the kind of each slip made); each
    `sample` of one request is drawn on its own."""
    p = read_prompt(prompt or "")
    # Its draws are keyed on what the prompt asks of the step: the request to declare figures (for real models; this
    # model declares its own) leaves them as they were, so a seed's search is the same with or without it.
    asked = (prompt or "").replace("\n" + DECLARE_FIGURES, "")
    key = f"{seed}:{asked}" if not sample else f"{seed}:{sample}:{asked}"
    rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest(), "big"))
    if game24.puzzle_numbers(p.problem) and p.contract in PUZZLE_HANDLERS:
        return json.dumps(PUZZLE_HANDLERS[p.contract](p, puzzle.Player(rng, noise)), ensure_ascii=False)
    case = case_of(p)
    reply = declared_reply(HANDLERS.get(p.contract, unknown_contract)(p, rng), case)  # its figures, as a model's
    written = mistakes.disturb(reply, rng, noise, case, log)
    return json.dumps(carried_reply(reply, written, case), ensure_ascii=False)


def unknown_contract(p, rng):
    named = f"the '{p.contract}' contract" if p.contract else "a prompt without a contract"
    return {
        "answer": f"The offline model has no script for {named}, so it cannot reason about this step; "
        "run the session with a real model for a substantive answer."
    }


def _load_strategy_handlers():
    package = importlib.import_module("reasoning.llm.offline")
    for module in pkgutil.iter_modules(package.__path__, "reasoning.llm.offline."):
        if module.name != __name__:
            loaded = importlib.import_module(module.name)
            HANDLERS.update(getattr(loaded, "HANDLERS", {}))
            PUZZLE_HANDLERS.update(getattr(loaded, "PUZZLE_HANDLERS", {}))


_load_strategy_handlers()
