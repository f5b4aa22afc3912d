"""Benchmark: the fact checker on sentences people write (fixtures/checker_corpus.json, issue 30, section 2).

Each sentence of the corpus is checked against its case's facts; per slip kind, the slips caught (a failed finding
on the sentence) and caught at the slip's own span; on the right sentences, the false alarms. The kinds marked (*)
are checked by modules of their own (jurisdiction_rate: reasoning/facts/rules.py; constraint: constraints.py).
The held-out corpus (fixtures/checker_corpus_heldout.json), measured once blind and reported, is burned: --heldout.

Run: .venv/bin/python bench/checker_corpus.py [--heldout | --heldout2 | ... | --heldout7]
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasoning.facts.check import check  # noqa: E402
from reasoning.facts.fidelity import checker_table, score_checker  # noqa: E402

OWNED_ELSEWHERE = ()  # every kind is the checker's now: the rule table (taxes) and the constraints are among its checks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", action="store_true", help="measure on the held-out corpus (final runs only)")
    parser.add_argument("--heldout2", action="store_true", help="the second blind corpus (9 cases, 177 sentences)")
    parser.add_argument("--heldout3", action="store_true", help="the third blind corpus (11 cases, 272 sentences)")
    parser.add_argument("--heldout4", action="store_true", help="the fourth blind corpus (8 cases, 202 sentences)")
    parser.add_argument("--heldout5", action="store_true", help="the fifth blind corpus (8 cases, 215 sentences)")
    parser.add_argument("--heldout6", action="store_true", help="the sixth blind corpus (8 cases, 208 sentences)")
    parser.add_argument("--heldout7", action="store_true", help="the seventh blind corpus (8 cases, 203 sentences)")
    args = parser.parse_args()
    name = (
        "checker_corpus_heldout7.json" if args.heldout7
        else "checker_corpus_heldout6.json" if args.heldout6
        else "checker_corpus_heldout5.json" if args.heldout5
        else "checker_corpus_heldout4.json" if args.heldout4
        else "checker_corpus_heldout3.json" if args.heldout3
        else "checker_corpus_heldout2.json" if args.heldout2
        else "checker_corpus_heldout.json" if args.heldout
        else "checker_corpus.json"
    )  # fmt: skip
    corpus = json.loads((ROOT / "fixtures" / name).read_text())
    score = score_checker(corpus, check)
    print(f"fixtures/{name}: {len(corpus['sentences'])} sentences, {len(corpus['cases'])} cases\n")
    print(checker_table(score, OWNED_ELSEWHERE))


if __name__ == "__main__":
    main()
