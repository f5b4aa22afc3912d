"""The reader's recall and precision per kind on the labelled sets (reasoning/facts/fidelity.py, score_set).

fixtures/fact_reading_cases.json is issue 30's blind dev set (people, limits, horizons, commitments, roles and
bases); fixtures/wealth_cases.json and wealth_cases_heldout.json are the older sets, scored in their own terms
(fidelity.legacy_view). The floors are what the reader reaches today, so a change that loses a kind fails here;
the goal is recall >= 0.95 on every kind and precision >= 0.98 (docs/BENCHMARKS.md, "The whole case on the sheet", has the tables).
fixtures/fact_reading_heldout.json, the first held-out reading set, is burned (studied while the reader was made to
generalise, issue 30): it has floors here like the dev set. A second blind set measures the reader at the end.
"""

import json
from pathlib import Path

import pytest

from reasoning.facts.extract import extract
from reasoning.facts.fidelity import labels_agree, matches_strictly, score_set
from reasoning.facts.sheet import Fact

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# (recall, precision) floors per kind, as measured (bench/fact_reading.py), rounded down.
DEV_FLOORS = {
    "amount": (0.98, 0.98), "percent": (0.93, 0.93), "person": (1.00, 1.00), "age": (0.98, 1.00),
    "limit": (1.00, 1.00), "horizon": (1.00, 1.00), "commitment": (0.90, 1.00), "place": (0.93, 0.96),
    "instrument": (1.00, 0.96), "account": (1.00, 0.98), "goal": (1.00, 0.98), "constraint": (1.00, 1.00),
    "year": (0.75, 1.00), "all": (0.97, 0.97),
}  # fmt: skip
WEALTH_FLOORS = {"all": (0.99, 0.99), "amount": (1.00, 1.00), "percent": (0.91, 0.91), "place": (1.00, 1.00),
                 "account": (1.00, 1.00), "instrument": (1.00, 1.00), "age": (1.00, 1.00)}  # fmt: skip
HELDOUT_FLOORS = {"all": (0.95, 0.97), "percent": (1.00, 0.86), "place": (0.97, 1.00)}
# the burned held-out reading set: 0.79 recall, 0.84 precision (percent 0.41, 0.43) before the reader generalised
READING_HELDOUT_FLOORS = {
    "amount": (1.00, 1.00), "percent": (0.97, 0.97), "person": (1.00, 1.00), "age": (1.00, 1.00),
    "limit": (1.00, 1.00), "horizon": (1.00, 1.00), "commitment": (1.00, 1.00), "place": (1.00, 1.00),
    "instrument": (1.00, 1.00), "account": (1.00, 1.00), "goal": (1.00, 0.92), "constraint": (1.00, 1.00),
    "all": (0.99, 0.98),
}  # fmt: skip


# the second blind reading set, burned once reported: 0.91 recall, 0.92 precision (percent 0.59, age 0.85) before
READING_HELDOUT2_FLOORS = {"percent": (0.83, 0.83), "age": (0.92, 1.00), "amount": (1.00, 1.00), "limit": (1.00, 1.00),
                          "horizon": (1.00, 1.00), "commitment": (1.00, 1.00), "all": (0.95, 0.96)}  # fmt: skip
# the third blind reading set (22 cases), measured once after the reader's second pass: 0.89 recall, 0.89 precision;
# percent 0.54 (a percent matches only with its base and role), limit 0.89, horizon 0.88, place 0.93
READING_HELDOUT3_FLOORS = {
    "amount": (1.00, 1.00), "percent": (1.00, 1.00), "person": (1.00, 1.00), "age": (1.00, 1.00),
    "limit": (1.00, 1.00), "horizon": (1.00, 1.00), "commitment": (1.00, 1.00), "place": (0.93, 1.00),
    "instrument": (1.00, 0.85), "all": (0.99, 0.99),
}  # fmt: skip

# the fourth blind reading set (24 cases, written during the reader's third pass), measured once after it on this
# tree's rule: 0.94 recall, 0.96 precision; percent 0.87 / 0.86 (0.91 / 0.94 and 0.72 / 0.75 with the reader before)
READING_HELDOUT4_FLOORS = {
    "amount": (1.00, 1.00), "percent": (1.00, 1.00), "person": (1.00, 1.00), "age": (1.00, 1.00),
    "limit": (1.00, 1.00), "horizon": (1.00, 1.00), "commitment": (1.00, 1.00), "place": (1.00, 0.96),
    "instrument": (1.00, 1.00), "account": (1.00, 1.00), "goal": (1.00, 1.00), "all": (1.00, 0.99),
}  # fmt: skip

# the fifth blind reading set (16 cases: German and memo styles, written during pass four), measured once after it:
# 0.71 recall, 0.80 precision (0.67 / 0.77 with c911623's reader); the figure to beat, not a goal met
READING_HELDOUT5_FLOORS = {
    "amount": (0.94, 0.88), "percent": (0.51, 0.56), "person": (0.74, 0.71), "age": (1.00, 0.90),
    "limit": (0.52, 1.00), "horizon": (0.66, 1.00), "place": (0.57, 0.75), "account": (1.00, 1.00),
    "all": (0.71, 0.80),
}  # fmt: skip


def cases(name):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))["cases"]


def check(result, floors):
    table = {**result["kinds"], "all": result["all"]}
    low = {
        kind: (round(table[kind]["recall"], 3), round(table[kind]["precision"], 3))
        for kind, (recall, precision) in floors.items()
        if table[kind]["recall"] < recall or table[kind]["precision"] < precision
    }
    assert not low, f"below the floor (recall, precision): {low}"


def test_the_dev_set_per_kind():
    check(score_set(cases("fact_reading_cases.json"), extract), DEV_FLOORS)


def test_the_burned_heldout_reading_set_per_kind():
    check(score_set(cases("fact_reading_heldout.json"), extract), READING_HELDOUT_FLOORS)


def test_the_burned_second_heldout_reading_set_per_kind():
    check(score_set(cases("fact_reading_heldout2.json"), extract), READING_HELDOUT2_FLOORS)


def test_the_burned_third_heldout_reading_set_per_kind():
    check(score_set(cases("fact_reading_heldout3.json"), extract), READING_HELDOUT3_FLOORS)


def test_the_fourth_heldout_reading_set_per_kind():
    check(score_set(cases("fact_reading_heldout4.json"), extract), READING_HELDOUT4_FLOORS)


def test_the_dev_set_labels_agree():
    assert score_set(cases("fact_reading_cases.json"), extract)["all"]["label_agreement"] >= 0.87


@pytest.mark.parametrize("name, floors", [("wealth_cases.json", WEALTH_FLOORS), ("wealth_cases_heldout.json", HELDOUT_FLOORS)])
def test_the_older_sets_do_not_regress(name, floors):
    check(score_set(cases(name), extract, legacy=True), floors)


def test_the_matching_rule():
    want = Fact("equities target", "percent", 60, "%", base="portfolio", role="target")
    assert matches_strictly(Fact("equities target", "percent", 60.2, "%", base="portfolio", role="target"), want)
    assert not matches_strictly(Fact("equities", "percent", 60, "%", base="portfolio", role="share"), want)
    assert not matches_strictly(Fact("equities target", "percent", 60, "%", base="salary", role="target"), want)
    floor = Fact("cash floor", "limit", 18, "months", base="expenses", role="floor")
    assert not matches_strictly(Fact("cash floor", "limit", 18, "months", role="minimum"), floor)
    assert matches_strictly(Fact("x", "amount", 3e6, "CHF", role="commitment"), Fact("y", "amount", 3e6, "CHF", role="liability"))
    assert not matches_strictly(Fact("x", "amount", 3e6, "CHF"), Fact("y", "amount", 3e6, "CHF", role="commitment"))
    assert matches_strictly(Fact("CRUT", "instrument", "CRUT"), Fact("CRT", "instrument", "charitable remainder trust"))
    assert not matches_strictly(Fact("Marc", "person", 1, "people"), Fact("Anna", "person", 1, "people", role="client"))
    assert labels_agree("Anna's age", "Anna's age") and not labels_agree("Marc's age", "Anna's age")
    assert labels_agree("brokerage account balance", "compte-titres")


def test_the_fifth_heldout_reading_set_per_kind():
    check(score_set(cases("fact_reading_heldout5.json"), extract), READING_HELDOUT5_FLOORS)
