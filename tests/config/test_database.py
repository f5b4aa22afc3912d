"""config/settings.py's SQLite connections: WAL, and a checkpoint (a sync to disk) every 10,000 pages, not 1,000."""

import pytest
from django.db import connection


@pytest.mark.django_db
def test_sqlite_connections_use_the_wal_and_checkpoint_it_rarely():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's pragmas")
    with connection.cursor() as cursor:
        assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cursor.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 10000
