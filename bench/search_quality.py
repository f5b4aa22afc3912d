"""Benchmark: search quality on Game of 24 (rows 901-1000, the Tree of Thoughts paper's test puzzles) with the imperfect
offline model (offline/noisy) at several noise levels, every strategy that can play it beside a single chain, and the
Tree of Thoughts reference code driven against the same model, noise and seed.

Success is the session's one final answer: a correct `Answer: ... = 24` on the cards given (game24.solves). Calls are
the model requests a puzzle took (ledger rows answered; several samples of one judgement travel in one request, as
the reference's n=3 does; a judgement an equal state shares costs none). The reference reports its own measures over
its 5 outputs: its own one answer (the first output: its kept lines come sorted by value), their mean, and any-of-5
(an oracle's pick among five).

Run: make bench   (or: .venv/bin/python bench/search_quality.py [--first 901 --last 1000 --noise 0,0.1,0.3,0.5])

The reference code: a checkout of github:princeton-nlp/tree-of-thought-llm (its src/ folder) named by
REASONING_TOT_REFERENCE, else var/tot-reference/src when present, else the same code as PyPI's tree-of-thoughts-llm
0.1.0; it runs in its own venv (var/tot-reference-venv, with its own pins: openai 0.27.7 and the rest), never
committed here. Without a way to build that venv the reference rows are left out, saying why.
"""

import argparse
import asyncio
import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from common import ROOT, commit, machine, setup_django, write_section

setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.llm import game24  # noqa: E402
from reasoning.models import LLMCall, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402

B4K3 = "ToT, b=4, keep 3"  # the row LATS's goal is measured against
CHECKED = "ToT, the paper's settings, answers scored by the task's checker (as LATS)"
# The paper's settings: its width, one answer a line (its chain-of-thought step) and a step judged by the numbers it
# says are left (its value prompt), our judgements shared by the firm's sessions as its value cache is by its run.
PAPER = {"branching": 8, "keep": 5, "value_samples": 3, "answer_width": 1, "value_by": "claim"}
# (label, mode, params): the strategies that can play Game of 24, at the paper's settings and at our defaults.
RUNS = [
    (
        "ToT, the paper's settings (b=8, keep 5, 3 values, one answer a line, steps judged by their claim)",
        "tot",
        PAPER,
    ),
    (
        "ToT, the paper's settings with three answers a line",
        "tot",
        PAPER | {"answer_width": 3},
    ),
    (
        CHECKED,
        "tot",
        PAPER | {"answer_checker": True},
    ),
    (
        "ToT, the paper's settings, categorical (sure / likely / impossible)",
        "tot",
        PAPER | {"value_mode": "categorical"},
    ),
    ("ToT, our defaults (b=3, keep 2, 3 values)", "tot", {}),
    (B4K3, "tot", {"branching": 4, "keep": 3}),
    ("LATS, defaults", "lats", {}),
    ("Reflexion, 4 steps an attempt", "reflexion", {"steps": 4}),
    ("TRM, defaults", "trm", {}),
    ("Chain (one thought a step: CoT)", "tot", {"branching": 1, "keep": 1, "value_samples": 1}),
]
REFERENCE = "Tree of Thoughts reference code (b=5 kept, 3 values)"
REFERENCE_VENV = ROOT / "var" / "tot-reference-venv"
REFERENCE_PIN = "tree-of-thoughts-llm==0.1.0"  # the PyPI release of the same code, for its pins (and as a fallback)
PLOT = ROOT / "docs" / "search_quality.png"


def puzzles(first, last):
    with open(ROOT / "fixtures" / "game24.csv") as f:
        return [row["Puzzles"] for row in csv.DictReader(f) if first <= int(row["Rank"]) <= last]


# ---- ours ------------------------------------------------------------------------------------------------------


async def solve_one(tenant, mode, params, cards):
    problem = f"Game of 24: use each of the numbers {cards} exactly once with + - * / to make 24."
    data = SessionIn(problem_text=problem, mode=mode, params=params, budget_usd=5.0, model_primary="offline/noisy")
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    calls = await LLMCall.objects.filter(session_id=session.id, outcome__in=["ok", "fallback"]).acount()
    solved = game24.solves(session.final_answer, [int(n) for n in cards.split()])
    return {"solved": solved, "calls": calls, "usd": session.budget_used_usd, "status": session.status}


async def ours(label, mode, params, noise, rows):
    settings.REASONING["OFFLINE_NOISE"] = noise
    # A firm of its own for each row and noise: the firm's judgements serve its later sessions (as the reference's
    # value cache serves its run), never another row's, nor another noise level's (the model's name does not say it).
    slug = "bench-quality-" + hashlib.sha256(f"{label} {mode} {params} {noise}".encode()).hexdigest()[:12]
    tenant, _ = await Tenant.objects.aget_or_create(slug=slug)
    return [await solve_one(tenant, mode, params, cards) for cards in rows]


# ---- the reference ---------------------------------------------------------------------------------------------


def reference_source():
    """(PYTHONPATH for the reference's code, where it comes from)."""
    named = os.environ.get("REASONING_TOT_REFERENCE")
    if named:
        return named, f"the checkout at {named}"
    local = ROOT / "var" / "tot-reference" / "src"
    if (local / "tot").exists():
        return str(local), "a fetched checkout of princeton-nlp/tree-of-thought-llm (var/tot-reference)"
    return "", f"PyPI's {REFERENCE_PIN} (the same methods/bfs.py, tasks and prompts as the repository)"


def reference_venv():
    """The reference's venv, built once with its own pins; None (and why) when it cannot be built."""
    python = REFERENCE_VENV / "bin" / "python"
    if not python.exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(REFERENCE_VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", REFERENCE_PIN], check=True)
        except (subprocess.CalledProcessError, OSError) as error:
            return None, f"its venv could not be built ({error})"
    return python, ""


def reference(noise, first, last, cache="run"):
    """The reference's per-puzzle results at this noise, or (None, why); `cache` "puzzle" clears its value cache
    before each puzzle, as our judgements are shared within one session only."""
    from reference_model import ReferenceModel

    python, why = reference_venv()
    if python is None:
        return None, why
    path, _ = reference_source()
    out = Path(tempfile.mkdtemp(prefix="tot-reference-")) / "results.jsonl"
    with ReferenceModel(noise, seed=settings.REASONING["OFFLINE_SEED"]) as model:
        env = dict(os.environ, OPENAI_API_BASE=model.base_url, OPENAI_API_KEY="dummy", PYTHONPATH=path)
        driver = [str(python), str(ROOT / "bench" / "tot_reference_driver.py"), "--out", str(out), "--cache", cache]
        # The reference indexes its own 24.csv from 0: rank r is index r - 1.
        subprocess.run([*driver, "--first", str(first - 1), "--last", str(last)], env=env, check=True)
    return [json.loads(line) for line in out.read_text().splitlines()], ""


# ---- the report ------------------------------------------------------------------------------------------------


def summary(results):
    solved = sum(r["solved"] for r in results)
    calls = [r["calls"] for r in results]
    usd = sum(r["usd"] for r in results)
    return {
        "success": solved / len(results),
        "calls": statistics.mean(calls),
        "usd": usd / len(results),
        "usd_per_solved": usd / solved if solved else None,
    }


def reference_summary(rows):
    return {
        "first": statistics.mean(r["first"] for r in rows),
        "mean": statistics.mean(r["mean"] for r in rows),
        "any": statistics.mean(r["any"] for r in rows),
        "calls": statistics.mean(r["requests"] for r in rows),
    }


def table(noises, measured, referenced):
    lines = ["| strategy | " + " | ".join(f"ε = {n:g}" for n in noises) + " |", "|---|" + "---|" * len(noises)]
    for label, by_noise in measured.items():
        cells = []
        for n in noises:
            s = by_noise[n]
            per_solved = f"{s['usd_per_solved']:.4f}" if s["usd_per_solved"] else "–"
            cells.append(f"{s['success']:.0%} · {s['calls']:.1f} calls · {s['usd']:.4f} USD ({per_solved} a solve)")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if referenced:
        cells = [
            f"its one answer {r['first']:.0%}; any of 5 {r['any']:.0%}, mean {r['mean']:.0%} · "
            f"{r['calls']:.1f} requests"
            for r in referenced.values()
        ]
        lines.append(f"| {REFERENCE} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


GOAL_NOISE = 0.3


def goals(measured, referenced, noise=GOAL_NOISE):
    """The issue's goals at this noise, each beside its result: lines of markdown."""
    if noise not in referenced or not any(noise in by for by in measured.values()):
        return []
    ref = referenced[noise]
    tots = {label: by[noise] for label, by in measured.items() if label.startswith("ToT") and noise in by}
    within = {label: s for label, s in tots.items() if s["calls"] <= ref["calls"]}
    best_label, best = max(within.items(), key=lambda kv: kv[1]["success"], default=(None, None))
    lats = next((by[noise] for label, by in measured.items() if label.startswith("LATS") and noise in by), None)
    b4k3 = tots.get(B4K3)
    lines = [
        f"Goals at ε = {noise:g} (the reference: its one answer {ref['first']:.0%}, any of 5 {ref['any']:.0%}, mean "
        f"{ref['mean']:.0%}, {ref['calls']:.1f} requests a puzzle):",
        "",
    ]
    if best is not None:
        met = "met" if best["success"] >= ref["any"] else "missed"
        lines.append(
            f"- Our ToT's one answer at no more calls than the reference, against its best of five: {best_label}, "
            f"{best['success']:.0%} at {best['calls']:.1f} calls against {ref['any']:.0%} any of 5 at "
            f"{ref['calls']:.1f}: **{met}** (against its own one answer, {ref['first']:.0%}: "
            f"{'met' if best['success'] >= ref['first'] else 'missed'})."
        )
    above = [(label, s) for label, s in tots.items() if s["success"] >= ref["any"]]
    if above:
        label, s = min(above, key=lambda kv: kv[1]["calls"])
        lines.append(
            f"- The cheapest ToT that reaches the reference's any of 5: {label}, {s['success']:.0%} at "
            f"{s['calls']:.1f} calls."
        )
    if lats is not None and b4k3 is not None:
        met = "met" if lats["success"] >= b4k3["success"] and lats["calls"] <= b4k3["calls"] else "missed"
        lines.append(
            f"- LATS against ToT b=4 keep 3, in success at no more calls: {lats['success']:.0%} at "
            f"{lats['calls']:.1f} calls, against {b4k3['success']:.0%} at {b4k3['calls']:.1f}: **{met}**."
        )
    return lines


def plot(noises, measured, referenced, path=PLOT):
    """Success against model calls per puzzle, one line per strategy through its noise levels, the reference marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(10, 7.5), dpi=110)
    for label, by_noise in measured.items():
        xs = [by_noise[n]["calls"] for n in noises]
        ys = [100 * by_noise[n]["success"] for n in noises]
        axes.plot(xs, ys, marker="o", label=label)
        for n, x, y in zip(noises, xs, ys, strict=True):
            axes.annotate(f"ε={n:g}", (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
    if referenced:
        xs = [r["calls"] for r in referenced.values()]
        axes.plot(
            xs, [100 * r["any"] for r in referenced.values()], "k*--", markersize=11, label=REFERENCE + ": any of 5"
        )
        axes.plot(
            xs, [100 * r["mean"] for r in referenced.values()], "kx:", markersize=9, label=REFERENCE + ": mean of 5"
        )
        firsts = [100 * r["first"] for r in referenced.values()]
        axes.plot(xs, firsts, "ks-.", markersize=7, label=REFERENCE + ": its one answer")
        for n, x, r in zip(noises, xs, referenced.values(), strict=True):
            axes.annotate(f"ε={n:g}", (x, 100 * r["any"]), textcoords="offset points", xytext=(4, 3), fontsize=7)
    axes.set_xscale("log")
    axes.set_xlabel("model calls per puzzle (requests; log scale)")
    axes.set_ylabel("puzzles solved (%)")
    axes.set_ylim(-3, 103)
    axes.set_title("Game of 24, rows 901-1000, offline/noisy at noise ε")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def load():
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--first", type=int, default=901)
    parser.add_argument("--last", type=int, default=1000)
    parser.add_argument("--noise", default="0,0.1,0.3,0.5", help="noise levels, comma-separated")
    parser.add_argument("--no-reference", action="store_true", help="leave the reference code out")
    parser.add_argument(
        "--reference-cache",
        choices=["run", "puzzle"],
        default="run",
        help="the reference's value cache: the whole run, as its run.py (the table's), or cleared before each puzzle",
    )
    parser.add_argument("--print-only", action="store_true", help="print, do not write docs/BENCHMARKS.md")
    args = parser.parse_args()
    noises = [float(n) for n in args.noise.split(",")]
    rows = puzzles(args.first, args.last)
    started, load_before = time.perf_counter(), load()

    measured = {}
    for label, mode, params in RUNS:
        measured[label] = {}
        for noise in noises:
            measured[label][noise] = summary(asyncio.run(ours(label, mode, params, noise, rows)))
            print(f"{label} ε={noise:g}: {measured[label][noise]}", flush=True)

    referenced, reference_note = {}, ""
    if not args.no_reference:
        for noise in noises:
            results, why = reference(noise, args.first, args.last, cache=args.reference_cache)
            if results is None:
                referenced, reference_note = {}, f"The reference code was not run: {why}."
                break
            referenced[noise] = reference_summary(results)
            print(f"{REFERENCE} ε={noise:g}: {referenced[noise]}", flush=True)
        reference_note = reference_note or f"The reference code came from {reference_source()[1]}."

    report = f"""## Search quality: Game of 24 on an imperfect model (rows {args.first}-{args.last} of fixtures/game24.csv)

Command: `make bench` (`.venv/bin/python bench/search_quality.py --first {args.first} --last {args.last} --noise {args.noise}`), {date.today()}, commit {commit()}; {time.perf_counter() - started:.0f} s.
Machine: {machine()}; load average (1, 5, 15 min) {load_before} at the start, {load()} at the end (`uptime`).

The model is `offline/noisy` (reasoning/llm/offline/puzzle.py), seed {settings.REASONING["OFFLINE_SEED"]}: exact at ε = 0; at ε each chance to err is
taken on its own: proposals in random order, a step with a number not on the board, a judgement that is a guess
(each sample on its own), a wrong answer line. Answers come from the line's own board: no rescue. Each cell: the
share of puzzles whose one final answer is a correct `... = 24` on the cards, model calls (requests) per puzzle,
USD per puzzle at the offline price (1 / 4 USD per million tokens in / out) and per solved puzzle. The reference
row is the reference's own measures over its 5 outputs, on the same model behind a loopback OpenAI-compatible
server answering its prompts (bench/reference_model.py); its requests are counted by that server. {reference_note}

Like for like: every strategy's answer line is written by the same noisy `answers()` (LATS's too: its line is
complete only with its answer line), and our judges, like the reference's value prompt, see only the state a step
leaves wherever the task declares one (the numbers left; an answer line against the cards): a step that made up a
number leaves a state that looks reachable, so no judge here sees that mistake until the answer's arithmetic fails.
Each equal state is judged once per session (the reference's cache lives for the whole run, across puzzles). LATS
takes the answer's arithmetic as its environment's reward (the task's checker), as the LATS paper takes HotpotQA's
and HumanEval's; ToT, like the Tree of Thoughts paper, judges answers with the model, and once more with the checker.
**Rows with a checker in the search: LATS and "{CHECKED}"; every other row, and the reference, judge with the model.**

{table(noises, measured, referenced)}

![success against model calls](search_quality.png)

{chr(10).join(goals(measured, referenced))}
"""
    if args.print_only:
        print(report)
        return
    plot(noises, measured, referenced)
    write_section("search_quality", report)


if __name__ == "__main__":
    main()
