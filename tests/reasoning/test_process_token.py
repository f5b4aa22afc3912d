"""Each process its own owner id (issue 23, item 10): the pool children of one Celery worker, forked from it after
reasoning.states was imported, shared their parent's token, so one child's runs passed for another's."""

import multiprocessing

from reasoning import states


def _owner(queue):
    queue.put(states.owner_id())


def test_every_forked_child_has_a_token_of_its_own():
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_owner, args=(queue,)) for _ in range(2)]
    for child in children:
        child.start()
    owners = {queue.get(timeout=30) for _ in children}
    for child in children:
        child.join(timeout=30)
    tokens = {owner.rsplit(":", 1)[1] for owner in owners} | {states.PROCESS_TOKEN}
    assert len(owners) == 2 and len(tokens) == 3
