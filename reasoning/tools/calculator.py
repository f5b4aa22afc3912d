"""Arithmetic for the `calculate` tool, read with the `ast` module and never eval or exec.

Only numbers, + - * / ** %, parentheses and a sign are evaluated; names, attributes, calls, subscripts and
everything else are refused by name. Values are exact fractions (so 8 / (3 - 8 / 3) is 24, not 23.999...),
exponents and results are bounded, so `2**10**10` is refused instead of hanging the worker.
"""

import ast
import math
from fractions import Fraction

from . import ToolError

MAX_EXPONENT = 1000
MAX_MAGNITUDE = Fraction(10) ** 18
MAX_DENOMINATOR = 10**15
OPERATORS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b,
}
REFUSED = {
    ast.Name: "names",
    ast.Attribute: "attributes",
    ast.Call: "function calls",
    ast.Subscript: "subscripts",
    ast.Lambda: "lambdas",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
}


def evaluate(expression):
    """The exact value of an arithmetic expression, as a Fraction; ToolError says what was refused."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as error:
        raise ToolError(f"not an arithmetic expression ({error.msg})") from None
    return _value(tree.body)


def show(value):
    """A result as a plain number: exact integers stay exact, the rest keep 15 significant digits."""
    if value.denominator == 1:
        return int(value)
    return float(format(float(value), ".15g"))


def _value(node):
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _bounded(_power(_value(node.left), _value(node.right)))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, (ast.Div, ast.Mod)) and right == 0:
            raise ToolError("division by zero")
        return _bounded(OPERATORS[type(node.op)](left, right))
    what = REFUSED.get(type(node), f"'{type(node).__name__}' expressions")
    raise ToolError(f"{what} are not allowed: only numbers, + - * / ** %, parentheses and a sign")


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError(f"only numbers are allowed, not {type(value).__name__} {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError("the number is too large")
    return _bounded(Fraction(str(value)))  # via its text, so 0.1 stays one tenth


def _power(base, exponent):
    if exponent.denominator != 1:
        if base < 0:
            raise ToolError("a negative number has no real fractional power")
        return _bounded_float(float(base) ** float(exponent))
    if abs(exponent) > MAX_EXPONENT:
        raise ToolError(f"the exponent {exponent} is too large (at most {MAX_EXPONENT})")
    if base == 0 and exponent < 0:
        raise ToolError("division by zero")
    if base != 0 and int(exponent) * math.log10(abs(base)) > 18:  # checked before the power is computed
        raise ToolError("the result is too large (more than 1e18)")
    return base ** int(exponent)


def _bounded_float(number):
    if not math.isfinite(number):
        raise ToolError("the result is too large (more than 1e18)")
    return _bounded(Fraction(number))


def _bounded(value):
    if abs(value) > MAX_MAGNITUDE:
        raise ToolError("the result is too large (more than 1e18)")
    # Long chains of divisions grow the denominator without making the number more useful.
    return value.limit_denominator(MAX_DENOMINATOR) if value.denominator > MAX_DENOMINATOR else value
