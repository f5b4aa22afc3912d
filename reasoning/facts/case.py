"""One session's facts and its checker, shared by the strategy's prompts and the store that records each node's checks.

An advisor's correction reaches a running search as a command: replacing `facts` here changes what every later
prompt shows and what every later check reads, for the strategy and the store alike.

A task that can be checked is checked: a wealth answer against the client's facts (an answer that states none of the
client's figures is not an answer to this client), a Game of 24 answer by its arithmetic on the puzzle's cards. Only
a fact check is a reason to write the answer again (the findings say what to fix); a puzzle's check is an oracle of
the answer itself, so it decides the session's ending but is never used to search again.
"""

from .sheet import Finding


class CaseCheck:
    """The client's facts of one session (or its puzzle's cards), and whether its steps and answer are checked."""

    def __init__(self, facts=(), enabled=True, puzzle=None):
        self.facts = list(facts)
        self.enabled = enabled
        self.puzzle = list(puzzle) if puzzle else None  # a Game of 24 puzzle's cards

    @property
    def active(self):
        """Checks run when they are on and there is a sheet to check against, or a puzzle to check an answer of."""
        return bool(self.puzzle) or (self.enabled and bool(self.facts))

    @property
    def retries(self):
        """Whether a failed answer is written again with the findings (fact checks), or only judged (a puzzle)."""
        return not self.puzzle

    @property
    def failed_reason(self):
        return "answer_check_failed" if self.puzzle else "fact_check_failed"

    def __call__(self, text: str, final: bool = False, figures=None) -> list[Finding]:
        """The text's findings; `figures`, those the model declared with it, checked by their derivations."""
        if not self.active or not text:
            return []
        if self.puzzle:
            return [self._solves(text)] if final else []
        from .check import check  # the checker's patterns compile where something is checked

        found = check(text, self.facts, final=final, figures=figures)
        stated = ("figure", "arithmetic") if figures else ("figure",)  # a declared derived figure is the client's too
        if final and any(f.kind == "amount" for f in self.facts) and not any(f.kind in stated for f in found):
            found.append(Finding("coverage", False, "", "the answer states none of the client's figures"))
        return found

    def figures(self, declared, text="") -> list[dict]:
        """The declared figures, each evaluated against the facts (what the tree and the session carry), with the
        `span` [start, end] of the amount that writes it in `text` where it does (the page marks it); [] if none."""
        if not declared or self.puzzle:
            return []
        from .derivation import evaluate
        from .quantities import find_quantities, matches

        written = [q for q in find_quantities(text or "") if q.kind in ("amount", "percent")]
        figures = []
        for figure in evaluate(declared, self.facts):
            data = figure.to_dict()
            q = next((q for q in written if figure.value is not None and matches(q, figure.value, figure.unit)), None)
            if q is not None:
                data["span"] = [q.start, q.end]
                written.remove(q)
            figures.append(data)
        return figures

    def verdict(self, text: str) -> Finding | None:
        """The task's own verdict on a thought that is a final answer it can check alone (a Game of 24 answer line:
        its arithmetic on the cards), or None: no such answer, or no such task (a wealth step needs a judge)."""
        from reasoning.llm.game24 import is_answer

        if not self.puzzle or not text or not is_answer(text):
            return None
        return self._solves(text)

    @property
    def defines_states(self):
        """Whether the task knows the state its thoughts reach (a puzzle's board), rather than a model declaring it."""
        return bool(self.puzzle)

    @property
    def answer_from_state(self):
        """Whether the state a thought reaches decides its line's answer too, so lines to an equal state are one line.
        Not on a Game of 24: the numbers left decide a step's value, but the answer's expression is written from the
        steps that left them; nor where a model declares a state (a wealth answer is written from its whole line)."""
        return False

    def state_of(self, text: str, before=(), claimed=False) -> str | None:
        """The canonical state a thought reaches after the line's earlier thoughts `before`, where the task defines
        one: on a Game of 24 the numbers left once the line's steps are played on the cards by the rules ("left: 4 4
        10", sorted), or an answer line ("Answer: (13-9)*(10-4)=24"); None elsewhere (a wealth step's state is the
        model's to declare, or none). A line that breaks the rules (a step with a number not on the board, or wrong
        arithmetic) has no state to share: it is judged on its whole line, where the mistake shows; or, `claimed`, by
        the numbers its step says are left, as the reference's value prompt sees them (None if it says none)."""
        from reasoning.llm import game24

        if not self.puzzle or not text:
            return None
        if game24.is_answer(text):
            return "Answer: " + "".join(text.split(":", 1)[-1].split())
        board = game24.board(self.puzzle)
        for step in [*before, text]:
            if game24.is_answer(step) or not game24.OPERATION.search(step):
                return None
            if game24.step_error(step, board):
                board = game24.claimed_board(step) if claimed else None
                if not board:
                    return None
            else:
                board = game24.apply_step(board, step)
        return "left: " + " ".join(str(v) for v in sorted(v for v, _ in board))

    def standalone(self, state: str | None) -> str | None:
        """A state as it stands whatever the problem, so its judgement may serve another session's: a Game of 24
        board's numbers left are worth the same on any cards; an answer line only on its own cards, which it names."""
        if not self.puzzle or not state:
            return None
        if state.startswith("Answer: "):
            return f"{state} on the cards {' '.join(map(str, sorted(self.puzzle)))}"
        return state

    def answer_due(self, line) -> bool:
        """Whether the next thought of a line (its steps, root-first) is its answer: on a Game of 24, one number is
        left (by the line's own claim), and the next step writes the expression."""
        from reasoning.llm import game24

        if not self.puzzle or not line or game24.is_answer(line[-1]):
            return False
        return len(game24.replay(self.puzzle, line)) == 1

    def dead_end(self, line) -> bool:
        """Whether nothing worth proposing can follow a line (its steps, root-first): on a Game of 24, one number is left
        (by the line's own claim) and it is not 24, so no answer written from it can be right."""
        from reasoning.llm import game24

        if not self.answer_due(line):
            return False
        [(value, _)] = game24.replay(self.puzzle, line)
        return value != game24.TARGET

    def _solves(self, text):
        from reasoning.llm.game24 import solves

        cards = " ".join(map(str, self.puzzle))
        if solves(text, self.puzzle):
            return Finding("arithmetic", True, "", f"a valid expression of the cards {cards} equal to 24")
        return Finding("arithmetic", False, "", f"no valid expression of the cards {cards} equal to 24")


# What a node's state holds that the strategies write for themselves (how it was made, its judgement's marks, ids, a
# tool's arguments, an answer checked as the answer, a carried trace): every other text in it is the model's, shown by
# the page beside the thought (the inspector lists a state's other keys), so it is checked as the thought is.
OWN_KEYS = frozenset(
    "problem_kind kind iteration rollout success decided_by state_key reused remembered verified judged consistency proposed "
    "revalued copied command attempt step of failed tool args answer confidence confidence_from stopped latent "
    "left figures".split()
)


def shown_texts(state) -> list[tuple[str, str]]:
    """(key, text) for each text of a node's state the page shows: a string, or each string of a list."""
    texts = []
    for key, value in (state or {}).items():
        if key in OWN_KEYS:
            continue
        items = value if isinstance(value, list) else [value]
        texts += [(key, item) for item in items if isinstance(item, str) and item.strip()]
    return texts


def with_figures(case, item) -> dict:
    """A new node's state, with the figures its model declared evaluated (`figures`: label, value, unit, derivation,
    facts, ok)."""
    state = dict(item.get("state") or {})
    declared = [f if isinstance(f, dict) else f.model_dump() for f in item.get("figures") or []]
    if declared:
        state["figures"] = case.figures(declared, item.get("thought") or "")
    return state


def refigure(case, state, thought="") -> dict:
    """A stored node's state with its declared figures evaluated again (the sheet changed), or the state itself."""
    if not (state or {}).get("figures"):
        return state
    return {**state, "figures": case.figures(state["figures"], thought)}


def node_checks(case, thought, state=None) -> list[dict]:
    """A node's findings: its thought's, then those of every other text the page shows of it (its state's summary and
    the like), each marked with the `field` it was found in (its span counts in that text)."""
    found = [f.to_dict() for f in case(thought, figures=(state or {}).get("figures"))]
    for key, text in shown_texts(state):
        found += [{**f.to_dict(), "field": f"state.{key}"} for f in case(text)]
    return found
