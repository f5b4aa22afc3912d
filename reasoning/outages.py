"""A dependency that is down (the database, Redis as cache, broker or channel layer): the API says so in JSON.

While Redis restarts or the database fails over, a request answers 503 with a Retry-After header and one line
naming what is down, never an HTML 500. Work already committed stays committed: a session's start is dispatched
again by the sweeper (recovery.dispatch_waiting) and watchers re-sync on the event seq.
"""

import logging

from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.http import JsonResponse

try:  # the scale-out profile's clients (pip install -e ".[scale]")
    from kombu.exceptions import OperationalError as BrokerError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError:  # the embedded profile has no Redis and no broker to lose

    class BrokerError(Exception):
        pass

    RedisConnectionError = RedisTimeoutError = BrokerError

log = logging.getLogger(__name__)
RETRY_AFTER_S = 5
DEPENDENCY_ERRORS = (
    RedisConnectionError,
    RedisTimeoutError,
    BrokerError,
    DatabaseOperationalError,
    DatabaseInterfaceError,
    ConnectionError,  # OSError's refused or reset connections, from any client
)


def what_is_down(exc):
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):
        return "Redis"
    if isinstance(exc, BrokerError):
        return "the task broker"
    if isinstance(exc, (DatabaseOperationalError, DatabaseInterfaceError)):
        return "the database"
    return "a service the server depends on"


def unavailable(exc):
    """The 503 for a dependency error: one line naming what is down, and a Retry-After header."""
    down = what_is_down(exc)
    log.warning("503: %s is unavailable (%s)", down, type(exc).__name__, exc_info=exc)
    response = JsonResponse({"detail": f"{down} is unavailable for a moment; retry in {RETRY_AFTER_S} s."}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class DependencyOutage:
    """Middleware: an API request that meets a dependency error (in its view, its auth or its rate limit)
    answers 503 JSON with Retry-After instead of Django's HTML 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if request.path.startswith("/api/") and isinstance(exception, DEPENDENCY_ERRORS):
            return unavailable(exception)
        return None
