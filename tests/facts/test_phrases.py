"""Durations and dates as advisors and models write them, read for the constraint checks."""

import pytest

from reasoning.facts.phrases import deadlines, durations, timings


@pytest.mark.parametrize(
    "text, months",
    [
        ("eighteen months", 18),
        ("1.5 years", 18),
        ("a year and a half", 18),
        ("one and a half years", 18),
        ("an 18-month window", 18),
        ("six weeks", 12 / 52 * 6),
        ("two quarters", 6),
        ("twenty-four months", 24),
        ("half a year", 6),
    ],
)
def test_durations_are_read_in_words_and_numbers(text, months):
    (d,) = durations(text)
    assert d.low == pytest.approx(months)


@pytest.mark.parametrize(
    "text, earliest, latest",
    [
        ("by 2035", 2035, 2036),
        ("in Q3 2027", 2027.5, 2027.75),
        ("in the fourth quarter of 2027", 2027.75, 2028),
        ("in H1 2028", 2028, 2028.5),
        ("by June 2027", 2027 + 5 / 12, 2027.5),
        ("by the end of 2031", 2031 + 11 / 12, 2032),
        ("in mid-2030", 2030 + 1 / 3, 2030 + 2 / 3),
    ],
)
def test_dates_are_read_as_periods(text, earliest, latest):
    ((span, _cue),) = deadlines(text, 0, len(text))
    assert (span.low, span.high) == (pytest.approx(earliest), pytest.approx(latest))


def test_a_year_with_no_cue_is_no_date_of_the_plan():
    assert deadlines("The 2031 budget is tight.", 0, 25) == []


@pytest.mark.parametrize(
    "text, timed",
    [
        ("Rebalance in three steps over six weeks.", "six weeks"),
        ("Complete it within the next 18 months.", "18 months"),
        ("Follow a 4-year glide path.", "4-year"),
        ("Sell immediately.", "immediately"),
        ("Rebalance every 6 months.", None),
        ("Fund a 2-year GRAT.", None),
    ],
)
def test_a_timing_is_the_plans_only_after_a_timing_word(text, timed):
    found = timings(text, 0, len(text))
    assert [t.text for t in found] == ([timed] if timed else [])
