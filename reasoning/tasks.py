"""Celery tasks for the scale-out runner."""

import asyncio

from celery import shared_task


@shared_task(name="reasoning.run_session", acks_late=True)
def run_session_task(session_id):
    from .engine import run_session

    asyncio.run(run_session(session_id))
