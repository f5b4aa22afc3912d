"""Benchmark: listing sessions when a tenant holds 10,000 of them, through Django's test client.

A page must cost the same whatever the tenant holds: the database slices it (on an index in the list's order)
and only the page's rows become dicts.

Run: make bench   (or: .venv/bin/python bench/sessions_list.py [--sessions N] [--requests N])
"""

import argparse
import os
import statistics
import time
from datetime import date, timedelta

from common import commit, machine, setup_django, write_section

setup_django()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from reasoning import selectors  # noqa: E402
from reasoning.models import ApiKey, Membership, ReasoningSession, Role, Status, Tenant  # noqa: E402

STATUSES = [Status.SOLVED, Status.SOLVED, Status.SOLVED, Status.FAILED, Status.EXHAUSTED, Status.CANCELLED]


def populate(n):
    tenant = Tenant.objects.create(slug="bench-sessions", name="Bench sessions")
    start = timezone.now()
    ReasoningSession.objects.bulk_create(
        (
            ReasoningSession(
                tenant=tenant,
                problem_text=f"Session {i}: rebalance a CHF {2 + i % 9}m portfolio toward a 60/40 target.",
                mode="tot",
                model_primary="offline/sim",
                status=STATUSES[i % len(STATUSES)],
                final_answer="Sell 12% of equities over two tax years; buy CHF bonds." if i % 6 < 3 else "",
                started_at=start - timedelta(seconds=i),
                finished_at=start - timedelta(seconds=i) + timedelta(seconds=20),
            )
            for i in range(n)
        ),
        batch_size=1000,
    )
    _, key = ApiKey.issue(tenant, name="bench")
    user = get_user_model().objects.create_user(username="bench-advisor", password="bench-only")
    Membership.objects.create(user=user, tenant=tenant, role=Role.ADVISOR)
    return tenant, key, user


def measure(client, path, requests, **headers):
    """Median and max wall time of `requests` GETs (after one warm-up), and the queries one of them makes."""
    assert client.get(path, **headers).status_code == 200
    queries = []
    with connection.execute_wrapper(lambda execute, sql, *args: queries.append(sql) or execute(sql, *args)):
        client.get(path, **headers)
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(path, **headers)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.content[:300]
    return statistics.median(times) * 1000, max(times) * 1000, len(queries)


def plan(tenant, **filters):
    """SQLite's plan for a page of the list, e.g. 'SEARCH ... USING INDEX ...'."""
    sql, params = selectors.sessions_for(tenant, **filters)[:100].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return "; ".join(row[-1] for row in cursor.fetchall())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    load = os.getloadavg()[0]  # the machine may be shared: its load says how much the figures can be trusted
    tenant, key, user = populate(args.sessions)
    api, browser = Client(), Client()
    browser.force_login(user)
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    last_page = -(-args.sessions // 25)
    cases = [
        ("`GET /api/sessions?limit=1`", api, "/api/sessions?limit=1", bearer),
        ("`GET /api/sessions?limit=100`", api, "/api/sessions?limit=100", bearer),
        (
            f"`GET /api/sessions?offset={args.sessions - 100}&limit=100`",
            api,
            f"/api/sessions?offset={args.sessions - 100}&limit=100",
            bearer,
        ),
        ("`GET /api/sessions?status=failed&limit=100`", api, "/api/sessions?status=failed&limit=100", bearer),
        ("`GET /` (the sessions page, 25 a page)", browser, "/", {}),
        (f"`GET /?page={last_page}` (the last page)", browser, f"/?page={last_page}", {}),
    ]
    rows = []
    for label, client, path, headers in cases:
        median, worst, queries = measure(client, path, args.requests, **headers)
        rows.append(f"| {label} | {median:.1f} ms | {worst:.1f} ms | {queries} |")
    report = f"""## Listing sessions of a tenant with {args.sessions:,} sessions

Command: `make bench` (`.venv/bin/python bench/sessions_list.py --sessions {args.sessions} --requests {args.requests}`), {date.today()}, commit {commit()}.
Machine: {machine()}. Through Django's test client (middleware, auth and serialisation included, no network);
median and max of {args.requests} requests after one warm-up; load average {load:.1f} when it started.
Queries: those one request makes (auth included).

| request | median | max | queries |
|---|---|---|---|
{chr(10).join(rows)}

SQLite's plan for a page: `{plan(tenant)}`; filtered by status: `{plan(tenant, status="failed")}`.
"""
    write_section("sessions_list", report)
    print(report)


if __name__ == "__main__":
    main()
