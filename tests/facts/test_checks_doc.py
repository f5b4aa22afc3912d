"""checks/doc.py: the shared reading of a text; here, which amounts are the law's rather than the client's."""

from reasoning.facts.check import check, failures
from reasoning.facts.checks import read
from reasoning.facts.sheet import Fact

SHEET = [
    Fact("salary", "amount", 160_000, "GBP", role="income"),
    Fact("pension pot", "amount", 900_000, "GBP", role="holding"),
]


def statutory(text):
    doc = read(text, SHEET)
    return [doc.text[a:b] for a, b in sorted(doc.statutory)]


def test_an_amount_at_a_rules_edge_is_the_laws():
    assert statutory("The personal allowance phases out at £125,140 of income, well below her salary.") == ["£125,140"]
    assert statutory("Her higher-rate band tops out at about £125k, so part of the bonus is taxed at 45%.") == ["£125k"]
    assert failures(check("The personal allowance phases out at £125,140 of income, under her £160k salary.", SHEET)) == []


def test_an_edge_with_no_rule_in_its_clause_is_the_clients():
    assert statutory("Her pension pot tops out at £950k in the projection.") == []
    found = failures(check("Her pension pot tops out at £950k in the projection.", SHEET))
    assert [f.text for f in found] == ["£950k"]


def test_a_clients_amount_named_before_a_word_of_law_after_it_is_the_clients():
    assert statutory("With a pot of £900k the lifetime allowance no longer bites.") == []
    found = failures(check("With a pot of £900 the lifetime allowance no longer bites.", SHEET))
    assert [f.text for f in found] == ["£900"] and "drops its scale" in found[0].detail


def test_a_word_of_law_before_the_figure_still_makes_it_the_laws():
    assert statutory("The allowance of £100k no longer applies above a pot of £1M.") == ["£100k"]


def test_a_rate_quoted_as_what_one_unit_buys_is_a_rate():
    rates = read("Quoted the other way, £1 buys about €1.18, so £50,000 is roughly €59,000.", SHEET).rates
    assert [(r.base, r.quote, r.value) for r in rates] == [("GBP", "EUR", 1.18)]
