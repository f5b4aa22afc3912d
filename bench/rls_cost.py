"""Benchmark: what PostgreSQL's row-level security costs, on the tree read and on the engine's time per node.

One process, one fresh PostgreSQL database (--postgres, emptied first), rounds that alternate the wall off and on
(reasoning.rls.ENABLED: off, every query runs as the connection's own role, a superuser's, and the policies are
never applied; on, as the app's role with its tenant set), so both sides meet the same machine at the same time:
- the tree read: `GET /api/sessions/{id}/tree` through Django's test client with an API key, the whole request
  (middleware, the key's lookup, the queries, the render; the rendered-tree cache emptied before each read), on a
  tree of --nodes nodes; and the same read answered 304 from its ETag;
- the engine: a Tree of Thoughts session with its defaults on the offline model at 0 ms per call; engine time per
  node is the time with no model call in flight over the nodes written (as bench/tot_critical_path.py).

Run: .venv/bin/python bench/rls_cost.py [--postgres URL] [--rounds 8] [--reads 40] [--nodes 400]
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, commit, timed_gateway_class, write_section  # noqa: E402

DEFAULT_POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/reasoning_bench_rls")
PROBLEM = "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m portfolio."


def fresh_database(url):
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(url.replace(parts.path, "/postgres"), connect_timeout=3, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{parts.path.lstrip("/")}"')


def setup(url):
    sys.path.insert(0, str(ROOT))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=url,
        REASONING_CREATE_RATE="off",
        REASONING_OFFLINE_LATENCY_MS="0",
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def grown_session(tenant, nodes):
    from reasoning import services
    from reasoning.models import ReasoningNode
    from reasoning.schemas import SessionIn

    session = services.create_session(tenant, SessionIn(problem_text=PROBLEM, mode="tot"), submit=False)
    root = ReasoningNode.objects.create(tenant=tenant, session=session, depth=0, thought="root")
    ReasoningNode.objects.bulk_create(
        ReasoningNode(tenant=tenant, session=session, parent=root, depth=1, thought=f"thought {i} " * 20)
        for i in range(nodes - 1)
    )
    return session


def read_ms(client, path, auth, reads, etag=None):
    from reasoning import api

    times = []
    for _ in range(reads):
        api.rendered_trees.bodies.clear()
        api.rendered_trees.bytes = 0
        started = time.perf_counter()
        response = client.get(path, **auth, **({"HTTP_IF_NONE_MATCH": etag} if etag else {}))
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == (304 if etag else 200), response.status_code
    return times


async def engine_ms_per_node(tenant):
    from asgiref.sync import sync_to_async

    from reasoning import services
    from reasoning.engine import run_session
    from reasoning.models import ReasoningNode
    from reasoning.schemas import SessionIn

    data = SessionIn(problem_text=PROBLEM, problem_kind="investment-thesis", mode="tot")
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    gateway = await sync_to_async(timed_gateway_class())(session)
    started = time.perf_counter()
    await run_session(session.id, gateway=gateway)
    wall = time.perf_counter() - started
    nodes = await ReasoningNode.objects.filter(session_id=session.id).acount()
    return (wall - gateway.model_time()) * 1000 / nodes


def measure(args):
    from django.test import Client

    from reasoning import rls
    from reasoning.fixtures import load_rubrics
    from reasoning.models import ApiKey, Tenant

    load_rubrics()
    tenant = Tenant.objects.create(slug="bench", name="Bench")
    Tenant.objects.create(slug="other", name="Other")  # a second tenant, so the policies have rows to hide
    _, key = ApiKey.issue(tenant, name="bench")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    session = grown_session(tenant, args.nodes)
    grown_session(Tenant.objects.get(slug="other"), args.nodes)
    path = f"/api/sessions/{session.id}/tree"
    client = Client()
    etag = client.get(path, **auth).headers["ETag"]
    asyncio.run(engine_ms_per_node(tenant))  # a first run warms litellm, the pool and the caches for both sides
    results = {side: {"read": [], "304": [], "engine": []} for side in ("off", "on")}
    for _ in range(args.rounds):
        for side in ("off", "on"):
            rls.ENABLED = side == "on"
            results[side]["read"] += read_ms(client, path, auth, args.reads)
            results[side]["304"] += read_ms(client, path, auth, args.reads, etag)
            results[side]["engine"].append(asyncio.run(engine_ms_per_node(tenant)))
    rls.ENABLED = True
    return results


def report(args, results):
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    med = {side: {k: statistics.median(v) for k, v in r.items()} for side, r in results.items()}

    def row(label, key):
        off, on = med["off"][key], med["on"][key]
        return f"| {label} | {off:.2f} ms | {on:.2f} ms | {on - off:+.2f} ms ({(on / off - 1) * 100:+.0f}%) |"

    text = f"""## Row-level security: its cost on the tree read and the engine

{date.today()}, commit {commit()}, PostgreSQL, a fresh database, one process.
Command: `.venv/bin/python bench/rls_cost.py --rounds {args.rounds} --reads {args.reads} --nodes {args.nodes}`.
`uptime` when it ended: `{uptime}`.

Rounds alternate the wall off and on in the same run. Off: every query as the connection's own role (a
superuser's), the policies never applied, as before migration 0011. On: as `reasoning_app` with the tenant set, as
CI and production run. Medians of {args.rounds * args.reads} reads and of {args.rounds} runs a side.

| | RLS off | RLS on | cost |
|---|---|---|---|
{row(f"`GET /api/sessions/{{id}}/tree`, {args.nodes} nodes, rendered afresh", "read")}
{row("the same read answered 304 (If-None-Match)", "304")}
{row("engine time per node, ToT defaults, 0 ms per call", "engine")}
"""
    print(text)
    if args.write:
        write_section("rls_cost", text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=400)
    parser.add_argument("--write", action="store_true", help="write the section of docs/BENCHMARKS.md")
    args = parser.parse_args()
    fresh_database(args.postgres)
    setup(args.postgres)
    report(args, measure(args))


if __name__ == "__main__":
    main()
