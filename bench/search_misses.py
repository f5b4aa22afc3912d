"""Benchmark helper: why a search misses, read off its trees. One row of bench/search_quality.py is run on the offline
puzzle model, and each puzzle it failed is classified by a walk of its stored tree (the board each line leaves, by
the rules); with --reuse, how many judged nodes took the judgement of an equal state, level by level.

Run: .venv/bin/python bench/search_misses.py --mode tot --params '{"branching": 4, "keep": 3}' [--first 901
--last 1000 --noise 0.3 --reuse]
"""

import argparse
import asyncio
import collections
import json
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_quality as sq  # noqa: E402  (sets Django up on this tree's code)

from reasoning.facts.case import CaseCheck  # noqa: E402
from reasoning.llm import game24  # noqa: E402
from reasoning.models import ReasoningNode, ReasoningSession, Tenant  # noqa: E402


def reachable(state):
    if not state or not state.startswith("left: "):
        return False
    return game24.reachable([(Fraction(v), v) for v in state[6:].split()])


def board_reader(nodes, cards):
    """state(node): the board a node's line leaves (its steps read by the task's rules), None for the root or a line
    that breaks them."""
    case, by_id = CaseCheck(puzzle=cards), {n.id: n for n in nodes}

    def state(node):
        line = []
        while node.parent_id:
            line.append(node.thought)
            node = by_id[node.parent_id]
        line.reverse()
        return case.state_of(line[-1], line[:-1]) if line else None

    return state


def classify(nodes, cards):
    """Where the line to 24 was lost, from the first place it could have been."""
    state = board_reader(nodes, cards)

    if game24.solve(game24.board(cards)) is None:
        return "no solution exists"
    if any(game24.is_answer(n.thought) and game24.check_answer(n.thought, cards)[0] for n in nodes):
        return "a right answer was in the tree, another chosen"
    places = (
        ([n for n in nodes if state(n) == "left: 24"], "a line reached 24: no right answer under it",
         "a line reached 24 and left the beam"),
        ([n for n in nodes if n.depth >= 2 and reachable(state(n))], "a reachable pair kept, never finished",
         "a reachable pair left the beam"),
        ([n for n in nodes if n.depth == 1 and reachable(state(n))], "a reachable first step kept, nothing "
         "reachable under it", "a reachable first step left the beam"),
    )  # fmt: skip
    for found, kept, lost in places:
        if found:
            return kept if any(not n.pruned for n in found) else lost
    return "no reachable first step proposed"


async def run(args):
    sq.settings.REASONING["OFFLINE_NOISE"] = args.noise
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-misses")
    misses, reused, judged, solved, calls = collections.Counter(), collections.Counter(), collections.Counter(), 0, 0
    iterations = collections.Counter()  # LATS: the iterations each solve took (the root's visits)
    rows = sq.puzzles(args.first, args.last)
    for cards in rows:
        result = await sq.solve_one(tenant, args.mode, json.loads(args.params), cards)
        solved, calls = solved + result["solved"], calls + result["calls"]
        session = await ReasoningSession.objects.filter(tenant=tenant).order_by("-created_at").afirst()
        nodes = [n async for n in ReasoningNode.objects.filter(session=session)]
        for n in nodes:
            judged[n.depth] += n.depth > 0 and n.eval_score is not None
            reused[n.depth] += bool(n.state.get("reused"))
        if not result["solved"]:
            misses[classify(nodes, [int(c) for c in cards.split()])] += 1
        elif args.mode == "lats":
            iterations[next(n.visit_count for n in nodes if n.depth == 0)] += 1
    out = {"solved": solved, "of": len(rows), "calls": round(calls / len(rows), 2), "misses": dict(misses)}
    if iterations:
        out["solves by the iterations they took"] = dict(sorted(iterations.items()))
    if args.reuse:
        out["per puzzle, by level"] = {
            "judged": {d: judged[d] / len(rows) for d in sorted(judged) if d},
            "reused": {d: reused[d] / len(rows) for d in sorted(reused) if d},
        }
    print(json.dumps(out, indent=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="tot")
    parser.add_argument("--params", default="{}")
    parser.add_argument("--first", type=int, default=901)
    parser.add_argument("--last", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--reuse", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
