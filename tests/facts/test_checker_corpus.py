"""The checker on sentences people write (fixtures/checker_corpus.json, written blind to the checker: issue 30,
section 2). Every sentence is checked against its case's facts; per slip kind, a slip is caught when a failed finding
overlaps its sentence; on right sentences, any failed finding is a false alarm. The table prints with -s, and
bench/checker_corpus.py prints it as Markdown. Every kind is the checker's (the rule table and the constraints are
among its checks). The held-out corpus, measured once and reported, is a test set now too."""

import functools
import json
from pathlib import Path

import pytest

from reasoning.facts.check import check
from reasoning.facts.fidelity import checker_table, score_checker

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "checker_corpus.json"
# Written blind beside the dev corpus and measured once (issue 30); burned since, so it is a test set like the dev one.
HELDOUT = CORPUS.with_name("checker_corpus_heldout.json")
# Slips caught per kind, what the checker reaches (137 of 151 on the dev corpus, 37 of 39 on the held-out one); the
# goal is 95% on any new set. Two remainders went unverified when an unplaced figure stopped failing by itself
# (fr-ara-heirs-12, us-tx-business-sale-13: the result's operands are not written); a wrong base was gained.
FLOORS = {
    "constraint": 20, "dropped_scale": 10, "fraction": 11, "inverted_rate": 10, "jurisdiction": 15,
    "jurisdiction_rate": 14, "mislabel": 8, "mixed_currency": 8, "product": 11, "remainder": 10, "wrong_base": 10,
    "wrong_figure": 10,
}  # fmt: skip
HELDOUT_FLOOR = 37
# A second blind corpus (9 new cases, 177 sentences), written by someone who never read the checker, and measured once
# after the checker's second pass (2026-12-07): 54 of 95 slips caught, 10 false alarms. Burned since; it only moves
# one way here: no fewer catches, and no right sentence flagged that was not flagged then.
HELDOUT2 = CORPUS.with_name("checker_corpus_heldout2.json")
# 54 when measured; the constraints and the rule table since catch every slip of theirs (71), and the figures'
# checks the products, conversions, remainders and currencies written in words (86)
# (86); 84 since an unplaced figure fails only as a result the sentence derives: at-7-rebalancing-17 and
# de-he-business-sale-18 state a remainder after a change whose operands they do not write, now unverified.
HELDOUT2_FLOOR = 84
HELDOUT2_KNOWN_ALARMS = set()  # the figures' false alarms are gone (derived in words, the law's, bare thousands)
# A third blind corpus (11 new cases, 272 sentences), written while the checker's third pass was under way by someone
# who never read the checker, and measured once after it (2026-12-07): 85 of 139 slips caught (83 before the pass),
# 33 false alarms (35 before). What the first two passes learnt did not carry over; it is the honest figure, and a
# ratchet from here.
HELDOUT3 = CORPUS.with_name("checker_corpus_heldout3.json")
# Since an unplaced figure fails only as a result the sentence derives (33 false alarms to 9): at-5-14 (its operand
# is unplaced), de-be-house-gift-17 (now a proposal), it-mi-como-house-21, us-fl-naples-slat-20 and
# us-ma-cambridge-concentrated-23 (no cue, no written operand) went unverified; the law's table and bands, a share of
# the item the sentence names, and 'takes ... down to' caught de-be-house-gift-16, fr-idf-paris-ifi-gifts-16,
# gb-wls-cardiff-downsize-20, us-fl-naples-slat-17 and it-mi-como-house-18: 85 still.
HELDOUT3_FLOOR = 121  # with pass four's regimes, horizons, rates, shares and bases merged beside it (both studied it)
# Its nine false alarms are gone (pass eight: a colon's label is its expression's, "on X" is a base, a part of a
# position is no weight, a difference written before a figure is no restatement).
HELDOUT3_KNOWN_ALARMS = set()

# A fourth blind corpus (8 new cases, 202 sentences), written during pass four by someone who never read the checker
# and measured once after it (2026-12-07): 51 of 105 slips caught and 14 false alarms (c911623: 56 and 21). The
# studied corpora rose and this one did not: kept as a ratchet, and as the figure to beat.
HELDOUT4 = CORPUS.with_name("checker_corpus_heldout4.json")
HELDOUT4_FLOOR = 82  # 51 when measured; pass eight: the law's shares in words, parts of a whole, conversions turned, remainders
HELDOUT4_KNOWN_ALARMS = set()  # 14 when measured; pass eight cleared the last five (people, horizons, the law)

# A fifth blind corpus (8 new cases, 215 sentences; Lucerne, Lugano, Munich, Graz, Bologna, Edinburgh, Seattle,
# Denver), written during pass eight by someone who never read the checker, measured once on the code before the
# pass and after it (2026-12-07): 54 of 104 slips caught and 15 false alarms both times. What pass eight learnt from
# the fourth did not carry over. A ratchet from here.
HELDOUT5 = CORPUS.with_name("checker_corpus_heldout5.json")
HELDOUT5_FLOOR = 64  # 54 when measured; conversions turned at the sheet's rate, caps in money since
HELDOUT5_KNOWN_ALARMS = set()  # 15 when measured; pass eight, studying it, cleared them all

# A sixth blind corpus (8 new cases, 208 sentences; St. Gallen, Fribourg, Stuttgart, Linz, Marseille, Belfast,
# Chicago, Princeton), written during pass eight by someone who never read the checker, measured once on the code at
# the session's start (6570731: 51 of 104 caught, 14 false alarms) and after pass eight (56 of 104, 14 false alarms).
HELDOUT6 = CORPUS.with_name("checker_corpus_heldout6.json")
HELDOUT6_FLOOR = 66  # studied since: French spaced figures, German remainders, the law's figure that is the client's
HELDOUT6_KNOWN_ALARMS = {
    "ch-sg-stgallen-capital-or-annuity-19", "ch-fr-fribourg-annecy-rental-12", "ch-fr-fribourg-annecy-rental-20",
}  # fmt: skip

# A seventh blind corpus (8 new cases, 203 sentences; Basel, Zug, Hamburg, Salzburg, Lyon, Milan, London, Boston),
# written during pass nine by someone who never read the checker, measured once blind on the code of 3fef7b8 and of
# the session's start (both 49 of 96 caught, 9 false alarms of 107); studied since.
HELDOUT7 = CORPUS.with_name("checker_corpus_heldout7.json")
HELDOUT7_FLOOR = 52  # studied since: an amount moved out of a named account must leave its floor
HELDOUT7_KNOWN_ALARMS = set()  # 9 when measured; pass nine, studying it, cleared them all


@functools.cache
def score(path=CORPUS):
    return score_checker(json.loads(path.read_text()), check)


def test_the_table_is_printed():
    print("\n" + checker_table(score()))
    assert score()["right"] > 100


@pytest.mark.parametrize("path", [CORPUS, HELDOUT], ids=["dev", "heldout"])
def test_no_right_sentence_is_flagged(path):
    assert score(path)["false_alarms"] == []


@pytest.mark.parametrize("kind", sorted(FLOORS))
def test_the_slips_caught_of_each_kind_stay_at_the_floor(kind):
    assert score()["kinds"][kind]["caught"] >= FLOORS[kind]


def test_the_held_out_slips_caught_stay_at_the_floor():
    assert sum(row["caught"] for row in score(HELDOUT)["kinds"].values()) >= HELDOUT_FLOOR


@pytest.mark.parametrize(
    "path, floor, known",
    [
        (HELDOUT2, HELDOUT2_FLOOR, HELDOUT2_KNOWN_ALARMS), (HELDOUT3, HELDOUT3_FLOOR, HELDOUT3_KNOWN_ALARMS),
        (HELDOUT4, HELDOUT4_FLOOR, HELDOUT4_KNOWN_ALARMS), (HELDOUT5, HELDOUT5_FLOOR, HELDOUT5_KNOWN_ALARMS),
        (HELDOUT6, HELDOUT6_FLOOR, HELDOUT6_KNOWN_ALARMS), (HELDOUT7, HELDOUT7_FLOOR, HELDOUT7_KNOWN_ALARMS),
    ],
    ids=["heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7"],
)
def test_a_blind_corpus_loses_no_catch_and_gains_no_false_alarm(path, floor, known):
    result = score(path)
    assert sum(row["caught"] for row in result["kinds"].values()) >= floor
    assert set(result["false_alarms"]) <= known
