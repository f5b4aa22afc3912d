"""One session's facts and its checker, shared by the strategy's prompts and the store that records each node's checks.

An advisor's correction reaches a running search as a command: replacing `facts` here changes what every later
prompt shows and what every later check reads, for the strategy and the store alike.
"""

from .sheet import Fact, Finding


class CaseCheck:
    """The client's facts of one session, and whether its steps and answer are checked against them."""

    def __init__(self, facts=(), enabled=True):
        self.facts: list[Fact] = list(facts)
        self.enabled = enabled

    @property
    def active(self):
        """Checks run when they are on and there is a sheet to check against (a Game of 24 puzzle has none)."""
        return self.enabled and bool(self.facts)

    def __call__(self, text: str, final: bool = False) -> list[Finding]:
        if not self.active or not text:
            return []
        from .check import check  # the checker's patterns compile where something is checked

        return check(text, self.facts, final=final)
