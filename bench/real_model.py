"""Benchmark: every strategy on a real small model (SmolLM2-135M behind llama-cpp-python's server on loopback).

How often a grammar-bound reply satisfies its contract, how many attempts an answer takes, what a session
costs at the configured price and how long it runs. Needs a served model: REASONING_REAL_MODEL_BASE (the
server's /v1 URL; `scripts/real_model.sh` shows how to serve one) and REASONING_REAL_MODEL (openai/smollm2).

The settings are the README's local-server recipe (tests/real_model/recipe.py reads it). `--dump FILE` writes every
accepted thought and every solved answer, one JSON object a line, for a reader to label (docs/BENCHMARKS.md says
how the junk share was measured).

Run: REASONING_REAL_MODEL_BASE=http://127.0.0.1:8080/v1 .venv/bin/python bench/real_model.py [--runs N] [--dump FILE]
"""

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from datetime import date

from common import commit, machine, setup_django, write_section

BASE = os.environ.get("REASONING_REAL_MODEL_BASE", "")
MODEL = os.environ.get("REASONING_REAL_MODEL", "openai/smollm2")
JUNK_WORDS = ("echoes", "says nothing about the problem", "markup", "restates the problem")  # the contracts' refusals

if not BASE:
    print("bench/real_model.py skipped: REASONING_REAL_MODEL_BASE names no served model (see scripts/real_model.sh)")
    sys.exit(0)

os.environ.setdefault("OPENAI_API_KEY", "dummy")  # litellm's OpenAI client wants one; the local server reads none
setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.fixtures import load_rubrics  # noqa: E402
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402
from tests.real_model.recipe import JUNK_PROBLEMS, junk_sessions, settings_for, small_params  # noqa: E402


async def one_run(tenant, mode, problem):
    text = JUNK_PROBLEMS[problem]
    data = SessionIn(
        problem_text=text, mode=mode, params=small_params(mode, text), model_primary=MODEL, budget_usd=0.5
    )
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    started = time.perf_counter()
    await run_session(session.id)
    wall = time.perf_counter() - started
    session = await ReasoningSession.objects.aget(pk=session.id)
    calls = [c async for c in LLMCall.objects.filter(session_id=session.id)]
    nodes = [n async for n in ReasoningNode.objects.filter(session_id=session.id, depth__gt=0, parse_error="")]
    accepted = [{"mode": mode, "kind": "thought", "text": n.thought} for n in nodes if n.model_used]
    if session.status == "solved" and not session.answer_partial:
        accepted.append({"mode": mode, "kind": "answer", "text": session.final_answer})
    return {
        "accepted": accepted,
        "refused": sum(c.parse_ok is False and any(w in c.error for w in JUNK_WORDS) for c in calls),
        "status": session.status,
        "nodes": await ReasoningNode.objects.filter(session_id=session.id).acount(),
        "attempts": len(calls),
        "parsed": sum(c.parse_ok is True for c in calls),
        "broken": sum(c.parse_ok is False for c in calls),
        "cost": session.budget_used_usd,
        "wall": wall,
        "latency": sorted(c.latency_ms for c in calls if c.outcome == "ok"),
    }


async def measure(runs):
    settings.REASONING.update(settings_for(MODEL, BASE))  # the README's recipe, pointed at this server
    await sync_to_async(load_rubrics)()
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-real-model")
    return {
        (mode, problem): [await one_run(tenant, mode, problem) for _ in range(runs)]
        for mode, problem in junk_sessions()
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--dump", help="write the accepted thoughts and answers here, one JSON object a line")
    args = parser.parse_args()
    results = asyncio.run(measure(args.runs))
    if args.dump:
        with open(args.dump, "w") as out:
            for runs in results.values():
                for item in (a for r in runs for a in r["accepted"]):
                    out.write(json.dumps(item, ensure_ascii=False) + "\n")
    rows = []
    for (mode, problem), runs in results.items():
        statuses = Counter(r["status"] for r in runs)
        parsed, broken = sum(r["parsed"] for r in runs), sum(r["broken"] for r in runs)
        latency = sorted(ms for r in runs for ms in r["latency"])
        median_ms = latency[len(latency) // 2] if latency else 0
        rows.append(
            f"| {mode} | {problem} | {', '.join(f'{n} {s}' for s, n in statuses.items())} | "
            f"{sum(r['nodes'] for r in runs) / len(runs):.0f} | {sum(r['attempts'] for r in runs) / len(runs):.0f} | "
            f"{parsed}/{parsed + broken} ({100 * parsed / max(1, parsed + broken):.0f}%) | {median_ms / 1000:.1f} s | "
            f"{sum(r['cost'] for r in runs) / len(runs):.6f} USD | {sum(r['wall'] for r in runs) / len(runs):.0f} s | "
            f"{sum(len(r['accepted']) for r in runs)} | {sum(r['refused'] for r in runs)} |"
        )
    sessions = [r for runs in results.values() for r in runs]
    solved = sum(r["status"] == "solved" for r in sessions)
    report = f"""## Every strategy on a real small model (SmolLM2-135M, llama-cpp-python, structured output)

Command: `REASONING_REAL_MODEL_BASE=<server>/v1 .venv/bin/python bench/real_model.py --runs {args.runs}`
(the server as `scripts/real_model.sh` starts it), {date.today()}, commit {commit()}.
Machine: {machine()}. Every mode (auto too) on a Game of 24 puzzle and on a
rebalancing problem (the issue 24 recipe, tests/real_model/recipe.py), each strategy at its smallest (as
tests/real_model), priced at 0.10/0.20 USD per million tokens, the README's local-server settings (a reply's schema
sent as a `json_object` with a schema, a grammar; one request at a time; up to 3 more tries for a broken reply).
Means over {args.runs} runs; "replies parsed" counts every attempt that reached the parser; "accepted" the thoughts
and solved answers kept, "refused as junk" the replies the contracts refused as echoes, restatements, markup or
off-topic (all runs). SmolLM2-135M writes nothing a reader keeps (below), so every session solved is junk solved:
**{solved} of {len(sessions)} sessions ended solved**.

| mode | problem | ended | nodes | attempts | replies parsed | median call | cost | wall | accepted | refused |
|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("real_model", report)
    print(report)


if __name__ == "__main__":
    main()
