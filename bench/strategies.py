"""Benchmark: each strategy's wall time over its own critical path on a wealth problem, on the offline model.

At 200 ms per model call, the critical path is the time with at least one call in flight (sibling calls
overlap, so it is the chain of dependent calls); the ratio says how much the engine adds around it.

Run: make bench   (or: .venv/bin/python bench/strategies.py [--runs N])
"""

import argparse
import asyncio
import statistics
import time
from datetime import date

from common import commit, machine, setup_django, timed_gateway_class, write_section

setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.fixtures import load_rubrics  # noqa: E402
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402
from reasoning.strategies import strategy_labels  # noqa: E402

PROBLEM = (
    "Rebalance a CHF 12m portfolio for a Zurich couple aged 61 that drifted to 72% equities against a 60/40 "
    "target, minimising realised gains across the next two tax years."
)
TimedGateway = timed_gateway_class()


async def one_run(tenant, mode):
    settings.REASONING["OFFLINE_LATENCY_MS"] = 200
    data = SessionIn(problem_text=PROBLEM, problem_kind="allocation-rebalance", mode=mode, budget_usd=5.0)
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    gateway = await sync_to_async(TimedGateway)(session)
    started = time.perf_counter()
    await run_session(session.id, gateway=gateway)
    wall = time.perf_counter() - started
    session = await ReasoningSession.objects.aget(pk=session.id)
    return {
        "status": session.status,
        "nodes": await ReasoningNode.objects.filter(session_id=session.id).acount(),
        "calls": await LLMCall.objects.filter(session_id=session.id).acount(),
        "wall": wall,
        "model": gateway.model_time(),
    }


async def measure(runs):
    await sync_to_async(load_rubrics)()
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-strategies")
    return {mode: [await one_run(tenant, mode) for _ in range(runs)] for mode, _ in strategy_labels()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = asyncio.run(measure(args.runs))
    rows = []
    for mode, runs in results.items():
        ratio = statistics.median(r["wall"] / r["model"] for r in runs if r["model"])
        last = runs[-1]
        rows.append(
            f"| {mode} | {last['status']} | {last['nodes']} | {last['calls']} | "
            f"{statistics.median(r['model'] for r in runs):.2f} s | {statistics.median(r['wall'] for r in runs):.2f} s | {ratio:.3f} |"
        )
    report = f"""## Every strategy on a wealth problem, at 200 ms per model call

Command: `make bench` (`.venv/bin/python bench/strategies.py --runs {args.runs}`), {date.today()}, commit {commit()}.
Machine: {machine()}. Defaults of each strategy; the problem is an allocation-rebalance with a 5 USD budget; medians of {args.runs} runs.

| mode | status | nodes | calls | critical path (a call in flight) | wall | wall / critical path |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("strategies", report)
    print(report)


if __name__ == "__main__":
    main()
