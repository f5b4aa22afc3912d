"""What a model call promises and returns: output contracts, answers, and the errors a strategy handles.

A contract is declared by the strategy that owns the prompt (its name, the reply's schema, how long
a reply may be, and a parser when the reply is not JSON); the gateway takes the contract itself, so
the LLM layer depends on nothing above it. Nothing here imports Django or litellm.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ValidationError


class BudgetExhausted(Exception):
    """The next model call would pass the session's budget, or its token cap (`limit` "token_cap"); nothing was
    spent on it."""

    def __init__(self, message="", limit="budget"):
        super().__init__(message)
        self.limit = limit


class Unparseable(Exception):
    """The model's reply did not satisfy the prompt's contract, even after a retry.

    It still cost money: `records` are the ledger rows of its attempts, written with the node they concern.
    """

    def __init__(self, message, cost_usd=0.0, latency_ms=0, model="", records=()):
        super().__init__(message)
        self.cost_usd, self.latency_ms, self.model, self.records = cost_usd, latency_ms, model, list(records)


class ModelError(Exception):
    """Every model (primary, retries, fallback) failed for one call."""


class ParseError(ValueError):
    """One reply broke its contract; the message says where."""


@dataclass
class Answer:
    """One parsed model reply, what it cost, and its ledger rows (written with the node it produced)."""

    parsed: Any
    model: str
    cost_usd: float
    latency_ms: int
    records: list = field(default_factory=list)
    samples: list = field(default_factory=list)  # every parsed sample when several were asked for; parsed is the first

    def __post_init__(self):
        self.samples = self.samples or [self.parsed]


FENCED = re.compile(r"\{.*\}", re.DOTALL)
ROUTER_NOTE = re.compile(r"\s*(LiteLLM: model group|Received Model Group).*$")
# litellm appends the traceback to the message of an error it does not map ("...\nTraceback (most recent call
# last): File .../site-packages/litellm/main.py ..."): for the log, not for a tenant.
TRACEBACK = re.compile(r"\s*Traceback \(most recent call last\).*$", re.DOTALL)
SERVER_PATH = re.compile(r"""(File )?["']?(/[^\s"':]+)+\.py["']?(, line \d+)?(, in \S+)?""")


@dataclass(frozen=True)
class Contract:
    """One prompt step: its template is prompts/<name with '.' as '_'>.txt, its reply must satisfy `schema`."""

    name: str
    schema: type[BaseModel]
    max_tokens: int = 1000
    parser: Callable[[str], BaseModel] | None = None  # a reply that is not JSON (e.g. TRM's lines)
    # The JSON shape a model that takes structured output is held to when the reply is not JSON by contract
    # (the parser then reads it); by default the schema itself, or nothing for a parsed contract.
    wire: type[BaseModel] | None = None

    @property
    def structured(self):
        """The model whose JSON schema is sent as the response format, or None."""
        return self.wire or (self.schema if self.json else None)

    @property
    def template(self):
        return self.name.replace(".", "_") + ".txt"

    @property
    def json(self):
        return self.parser is None

    def parse(self, text, context=None):
        """(model, how): strict JSON first, then the outermost {...} in the text; or the contract's own parser.

        `context` (the prompt, the count asked for) reaches the schema's validators, which refuse
        replies that are valid JSON but no answer.
        """
        if self.parser is not None:
            try:  # a parser meeting a fragment it cannot read is a broken reply, asked again like any other
                parsed = self.parser(text or "")
                return self.schema.model_validate(parsed.model_dump(), context=context), "lines"
            except ValidationError as error:
                raise ParseError(first_error(error)) from None
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                if isinstance(error, ParseError):
                    raise
                raise ParseError(f"unreadable reply: {error}"[:300]) from None
        try:
            return self.schema.model_validate_json(text, context=context), "strict"
        except ValidationError as strict_error:
            if not _is_json_error(strict_error):  # well-formed JSON that breaks the contract: say where
                raise ParseError(first_error(strict_error)) from None
            match = FENCED.search(text or "")
            if not match:
                raise ParseError(f"no JSON object in the reply ({first_error(strict_error)})") from None
            try:
                # strict=False: a raw line break inside a string is still the model's text, not a broken reply.
                found = json.loads(match.group(0), strict=False)
                return self.schema.model_validate(found, context=context), "extracted"
            except (ValueError, ValidationError) as error:
                raise ParseError(first_error(error)) from None


def _is_json_error(error):
    return any(e["type"] == "json_invalid" for e in error.errors())


def first_error(error):
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return f"{where}: {first['msg']}"
    return str(error)[:200]


REFUSED_AT = re.compile(r"\('([^']+)', (\d+)\)")


def refused_connection(error):
    """The refused connection under a provider error, or None: litellm reports a server that is down as an
    InternalServerError (500) "Connection error.", which reads as the server's own fault."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ConnectionRefusedError):
            return error
        error = error.__cause__ or error.__context__
    return None


# What a connection that dropped mid-call raises under litellm's 500 "Connection error." (aiohttp, httpx, httpcore,
# the socket itself): no server sent a status; the one in flight when the model server died ends so.
DROPPED = {"ServerDisconnectedError", "RemoteProtocolError", "ReadError", "ClientOSError", "ClientPayloadError",
           "IncompleteRead", "ConnectionResetError", "ConnectionAbortedError", "BrokenPipeError"}


def dropped_connection(error):
    """The dropped connection under a provider error, or None (a timeout is not one: it says so itself)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if type(error).__name__ in DROPPED or isinstance(error, ConnectionResetError | ConnectionAbortedError):
            return error
        error = error.__cause__ or error.__context__
    return None


def one_line(error):
    """What failed, in one plain line a person can read: the error's kind, the provider's HTTP status where it sent
    one, and its reason; no traceback, no server paths (the caller logs those)."""
    refused = refused_connection(error)
    if refused is not None:
        where = REFUSED_AT.search(str(refused))
        at = f" at {where[1]}:{where[2]}" if where else ""
        return f"ConnectionRefused: nothing answers{at}: the connection was refused (is the server running?)"
    dropped = dropped_connection(error)
    if dropped is not None:
        said = " ".join(str(dropped).split())[:120] or type(dropped).__name__
        return f"ConnectionDropped: the connection closed before a reply ({said}); no server sent an error status"
    name = type(error).__name__
    text = SERVER_PATH.sub("", TRACEBACK.sub("", str(error)))
    text = " ".join(text.split()).replace("litellm.", "")
    text = ROUTER_NOTE.sub("", text)  # the gateway does its own fallback: litellm's note on it misleads
    text = text.removeprefix(name).removeprefix(":").strip()
    status = getattr(error, "status_code", None)
    kind = f"{name} ({status})" if isinstance(status, int) and not isinstance(status, bool) else name
    return (f"{kind}: {text}" if text else kind)[:300]
