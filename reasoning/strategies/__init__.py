"""The registry of strategies by mode name, imported lazily; each declares its label, params and contracts.

It is the one list of modes: a session's mode field takes its choices from mode_choices() (a callable, so a new
strategy changes no migration), the API's enums from modes(), and the explorer its labels and legends from
page_registry(). Adding a strategy is its file here, its prompts and its offline replies.
"""

from functools import cache
from importlib import import_module

STRATEGIES = {
    "tot": "reasoning.strategies.tot.TreeOfThoughts",
    "lats": "reasoning.strategies.lats.LanguageAgentTreeSearch",
    "reflexion": "reasoning.strategies.reflexion.Reflexion",
    "react": "reasoning.strategies.react.ReAct",
    "trm": "reasoning.strategies.trm.RecursiveRefinement",
}
AUTO = "auto"  # not a strategy: the session picks one by its problem (strategies/auto.py)
AUTO_LABEL = "Auto (by problem kind)"


def available_modes():
    return set(STRATEGIES)


def modes():
    """Every mode a session may ask for: auto, then the strategies in registry order."""
    return [AUTO, *STRATEGIES]


def get_strategy(mode):
    """The strategy class for a mode; KeyError if there is none."""
    module_name, _, class_name = STRATEGIES[mode].rpartition(".")
    return getattr(import_module(module_name), class_name)


def strategy_labels():
    """(mode, label) for every strategy, in registry order: what forms and the CLI offer."""
    return [(mode, get_strategy(mode).label) for mode in STRATEGIES]


def mode_choices():
    """(mode, label) for every mode, auto first: the choices of a session's mode (models.py)."""
    return [(AUTO, AUTO_LABEL), *strategy_labels()]


def page_registry():
    """What the explorer draws of each mode: its label, what its colours measure, and its legend's entries."""
    page = [{"mode": AUTO, "label": AUTO_LABEL, "scale": None, "legend": []}]
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
