"""Celery tasks for the scale-out runner, and the worker's start-up recovery."""

import asyncio

from celery import shared_task
from celery.signals import worker_ready


@shared_task(name="reasoning.run_session", acks_late=True)
def run_session_task(session_id):
    from .engine import REQUEUED, run_session

    # A command that arrived as a turn ended asks for another turn at once.
    while asyncio.run(run_session(session_id)) == REQUEUED:
        pass


@worker_ready.connect
def resume_sessions_on_worker_start(**kwargs):
    """Sessions whose run died with its worker continue from their stored tree."""
    from .recovery import resume_stranded

    resume_stranded()
