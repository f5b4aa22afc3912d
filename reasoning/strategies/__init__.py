"""The registry of strategies by mode name, imported lazily."""

from importlib import import_module

STRATEGIES = {
    "tot": "reasoning.strategies.tot.TreeOfThoughts",
}


def available_modes():
    return set(STRATEGIES)


def get_strategy(mode):
    """The strategy class for a mode; KeyError if there is none."""
    module_name, _, class_name = STRATEGIES[mode].rpartition(".")
    return getattr(import_module(module_name), class_name)


def best_node_for(mode, store):
    """The node a session's answer comes from, by its strategy's rule (the deepest best node for any other mode)."""
    from .base import deepest_best

    return get_strategy(mode).best_node(store) if mode in STRATEGIES else deepest_best(store)
