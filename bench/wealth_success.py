"""Benchmark: what "solved" is worth on a wealth problem (issue 31, §3), per strategy, on offline/noisy.

Every session of fixtures/wealth_cases.json runs through the whole engine on offline/noisy at ε (0.3), checks on. The
measure of a false figure does not come from our checker (the answers that end `solved` pass it by construction): it
comes from the model itself. The noisy model logs every slip it makes (reasoning/llm/offline/noise.py: the text before and
after); a slip is in a final answer when the answer holds the words the slip wrote (the changed words and one word
either side, found nowhere in the text before the slip). Counted:

- false figure: a slip of kind figure, label, scale, base or currency in the answer, in a figure of the case;
- rule of thumb changed: a figure slip in a number the case neither states nor derives, a parameter the answer chose
  itself ("keep 12 months of spending" made 15, "the 5 and 20 days after each event" made 40): the answer is another
  plan, not a false one, and no check can hold it to a fact. Counted apart, never hidden: a number written with a
  currency or a scale, or one the problem text states, is the case's;
- foreign rule: a jurisdiction slip (a tax rule of a place the client is not tied to) in the answer;
- broken constraint: a failed constraint check of the answer, against the session's sheet or the hand-labelled facts.

Each is counted over the sessions that ended `solved`, and given as a share of all sessions. Also: the share solved,
requests a session, and the failed lines (LATS terminals, Reflexion attempts) the checks decided.

Run: .venv/bin/python bench/wealth_success.py [--cases N] [--modes tot,lats,reflexion] [--noise 0.3] [--print-only]
"""

import argparse
import asyncio
import difflib
import os
import re
import statistics
import time
from datetime import date

from fact_fidelity import CASES, MODES, load_cases, truth  # its import sets Django up
from common import commit, machine, write_section
from slips import rule_of_thumb, words

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402

from reasoning import services  # noqa: E402
from reasoning.engine import run_session  # noqa: E402
from reasoning.facts.check import check  # noqa: E402
from reasoning.fixtures import load_rubrics  # noqa: E402
from reasoning.llm import offline  # noqa: E402
from reasoning.models import CaseFact, LLMCall, ReasoningNode, ReasoningCritique as Critique, ReasoningSession, Tenant  # noqa: E402
from reasoning.schemas import SessionIn  # noqa: E402

FALSE_FIGURE = ("figure", "label", "scale", "base", "currency")
FOREIGN_RULE = ("jurisdiction",)
SLIPS = []  # every slip the offline model made in the session running now


def log_slips():
    """The offline model's replies, each slip it makes appended to SLIPS (the replies themselves are unchanged)."""
    answer = offline.answer

    def logged(prompt, seed, noise=0.0, sample=0):
        return answer(prompt, seed, noise, sample, log=SLIPS)

    offline.answer = logged


def wrong_words(slip):
    """What a slip wrote, as it reads in the text after it: for each changed span, the span with the three words before
    it, and the span with the three words after it (a figure is told from the same figure written right elsewhere by
    its neighbours: "Roth IRA balance: USD 1.5M" is a slip where "401(k) balance: USD 1.5M" is not). Only what the text
    before the slip does not hold counts."""
    before, after = words(slip.before), words(slip.after)
    flat = " ".join(before)
    spans = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag not in ("replace", "insert") or j2 == j1:
            continue
        for fragment in (after[max(0, j1 - 3) : j2], after[j1 : j2 + 3]):
            text = " ".join(fragment).strip(".,;:()")
            if len(fragment) >= 4 and text not in flat:
                spans.append(text)
    return spans


def sentence_with(slip):
    """The sentence of the slip's text that holds its first changed words, for reading the slip where it stands."""
    flat = " ".join(words(slip.after))
    spans = wrong_words(slip)
    at = flat.find(spans[0]) if spans else -1
    if at < 0:
        return ""
    start = max(flat.rfind(". ", 0, at) + 2, 0)
    end = flat.find(". ", at + len(spans[0]))
    return flat[start : end + 1 if end >= 0 else len(flat)]


def in_answer(slip, answer):
    """Whether the slip's own words are in the answer (whitespace aside)."""
    spans = wrong_words(slip)
    flat = " ".join(words(answer))
    return any(span in flat for span in spans)


SHOW = False


async def one_session(tenant, case, mode, params, noise):
    settings.REASONING = {**settings.REASONING, "OFFLINE_NOISE": noise, "OFFLINE_LATENCY_MS": 0}
    data = SessionIn(
        problem_text=case["problem_text"],
        problem_kind=case["problem_kind"],
        mode=mode,
        model_primary="offline/noisy",
        params=params,
        budget_usd=5.0,
    )
    session = await sync_to_async(services.create_session)(tenant, data, triggered_by="bench", submit=False)
    SLIPS.clear()
    await run_session(session.id)
    session = await ReasoningSession.objects.aget(pk=session.id)
    answer = session.final_answer or ""
    sheet = [f.as_fact() async for f in CaseFact.objects.filter(session=session)]
    made = [s for s in SLIPS if s.kind in FALSE_FIGURE + FOREIGN_RULE]
    found = [s for s in made if in_answer(s, answer)] if answer else []
    constraint = [f for facts in (sheet, truth(case)) for f in check(answer, facts, final=True)] if answer else []
    nodes = [n async for n in ReasoningNode.objects.filter(session=session).values("state", "eval_reason")]
    if SHOW and session.status == "solved":
        for s in found:  # the autopsy: each slip a solved answer carries, with the words that give it away
            thumb = " (rule of thumb)" if rule_of_thumb(s, case["problem_text"]) else ""
            print(f"  {case['id']} {mode} {s.kind}{thumb}: {wrong_words(s)[:2]}", flush=True)
            print(f"    in: {sentence_with(s)}", flush=True)
    return {
        "status": session.status,
        "reason": session.termination_reason,
        "calls": await LLMCall.objects.filter(session=session).acount(),
        "false figure": any(s.kind in FALSE_FIGURE and not rule_of_thumb(s, case["problem_text"]) for s in found),
        "rule of thumb": any(rule_of_thumb(s, case["problem_text"]) for s in found),
        "foreign rule": any(s.kind in FOREIGN_RULE for s in found),
        "broken constraint": any(f.kind == "constraint" and not f.ok for f in constraint),
        "kinds": sorted({s.kind for s in found}),
        "checked failures": sum(1 for n in nodes if (n["state"] or {}).get("decided_by") == "checker"),
        "critiques": await Critique.objects.filter(session=session).acount(),
        "critiques citing checks": await Critique.objects.filter(session=session, critique__contains="check").acount(),
    }


async def measure(cases, modes, noise):
    await sync_to_async(load_rubrics)()
    tenant, _ = await Tenant.objects.aget_or_create(slug="bench-wealth-success")
    rows = []
    for name in modes:
        mode, params = MODES[name]
        started = time.perf_counter()
        runs = [await one_session(tenant, case, mode, params, noise) for case in cases]
        rows.append(summary(name, noise, runs, time.perf_counter() - started))
        print(rows[-1], flush=True)
    return rows


def summary(name, noise, runs, seconds):
    solved = [r for r in runs if r["status"] == "solved"]
    ended = {}
    for r in runs:
        ended[r["reason"] or r["status"]] = ended.get(r["reason"] or r["status"], 0) + 1
    return {
        "mode": name,
        "noise": noise,
        "sessions": len(runs),
        "solved": len(solved),
        "calls": statistics.mean(r["calls"] for r in runs),
        **{k: sum(r[k] for r in solved) for k in ("false figure", "foreign rule", "broken constraint")},
        "rule of thumb": sum(r["rule of thumb"] for r in solved),
        "solved wrong": sum(r["false figure"] or r["foreign rule"] or r["broken constraint"] for r in solved),
        "kinds": sorted({k for r in solved for k in r["kinds"]}),
        "endings": ended,
        "checked failures": statistics.mean(r["checked failures"] for r in runs),
        "critiques": statistics.mean(r["critiques"] for r in runs),
        "seconds": round(seconds),
    }


def table(rows):
    head = (
        "| strategy | solved | solved with a false figure | with a foreign rule | with a broken constraint "
        "| any of these, share of all sessions | with a rule of thumb changed (no fact to check) | requests a session "
        "| endings |\n|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        n = r["sessions"]
        endings = ", ".join(f"{v} {k}" for k, v in sorted(r["endings"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"| {r['mode']} | {r['solved']} of {n} | {r['false figure']} | {r['foreign rule']} "
            f"| {r['broken constraint']} | {r['solved wrong'] / n:.0%} | {r['rule of thumb']} | {r['calls']:.1f} "
            f"| {endings} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=0, help="a subset, spread over the kinds (0: all)")
    parser.add_argument("--modes", default="chain,tot,lats,reflexion,react,trm")
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--print-only", action="store_true", help="do not write docs/BENCHMARKS.md")
    parser.add_argument("--show", action="store_true", help="print each slip a solved answer carries")
    args = parser.parse_args()
    global SHOW
    SHOW = args.show
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    log_slips()
    cases = load_cases(args.cases or None)
    rows = asyncio.run(measure(cases, args.modes.split(","), args.noise))
    end = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = f"""## What "solved" is worth on a wealth problem (offline/noisy, ε {args.noise:g})

Command: `.venv/bin/python bench/wealth_success.py{' --cases ' + str(args.cases) if args.cases else ''} --noise {args.noise:g}`, {date.today()}, commit {commit()}.
Machine: {machine()}; load average {load} at the start, {end} at the end (`uptime`). {len(cases)} cases of
`{CASES.name}`, each mode at its defaults, checks on, 5 USD budget. A false figure or a foreign rule is a slip the model
logged itself whose words are in the answer (not our checker's finding); a broken constraint is a failed constraint
check against the session's sheet or the hand-labelled facts. A rule of thumb changed is a figure slip in a number the
case neither states nor writes as an amount (a review in 7 months for 6, a 50% stress for 30%): counted apart, as
another plan rather than a false one; no check can hold it to a fact.

{table(rows)}
"""
    print(text)
    if not args.print_only:
        write_section("wealth-success", text)


if __name__ == "__main__":
    main()
