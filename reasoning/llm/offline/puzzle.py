"""A Game of 24 player that is wrong sometimes, the way language models are: the offline model's puzzle mind.

At noise 0 it is exact: it proposes the moves that keep 24 reachable first, judges every step and answer
correctly, and answers from the board its line left. At noise ε, each chance to err is taken at rate ε, on its own:

- a list of proposals comes in random order (the best moves are not first);
- a proposed step uses a number that is not on the board (its `left:` list as if it were);
- a judgement is a guess (each sample of a judgement on its own, so several samples can outvote it);
- an answer line is wrong (a changed operator or number, still claiming 24).

It never rescues a line that went wrong: answers come from the line's own board, never from a fresh solve of the
puzzle. The player is independent of any prompt format, so our contracts (puzzle_replies.py) and the Tree of
Thoughts reference code's prompts (bench/search_quality.py) are answered by the same model.
"""

import re
from dataclasses import dataclass
from fractions import Fraction
from random import Random

from reasoning.llm.game24 import (
    OPERATION,
    TARGET,
    apply,
    apply_step,
    board,
    check_answer,
    is_answer,
    left_text,
    moves,
    reachable,
    replay,
    solve,
    step_error,
)

VERDICTS = ("sure", "likely", "impossible")
SCORES = {"sure": 0.95, "likely": 0.5, "impossible": 0.05}  # a verdict as a 0..1 value


@dataclass
class Judgement:
    verdict: str  # sure | likely | impossible
    reason: str
    guessed: bool = False  # the verdict is a guess, not a judgement of the step

    def score(self, rng):
        """The verdict as a number, with a little jitter; a guess is any number at all."""
        if self.guessed:
            return round(rng.uniform(0.0, 1.0), 3)
        return round(min(1.0, max(0.0, SCORES[self.verdict] + rng.uniform(-0.03, 0.03))), 3)


@dataclass
class Player:
    rng: Random
    noise: float = 0.0

    def slips(self):
        return self.noise > 0 and self.rng.random() < self.noise

    # ---- proposing ------------------------------------------------------------------------------

    def next_steps(self, items, k, avoid=()):
        """Up to k distinct next operations on the board (none in `avoid`), the ones that keep 24 reachable first."""
        options = [o for o in moves(items) if o[0] not in avoid]
        good = [text for text, new in options if reachable(new)]
        bad = [text for text, new in options if not reachable(new)]
        self.rng.shuffle(good)
        self.rng.shuffle(bad)
        ordered = good + bad
        if self.slips():
            self.rng.shuffle(ordered)  # the best moves are not first
        return [self.invented_step(items) if self.slips() else text for text in ordered[:k]]

    def invented_step(self, items):
        """A step that uses a number the board does not hold, its `left:` list written as if it did."""
        values = [v for v, _ in items]
        a = self.rng.choice(values)
        rest = list(values)
        rest.remove(a)
        absent = [Fraction(n) for n in range(1, 14) if Fraction(n) not in values]
        x = self.rng.choice(absent)
        if rest:
            rest.remove(self.rng.choice(rest))  # the number the made-up one stands in for
        big, small = max(a, x), min(a, x)
        op = self.rng.choice("+-*")
        result = apply(op, big, small)
        left = " ".join(str(v) for v in sorted(rest + [result]))
        return f"{big} {op} {small} = {result} (left: {left})"

    def answers(self, items, k):
        """k answer lines, each written on its own from the board the line left; each wrong at the noise rate."""
        expr = solve(items)
        lines = []
        for _ in range(k):
            if expr is None:
                honest = f"Answer: no solution reached from {left_text(items)}"
                lines.append(self.misstated(self._any_expression(items)) if self.slips() else honest)
            else:
                lines.append(self.misstated(expr) if self.slips() else f"Answer: {expr} = 24")
        return lines

    def _any_expression(self, items):
        """The board's numbers joined by +, as a model that gives up writes them."""
        return " + ".join(e for _, e in items)

    def misstated(self, expr):
        """The expression with one operator or one number changed, still claiming 24 (and never right)."""
        for _ in range(20):
            tokens = re.findall(r"\d+|[-+*/()]", expr)
            spots = [i for i, t in enumerate(tokens) if t in "+-*/" or t.isdigit()]
            i = self.rng.choice(spots)
            if tokens[i].isdigit():
                tokens[i] = str(max(1, int(tokens[i]) + self.rng.choice((-2, -1, 1, 2))))
            else:
                tokens[i] = self.rng.choice([op for op in "+-*/" if op != tokens[i]])
            wrong = " ".join(tokens).replace("( ", "(").replace(" )", ")")
            if not check_answer(f"{wrong} = 24", numbers_in(expr))[0]:
                return f"Answer: {wrong} = 24"
        return f"Answer: {expr} + 1 = 24"

    def attempt(self, numbers, avoid=(), start=None):
        """A whole solution in one go: an operation at a time (a good one unless it slips), then its answer; from the
        board `start` when steps were taken already (the rest of a line).

        `avoid` holds first steps a review said led nowhere: the attempt starts elsewhere when it can.
        """
        items, lines = (start if start is not None else board(numbers)), []
        while len(items) > 1:
            options = moves(items)
            if not lines:
                options = [o for o in options if o[0].split(" (")[0] not in avoid] or options
            good = [o for o in options if reachable(o[1])]
            text, new = self.rng.choice(good) if good and not self.slips() else self.rng.choice(options)
            if self.slips():
                text = self.invented_step(items)
                new = apply_step(items, text)
            lines.append(text)
            items = new
        value, expr = items[0]
        if value == TARGET:
            final = self.answers(items, 1)[0]
        elif self.slips():
            final = self.misstated(expr)
        else:
            final = f"Answer: {expr} = {value}"  # an honest miss
        return lines, final

    # ---- judging --------------------------------------------------------------------------------

    def judge(self, numbers, steps, text):
        """The verdict on the last step of a line (an operation or an answer); a guess at the noise rate."""
        exact = judge_exactly(numbers, steps, text)
        if self.slips():
            verdict = self.rng.choice(VERDICTS)
            return Judgement(verdict, f"{verdict}: a quick look at {text.split(' (')[0]}", guessed=True)
        return exact

    def judge_board(self, items):
        """The verdict on the numbers left alone, as a judge shown only them says it: sure when 24 can be reached
        from them, else impossible; a guess at the noise rate. A step that made a number up is not seen."""
        shown = " ".join(str(v) for v, _ in items)
        if self.slips():
            verdict = self.rng.choice(VERDICTS)
            return Judgement(verdict, f"{verdict}: a quick look at {shown}", guessed=True)
        expr = solve(items)
        if expr is not None:
            return Judgement("sure", f"sure: {expr} = 24 from {shown}")
        return Judgement("impossible", f"impossible: 24 cannot be reached from {shown}")


def judge_exactly(numbers, steps, text):
    """What a careful judge says of a step after `steps`: sure (24 stays reachable), likely, or impossible."""
    cards = " ".join(map(str, numbers))
    if is_answer(text):
        if "no solution" in text.lower():
            if solve(board(numbers)) is None:
                return Judgement("sure", f"sure: {cards} has no solution")
            return Judgement("impossible", f"impossible: {cards} does have a solution")
        ok, expr = check_answer(text, numbers)
        if ok:
            return Judgement("sure", f"sure: {expr} = 24 uses each of {cards} once")
        return Judgement("impossible", f"impossible: '{expr}' does not make 24 from {cards}")
    if not OPERATION.search(text):
        return Judgement("likely", "likely: the step makes no new operation")
    before = replay(numbers, steps)
    wrong = step_error(text, before)
    if wrong:
        return Judgement("impossible", f"impossible: {wrong}")
    after = apply_step(before, text)
    expr = solve([(v, str(v)) for v, _ in after])
    if expr and len(after) == 1:
        return Judgement("sure", f"sure: the step reaches 24 {left_text(after)}")
    if expr:
        return Judgement("sure", f"sure: {expr} = 24 from {left_text(after)}")
    return Judgement("impossible", f"impossible: 24 cannot be reached from {left_text(after)}")


def numbers_in(expr):
    return [int(n) for n in re.findall(r"\d+", expr)]
