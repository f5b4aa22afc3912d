"""Auto mode: pick a strategy by problem kind, and say why."""

from . import available_modes

PREFERRED = {
    "investment-thesis": ("tot", "an investment thesis needs alternative lines of argument compared side by side"),
    "allocation-rebalance": ("lats", "a rebalancing plan is a multi-period search that MCTS explores well"),
    "tax-optim-sequence": ("reflexion", "a tax sequence improves by critiquing and refining whole attempts"),
    "wealth-transfer": ("tot", "a wealth transfer has alternative paths worth comparing"),
    "data-driven-research": ("react", "research needs tools and observations interleaved with reasoning"),
}
DEFAULT = ("tot", "no strategy is specific to this kind, so Tree of Thoughts explores alternatives")


def pick_mode(problem_kind):
    """Return (mode, reason) for a problem kind, falling back to tot where the preferred mode is not built yet."""
    mode, reason = PREFERRED.get(problem_kind, DEFAULT)
    if mode in available_modes():
        return mode, f"auto: {mode} for {problem_kind}, because {reason}"
    return "tot", f"auto: {mode} would suit {problem_kind} ({reason}), but it is not available yet, so tot"
