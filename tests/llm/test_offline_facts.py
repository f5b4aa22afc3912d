"""The offline model writes only from the client's fact sheet: on every case of fixtures/wealth_cases.json, every step,
critique and answer of every strategy passes the fact checker (reasoning/facts/check.py) on offline/sim; offline/noisy
slips at the rate asked, in every way noise.py names. Then the three misreadings a user saw, each impossible now.
No Django and no network needed."""

import collections
import functools
import re

import pytest

from reasoning.facts.check import check, failures
from reasoning.facts.quantities import find_quantities
from reasoning.facts.sheet import Fact, render_sheet
from reasoning.llm.offline import noise
from reasoning.llm.offline.facts import read_case
from tests.llm.offline_drive import CASES, Driver, drive, facts_of

BY_ID = {case["id"]: case for case in CASES}


def failed(texts, facts):
    """(contract, finding detail, text) for every failed check of the texts."""
    return [(t.contract, f.detail, t.text) for t in texts for f in failures(check(t.text, facts, final=t.final))]


# ---- offline/sim on the fixture ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_every_text_of_every_strategy_passes_the_fact_checks(case):
    texts = drive(case).texts
    assert {t.contract for t in texts if t.final} >= {
        "tot.synthesize", "lats.synthesize", "reflexion.synthesize", "trm.improve", "react.synthesize",
    }  # fmt: skip
    assert failed(texts, facts_of(case)) == []


def test_every_answer_names_each_instrument_account_and_goal_the_client_listed():
    for case in CASES:
        listed = [f.value for f in facts_of(case) if f.kind in ("instrument", "account", "goal")]
        for t in drive(case).texts:
            if t.final:
                assert all(str(name) in t.text for name in listed), (case["id"], t.contract, listed)


# ---- offline/noisy on the fixture ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy():
    """(slips made, chances to slip, slips the checker caught by kind) over the whole fixture at ε = 0.3."""
    made, caught, chances = [], collections.Counter(), 0
    for case in CASES:
        facts = facts_of(case)
        for reply in drive(case, noise=0.3).replies:
            chances += reply.texts
            for slip in reply.slips:
                made.append(slip)
                if slip.kind != "judgement" and failures(check(slip.after, facts, final=slip.answer)):
                    caught[slip.kind] += 1
    return made, chances, caught


def test_noisy_steps_and_answers_slip_at_the_rate_asked(noisy):
    made, chances, _ = noisy
    in_texts = [s for s in made if s.kind != "judgement"]
    assert chances > 1500
    assert 0.25 < len(in_texts) / chances < 0.35


def test_every_kind_of_slip_is_made_and_each_one_changes_the_text(noisy):
    made, _, _ = noisy
    assert {s.kind for s in made} == set(noise.SLIPS) | {"judgement"}
    assert all(s.after != s.before for s in made if s.kind != "judgement")


def test_the_checker_catches_what_the_noise_table_says_it_can(noisy):
    made, _, caught = noisy
    count = collections.Counter(s.kind for s in made)
    for kind in ("scale", "currency", "coverage"):  # caught whenever made: no wording escapes these checks
        assert caught[kind] == count[kind], kind
    for kind in ("figure", "label", "base", "jurisdiction"):  # caught sometimes: see noise.py's table for when not
        assert 0 < caught[kind] < count[kind] or caught[kind] == count[kind] > 0, kind
    assert caught["judgement"] == 0


def test_a_named_jurisdiction_slip_is_caught_and_some_unnamed_one_escapes():
    case = BY_ID["ts-01-florida-retiree"]
    facts = facts_of(case)
    text = "Draw from the brokerage account first."
    foreign = noise._foreign(read_case(render_sheet(facts)))
    assert foreign and all(failures(check(f"{text} {named}", facts)) for _code, named, _ in foreign)
    assert any(not failures(check(f"{text} {unnamed}", facts)) for _code, _, unnamed in foreign)


# ---- the three cases a user saw misread -------------------------------------------------------------------------

CA, SWISS_GERMAN, FLORIDA = "it-01-ca-concentrated", "wt-01-swiss-german-family", "ts-01-florida-retiree"
AMOUNT = re.compile(r"\b[A-Z]{3} [\d,.]+(?:bn|M|k)?\b")


@functools.cache
def every_text(case_id):
    return drive(BY_ID[case_id]).texts


def answers(case_id):
    return [t for t in every_text(case_id) if t.final]


def sentences(text):
    return re.split(r"(?<=[.;])\s|\n", text)


def test_the_californian_salary_is_never_sold_taxed_or_taken_a_percent_of():
    for t in every_text(CA):
        assert not re.search(r"\d+% (?:\([^)]*\) )?of (?:the )?USD 450k", t.text), t.text  # no percent of the salary
        assert not re.search(r"[Ss]ell (?:about )?USD 450k", t.text), t.text
        assert not re.search(r"70% \(the target\)", t.text), t.text  # her 70% is no target
        for sentence in sentences(t.text):
            assert not ("NIIT" in sentence and "USD 450k" in sentence), sentence
            if "USD 450k" in sentence:
                assert "salary" in sentence, sentence  # her salary's figure only as her salary


def test_the_californian_figures_keep_their_scale_and_the_position_shows_its_arithmetic():
    for t in every_text(CA):
        for q in find_quantities(t.text):
            if q.kind == "amount" and q.value >= 1000:
                assert q.scaled or "," in q.text, q.text  # USD 3.2M, never USD 3.2
        if "USD 2.24M" in t.text:
            assert "70% of the USD 3.2M portfolio = USD 2.24M" in t.text, t.text


def test_every_californian_answer_weighs_each_instrument_she_listed():
    for t in answers(CA):
        for name in ("exchange fund", "charitable remainder trust", "donor-advised fund", "collar"):
            assert name in t.text, (t.contract, name)


def test_the_swiss_german_family_never_has_two_currencies_combined():
    facts = facts_of(BY_ID[SWISS_GERMAN])
    for t in every_text(SWISS_GERMAN):
        assert not [f for f in failures(check(t.text, facts)) if f.kind == "currency"], t.text
        for sentence in sentences(t.text):
            codes = {m[:3] for m in AMOUNT.findall(sentence)}
            if len(codes) > 1:  # both currencies in one sentence: listed side by side, never computed together
                assert not re.search(r" [=/+] | as a share of ", sentence), sentence


def test_the_florida_retiree_never_gets_another_states_tax_rules():
    for t in every_text(FLORIDA):
        assert "California" not in t.text and "13.3%" not in t.text, t.text
        assert not re.search(r"(?<!no )state income tax (?:applies|on)", t.text), t.text
    assert any("Florida has no state income tax" in t.text for t in every_text(FLORIDA))


# ---- an empty sheet ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["investment-thesis", "allocation-rebalance", "tax-optim-sequence",
                                  "wealth-transfer", "data-driven-research", "general"])  # fmt: skip
def test_an_empty_sheet_gets_plain_words_and_no_money_figure_at_all(kind):
    problem = "A 45-year-old client in Zug has CHF 2.4m in savings and USD 500,000 in a brokerage account."
    texts = Driver(problem, kind, []).everything()
    assert texts
    for t in texts:
        assert not [q for q in find_quantities(t.text) if q.kind == "amount"], (t.contract, t.text)
        assert "{" not in t.text and "None" not in t.text and not re.search(r"\S  +\S", t.text), t.text
        assert "Zug" not in t.text  # a place is read from the sheet, never from the problem


def test_a_fact_the_sheet_does_not_hold_is_never_written():
    facts = [Fact("portfolio", "amount", 2_400_000, "CHF", text="CHF 2.4m")]
    problem = "A client has CHF 2.4m and USD 500,000 in Zug and asks what to do with them."
    for t in Driver(problem, "general", facts).everything():
        assert "500" not in t.text and "USD" not in t.text, t.text


def test_a_limit_stated_in_a_goal_gives_the_sale_with_its_working():
    """ "get the employer stock below 20% of the portfolio": the sale is 70% of USD 3.2M less 20% of it, shown."""
    import json as _json

    from reasoning.facts.extract import extract as _extract
    from reasoning.facts.sheet import render_sheet as _render_sheet
    from reasoning.llm.offline.answers import answer as _answer
    from reasoning.prompts import format_path as _format_path
    from reasoning.prompts import render as _render
    from reasoning.strategies.tot import SYNTHESIZE as _SYNTHESIZE

    problem = (
        "A Californian client, 58, holds 70% of her $3.2M portfolio in her employer's stock, with a cost basis of "
        "$400k. She wants to get the employer stock below 20% of the portfolio, and is considering a collar."
    )
    prompt = _render(
        _SYNTHESIZE, problem=problem, kind="investment-thesis", rubric="-", path=_format_path([]),
        facts=_render_sheet(_extract(problem)), findings="(none)",
    )
    text = _json.loads(_answer(prompt, 7))["answer"]
    assert text.startswith("Recommendation: Sell USD 1.6M of the employer stock in stages (USD 2.24M - USD 640k")
    assert "20% of the USD 3.2M portfolio = USD 640k" in text


# ---- the three cases phrased afresh, through every strategy --------------------------------------------------------

AFRESH = {
    "investment-thesis": (
        "My client is a 61-year-old software executive living in San Jose, California. Of her $3.2M investable "
        "portfolio, about 70% is her employer's stock (a single tech name), with a cost basis of roughly $400k. She "
        "earns a $450k salary plus RSUs and is already hit by the 3.8% NIIT. She wants to get the single-stock "
        "position below 20% of the portfolio within three years while keeping the tax bill manageable. She has asked "
        "about an exchange fund, a charitable remainder trust, a donor-advised fund and a protective collar."
    ),
    "wealth-transfer": (
        "A family lives in Basel; the husband commutes to Lörrach in Germany as a cross-border worker. They hold CHF "
        "1.8 Mio. at a Swiss private bank, a rental flat in Freiburg worth EUR 650k with EUR 250'000 of mortgage "
        "outstanding, and pillar 3a savings of CHF 140'000. They want to pass the Freiburg flat to their two children "
        "within ten years and keep German inheritance tax (Erbschaftsteuer) low."
    ),
    "tax-optim-sequence": (
        "A retired couple in Naples, Florida, both 68, have $1.1M in traditional IRAs, $600k in a taxable brokerage "
        "account (basis $350k) and $250k in Roth IRAs. They spend about $120k a year; Social Security pays $52k. They "
        "want a withdrawal order for the next ten years that keeps them under the IRMAA thresholds for Medicare and "
        "uses Roth conversions in the low-bracket years before RMDs start at 73."
    ),
}


@functools.cache
def afresh(kind):
    from reasoning.facts.extract import extract

    facts = extract(AFRESH[kind])
    return facts, Driver(AFRESH[kind], kind, facts).everything()


@pytest.mark.parametrize("kind", list(AFRESH))
def test_a_case_phrased_afresh_passes_every_check_in_every_text(kind):
    facts, texts = afresh(kind)
    assert [t for t in texts if t.final] and failed(texts, facts) == []


def test_the_californian_phrased_afresh_is_told_the_sale_her_limit_implies():
    _, texts = afresh("investment-thesis")
    for t in (t for t in texts if t.contract == "tot.synthesize"):
        assert t.text.startswith("Recommendation: Sell USD 1.6M of the employer stock in stages"), t.text
        assert "NIIT share" not in t.text  # the 3.8% is the NIIT's rate, when the answer has room for it
    for t in texts:
        assert "Take a sized, staged position" not in t.text and "Build the position" not in t.text, t.text


def test_the_family_phrased_afresh_transfers_the_flat_their_goal_names():
    _, texts = afresh("wealth-transfer")
    leads = [t.text for t in texts if t.contract == "tot.synthesize"]
    assert leads and all(text.startswith("Recommendation: Transfer the rental flat (EUR 650k)") for text in leads)


def test_the_retirees_phrased_afresh_get_their_goal_and_the_roth_conversions_they_asked_about():
    _, texts = afresh("tax-optim-sequence")
    for t in (t for t in texts if t.final):
        assert "Roth conversion" in t.text and "a withdrawal order for the next ten years" in t.text, t.contract
        assert "California" not in t.text and "13.3%" not in t.text


def test_told_what_the_checker_found_the_offline_refiner_writes_the_answer_again_without_it():
    """As a model told "your answer says X; the facts say Y" does: the slip it is shown is not written again."""
    import json as _json

    from reasoning.facts.check import check as _check
    from reasoning.facts.extract import extract
    from reasoning.llm.offline.answers import answer as _answer
    from reasoning.prompts import render
    from reasoning.strategies.base import findings_note
    from reasoning.strategies.trm import IMPROVE

    problem = AFRESH["investment-thesis"]
    facts = extract(problem)
    slipped = "Recommendation: Sell USD 1.6M of the employer stock.\nKey numbers: portfolio: USD 3.2; salary: USD 450k."
    findings = _check(slipped, facts, final=True)
    assert failures(findings)  # "USD 3.2": the scale dropped
    prompt = render(
        IMPROVE, problem=problem, kind="investment-thesis", rubric="-", facts=render_sheet(facts), findings="(none)",
        iteration=3, max_steps=5, trace="(none)", latent="(none)", answer=slipped, focus="none",
        points=findings_note(findings), rejected="none", alternative="none",
    )  # fmt: skip
    text = _json.loads(_answer(prompt, 7))["answer"]
    assert "USD 3.2;" not in text and not failures(_check(text, facts, final=True))


def test_the_offline_answer_provides_for_the_commitments_on_the_sheet():
    """Tried as a new user (issue 30): a foundation's CHF 3M of uncalled commitments were never provided for, so every
    answer failed the constraint check."""
    from reasoning.facts.check import check, failures
    from reasoning.facts.extract import extract
    from reasoning.facts.sheet import render_sheet
    from reasoning.llm.offline import facts as offline_facts, wealth as offline_wealth

    text = (
        "Stiftung Alpenlicht, seated in Zurich, CHF 45M. Today 52/33/15 equities/bonds/alternatives against a target "
        "of 40/40/20. CHF 3M of infrastructure commitments not yet called. Rebalance over 2 years, trades staged."
    )
    facts = extract(text)
    case = offline_facts.read_case(render_sheet(facts))
    assert ("obligation", "uncalled infrastructure commitments (CHF 3M)") in case.listed
    line = f"- uncalled infrastructure commitments (CHF 3M): {offline_wealth.listed_note('obligation', '')}."
    found = [f for f in check(line, facts, final=True) if f.kind == "constraint"]
    assert found and not failures(found), found


def test_an_instrument_the_client_may_not_use_is_ruled_out_not_recommended():
    """A Lucerne client whose pension buy-in the three-year lock bars: the sheet lists the buy-in (its words name it),
    the exact model says it is ruled out, and nothing it writes breaks the rule (checks/prohibitions.py)."""
    from reasoning.facts.extract import extract

    problem = (
        "Urs Amrein (62) lives in Lucerne and will retire at 65, taking his Pensionskasse of CHF 900'000 as capital. "
        "He also holds a Depot of CHF 500'000, 60 % in equities. He cannot make a pension buy-in any more because "
        "of the three-year lock before a lump sum, and wants to keep at least CHF 80'000 in cash."
    )
    facts = extract(problem)
    assert any(f.kind == "constraint" and "buy-in" in str(f.value) for f in facts)
    driver = Driver(problem, "swiss-pension", facts, 7, 0.0)
    driver.everything()
    answers = [t.text for t in driver.texts if t.final]
    assert answers and all("ruled out" in a for a in answers if "buy-in:" in a)
    assert failed(driver.texts, facts) == []


def test_a_drifted_portfolio_is_sold_down_to_its_target_and_the_other_class_target_moves_nothing():
    """The chaos test's problem: equities drifted to 72% against a 60/40 target. The exact model sells CHF 1.44M of
    equities (72% - 60% of CHF 12M) in every strategy's answer; the bonds' target (40%) is no level for the equities,
    though the equities are the only holding read (it once listed a 'sale of equities' of CHF 8.64M - CHF 4.8M)."""
    from reasoning.facts.extract import extract

    problem = "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains."
    facts = extract(problem)
    case = read_case(render_sheet(facts))
    assert [(m.amount.label, m.amount.value, m.sale) for m in case.moves] == [("sale of equities", 1_440_000, True)]
    driver = Driver(problem, "allocation-rebalance", facts, 7, 0.0)
    driver.everything()
    answers = [t.text for t in driver.texts if t.final]
    assert answers and all("CHF 1.44M" in a and "CHF 3.84M" not in a and "purchase of equities" not in a for a in answers)
    assert failed(driver.texts, facts) == []
