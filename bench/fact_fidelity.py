"""Benchmark: fact fidelity on the wealth cases (fixtures/wealth_cases.json), through the whole engine.

For each case the session's sheet is read from its problem, and every final answer is checked twice: against the
session's own sheet (what the product checks) and against the case's hand-labelled true facts (what an advisor
would check). Reported per strategy, on offline/sim and on offline/noisy at ε 0 and 0.3, with `check_facts` on and
off: the share of final answers with a false or unsupported figure, a currency or a jurisdiction slip, or a listed
instrument left out; the share solved; calls per session. The chain (ToT with one thought a step) is the baseline.
Also: the reader's precision and recall against the labels, and the checker's false alarms on the exact model.

Run: make bench   (or: .venv/bin/python bench/fact_fidelity.py [--cases N] [--modes tot,chain] [--print-only])
"""

import argparse
import asyncio
import json
import os
import statistics
import time
from collections import Counter
from datetime import date

from common import ROOT, commit, machine, setup_django, write_section

setup_django()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.facts.check import check, failures  # noqa: E402
from reasoning.facts.extract import extract  # noqa: E402
from reasoning.facts.fidelity import score_extraction  # noqa: E402
from reasoning.facts.sheet import Fact  # noqa: E402
from reasoning.fixtures import load_rubrics  # noqa: E402
from reasoning.models import CaseFact, LLMCall, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402

CASES = ROOT / "fixtures" / "wealth_cases.json"
HELD_OUT = ROOT / "fixtures" / "wealth_cases_heldout.json"  # written after the reader, never tuned on
PLOT = ROOT / "docs" / "fact_fidelity.png"
# Each mode at its defaults; the chain is ToT with one thought a step and one judgement: the baseline.
MODES = {
    "chain": ("tot", {"branching": 1, "keep": 1, "value_samples": 1}),
    "tot": ("tot", {}),
    "lats": ("lats", {}),
    "reflexion": ("reflexion", {}),
    "react": ("react", {}),
    "trm": ("trm", {}),
}
MODELS = (("offline/sim", 0.0), ("offline/noisy", 0.0), ("offline/noisy", 0.3))
SLIPS = {  # what an advisor would call each failed finding
    "figure": "false figure",
    "arithmetic": "false figure",
    "label": "false figure",
    "currency": "currency slip",
    "jurisdiction": "jurisdiction slip",
    "coverage": "instrument left out",
}


def load_cases(limit=None, path=CASES):
    cases = json.loads(path.read_text())["cases"]
    if limit:  # the same number of each kind, in file order
        per_kind = Counter()
        chosen = []
        for case in cases:
            if per_kind[case["problem_kind"]] < max(1, limit // 6):
                per_kind[case["problem_kind"]] += 1
                chosen.append(case)
        cases = chosen[:limit]
    return cases


def truth(case):
    return [Fact.from_dict(f) for f in case["facts"]]


def slips(findings):
    """The kinds of slip an answer's failed findings show (each kind once)."""
    return {SLIPS[f.kind] for f in failures(findings)}


def extraction(cases):
    matched = extracted = labelled = named = 0
    for case in cases:
        score = score_extraction(extract(case["problem_text"]), truth(case))
        matched += len(score["matched"])
        extracted += len(score["matched"]) + len(score["extra"])
        labelled += len(score["matched"]) + len(score["missed"])
        named += sum(same_label(want.label, got.label) for want, got in score["matched"] if want.kind in LABELLED)
    labelled_kinds = sum(1 for case in cases for f in case["facts"] if f["kind"] in LABELLED)
    return {
        "precision": matched / extracted,
        "recall": matched / labelled,
        "facts": labelled,
        "labels": named / labelled_kinds,
    }


LABELLED = ("amount", "percent")  # the kinds whose label says which of several figures it is
STOP = {"the", "a", "an", "of", "in", "to", "her", "his", "their", "its", "on", "for", "and", "now", "total", "value"}


def same_label(want, got):
    """A label read right: it shares a content word with the hand label (stems of five letters)."""
    words = lambda label: {w[:5] for w in label.lower().replace("'s", "").split() if w not in STOP}  # noqa: E731
    return bool(words(want) & words(got))


async def one_session(tenant, case, mode, params, model, noise, check_facts):
    with_settings = {**settings.REASONING, "OFFLINE_NOISE": noise, "OFFLINE_LATENCY_MS": 0}
    settings.REASONING = with_settings
    data = SessionIn(
        problem_text=case["problem_text"],
        problem_kind=case["problem_kind"],
        mode=mode,
        model_primary=model,
        params={**params, "check_facts": check_facts},
        budget_usd=5.0,
    )
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    sheet = [f.as_fact() async for f in CaseFact.objects.filter(session=session)]
    answer = session.final_answer or ""
    return {
        "status": session.status,
        "calls": await LLMCall.objects.filter(session=session).acount(),
        "sheet": slips(check(answer, sheet, final=True)) if answer else set(),
        "truth": slips(check(answer, truth(case), final=True)) if answer else set(),
        "findings": len(failures(check(answer, sheet, final=True))) if answer else 0,
    }


async def measure(cases, modes):
    await sync_to_async(load_rubrics)()
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-facts")
    rows = []
    for name in modes:
        mode, params = MODES[name]
        for model, noise in MODELS:
            for on in (True, False):
                started = time.perf_counter()
                runs = [await one_session(tenant, case, mode, params, model, noise, on) for case in cases]
                rows.append(summary(name, model, noise, on, runs, time.perf_counter() - started))
                print(rows[-1], flush=True)
    return rows


def summary(name, model, noise, on, runs, seconds):
    def share(key, slip=None):
        return sum(1 for r in runs if (slip in r[key] if slip else r[key])) / len(runs)

    return {
        "mode": name,
        "model": model,
        "noise": noise,
        "checks": on,
        "sessions": len(runs),
        "solved": sum(r["status"] == "solved" for r in runs) / len(runs),
        "calls": statistics.mean(r["calls"] for r in runs),
        **{f"sheet {s}": share("sheet", s) for s in sorted(set(SLIPS.values()))},
        **{f"truth {s}": share("truth", s) for s in sorted(set(SLIPS.values()))},
        "any slip (sheet)": share("sheet"),
        "any slip (truth)": share("truth"),
        "findings": sum(r["findings"] for r in runs),
        "seconds": seconds,
    }


def table(rows):
    head = (
        "| mode | model | ε | checks | solved | calls | false figure | currency | jurisdiction | instrument left out "
        "| any (sheet) | any (true facts) |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['mode']} | {r['model']} | {r['noise']:g} | {'on' if r['checks'] else 'off'} | {r['solved']:.0%} "
            f"| {r['calls']:.1f} | {r['sheet false figure']:.0%} | {r['sheet currency slip']:.0%} "
            f"| {r['sheet jurisdiction slip']:.0%} | {r['sheet instrument left out']:.0%} "
            f"| {r['any slip (sheet)']:.0%} | {r['any slip (truth)']:.0%} |"
        )
    return "\n".join(lines)


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    noisy = [r for r in rows if r["model"] == "offline/noisy" and r["noise"] > 0]
    modes = list(dict.fromkeys(r["mode"] for r in noisy))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.38
    for i, on in enumerate((False, True)):
        values = [next(r["any slip (sheet)"] for r in noisy if r["mode"] == m and r["checks"] == on) for m in modes]
        ax.bar([x + (i - 0.5) * width for x in range(len(modes))], values, width, label=f"checks {'on' if on else 'off'}")
    ax.set_xticks(range(len(modes)), modes)
    ax.set_ylabel("answers with a slip")
    ax.set_title("Final answers with a false figure, currency, jurisdiction or coverage slip (offline/noisy, ε 0.3)")
    ax.title.set_fontsize(9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)


def report(rows, reading, held, args, load):
    calls = {
        m: (
            next(r["calls"] for r in rows if r["mode"] == m and r["noise"] > 0 and r["checks"]),
            next(r["calls"] for r in rows if r["mode"] == m and r["noise"] > 0 and not r["checks"]),
        )
        for m in dict.fromkeys(r["mode"] for r in rows)
    }
    ratio = ", ".join(f"{m} {on / off:.2f}×" for m, (on, off) in calls.items())
    sim = [r for r in rows if r["model"] == "offline/sim"]
    caught = [r for r in rows if r["model"] == "offline/noisy" and r["noise"] > 0 and r["checks"]]
    return f"""## Fact fidelity on the wealth cases

Command: `make bench` (`.venv/bin/python bench/fact_fidelity.py{' --cases ' + str(args.cases) if args.cases else ''}`), {date.today()}, commit {commit()}.
Machine: {machine()}; load average {load} (`uptime`) when it started. {len(json.loads(CASES.read_text())['cases'])} cases in
`fixtures/wealth_cases.json`; each session on its mode's defaults, 5 USD budget, no added latency.

**Reading the facts** (the deterministic reader against the hand labels; goals: precision ≥ 0.98, recall ≥ 0.95):

| cases | facts | precision | recall | amounts and percents labelled right |
|---|---|---|---|---|
| the 60 benchmark cases (the reader was written against them: in-sample) | {reading['facts']} | {reading['precision']:.3f} | {reading['recall']:.3f} | {reading['labels']:.0%} |
| 18 held-out cases, labelled after the reader was written and never tuned on | {held['facts']} | {held['precision']:.3f} | {held['recall']:.3f} | {held['labels']:.0%} |

A label "read right" shares a content word with the hand label. A label read wrong is a slip the checker cannot see
(it checks against the sheet it was given): it shows in the last column of the table below, where each answer is
checked against the hand-labelled facts instead.

Each final answer is checked against the session's own sheet (the columns) and against the hand-labelled true facts
(the last column). "Solved" counts sessions whose answer passed its contract and, with checks on, every fact check.

{table(rows)}

![Answers with a slip, checks off and on](fact_fidelity.png)

Goals at ε 0.3 with checks on:
- 0 false figures in final answers that the checker can catch: {', '.join(f"{r['mode']} {r['sheet false figure']:.0%}" for r in caught)}.
- At most 1.2× the calls with checks off: {ratio}.
- On offline/sim, 0 findings on every case: {', '.join(f"{r['mode']} {r['findings']} ({'on' if r['checks'] else 'off'})" for r in sim)}.
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=0, help="a subset, spread over the kinds (0: all)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--print-only", action="store_true", help="do not write docs/BENCHMARKS.md")
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cases = load_cases(args.cases or None)
    reading, held = extraction(load_cases()), extraction(load_cases(path=HELD_OUT))
    rows = asyncio.run(measure(cases, args.modes.split(",")))
    text = report(rows, reading, held, args, load)
    print(text)
    if not args.print_only:
        plot(rows)
        write_section("fact-fidelity", text)


if __name__ == "__main__":
    main()
