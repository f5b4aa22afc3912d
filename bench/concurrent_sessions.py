"""Benchmark: 50 Tree of Thoughts sessions at once in one process, each against its solo wall time.

The engine of one process (one event loop, the ORM on asgiref's one shared sync thread) runs N sessions side by
side, started together with run_session (the in-process runner would admit MAX_CONCURRENT_SESSIONS of them at a
time; this measures the engine, not that limit). Each session's wall time, from the common start to its end, is
divided by the median wall time of the same session run alone; the goal is every session within 1.5x.

Run: make bench   (or: .venv/bin/python bench/concurrent_sessions.py [--sessions 50] [--latency-ms 200,1000])
"""

import argparse
import asyncio
import os
import statistics
import time
from datetime import date

from common import commit, machine, setup_django, write_section

setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.models import ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402

PROBLEM = (
    "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m family "
    "portfolio, 60% global equities, 30% CHF bonds, 10% cash, for a client aged 58 retiring in 7 years."
)


async def one(tenant):
    data = SessionIn(problem_text=PROBLEM, problem_kind="investment-thesis", mode="tot")
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    started = time.perf_counter()
    await run_session(session.id)
    wall = time.perf_counter() - started
    return wall, (await ReasoningSession.objects.aget(pk=session.id)).status


async def together(tenant, count):
    datas = [SessionIn(problem_text=PROBLEM, problem_kind="investment-thesis", mode="tot") for _ in range(count)]
    sessions = [
        await sync_to_async(services.create_session)(tenant, d, triggered_by="bench", submit=False) for d in datas
    ]
    started = time.perf_counter()

    async def timed(session):
        await run_session(session.id)
        return time.perf_counter() - started

    walls = await asyncio.gather(*(timed(s) for s in sessions))
    statuses = [s.status async for s in ReasoningSession.objects.filter(pk__in=[s.id for s in sessions])]
    return walls, statuses


async def measure(count, latencies, solo_runs):
    tenant = await Tenant.objects.acreate(slug="bench-concurrent")
    settings.REASONING["OFFLINE_LATENCY_MS"] = 0
    await one(tenant)  # warm up imports and litellm's caches
    results = {}
    for latency in latencies:
        settings.REASONING["OFFLINE_LATENCY_MS"] = latency
        solo = [await one(tenant) for _ in range(solo_runs)]
        load = os.getloadavg()[0]
        walls, statuses = await together(tenant, count)
        results[latency] = {"solo": statistics.median(w for w, _ in solo), "walls": walls, "statuses": statuses}
        results[latency]["load"] = load
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--latency-ms", default="200,1000")
    parser.add_argument("--solo-runs", type=int, default=3)
    args = parser.parse_args()
    latencies = [int(x) for x in args.latency_ms.split(",")]
    results = asyncio.run(measure(args.sessions, latencies, args.solo_runs))
    rows = []
    for latency, r in results.items():
        ratios = sorted(w / r["solo"] for w in r["walls"])
        solved = sum(1 for s in r["statuses"] if s == "solved")
        met = "met" if ratios[-1] <= 1.5 else "missed"
        rows.append(
            f"| {latency} ms | {r['solo']:.2f} s | {statistics.median(r['walls']):.2f} s | {max(r['walls']):.2f} s | "
            f"{statistics.median(ratios):.2f} | {ratios[-1]:.2f} | {solved} of {len(r['statuses'])} | {r['load']:.1f} | "
            f"each <= 1.5x: {met} |"
        )
    report = f"""## {args.sessions} concurrent sessions, each against its solo wall time

Command: `make bench` (`.venv/bin/python bench/concurrent_sessions.py --sessions {args.sessions} --latency-ms {args.latency_ms}`), {date.today()}, commit {commit()}.
Machine: {machine()}. One process, one event loop: {args.sessions} Tree of Thoughts sessions (defaults, 22 nodes
each) started together with run_session, on the offline model at the given latency per call; solo: the median of
{args.solo_runs} runs of the same session alone. Load: the 1-minute load average before the sessions started.

| latency per call | solo | median wall | slowest wall | median ratio | worst ratio | solved | load | goal |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("concurrent_sessions", report)
    print(report)


if __name__ == "__main__":
    main()
