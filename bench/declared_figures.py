"""Benchmark: what declared figures buy the fact checker (issue 34, section 1): false figures caught with the
figures a model declares (each derivation computed exactly) against the prose alone, and the false alarms of each.

1. offline/noisy: every strategy's prompts on fixtures/wealth_cases.json (tests/llm/offline_drive.py), at noise 0.3
   over several seeds; each step or answer a slip changed is checked twice, on its prose alone and with the figures
   its reply declared (the slip carried into them, as noise.py makes it); the texts no slip touched count the false
   alarms.
2. The hand-written corpus: the sentences of fixtures/checker_corpus.json that fixtures/checker_corpus_figures.json
   declares figures for (two cases, written as a model would), checked on their prose alone and with those figures.

Run: .venv/bin/python bench/declared_figures.py [--seeds 3]
"""

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasoning.facts.check import check, failures  # noqa: E402
from reasoning.facts.sheet import Fact  # noqa: E402
from tests.llm.offline_drive import CASES, Driver, facts_of  # noqa: E402

FIGURE_SLIPS = ("figure", "label", "scale", "base", "currency")  # the slips of a figure (noise.py)


class Declaring(Driver):
    """The driver, keeping the figures each text was declared with."""

    def ask(self, contract, **fields):
        self.last = super().ask(contract, **fields)
        return self.last

    def keep(self, contract, final, text, chance=True):
        super().keep(contract, final, text, chance)
        self.texts[-1].figures = _figures_of(self.last, text)
        self.texts[-1].slip = next((s.kind for s in self.replies[-1].slips if s.after == text), None)


def _figures_of(parsed, text):
    data = parsed.model_dump()
    items = [*(data.get("thoughts") or []), *(data.get("steps") or []), data]
    for item in items:
        if text == item.get("thought") and "action" in item:
            return []  # a ReAct step's figures are its answer's, counted with the answer
        if text in (item.get("thought"), item.get("answer")) or text in str(item.get("action", "")):
            return item.get("figures") or []
    return []


def noisy(seeds):
    rows = collections.defaultdict(lambda: {"made": 0, "prose": 0, "declared": 0})
    right = {"texts": 0, "prose": 0, "declared": 0}
    for case in CASES:
        facts = facts_of(case)
        for seed in range(seeds):
            driver = Declaring(case["problem_text"], case["problem_kind"], facts, seed=seed, noise=0.3)
            for run in (driver.tot, driver.lats, driver.reflexion, driver.trm, driver.react):
                run()
            for t in driver.texts:
                if not hasattr(t, "figures"):
                    continue
                prose = bool(failures(check(t.text, facts, final=t.final)))
                declared = bool(failures(check(t.text, facts, final=t.final, figures=t.figures)))
                if t.slip is None:
                    right["texts"] += 1
                    right["prose"] += prose
                    right["declared"] += declared
                elif t.slip in FIGURE_SLIPS:
                    row = rows[t.slip]
                    row["made"] += 1
                    row["prose"] += prose
                    row["declared"] += declared
    return dict(rows), right


def corpus():
    data = json.loads((ROOT / "fixtures" / "checker_corpus.json").read_text())
    declared = json.loads((ROOT / "fixtures" / "checker_corpus_figures.json").read_text())["figures"]
    facts = {c["id"]: [Fact.from_dict(f) for f in c["facts"]] for c in data["cases"]}
    rows = collections.defaultdict(lambda: {"made": 0, "prose": 0, "declared": 0})
    right = {"texts": 0, "prose": 0, "declared": 0, "alarms": []}
    for s in data["sentences"]:
        if s["id"] not in declared:
            continue
        sheet = facts[s["case"]]
        prose = bool(failures(check(s["text"], sheet, final=s["final"])))
        with_figures = bool(failures(check(s["text"], sheet, final=s["final"], figures=declared[s["id"]])))
        if not s["slip"]:
            right["texts"] += 1
            right["prose"] += prose
            right["declared"] += with_figures
            right["alarms"] += [s["id"]] if with_figures else []
            continue
        row = rows[s["slip"]]
        row["made"] += 1
        row["prose"] += prose
        row["declared"] += with_figures
    return dict(rows), right


def table(rows, right, what):
    lines = [f"| {what} | slips | caught on the prose alone | caught with declared figures |", "|---|---:|---:|---:|"]
    total = {"made": 0, "prose": 0, "declared": 0}
    for kind, row in sorted(rows.items()):
        lines.append(f"| {kind} | {row['made']} | {row['prose']} | {row['declared']} |")
        total = {k: total[k] + row[k] for k in total}
    lines.append(f"| **all** | {total['made']} | {total['prose']} | {total['declared']} |")
    lines.append(f"| false alarms on {right['texts']} texts without a slip | | {right['prose']} | {right['declared']} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows, right = corpus()
    print("fixtures/checker_corpus.json, the sentences fixtures/checker_corpus_figures.json declares figures for:\n")
    print(table(rows, right, "corpus slip kind"))
    if right["alarms"]:
        print(f"\nfalse alarms with declared figures: {', '.join(right['alarms'])}")
    rows, right = noisy(args.seeds)
    print(f"\noffline/noisy at 0.3, fixtures/wealth_cases.json, every strategy, seeds 0-{args.seeds - 1}:\n")
    print(table(rows, right, "noise.py slip kind"))


if __name__ == "__main__":
    main()
