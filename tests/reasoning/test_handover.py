"""reasoning/handover.py: calls made in one turn of the loop cross to the sync thread together, each with its own
result or error, in the order they were made."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async

from reasoning import handover


@pytest.fixture
def batches(monkeypatch):
    """The names of the calls in each hand-over, in order."""
    seen, run_all = [], handover._run_all

    def recorded(calls):
        seen.append([function.__name__ for function, _ in calls])
        return run_all(calls)

    monkeypatch.setattr(handover, "_run_all", recorded)
    return seen


def read_flags():
    return "flags"


def read_budget(extra):
    return 0.5 + extra


def refuse():
    raise LookupError("the run lost its session")


async def test_calls_made_together_cross_in_one_hand_over_in_order(batches):
    results = await asyncio.gather(
        handover.run(read_flags), handover.run(refuse), handover.run(read_budget, 0.25), return_exceptions=True
    )
    assert results[0] == "flags" and results[2] == 0.75
    assert isinstance(results[1], LookupError)  # its caller's error only: the calls after it still ran
    assert batches == [["read_flags", "refuse", "read_budget"]]


async def test_calls_made_one_after_the_other_each_cross_alone(batches):
    assert await handover.run(read_flags) == "flags"
    assert await handover.run(read_budget, 0.0) == 0.5
    assert batches == [["read_flags"], ["read_budget"]]


async def test_they_run_on_the_thread_every_thread_sensitive_call_shares():
    shared = await sync_to_async(threading.get_ident)()
    assert await handover.run(threading.get_ident) == shared != threading.get_ident()


async def test_a_cancelled_caller_leaves_the_others_their_results(batches):
    started = threading.Event()

    def slow():
        started.wait(5)
        return "slow"

    waiting = asyncio.ensure_future(handover.run(slow))
    other = asyncio.ensure_future(handover.run(read_flags))
    await asyncio.sleep(0)
    waiting.cancel()
    started.set()
    assert await other == "flags"
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert batches == [["slow", "read_flags"]]
