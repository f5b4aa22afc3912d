"""The registry of strategies by mode name, imported lazily; each declares its label, params and contracts.

The modes and their labels are data in reasoning/modes.py (what a session's mode field and the API's enums read,
re-exported here); the explorer takes its labels and legends from page_registry(). Adding a strategy is its mode in
reasoning/modes.py, its file here, its prompts and its offline replies.
"""

from functools import cache
from importlib import import_module

from reasoning.modes import AUTO, LABELS, mode_choices, modes  # noqa: F401 (re-exported: migration 0010 names it)

STRATEGIES = {
    "tot": "reasoning.strategies.tot.TreeOfThoughts",
    "lats": "reasoning.strategies.lats.LanguageAgentTreeSearch",
    "reflexion": "reasoning.strategies.reflexion.Reflexion",
    "react": "reasoning.strategies.react.ReAct",
    "trm": "reasoning.strategies.trm.RecursiveRefinement",
}


def available_modes():
    return set(STRATEGIES)


def get_strategy(mode):
    """The strategy class for a mode; KeyError if there is none."""
    module_name, _, class_name = STRATEGIES[mode].rpartition(".")
    return getattr(import_module(module_name), class_name)


def strategy_labels():
    """(mode, label) for every strategy, in registry order: what forms and the CLI offer."""
    return [(mode, LABELS[mode]) for mode in STRATEGIES]


def page_registry():
    """What the explorer draws of each mode: its label, what its colours measure, and its legend's entries."""
    page = [{"mode": AUTO, "label": LABELS[AUTO], "scale": None, "legend": []}]
    for mode in STRATEGIES:
        strategy = get_strategy(mode)
        page.append({"mode": mode, "label": strategy.label, "scale": strategy.scale, "legend": list(strategy.legend)})
    return page


@cache
def _contracts():
    return {c.name: c for mode in STRATEGIES for c in get_strategy(mode).contracts}


def contract_named(name):
    """A declared contract by name; KeyError if no strategy declares it."""
    return _contracts()[name]


def best_node_for(mode, store):
    """The node a session's answer comes from, by its strategy's rule (the deepest best node for any other mode)."""
    from .base import deepest_best

    return get_strategy(mode).best_node(store) if mode in STRATEGIES else deepest_best(store)
