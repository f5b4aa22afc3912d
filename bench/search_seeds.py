"""Benchmark helper: one search-quality row over several seeds of the offline model, to tell a change that moves the
figures systematically from a reshuffle of the model's draws (offline/noisy draws every mistake from a hash of the
prompt and the seed, so any change to a prompt's text redraws them all).

Run: .venv/bin/python bench/search_seeds.py --seeds 7,8,9,10,11 --first 901 --last 930 --noise 0.3 [--tree DIR]

--tree runs another tree's code (a commit unpacked with `git archive`), from that tree's own directory, through that
tree's own bench/search_quality.py: the same measure as the table, on the code it measured.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

ROWS = {
    "defaults": ("tot", {}),
    "b4k3": ("tot", {"branching": 4, "keep": 3}),
    "paper": ("tot", {"branching": 8, "keep": 5, "value_samples": 3}),
}


def one_seed(args):
    """In this process: the row's results on this tree's code, at the seed of REASONING_OFFLINE_SEED."""
    sys.path.insert(0, str(Path.cwd() / "bench"))
    import search_quality as sq  # sets Django up on this tree's code (and refuses code from elsewhere)

    rows = sq.puzzles(args.first, args.last)
    known = ROWS | {name: tuple(row) for name, row in json.loads(args.extra).items()}
    out = {}
    for name in args.rows.split(","):
        mode, params = known[name]
        results = asyncio.run(sq.ours(name, mode, params, args.noise, rows))
        out[name] = {"solved": sum(r["solved"] for r in results), "of": len(results),
                     "calls": sum(r["calls"] for r in results) / len(results)}
    print(json.dumps(out), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="7,8,9,10,11")
    parser.add_argument("--first", type=int, default=901)
    parser.add_argument("--last", type=int, default=930)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--rows", default="defaults,b4k3")
    parser.add_argument("--extra", default="{}", help='more rows, as JSON: {"name": ["tot", {"branching": 5}]}')
    parser.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one_seed(args)
    tree = Path(args.tree).resolve()
    me = Path(__file__).resolve()
    for seed in args.seeds.split(","):
        env = dict(os.environ, REASONING_OFFLINE_SEED=seed, PYTHONPATH=str(tree), BENCH_CODE_ROOT=str(tree))
        command = [sys.executable, str(me), "--one", "--first", str(args.first), "--last", str(args.last),
                   "--noise", str(args.noise), "--rows", args.rows, "--extra", args.extra]
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        result = done.stdout.strip().splitlines()[-1] if done.returncode == 0 else f"failed: {done.stderr[-500:]}"
        print(json.dumps({"tree": str(tree), "seed": int(seed)}), result, flush=True)


if __name__ == "__main__":
    main()
