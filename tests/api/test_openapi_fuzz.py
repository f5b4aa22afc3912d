"""The API against its own OpenAPI document, with schemathesis: no 5xx, no reply outside the schema, no undocumented
status code. Bounded and seeded (hypothesis derandomised), so a run is the same every time; `make test` runs it on
SQLite and, in the scale-out run, on PostgreSQL, where NUL characters and oversized values meet a real database.
"""

import pytest
from hypothesis import HealthCheck, settings

schemathesis = pytest.importorskip("schemathesis")

from django.core.wsgi import get_wsgi_application  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

pytestmark = pytest.mark.django_db

EXAMPLES = 30  # per operation


# Loaded from the app itself (no server): Django is set up by pytest-django before collection.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """Like Django's test client: a request must not close the test's own database connection when it ends."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(alice, monkeypatch):
    from reasoning import services

    monkeypatch.setattr(services, "submit_to_runner", lambda session_id: None)  # no session runs while we fuzz
    return {"Authorization": f"Bearer {alice.key}"}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation_keeps_its_contract(case, bearer):
    # Every check but "schema-valid data is accepted": rules beyond a schema (a problem kind needs a rubric, a
    # budget has a ceiling from settings, a node must exist) rightly refuse some schema-valid bodies with a 422.
    case.call_and_validate(headers=bearer, excluded_checks=[positive_data_acceptance])
