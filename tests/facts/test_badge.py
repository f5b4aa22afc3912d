"""The badge says what was checked and what was not (issue 30, section 4): an unverified finding never counts as
checked, a failure with no span is named by its detail, a text with nothing checkable says "not checked", and the
sheet's percents without a base are named."""

from reasoning.facts.check import badge, capped
from reasoning.facts.sheet import Fact, Finding


def figure(text, start, ok=True, verified=True, kind="figure"):
    return Finding(kind, ok, text, f"{text}: detail", start, start + len(text), verified=verified)


def test_an_unverified_figure_is_counted_apart_and_never_as_checked():
    found = [figure("USD 3.2M", 0), figure("17,500", 20, verified=False)]
    assert badge(found) == "1 figure checked, 1 unverified"
    assert capped(0.8, found) == (0.8, "")  # undecided is not failed


def test_a_text_with_nothing_checked_says_so():
    assert badge([]) == "not checked"
    assert badge([figure("17,500", 0, verified=False)]) == "not checked: 1 figure unverified"


def test_constraints_are_counted_as_kept():
    kept = [Finding("constraint", True, "", f"keeps the {n}", -1, -1) for n in ("floor", "horizon")]
    assert badge([figure("USD 3.2M", 0), *kept]) == "1 figure checked; 2 constraints kept"
    broken = Finding("constraint", False, "six weeks", "six weeks contradicts the horizon of 4 years", 9, 18)
    assert badge([*kept, broken]) == "2 of 3 constraints kept; 1 failed: six weeks (constraint broken)"


def test_a_failure_with_no_span_is_named_by_its_detail():
    wrong = Finding("arithmetic", False, "", "USD 1M + USD 2M: the arithmetic gives USD 3M, not USD 4M", 5, 5)
    line = badge([wrong])
    assert "failed:  (" not in line
    assert line.endswith("1 failed: USD 1M + USD 2M: the arithmetic gives USD 3M, not USD 4M (wrong sum)")


def test_the_sheet_names_its_percents_without_a_base():
    facts = [
        Fact("equities", "percent", 40.0, "%"),
        Fact("bonds target", "percent", 25.0, "%", role="target"),
        Fact("equities", "percent", 60.0, "%", base="portfolio", role="share"),
        Fact("capital gains tax", "percent", 20.0, "%", role="tax"),
    ]
    assert badge([figure("USD 3.2M", 0)], facts) == "1 figure checked; the sheet has 2 percents without a base"


def test_findings_travel_with_their_verified_flag():
    data = figure("17,500", 0, verified=False).to_dict()
    assert data["verified"] is False
    assert Finding.from_dict(data).verified is False
    del data["verified"]  # stored before the flag existed: verified
    assert Finding.from_dict(data).verified is True
