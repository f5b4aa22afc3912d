"""Driving real runs in tests: the real gateway with a hook before each model call, and reads of what a run left.

Strategy tests act at an exact point of a search (pause, cut, prune after the n-th call) the way an overseer
would, on the offline model through litellm; these helpers are the one copy they share.
"""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.db.models import Sum

from reasoning import services, states
from reasoning.engine import run_session
from reasoning.llm.gateway import ModelGateway
from reasoning.models import LLMCall, ReasoningNode


class HookedGateway(ModelGateway):
    """The real gateway; `on_call(n, contract)` runs before the n-th model call (1-based), every prompt is kept.

    The engine's stop guard runs just before ask(): a call counted after `stopped` is set started after the stop.
    """

    def __init__(self, session, on_call=None, **kwargs):
        super().__init__(session, **kwargs)
        self.on_call, self.count, self.prompts = on_call, 0, []
        self.after_stop, self.stopped = 0, False

    async def ask(self, contract, prompt, node_id=None, expect=None, samples=1):
        self.count += 1
        self.after_stop += self.stopped
        self.prompts.append((contract.name, prompt))
        if self.on_call:
            await self.on_call(self.count, contract)
        return await super().ask(contract, prompt, node_id=node_id, expect=expect, samples=samples)

    def prompts_for(self, name):
        return [prompt for contract, prompt in self.prompts if contract == name]


async def run_hooked(session, on_call=None):
    gateway = await sync_to_async(HookedGateway)(session, on_call)
    await run_session(session.id, gateway=gateway)
    return gateway


async def rows(session):
    return [n async for n in ReasoningNode.objects.filter(session_id=session.id).order_by("created_at")]


def act(fn, *args, **kwargs):
    """An overseer's service call from an async test."""
    return sync_to_async(fn)(*args, **kwargs)


async def ledger_and_node_costs(session):
    ledger = (await LLMCall.objects.filter(session_id=session.id).aaggregate(s=Sum("cost_usd")))["s"] or 0.0
    nodes = (await ReasoningNode.objects.filter(session_id=session.id).aaggregate(s=Sum("cost_usd")))["s"] or 0.0
    return ledger, nodes


async def pause_at_call(party, session, n):
    """Run the session, pausing it (as an overseer would) just before its n-th model call: (gateway, rows).

    The gateway's `after_stop` counts the calls started after the pause.
    """
    gateway = None

    async def pause(count, contract):
        if count == n:
            await act(services.pause_session, party.tenant, session.id, "user:tester")
            gateway.stopped = True

    gateway = await sync_to_async(HookedGateway)(session, pause)
    await run_session(session.id, gateway=gateway)
    await session.arefresh_from_db()
    return gateway, await rows(session)


async def resume(party, session, runner):
    """Resume a paused session on the runner and wait for it; the rows it ends with."""
    await act(services.resume_session, party.tenant, session.id, "user:tester")
    await runner.drain()
    await session.arefresh_from_db()
    return await rows(session)


async def cut_at_call(session, n):
    """Run the session and cancel its task just before its n-th model call, as a stopping worker does: its rows."""

    async def cut(count, contract):
        if count == n:
            raise asyncio.CancelledError  # what a stopping worker does to its task

    with pytest.raises(asyncio.CancelledError):
        await run_hooked(session, cut)
    await session.arefresh_from_db()
    return await rows(session)


async def take_over_and_run(session):
    """Another run takes the cut session over and runs it to its end: the rows it ends with."""
    assert await sync_to_async(states.take_over)(session)
    await run_session(session.id)
    await session.arefresh_from_db()
    return await rows(session)


async def scripted_gateway(session, replies):
    """The real gateway whose model replies are the given texts (dicts as JSON), in order, through litellm's
    mock_response; on a router of its own (any deployment params), so the script never leaks into later tests."""
    replies = iter([r if isinstance(r, str) else json.dumps(r) for r in replies])
    gateway = await sync_to_async(ModelGateway)(session, deployment_params={"primary": {}})
    original = gateway.router.acompletion

    async def reply(**kwargs):
        return await original(**kwargs, mock_response=next(replies))

    gateway.router.acompletion = reply
    return gateway


async def run_scripted(session, replies):
    """A run whose model replies are the given texts, in order; the session as it ends."""
    await run_session(session.id, gateway=await scripted_gateway(session, replies))
    await session.arefresh_from_db()
    return session
