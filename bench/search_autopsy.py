"""Benchmark helper: where a search's requests go and where its answers are lost, read off its trees. One row of
bench/search_quality.py is run on the offline puzzle model; per puzzle it records the ending, the requests by purpose
and by level, and what the tree held (lines that reached 24, right answers anywhere, in the beam or pruned).

Run: .venv/bin/python bench/search_autopsy.py --mode tot --params '{"branching": 8, "keep": 5}' [--first 901
--last 930 --noise 0.3 --out autopsy.jsonl]
"""

import argparse
import asyncio
import collections
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_misses  # noqa: E402  (sets Django up on this tree's code)
import search_quality as sq  # noqa: E402

from reasoning.llm import game24  # noqa: E402
from reasoning.models import LLMCall, ReasoningNode, ReasoningSession, Tenant  # noqa: E402


def tree_facts(nodes, cards):
    """What the tree held: nodes by level, lines that reached 24 (kept / pruned), right answers (kept / pruned)."""
    state = search_misses.board_reader(nodes, cards)

    at24 = [n for n in nodes if state(n) == "left: 24"]
    right = [n for n in nodes if game24.is_answer(n.thought) and game24.check_answer(n.thought, cards)[0]]
    made_up = [n for n in nodes if n.depth and not game24.is_answer(n.thought) and state(n) is None]
    return {
        "nodes": dict(collections.Counter(n.depth for n in nodes if n.depth)),
        "lines_to_24": len(at24),
        "lines_to_24_kept": sum(not n.pruned for n in at24),
        "right_answers": len(right),
        "right_answers_kept": sum(not n.pruned for n in right),
        "broken_lines": len(made_up),
    }


async def run(args):
    sq.settings.REASONING["OFFLINE_NOISE"] = args.noise
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-autopsy")
    out = open(args.out, "w") if args.out else None
    for cards in sq.puzzles(args.first, args.last):
        result = await sq.solve_one(tenant, args.mode, json.loads(args.params), cards)
        session = await ReasoningSession.objects.filter(tenant=tenant).order_by("-created_at").afirst()
        nodes = [n async for n in ReasoningNode.objects.filter(session=session)]
        depth = {n.id: n.depth for n in nodes}
        calls = [c async for c in LLMCall.objects.filter(session=session, outcome__in=["ok", "fallback"])]
        numbers = [int(c) for c in cards.split()]
        row = {
            "cards": cards,
            "solved": result["solved"],
            "status": session.status,
            "reason": session.termination_reason,
            "requests": len(calls),
            "by_purpose": dict(collections.Counter(c.purpose for c in calls)),
            # a proposal is charged to its parent: its level is the parent's + 1
            "by_level": dict(
                collections.Counter(
                    f"{c.purpose.split('.')[-1]}@{depth.get(c.node_id, -1) + (c.purpose.endswith('propose'))}"
                    for c in calls
                )
            ),
            "tree": tree_facts(nodes, numbers),
            "miss": None if result["solved"] else search_misses.classify(nodes, numbers),
        }
        print(json.dumps(row), flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="tot")
    parser.add_argument("--params", default='{"branching": 8, "keep": 5}')
    parser.add_argument("--first", type=int, default=901)
    parser.add_argument("--last", type=int, default=930)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--out", default="")
    asyncio.run(run(parser.parse_args()))
    sys.stdout.flush()
    os._exit(0)  # the model layer's threads would keep the process alive


if __name__ == "__main__":
    main()
