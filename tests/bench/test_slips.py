"""What bench/wealth_success.py counts (bench/slips.py) as a false figure in a solved answer, and what as a rule of
thumb the answer chose (issue 31, section 3): a slip in a number the case neither states nor writes as an amount is
counted apart, never as a clean answer; a slip in any figure of the case stays a false figure."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from slips import numbers, rule_of_thumb  # noqa: E402

from reasoning.llm.offline.noise import Slip  # noqa: E402

PROBLEM = (
    "Client from Bern, 50: Fr. 900'000 in free assets, BVG pension fund CHF 1.1 Mio., pillar 3a CHF 95'000. "
    "Must keep at least 20% of the free assets in CHF bonds."
)


def slip(before, after, kind="figure"):
    return Slip(kind, before, after, answer=True)


@pytest.mark.parametrize(
    "before, after",
    [
        ("Keep 12 months of spending outside the thesis.", "Keep 15 months of spending outside the thesis."),
        ("Book a 6-month review with the client.", "Book a 7-month review with the client."),
        ("Stress the mix with a 30% equity fall.", "Stress the mix with a 50% equity fall."),
    ],
)
def test_a_number_the_case_does_not_hold_is_a_rule_of_thumb(before, after):
    assert rule_of_thumb(slip(before, after), PROBLEM)


@pytest.mark.parametrize(
    "before, after",
    [
        # a figure of the case, with its currency, or its scale
        ("Free assets: CHF 900k.", "Free assets: CHF 1.2M."),
        ("The pension fund holds 1.1M.", "The pension fund holds 1.4M."),
        # a number the problem states
        ("Keep at least 20% in CHF bonds.", "Keep at least 25% in CHF bonds."),
        ("The client is 50 years old.", "The client is 55 years old."),
    ],
)
def test_a_slip_in_a_figure_of_the_case_is_a_false_figure(before, after):
    assert not rule_of_thumb(slip(before, after), PROBLEM)


def test_only_a_figure_slip_can_be_a_rule_of_thumb():
    assert not rule_of_thumb(slip("Keep 12 months.", "Keep 15 months.", kind="base"), PROBLEM)


def test_numbers_read_grouped_figures_whole():
    assert numbers("Fr. 900'000, 1,600 and 1.5 and 2") == [900000.0, 1600.0, 1.5, 2.0]
