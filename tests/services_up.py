"""Exit 0 if the database and Redis servers named by the given URLs accept TCP connections."""

import socket
import sys
from urllib.parse import urlsplit


def reachable(url, default_port):
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=2):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    database, redis = sys.argv[1], sys.argv[2]
    sys.exit(0 if reachable(database, 5432) and reachable(redis, 6379) else 1)
