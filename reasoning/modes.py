"""Every mode a session may ask for, with its label: plain data that the models, schemas, API and forms read without
loading the strategy registry (so the gateway, which writes the models' rows, never reaches a strategy).

The registry (strategies/__init__.py) maps each strategy's mode to its class; a strategy takes its label from here,
and tests/reasoning/test_modes.py holds the two lists to each other.
"""

AUTO = "auto"  # not a strategy: the session picks one by its problem (strategies/auto.py)

LABELS = {
    AUTO: "Auto (by problem kind)",
    "tot": "Tree of Thoughts",
    "lats": "LATS (MCTS)",
    "reflexion": "Reflexion",
    "react": "ReAct with tools",
    "trm": "TRM recursive refinement",
}


def modes():
    """Every mode a session may ask for: auto, then the strategies in registry order."""
    return list(LABELS)


def mode_choices():
    """(mode, label) for every mode, auto first: the choices of a session's mode (models.py; a callable, so a new
    strategy changes no migration)."""
    return list(LABELS.items())
