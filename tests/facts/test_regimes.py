"""The tax regimes a text names, and whether each can apply to the client's places."""

import pytest

from reasoning.facts.regimes import REGIMES, find_regimes, tied


def named(text):
    return [(m.text, m.code) for m in find_regimes(text)]


@pytest.mark.parametrize(
    "text, code",
    [
        ("the 3.8% NIIT on her gains", "US"),
        ("the net investment income tax applies", "US"),
        ("IRMAA surcharges at 65", "US"),
        ("Medicare premiums rise", "US"),
        ("the federal estate tax exemption", "US"),
        ("max out the 401(k) first", "US"),
        ("a Roth IRA conversion", "US"),
        ("California income tax at 13.3%", "US-CA"),
        ("a notice from the CA FTB", "US-CA"),
        ("New York state tax on the bonus", "US-NY"),
        ("state income tax on wages", "US"),
        ("the Swiss wealth tax on the portfolio", "CH"),
        ("Vermögenssteuer im Kanton", "CH"),
        ("cantonal tax rates differ", "CH"),
        ("AHV contributions", "CH"),
        ("pay into pillar 3a each year", "CH"),
        ("a BVG buy-in", "CH"),
        ("the Eigenmietwert on her flat", "CH"),
        ("German Erbschaftsteuer by class", "DE"),
        ("inheritance tax in Germany", "DE"),
        ("the Abgeltungsteuer of 25%", "DE"),
        ("plus Solidaritätszuschlag", "DE"),
        ("UK inheritance tax at 40%", "GB"),
        ("IHT on the estate", "GB"),
        ("fill the ISA allowance", "GB"),
        ("a SIPP drawdown", "GB"),
        ("the CGT annual exempt amount", "GB"),
    ],
)
def test_it_ties_each_rule_to_its_jurisdiction(text, code):
    assert code in [c for _, c in named(text)], named(text)


@pytest.mark.parametrize(
    "text, code",
    [
        ("California taxes gains as ordinary income", "US-CA"),
        ("Germany's inheritance tax reaches the heirs", "DE"),
        ("gains are taxes in California too", "US-CA"),
        ("under German tax rules", "DE"),
        ("Swiss tax on the dividends", "CH"),
        ("the estate is taxed in the UK", "GB"),
    ],
)
def test_it_reads_place_tax_forms(text, code):
    assert code in [c for _, c in named(text)], named(text)


@pytest.mark.parametrize(
    "text",
    [
        "She moved from California to Florida in 2019.",
        "Isabel and Ira own Amtrak bonds in Iran.",
        "A Rothschild fund in Germany.",
        "ISAAC holds AMTRAK paper.",
        "Diversify the employer stock over three years.",
    ],
)
def test_a_place_merely_named_or_a_lookalike_word_is_no_rule(text):
    assert named(text) == []


def test_a_rule_named_as_absent_is_negated():
    mentions = find_regimes("Florida has no state income tax, and a move avoids California income tax.")
    assert [m.negated for m in mentions] == [True, True]
    assert not find_regimes("California taxes gains")[0].negated


def test_a_table_name_wins_over_the_generic_form_it_contains():
    mentions = find_regimes("California income tax")
    assert [(m.name, m.code) for m in mentions] == [("California income tax", "US-CA")]


def first(text):
    return find_regimes(text)[0]


@pytest.mark.parametrize(
    "text, places, expected",
    [
        ("NIIT", ["US-FL"], True),  # federal rules reach every US place
        ("NIIT", ["CH-ZH"], False),
        ("California taxes gains", ["US-FL"], False),  # a state's rules only its own state
        ("California taxes gains", ["US-CA"], True),
        ("California taxes gains", ["US"], True),  # the facts cannot say which state: not flagged
        ("California taxes gains", ["US", "US-FL"], False),
        ("state income tax", ["US-FL"], False),  # Florida has none
        ("state income tax", ["US-FL", "US-NY"], True),
        ("state income tax", ["US"], True),
        ("cantonal tax", ["CH-ZG"], True),  # Swiss federal and cantonal rules reach every Swiss place
        ("pillar 3a", ["DE-BY"], False),
        ("German inheritance tax", ["DE-BY"], True),  # a country's rules reach its subdivisions
        ("Zurich tax", ["CH-ZG"], False),
        ("IHT", ["GB-ENG", "CH-ZH"], True),
        ("the German Freibetrag", ["FR-IDF"], False),  # German words of law are Germany's (and Austria's)
        ("the German Freibetrag", ["AT-9"], True),
        ("the Verschonungsabschlag", ["IT-25"], False),
        ("as with a UK pension", ["CH-BL"], False),
    ],
)
def test_tied(text, places, expected):
    assert tied(first(text), places) is expected


@pytest.mark.parametrize(
    "text, places, sources, expected",
    [
        # a wrapper or a pension scheme is its residents': an account or a flat there opens it to no one else
        ("pillar 3a", ["AT-2", "CH"], {"CH"}, False),
        ("pillar 3a", ["CH-TI"], set(), True),
        ("PEA", ["GB-SCT", "FR-OCC"], {"FR-OCC"}, False),
        ("PEA", ["FR-OCC"], set(), True),
        ("assurance-vie", ["GB-SCT", "FR-OCC"], {"FR-OCC"}, True),  # its inheritance rules reach French assets
    ],
)
def test_a_residents_scheme_does_not_tie_to_a_place_held_only_by_an_asset(text, places, sources, expected):
    assert tied(first(text), places, sources) is expected


def test_the_table_stays_small_and_documented():
    assert len(REGIMES) < 150  # each country's well-known names (data/regimes.toml), not every rule there is
    assert all(r.names and r.code and r.what for r in REGIMES)


@pytest.mark.parametrize(
    "text, code",
    [
        ("Florida homestead rules protect the house", "US-FL"),
        ("California community property law applies", "US-CA"),
        ("Germany's business relief on the stake", "DE"),
    ],
)
def test_a_places_laws_in_other_words_than_tax(text, code):
    assert code in [c for _, c in named(text)], named(text)


@pytest.mark.parametrize(
    "text, places, expected",
    [
        ("A yearly wealth tax applies to the whole portfolio.", ["US-TX"], False),
        ("A yearly wealth tax applies to the whole portfolio.", ["ES"], True),  # several countries tax wealth
        ("The Swiss wealth tax applies.", ["ES"], False),
        ("The state taxes the gains as ordinary income.", ["US-TX"], False),
        ("The state taxes the gains as ordinary income.", ["US-WA"], True),  # Washington taxes large gains
        ("A 3.8% surtax applies to the investment income.", ["GB"], False),
    ],
)
def test_rules_named_without_their_place(text, places, expected):
    assert tied(first(text), places) is expected


# ---- each country's regimes by their own names (data/regimes.toml) ------------------------------------------------


@pytest.mark.parametrize(
    "text, code",
    [
        ("spread the severance under the Fünftelmethode", "DE"),
        ("a Rürup pension for the self-employed years", "DE"),
        ("the bank withholds KESt on the dividends", "AT"),
        ("ImmoESt on the sale of the chalet", "AT"),
        ("the PFU on the fund's gains", "FR"),
        ("her IFI bill for the two flats", "FR"),
        ("open a PEA for the children", "FR"),
        ("imposta sostitutiva on the coupons", "IT"),
        ("IVAFE on the Zurich portfolio", "IT"),
        ("the LTT on a house in Swansea", "GB-WLS"),
        ("LBTT on the Edinburgh flat", "GB-SCT"),
        ("register the trust with the Charity Commission", "GB"),
        ("the Kapitalleistungssteuer on the lump sum", "CH"),
        ("file Form 709 for the gift", "US"),
        ("the foundation's 5 % payout rule", "US"),
    ],
)
def test_each_countrys_own_names(text, code):
    assert code in [c for _, c in named(text)]


@pytest.mark.parametrize(
    "text, places",
    [
        ("Budget for the Fünftelmethode on her severance.", ["CH-BE"]),
        ("The ImmoESt will take 30% of the gain.", ["DE-BY"]),
        ("Use the PEA for the Italian shares.", ["IT-RM"]),
        ("Keep the gifts inside the lifetime exemption.", ["GB-ENG"]),
        ("File Form 990-PF by May.", ["CH-VD"]),
        ("LBTT on the house in Cardiff.", ["GB-WLS"]),
    ],
)
def test_a_regime_of_another_country_is_not_tied(text, places):
    mentions = find_regimes(text)
    assert mentions and not any(tied(m, places) for m in mentions if not m.negated)


def test_stamp_duty_land_tax_is_not_welsh_nor_scottish():
    (m,) = find_regimes("SDLT on the new house")
    assert not tied(m, ["GB-WLS"]) and not tied(m, ["GB-SCT"]) and tied(m, ["GB-ENG"])


def test_a_percent_written_with_a_space_is_the_same_name():
    assert named("the 5 % minimum distribution applies") == [("5 % minimum distribution", "US")]


def test_a_place_holding_only_an_account_does_not_tie_its_wealth_or_income_tax():
    """A Lyon resident with an account in Basel: no Basel wealth tax; Basel's withholding is still its own."""
    (wealth,) = find_regimes("The Basel account will bring Basel wealth tax.")
    assert wealth.code == "CH-BS" and "wealth" in wealth.kinds
    assert not tied(wealth, ["FR-ARA", "CH"], sources={"CH"})
    assert tied(wealth, ["FR-ARA", "CH"])  # without knowing the tie is only an account, it can be his
    (income,) = find_regimes("Gains there also bear Chicago income tax.") or [None]
    assert income is None or not tied(income, ["IT-MI", "US"], sources={"US"})


def test_not_negates_only_through_owing():
    assert find_regimes("This does not touch her US lifetime gift exemption.")[0].negated is False
    assert find_regimes("She is not subject to IHT.")[0].negated is True


def test_an_ambiguous_place_before_its_own_tax_is_a_place():
    (m,) = find_regimes("Georgia's 5.39% income tax applies to the bonus.")
    assert m.code == "US-GA" and not tied(m, ["US-MA"])


def test_long_term_capital_gains_tax_is_american():
    (m,) = find_regimes("Keep 20% aside for long-term capital gains tax.")
    assert m.code == "US" and not tied(m, ["IT-RM"]) and not tied(m, ["FR-IDF", "US"], sources={"US"})


def test_a_regime_named_as_absent_in_german_or_french_is_negated():
    found = find_regimes("Österreich erhebt keine Schenkungssteuer; the gifts need only be reported.")
    assert found and all(m.negated for m in found)
    found = find_regimes("Die Schenkungssteuer beträgt 30 %.")
    assert found and not any(m.negated for m in found)


def test_a_states_rule_named_with_a_figure_between_is_found():
    assert ("Illinois", "US-IL") in [(m.text.split("'")[0], m.code) for m in find_regimes("Above Illinois's $4M estate tax exemption, tax is due.")]


def test_a_list_of_rules_named_as_absent_is_negated_to_its_last():
    """"keine Vermögen-, Schenkungs- oder Erbschaftsteuer": the last of the list too; a clause after "but" is not."""
    listed = find_regimes("Österreich erhebt keine Vermögen-, Schenkungs- oder Erbschaftsteuer.")
    assert [m.negated for m in listed] == [True]
    mentions = find_regimes("There is no wealth tax, but the Erbschaftsteuer applies.")
    assert [(m.text, m.negated) for m in mentions] == [("wealth tax", True), ("Erbschaftsteuer", False)]
