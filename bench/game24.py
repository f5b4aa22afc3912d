"""Benchmark: Game of 24, the Tree of Thoughts paper's test puzzles (rows 901-1000), ToT and LATS on the offline model.

The offline model is an exact solver for Game of 24 steps, so these figures measure the search (how
many calls and how much money a strategy spends to reach 24, and how close its wall time stays to its
critical path), not a language model. Success is judged on the path the search chose: its final node
must be a correct "Answer: ... = 24" (the synthesis alone does not count).

Run: make bench   (or: .venv/bin/python bench/game24.py [--first 901 --last 1000 --timed 10])
"""

import argparse
import asyncio
import csv
import statistics
import time
from datetime import date

from common import ROOT, commit, machine, setup_django, timed_gateway_class, write_section

setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.llm import game24  # noqa: E402
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402
from reasoning.strategies import available_modes  # noqa: E402

# ToT as the paper ran it (keep the best 5 per level, 4 steps: three operations and the answer); LATS's defaults.
RUNS = {
    "tot": {"branching": 5, "depth": 4, "keep": 5},
    "lats": {},
}
PAPER = "GPT-4 in the ToT paper: CoT 4%, ToT (b=5) 74% success, about 0.74 USD per puzzle"
TimedGateway = timed_gateway_class()


def puzzles(first, last):
    with open(ROOT / "fixtures" / "game24.csv") as f:
        return [row["Puzzles"] for row in csv.DictReader(f) if first <= int(row["Rank"]) <= last]


async def solve_one(tenant, mode, params, puzzle, latency_ms):
    settings.REASONING["OFFLINE_LATENCY_MS"] = latency_ms
    problem = f"Game of 24: use each of the numbers {puzzle} exactly once with + - * / to make 24."
    data = SessionIn(problem_text=problem, mode=mode, params=params, budget_usd=5.0)
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    gateway = await sync_to_async(TimedGateway)(session)
    started = time.perf_counter()
    await run_session(session.id, gateway=gateway)
    wall = time.perf_counter() - started
    session = await ReasoningSession.objects.aget(pk=session.id)
    final = await ReasoningNode.objects.filter(pk=session.final_node_id).afirst()
    numbers = [int(n) for n in puzzle.split()]
    solved = bool(final) and reached_24(final, numbers)
    calls = await LLMCall.objects.filter(session_id=session.id, outcome__in=["ok", "fallback"]).acount()
    return {
        "solved": solved,
        "calls": calls,
        "cost": session.budget_used_usd,
        "wall": wall,
        "model": gateway.model_time(),
    }


def reached_24(node, numbers):
    """The search's own path reached 24: a checked "Answer: ... = 24", or a last step leaving exactly 24."""
    if game24.is_answer(node.thought):
        return game24.check_answer(node.thought, numbers)[0]
    return node.state.get("left") == [24]


async def measure(mode, params, rows, timed):
    tenant, _ = await Tenant.objects.aget_or_create(slug=f"bench-{mode}")
    untimed = [await solve_one(tenant, mode, params, p, 0) for p in rows]
    with_latency = [await solve_one(tenant, mode, params, p, 200) for p in rows[:timed]]
    return untimed, with_latency


def section(mode, params, rows, untimed, timed):
    solved = sum(r["solved"] for r in untimed)
    ratios = [r["wall"] / r["model"] for r in timed if r["model"]]
    return f"""### {mode} {params or "(defaults)"}

- success: {solved} of {len(rows)} puzzles ({100 * solved / len(rows):.0f}%)
- model calls per puzzle: median {statistics.median(r["calls"] for r in untimed):.0f}, mean {statistics.mean(r["calls"] for r in untimed):.1f}
- cost per puzzle on the offline model's price (1 USD / 4 USD per million tokens in / out): median {statistics.median(r["cost"] for r in untimed):.4f} USD
- wall time per puzzle at 200 ms per call, over its critical path (time with a model call in flight), {len(timed)} puzzles: median {statistics.median(ratios):.3f}, max {max(ratios):.3f}; wall median {statistics.median(r["wall"] for r in timed):.2f} s
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--first", type=int, default=901)
    parser.add_argument("--last", type=int, default=1000)
    parser.add_argument("--timed", type=int, default=10, help="puzzles also run at 200 ms per call")
    args = parser.parse_args()
    rows = puzzles(args.first, args.last)
    parts = []
    for mode, params in RUNS.items():
        if mode not in available_modes():
            continue
        untimed, timed = asyncio.run(measure(mode, params, rows, args.timed))
        parts.append(section(mode, params, rows, untimed, timed))
        print(parts[-1])
    report = f"""## Game of 24 (rows {args.first}-{args.last} of fixtures/game24.csv)

Command: `make bench` (`.venv/bin/python bench/game24.py --first {args.first} --last {args.last} --timed {args.timed}`), {date.today()}, commit {commit()}.
Machine: {machine()}.

The offline model is an exact Game of 24 solver, so these figures measure the search, not a language model.
For reference only (not measured here): {PAPER}; the original ToT code driven the same way
(200 ms per request, an exact model on loopback) takes 12.2 s per puzzle and 58 requests: 7.6x its critical path.

{"".join(parts)}"""
    write_section("game24", report)


if __name__ == "__main__":
    main()
