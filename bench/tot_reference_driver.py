"""Runs the Tree of Thoughts reference code (princeton-nlp/tree-of-thought-llm) on Game of 24 against a model server,
as its scripts/game24/bfs.sh does: propose, value with 3 samples, keep the best 5, greedy; one task object for the
whole run (so its value cache spans puzzles, as in its run.py). Our code only drives theirs and reads its results.

Run by bench/search_quality.py in the reference's own venv (openai 0.27.7 and its other pins):
    python bench/tot_reference_driver.py --first 900 --last 1000 --out results.jsonl
with OPENAI_API_BASE naming the server. Each line of the output is one puzzle: its 5 outputs' correctness (the
reference's own test_output), the first output's (its own pick: bfs.solve returns the kept lines sorted by their
value, best first), their mean, whether any is right, and the requests the puzzle took.
"""

import argparse
import contextlib
import io
import json
import os
import urllib.request


def requests_so_far():
    """(requests answered so far, by the prompt's kind)."""
    with urllib.request.urlopen(os.environ["OPENAI_API_BASE"].rstrip("/") + "/count") as response:
        counts = json.load(response)
    return counts["requests"], counts.get("by_kind", {})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--first", type=int, default=900)
    parser.add_argument("--last", type=int, default=1000)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--cache",
        choices=["run", "puzzle"],
        default="run",
        help="the value cache's life: the whole run (as its run.py), or one puzzle (as our sessions' judgements)",
    )
    args = parser.parse_args()

    from tot.methods.bfs import solve
    from tot.tasks import get_task

    run = argparse.Namespace(
        backend="gpt-4",
        temperature=0.7,
        task="game24",
        naive_run=False,
        prompt_sample=None,
        method_generate="propose",
        method_evaluate="value",
        method_select="greedy",
        n_generate_sample=1,
        n_evaluate_sample=3,
        n_select_sample=5,
    )
    task = get_task("game24")
    with open(args.out, "w") as out:
        for idx in range(args.first, args.last):
            if args.cache == "puzzle":
                task.value_cache.clear()
            before, kinds = requests_so_far()
            with contextlib.redirect_stdout(io.StringIO()):  # the reference prints every step
                ys, _ = solve(run, task, idx, to_print=False)
            rewards = [task.test_output(idx, y)["r"] for y in ys]
            after, kinds_after = requests_so_far()
            row = {
                "idx": idx,
                "puzzle": task.get_input(idx),
                "rewards": rewards,
                "first": rewards[0] if rewards else 0.0,
                "mean": sum(rewards) / len(rewards) if rewards else 0.0,
                "any": any(rewards),
                "requests": after - before,
                "by_kind": {k: n - kinds.get(k, 0) for k, n in kinds_after.items() if n - kinds.get(k, 0)},
            }
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
