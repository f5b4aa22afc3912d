"""Game of 24 for the offline model: puzzle detection, an exact solver, and the checks a judge makes.

A board is a list of (value, expression) pairs; values are Fractions so division stays exact.
A step reads `13 - 9 = 4 (left: 4 4 10)`; the final step reads `Answer: (13 - 9) * (10 - 4) = 24`.
"""

import re
from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations

TARGET = Fraction(24)
NUMBER = re.compile(r"\d+(?:\.\d+)?")
FOUR_ON_A_LINE = re.compile(r"\s*(\d+)[\s,;]+(\d+)[\s,;]+(\d+)[\s,;]+(\d+)\s*\.?\s*")
VALUE = r"(\d+(?:/\d+)?)"
OPERATION = re.compile(VALUE + r"\s+([-+*/×÷x])\s+" + VALUE + r"\s*=\s*(-?\d+(?:/\d+)?)")
MONEY_HINT = re.compile(r"CHF|USD|EUR|GBP|[$€£%]")
LEFT = re.compile(r"\(left:\s*([^)]*)\)")
OPERATOR_ALIASES = {"×": "*", "x": "*", "÷": "/"}


def puzzle_numbers(problem):
    """The four puzzle numbers (1..13) if the problem is a Game of 24, else None."""
    for line in problem.splitlines():
        match = FOUR_ON_A_LINE.fullmatch(line)
        if match and _all_cards(match.groups()):
            return [int(n) for n in match.groups()]
    tokens = NUMBER.findall(problem)
    if "24" not in tokens or MONEY_HINT.search(problem):  # "aged 1, 4 and 6 ... USD" is a wealth problem
        return None
    tokens = [t for t in tokens if t != "24"]  # "Game of 24: ... make 24" names the target twice
    return [int(n) for n in tokens] if len(tokens) == 4 and _all_cards(tokens) else None


def _all_cards(tokens):
    return all(t.isdigit() and 1 <= int(t) <= 13 for t in tokens)


def board(numbers):
    return [(Fraction(n), str(n)) for n in numbers]


def left_text(items):
    return "(left: " + " ".join(str(v) for v, _ in items) + ")"


def apply(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b if b else None


def moves(items):
    """Every distinct next operation as (text, new board); no negative results, so the text stays natural."""
    found = {}
    for i, j in combinations(range(len(items)), 2):
        (a, ea), (b, eb) = sorted((items[i], items[j]), key=lambda item: item[0], reverse=True)
        rest = [items[k] for k in range(len(items)) if k not in (i, j)]
        for x, op, y, ex, ey in (
            (a, "+", b, ea, eb),
            (a, "*", b, ea, eb),
            (a, "-", b, ea, eb),
            (a, "/", b, ea, eb),
            (b, "/", a, eb, ea),
        ):
            result = apply(op, x, y)
            if result is None:
                continue
            new = sorted([(result, f"({ex} {op} {ey})")] + rest, key=lambda item: item[0])
            text = f"{x} {op} {y} = {result} {left_text(new)}"
            found.setdefault(text, new)
    return list(found.items())


@cache
def _reachable(values):
    if len(values) == 1:
        return values[0] == TARGET
    return any(_reachable(_key(new)) for _, new in moves([(v, "") for v in values]))


def _key(items):
    return tuple(sorted(v for v, _ in items))


def reachable(items):
    return _reachable(_key(items))


def solve(items):
    """One expression reaching 24 from the board, or None."""
    if len(items) == 1:
        return strip_outer(items[0][1]) if items[0][0] == TARGET else None
    for _, new in moves(items):
        if reachable(new):
            return solve(new)
    return None


def all_solutions(items, limit=12):
    """Distinct expressions reaching 24, at most `limit` of them, in a fixed order."""
    if len(items) == 1:
        return [strip_outer(items[0][1])] if items[0][0] == TARGET else []
    found = []
    for _, new in moves(items):
        if reachable(new):
            found += [e for e in all_solutions(new, limit) if e not in found]
        if len(found) >= limit:
            break
    return found[:limit]


def strip_outer(expr):
    """Drop one pair of parentheses that wraps the whole expression."""
    if not (expr.startswith("(") and expr.endswith(")")):
        return expr
    depth = 0
    for position, char in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and position < len(expr) - 1:
            return expr
    return expr[1:-1]


def apply_step(items, text):
    """The board after one step; a step we cannot replay falls back to its `(left: ...)` list."""
    match = OPERATION.search(text)
    if match:
        a, b = Fraction(match[1]), Fraction(match[3])
        op = OPERATOR_ALIASES.get(match[2], match[2])
        new = _take(items, a, op, b)
        if new is not None:
            return new
    claimed = claimed_board(text)
    return items if claimed is None else claimed


def claimed_board(text):
    """The board a step says it leaves, its `(left: ...)` list; None if it says none or none that reads."""
    left = LEFT.search(text)
    if not left:
        return None
    try:
        return [(v, str(v)) for v in sorted(Fraction(t) for t in left[1].split())]
    except (ValueError, ZeroDivisionError):
        return None


def _take(items, a, op, b):
    values = [v for v, _ in items]
    if a not in values:
        return None
    i = values.index(a)
    rest_values = values[:i] + values[i + 1 :]
    if b not in rest_values:
        return None
    j = [k for k, v in enumerate(values) if v == b and k != i][0]
    result = apply(op, a, b)
    if result is None:
        return None
    rest = [items[k] for k in range(len(items)) if k not in (i, j)]
    return sorted([(result, f"({items[i][1]} {op} {items[j][1]})")] + rest, key=lambda item: item[0])


def replay(numbers, steps):
    items = board(numbers)
    for text in steps:
        if not is_answer(text):
            items = apply_step(items, text)
    return items


def is_answer(text):
    return text.strip().lower().startswith("answer")


# A tiny expression reader for checking `Answer:` lines: numbers, + - * / and parentheses.
TOKEN = re.compile(r"\s*(\d+|[-+*/()])")


def evaluate_expression(expr):
    """(value, numbers used) of an arithmetic expression, or None if it does not parse or divides by zero."""
    expr = "".join(OPERATOR_ALIASES.get(c, c) for c in expr)
    tokens = TOKEN.findall(expr)
    if "".join(tokens) != re.sub(r"\s+", "", expr):
        return None
    reader = _Reader(tokens)
    try:
        value = reader.sum()
    except (IndexError, ValueError, ZeroDivisionError):
        return None
    return (value, reader.numbers) if reader.position == len(tokens) else None


class _Reader:
    def __init__(self, tokens):
        self.tokens, self.position, self.numbers = tokens, 0, []

    def sum(self):
        value = self.product()
        while self.position < len(self.tokens) and self.tokens[self.position] in "+-":
            op = self.tokens[self.position]
            self.position += 1
            value = apply(op, value, self.product())
        return value

    def product(self):
        value = self.atom()
        while self.position < len(self.tokens) and self.tokens[self.position] in "*/":
            op = self.tokens[self.position]
            self.position += 1
            right = self.atom()
            if op == "/" and right == 0:
                raise ZeroDivisionError
            value = apply(op, value, right)
        return value

    def atom(self):
        token = self.tokens[self.position]
        self.position += 1
        if token == "(":
            value = self.sum()
            if self.tokens[self.position] != ")":
                raise ValueError("unbalanced parentheses")
            self.position += 1
            return value
        if not token.isdigit():
            raise ValueError(f"unexpected {token}")
        self.numbers.append(int(token))
        return Fraction(token)


def check_answer(text, numbers):
    """(ok, expression) for an `Answer: <expr> = 24` line: right value, and each puzzle number used once."""
    body = re.sub(r"^\s*answer\s*:?", "", text.strip(), flags=re.IGNORECASE)
    expr = body.rsplit("=", 1)[0].strip()
    result = evaluate_expression(expr)
    ok = result is not None and result[0] == TARGET and Counter(result[1]) == Counter(numbers)
    return ok, expr


def step_error(text, items):
    """Why an operation step is wrong (bad arithmetic or a number not on the board), or ''."""
    match = OPERATION.search(text)
    if not match:
        return ""
    a, b = Fraction(match[1]), Fraction(match[3])
    op = OPERATOR_ALIASES.get(match[2], match[2])
    result = apply(op, a, b)
    if result is None:
        return "division by zero"
    if result != Fraction(match[4]):
        return f"{a} {op} {b} is {result}, not {match[4]}"
    if _take(items, a, op, b) is None:
        return f"{a} and {b} are not both available in {left_text(items)}"
    return ""


ANSWER_LINE = re.compile(r"(?:answer\s*:\s*)?([\d\s()+\-*/×÷x.]+?)\s*=\s*24\b", re.IGNORECASE)


def solves(text, numbers):
    """Whether a final answer states a correct `... = 24` on exactly these cards (its last such claim counts)."""
    claims = ANSWER_LINE.findall(text or "")
    return bool(claims) and check_answer(f"{claims[-1].strip()} = 24", numbers)[0]
