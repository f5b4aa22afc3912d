"""The modes as data (reasoning/modes.py) against the strategy registry."""

from reasoning.modes import AUTO, LABELS, mode_choices, modes
from reasoning.strategies import STRATEGIES, get_strategy, page_registry


def test_every_strategy_of_the_registry_is_a_mode_in_the_same_order_with_its_label():
    assert modes() == [AUTO, *STRATEGIES]
    assert all(get_strategy(mode).label == LABELS[mode] for mode in STRATEGIES)
    assert mode_choices()[0] == (AUTO, "Auto (by problem kind)")
    assert [(p["mode"], p["label"]) for p in page_registry()] == mode_choices()
