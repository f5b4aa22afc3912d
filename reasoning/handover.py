"""The engine's hand-overs to the sync thread, with the calls that are waiting at the same moment sent together.

Every thread-sensitive sync_to_async is a round trip: the event loop hands a call to the one sync thread, the
thread wakes, runs it and hands the result back, and the loop wakes again. A step boundary asks for three or four
such calls at once (the overseers' commands, their flags, the budget, the beam's prunes), and each waited for the
one before it, a round trip each, with the loop and the thread taking turns at the GIL. Here the calls made in one
turn of the loop cross together: they run one after the other in the thread, in the order they were made (as they
would have queued for the thread), and each caller gets its own result or its own error.
"""

import asyncio

from asgiref.sync import sync_to_async

_waiting = {}  # loop -> [(function, args, future)] made in this turn of the loop, not yet handed over


async def run(function, *args):
    """function(*args) in the sync thread, handed over with whatever else was asked for in this turn of the loop."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    batch = _waiting.get(loop)
    if batch is None:
        batch = _waiting[loop] = []
        loop.call_soon(_hand_over, loop)  # after the tasks already ready this turn have made their calls too
    batch.append((function, args, future))
    return await future


def _hand_over(loop):
    batch = _waiting.pop(loop, [])
    if batch:
        loop.create_task(_run_batch(batch))


async def _run_batch(batch):
    try:
        outcomes = await sync_to_async(_run_all)([(function, args) for function, args, _ in batch])
    except BaseException as error:  # the hand-over itself failed or was cancelled: nobody waits forever
        for _, _, future in batch:
            if not future.done():
                future.cancel() if isinstance(error, asyncio.CancelledError) else future.set_exception(error)
        raise
    for (_, _, future), (ok, value) in zip(batch, outcomes, strict=True):
        if future.done():  # its caller was cancelled meanwhile (the call still ran, as a sync_to_async call does)
            continue
        future.set_result(value) if ok else future.set_exception(value)


def _run_all(calls):
    outcomes = []
    for function, args in calls:
        try:
            outcomes.append((True, function(*args)))
        except Exception as error:  # this caller's error, raised in its own await; the others go on
            outcomes.append((False, error))
    return outcomes
