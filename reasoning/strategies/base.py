"""The shared tree interface every strategy is written against.

A strategy gets a Context: the problem, its rubric, validated params, a store (the tree,
persisted), a gateway (the model, budgeted) and a clock. It never imports Django, channels
or litellm, so it reads on its own and tests with fakes.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict


class BudgetExhausted(Exception):
    """The next model call would pass the session's budget; nothing was spent on it."""


class Unparseable(Exception):
    """The model's reply did not satisfy the prompt's contract, even after a retry."""

    def __init__(self, message, cost_usd=0.0, latency_ms=0, model=""):
        super().__init__(message)
        self.cost_usd, self.latency_ms, self.model = cost_usd, latency_ms, model


class StopRequested(Exception):
    """An overseer paused or cancelled the session; the strategy stops at this step boundary."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


@dataclass
class Node:
    """A strategy's view of one stored node."""

    id: str
    parent_id: str | None
    depth: int
    thought: str
    state: dict = field(default_factory=dict)
    eval_score: float | None = None
    pruned: bool = False
    is_terminal: bool = False
    visit_count: int = 0
    total_reward: float = 0.0
    parse_error: str = ""


@dataclass
class Answer:
    """One parsed model reply and what it cost."""

    parsed: Any
    model: str
    cost_usd: float
    latency_ms: int


class Store(Protocol):
    async def add_root(self, thought: str, state: dict) -> Node: ...

    async def add_children(self, parent: Node, items: list[dict], answer: Answer | None) -> list[Node]: ...

    async def update(self, node: Node, **fields) -> None: ...

    async def update_many(self, changes: list[tuple[Node, dict]]) -> None:
        """Several updates in one write; a field add_cost adds to the node's cost."""

    async def prune(self, nodes: list[Node]) -> None: ...

    async def refresh(self, nodes: list[Node]) -> list[Node]: ...

    async def path(self, node: Node) -> list[Node]: ...


class Gateway(Protocol):
    async def ask(self, contract: str, prompt: str, node_id: str | None = None) -> Answer: ...

    async def remaining_usd(self) -> float: ...

    def typical_call_usd(self) -> float: ...

    async def close(self) -> None:
        """Release what the gateway holds (leased budget); called by the engine, not by strategies."""


class Control(Protocol):
    async def checkpoint(self) -> None:
        """Raise StopRequested if an overseer paused or cancelled the session."""


class StrictParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class Context:
    problem: str
    kind: str
    rubric: str
    params: StrictParams
    store: Store
    gateway: Gateway
    control: Control
    clock: Callable[[], float] = time.monotonic


@dataclass
class Outcome:
    final_answer: str
    final_node: Node | None
    reason: str  # "solved", "budget", ...

    @property
    def exhausted(self):
        return self.reason == "budget"


class Strategy(ABC):
    name: ClassVar[str]
    Params: ClassVar[type[StrictParams]] = StrictParams

    def __init__(self, ctx: Context):
        self.ctx = ctx

    @abstractmethod
    async def run(self) -> Outcome: ...


async def settle_all(*awaitables):
    """Like gather, but every awaitable finishes before the first error is raised: no write is left running."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results
