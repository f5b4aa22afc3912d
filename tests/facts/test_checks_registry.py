"""The checker's checks behind one interface (reasoning/facts/checks/): each module has a KIND, FINAL_ONLY and
run(doc); the word tables are data files with a header that says how to add a row."""

from pathlib import Path

from reasoning.facts.check import check
from reasoning.facts.checks import CHECKS, read
from reasoning.facts.checks.words import DATA, table
from reasoning.facts.sheet import CHECK_KINDS, Fact


def test_each_check_has_the_interface():
    for module in CHECKS:
        assert module.KIND in CHECK_KINDS
        assert isinstance(module.FINAL_ONLY, bool)
        assert callable(module.run)
    assert [m.KIND for m in CHECKS if m.FINAL_ONLY] == ["coverage"]


def test_each_check_runs_on_a_doc():
    facts = [Fact("portfolio", "amount", 3_200_000, "USD"), Fact("collar", "instrument", "collar")]
    doc = read("70% of USD 3.2M = USD 2.24M.", facts)
    kinds = {f.kind for module in CHECKS for f in module.run(doc)}
    assert {"arithmetic", "coverage"} <= kinds


def test_coverage_runs_on_final_answers_only():
    facts = [Fact("collar", "instrument", "collar")]
    assert check("Hold.", facts) == []
    assert [f.kind for f in check("Hold.", facts, final=True)] == ["coverage"]


def test_the_data_files_say_how_to_add_a_row():
    for path in sorted(Path(DATA).glob("*.toml")):
        assert path.read_text().startswith("#"), path.name
        assert table(path.stem), path.name
