"""The scale-out runner: a real Celery worker (in this process, on the configured broker) runs the session."""

import pytest
from celery.contrib.testing.worker import start_worker

from config import celery_app as app
from reasoning import services
from reasoning.runner import CeleryRunner
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker():
    app.conf.update(task_always_eager=False, result_backend="cache+memory://")
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30) as running:
        yield running


def test_a_celery_worker_runs_a_submitted_session(alice, worker):
    data = SessionIn(
        problem_text="Rebalance a CHF 2m portfolio to 50/50.",
        mode="tot",
        params={"branching": 2, "depth": 2, "keep": 1},
    )
    session = services.create_session(alice.tenant, data, submit=False)
    result = CeleryRunner().submit(session.id)
    result.get(timeout=60)
    session.refresh_from_db()
    assert session.status == "solved" and session.nodes.count() == 1 + 2 + 2
