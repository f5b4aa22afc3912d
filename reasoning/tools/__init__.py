"""ReAct's tools: a small registry integrators extend, and one call that turns any outcome into an observation.

A tool is a plain Python function (sync or async) taking keyword arguments that a pydantic model validates;
what it returns (text, or data shown as compact JSON) is the observation the model reads next. `call()`
never raises for the tool's sake: an unknown tool, bad arguments, a refusal, a crash or a timeout come back
as an observation starting with "error:", so the model can read it and try something else. A sync tool runs on
the event loop and must be quick; a tool that waits on I/O should be async (it is awaited, with a timeout).

    from reasoning.tools import register

    class RateArgs(BaseModel):
        currency: str

    @register("fx_rate", "Today's rate of a currency in CHF.", RateArgs)
    def fx_rate(currency):
        return {"currency": currency, "chf": 0.94}

The built-in wealth tools (builtin.py) register themselves the first time the registry is read.
Nothing here imports Django: the strategy and the tools stay testable on their own.
"""

import asyncio
import inspect
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Callable

from pydantic import BaseModel, ValidationError

FINAL_ANSWER = "final_answer"  # the action that ends a ReAct run: the strategy's own, never a registered tool
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
OBSERVATION_LIMIT = 4000  # characters of a tool's output kept as its observation
TIMEOUT_S = 10.0  # an async tool that takes longer is reported as timed out


class ToolError(Exception):
    """A refusal the tool explains to the model (an unknown client, an expression it will not evaluate)."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable

    def args_schema(self):
        """Argument name -> "type, required: description": what the prompt's catalogue shows."""
        schema = self.args_model.model_json_schema()
        required = set(schema.get("required", []))
        return {name: _describe(prop, name in required) for name, prop in schema.get("properties", {}).items()}


_registry: dict[str, Tool] = {}


def register(name, description, args_model, fn=None, replace=False):
    """Add a tool: `register(name, description, Args, fn)`, or `@register(name, description, Args)` on fn."""
    if fn is None:

        def decorate(f):
            register(name, description, args_model, f, replace)
            return f

        return decorate
    if not NAME.match(name) or name == FINAL_ANSWER:
        raise ValueError(f"'{name}' cannot name a tool: use lower-case letters, digits and _, not '{FINAL_ANSWER}'")
    if not (isinstance(args_model, type) and issubclass(args_model, BaseModel)):
        raise TypeError("args_model must be a pydantic model class")
    if name in _registry and not replace:
        raise ValueError(f"a tool named '{name}' is registered already (pass replace=True to replace it)")
    _registry[name] = Tool(name, description, args_model, fn)
    return _registry[name]


def unregister(name):
    _registry.pop(name, None)


def get(name):
    """The tool of that name, or None."""
    _load_builtins()
    return _registry.get(name)


def available():
    """Every registered tool, built-in ones first."""
    _load_builtins()
    return list(_registry.values())


def catalogue():
    """The tools as a prompt lists them: name, description and argument schema."""
    return "\n".join(
        f"- {t.name}: {t.description}\n  args: {json.dumps(t.args_schema(), ensure_ascii=False)}" for t in available()
    )


async def call(name, args):
    """Run a tool with the model's arguments; its output as text, or an observation saying what went wrong."""
    tool = get(name)
    if tool is None:
        return f"error: unknown tool '{name}'; available: {', '.join(t.name for t in available())}, {FINAL_ANSWER}"
    try:
        parsed = tool.args_model.model_validate(args if isinstance(args, dict) else {})
    except ValidationError as error:
        return f"error: bad arguments for '{name}': {_problems(error)}; expected {json.dumps(tool.args_schema())}"
    try:
        result = tool.fn(**parsed.model_dump())
        if inspect.isawaitable(result):
            result = await asyncio.wait_for(result, TIMEOUT_S)
    except ToolError as error:
        return f"error: {name}: {error}"
    except asyncio.TimeoutError:
        return f"error: tool '{name}' timed out after {TIMEOUT_S:g} s"
    except Exception as error:  # a broken tool must not end the run: the model reads what happened
        return f"error: tool '{name}' failed: {type(error).__name__}: {error}"
    return as_observation(result)


def as_observation(result):
    """Text as it is, anything else as compact JSON; long outputs are cut, saying so."""
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= OBSERVATION_LIMIT:
        return text
    return text[:OBSERVATION_LIMIT] + f" … (cut: the output had {len(text)} characters)"


@cache
def _load_builtins():
    import_module("reasoning.tools.builtin")  # registers the built-in tools as it loads


def _problems(error):
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "args"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def _describe(prop, required):
    text = f"{_type_name(prop)}, {'required' if required else 'optional'}"
    return f"{text}: {prop['description']}" if prop.get("description") else text


def _type_name(prop):
    if "anyOf" in prop:
        return " or ".join(_type_name(p) for p in prop["anyOf"] if p.get("type") != "null")
    if prop.get("type") == "array":
        return f"list of {_type_name(prop.get('items', {}))}"
    return prop.get("type", "object")
