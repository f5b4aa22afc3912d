"""Auto mode: the seed card's mapping by kind, the problem's words for other kinds, a reason always, explicit wins."""

import pytest

from reasoning import services
from reasoning.schemas import SessionIn
from reasoning.strategies import auto


@pytest.fixture
def everything_built(monkeypatch):
    monkeypatch.setattr(auto, "available_modes", lambda: {"tot", "lats", "reflexion", "react", "trm"})


@pytest.mark.parametrize(
    "kind, mode",
    [
        ("investment-thesis", "tot"),
        ("allocation-rebalance", "lats"),
        ("tax-optim-sequence", "reflexion"),
        ("wealth-transfer", "tot"),
        ("data-driven-research", "react"),
    ],
)
def test_it_follows_the_seed_cards_mapping(everything_built, kind, mode):
    picked, reason = auto.pick_mode(kind, "Any problem text at all.")
    assert picked == mode and reason.startswith(f"auto: {mode} for {kind}, because ")


@pytest.mark.parametrize(
    "text, mode",
    [
        ("Look up the prices of the client's ETF holdings and compare them.", "react"),
        ("The portfolio drifted to 72% equities; plan the rebalancing.", "lats"),
        ("Order the withdrawals to minimise tax over five years.", "reflexion"),
        ("Refine this draft memo to the client.", "trm"),
        ("Should the family buy a chalet in Verbier?", "tot"),
    ],
)
def test_an_unknown_kind_is_read_from_the_problems_words(everything_built, text, mode):
    picked, reason = auto.pick_mode("family-office", text)
    assert picked == mode and "by its text" in reason


def test_a_mode_not_built_falls_back_to_tot_and_says_so(monkeypatch):
    monkeypatch.setattr(auto, "available_modes", lambda: {"tot"})
    picked, reason = auto.pick_mode("allocation-rebalance")
    assert picked == "tot" and "lats would suit" in reason and "not available" in reason


@pytest.mark.django_db
def test_the_mode_and_its_reason_are_stored_and_an_explicit_mode_wins(alice):
    data = SessionIn(problem_text="Should the family buy a chalet in Verbier?", problem_kind="general")
    session = services.create_session(alice.tenant, data, submit=False)
    assert session.requested_mode == "auto" and session.mode == "tot" and session.mode_reason.startswith("auto: tot")
    explicit = services.create_session(
        alice.tenant,
        SessionIn(problem_text="Rebalance the CHF 3m portfolio.", mode="tot", problem_kind="allocation-rebalance"),
        submit=False,
    )
    assert explicit.mode == "tot" and explicit.mode_reason == "requested: tot"
