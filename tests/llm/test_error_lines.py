"""A failed model call is one plain line for the tenant, with the provider's status and reason: litellm appends the
traceback to an error it does not map, and that goes to the log, never to `session.error` or `calls[].error`."""

import pytest
from asgiref.sync import sync_to_async

from reasoning import services
from reasoning.engine import run_session
from reasoning.llm import offline
from reasoning.llm.contracts import one_line
from reasoning.models import LLMCall
from reasoning.schemas import SessionIn

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broken_offline_model(monkeypatch, settings):
    """The offline model raising inside litellm: litellm wraps it in an APIConnectionError carrying the traceback."""
    settings.REASONING = {**settings.REASONING, "LLM_RETRIES": 0}
    handler = offline.register()

    async def broken(*args, **kwargs):
        raise ValueError("the model server answered 'out of memory'")

    monkeypatch.setattr(handler, "acompletion", broken)


def assert_plain(line):
    assert line and "\n" not in line
    for leak in ("Traceback", "site-packages", 'File "', "main.py", ".py"):
        assert leak not in line, line


async def test_session_error_and_the_ledger_keep_one_line_with_status_and_reason(alice, broken_offline_model, caplog):
    data = SessionIn(problem_text="Rebalance a CHF 3m portfolio to 60/40.", mode="tot", params={"depth": 1})
    session = await sync_to_async(services.create_session)(alice.tenant, data, submit=False)
    await run_session(session.id)
    await session.arefresh_from_db()
    calls = [c async for c in LLMCall.objects.filter(session=session, outcome="error")]
    assert session.status == "failed" and calls
    for line in [session.error, *(c.error for c in calls)]:
        assert_plain(line)
        assert "APIConnectionError (500)" in line and "out of memory" in line


def test_one_line_names_the_kind_the_status_and_the_reason():
    import litellm

    error = litellm.RateLimitError("OpenAIException - Rate limit reached", llm_provider="openai", model="gpt-4o")
    assert one_line(error).startswith("RateLimitError (429): ")
    assert "Rate limit reached" in one_line(error)
    assert one_line(KeyError("node")) == "KeyError: 'node'"
    text = 'boom\nTraceback (most recent call last):\n  File "/srv/app/.venv/lib/site-packages/litellm/main.py", line 9'
    assert one_line(RuntimeError(text)) == "RuntimeError: boom"
