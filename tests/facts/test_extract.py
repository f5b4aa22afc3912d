"""The client's facts read from a problem, in order, with their spans; and a model's facts grounded in the text."""

import pytest

from reasoning.facts.extract import clauses, extract, ground
from reasoning.facts.sheet import Fact


def table(facts):
    return [(f.kind, f.label, f.value, f.unit, f.text) for f in facts]


def of_kind(facts, kind):
    return [f for f in facts if f.kind == kind]


def assert_spans(facts, problem):
    assert all(problem[f.start : f.end] == f.text for f in facts)
    assert [f.start for f in facts] == sorted(f.start for f in facts)


CALIFORNIAN = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock, cost basis $400k. "
    "She earns a salary of $450k. She wants to diversify over the next few years without a large tax bill in any "
    "one year. Options on the table: an exchange fund, a charitable remainder trust, a donor-advised fund and a "
    "collar."
)


def test_the_californian_concentrated_position():
    facts = extract(CALIFORNIAN)
    assert_spans(facts, CALIFORNIAN)
    assert table([f for f in facts if f.kind not in ("goal", "constraint")]) == [
        ("place", "residence", "US-CA", "ISO 3166", "Californian"),
        ("age", "client's age", 58, "years", "58"),
        ("percent", "employer stock share", 70, "%", "70%"),
        ("amount", "portfolio", 3_200_000, "USD", "$3.2M"),
        ("amount", "cost basis", 400_000, "USD", "$400k"),
        ("amount", "salary", 450_000, "USD", "$450k"),
        ("instrument", "exchange fund", "exchange fund", "", "exchange fund"),
        ("instrument", "charitable remainder trust", "charitable remainder trust", "", "charitable remainder trust"),
        ("instrument", "donor-advised fund", "donor-advised fund", "", "donor-advised fund"),
        ("instrument", "collar", "collar", "", "collar"),
    ]
    share = next(f for f in facts if f.kind == "percent")
    assert share.base == "portfolio"
    assert [f.text for f in of_kind(facts, "goal")] == ["diversify over the next few years"]
    assert [f.text for f in of_kind(facts, "constraint")] == ["without a large tax bill in any one year"]
    assert all(f.source == "extracted" for f in facts)


SWISS_GERMAN = (
    "Swiss-German cross-border family resident in Basel, he is 64, she is 61. CHF 1'800'000 in securities at a "
    "Basel bank, a EUR 650k apartment in Munich, and a 2,5 Mio. EUR stake in the family GmbH. Both pay into "
    "pillar 3a. They would like to pass the business to their daughter by 2031. Must not sell the Munich "
    "apartment."
)


def test_the_swiss_german_cross_border_family():
    facts = extract(SWISS_GERMAN)
    assert_spans(facts, SWISS_GERMAN)
    places = [(f.value, f.label, f.text) for f in of_kind(facts, "place")]
    assert places == [
        ("CH", "citizenship", "Swiss"),
        ("DE", "citizenship", "German"),
        ("CH-BS", "residence", "Basel"),
        ("CH-BS", "asset location", "Basel"),  # one fact per place and role: the securities at a Basel bank
        ("DE-BY", "property location", "Munich"),
    ]
    amounts = [(f.label, f.value, f.unit, f.text) for f in of_kind(facts, "amount")]
    assert amounts == [
        ("securities", 1_800_000, "CHF", "CHF 1'800'000"),
        ("apartment", 650_000, "EUR", "EUR 650k"),
        ("stake", 2_500_000, "EUR", "2,5 Mio. EUR"),
    ]
    assert [(f.value, f.text) for f in of_kind(facts, "age")] == [(64, "64"), (61, "61")]
    assert [(f.value, f.text) for f in of_kind(facts, "account")] == [("pillar 3a", "pillar 3a")]
    # "pass the business to their daughter by 2031": a deadline, not just a year
    assert [(f.label, f.value, f.unit, f.role) for f in of_kind(facts, "horizon")] == [("transfer horizon", 2031, "year", "by")]
    assert of_kind(facts, "year") == []
    assert [f.text for f in of_kind(facts, "goal")] == ["pass the business to their daughter by 2031"]
    assert [f.text for f in of_kind(facts, "constraint")] == ["Must not sell the Munich apartment"]


FLORIDA = (
    "Florida retiree, 67, married. USD 2.4 million across a 401(k), a Roth IRA and a taxable brokerage account. "
    "He wants to sequence withdrawals to stay under the IRMAA thresholds, and cannot spend more than $150,000 a "
    "year."
)


def test_without_doing_more_than_an_amount_is_a_cap_of_what_the_verb_names():
    # "without selling more than CHF 400k" had been an amount labelled "without selling more than".
    sales = extract("Anna, 63, holds a CHF 2.8M portfolio and wants to rebalance without selling more than CHF 400k.")
    assert [(f.label, f.value, f.unit, f.role) for f in of_kind(sales, "limit")] == [("sales cap", 400_000, "CHF", "cap")]
    assert not [f for f in of_kind(sales, "amount") if f.value == 400_000]
    gains = extract("He wants to rebalance without realising more than EUR 50k of gains this year.")
    assert [(f.label, f.value, f.role) for f in of_kind(gains, "limit")] == [("gains cap", 50_000, "cap")]


def test_the_florida_retiree():
    facts = extract(FLORIDA)
    assert_spans(facts, FLORIDA)
    assert table(facts) == [
        ("place", "residence", "US-FL", "ISO 3166", "Florida"),
        ("age", "client's age", 67, "years", "67"),
        ("amount", "total assets", 2_400_000, "USD", "USD 2.4 million"),
        ("account", "401(k)", "401(k)", "", "401(k)"),
        ("account", "Roth IRA", "Roth IRA", "", "Roth IRA"),
        ("account", "brokerage account", "brokerage account", "", "brokerage account"),
        (
            "goal",
            "goal",
            "sequence withdrawals to stay under the IRMAA thresholds",
            "",
            "sequence withdrawals to stay under the IRMAA thresholds",
        ),
        # a bound with a quantity is a limit, not also a constraint and an amount (issue 30)
        ("limit", "spending cap", 150_000, "USD", "$150,000"),
    ]


def test_labels_come_from_the_words_around_the_figure():
    labels = {f.text: f.label for f in extract("Salary of $450k; a $1.8M house in Zug; $400k basis; earns $90k.")}
    assert labels["$450k"] == "salary"
    assert labels["$1.8M"] == "house"
    assert labels["$400k"] == "cost basis"
    assert labels["$90k"] == "salary 2"  # labels stay unique within a case


def test_percent_bases():
    facts = extract("Portfolio of 4 500 000 €, of which 45 % is LVMH stock. His $1.9M 401(k) is 80% equities.")
    percents = [(f.value, f.base) for f in of_kind(facts, "percent")]
    assert percents == [(45, "portfolio"), (80, "401(k) balance")]
    # a target's share is of the whole (issue 30): the portfolio where no amount is named
    assert [(f.base, f.role) for f in of_kind(extract("Target 50% equities."), "percent")] == [("portfolio", "target")]


def test_one_place_per_code_and_one_fact_per_canonical_name():
    facts = extract("Lives in Zurich; a flat in Zürich too. IRAs and an IRA; munis and municipal bonds.")
    # one fact per place and role: where she lives, and where her flat is
    assert [(f.value, f.label, f.text) for f in of_kind(facts, "place")] == [
        ("CH-ZH", "residence", "Zurich"), ("CH-ZH", "property location", "Zürich")]
    assert [(f.value, f.text) for f in of_kind(facts, "account")] == [("IRA", "IRAs")]
    assert [(f.value, f.text) for f in of_kind(facts, "instrument")] == [("municipal bonds", "munis")]


def test_goals_and_constraints_by_their_triggers():
    text = (
        "He wants to hedge the position before 2025 and may not sell during blackout windows. "
        "Must keep at least CHF 300'000 in cash. She would like to retire at 60, but cannot stop working yet."
    )
    found = [(f.kind, f.text) for f in clauses(text)]
    assert found == [
        ("goal", "hedge the position before 2025"),
        ("constraint", "may not sell during blackout windows"),
        ("constraint", "Must keep at least CHF 300'000 in cash"),
        ("goal", "retire at 60"),
        ("constraint", "cannot stop working yet"),
    ]
    assert clauses("She wants data on yields. A 529 plan to fund college.") == []


def test_nothing_from_a_puzzle_or_a_count():
    assert extract("Use 4 9 10 13 to make 24.") == []
    # a count of people is a person fact (issue 30); a count of funds is nothing
    assert table(extract("She has two children and 14 funds.")) == [("person", "children", 2, "people", "two children")]


# ---- ground ---------------------------------------------------------------------------------------------------


def test_ground_drops_an_invented_figure_and_place_and_keeps_real_ones_with_the_problems_span():
    invented = [
        Fact("salary", "amount", 999_000, "USD", text="$999k"),
        Fact("residence", "place", "US-NY", "ISO 3166", text="New York"),
        Fact("goal", "goal", "buy a yacht", text="buy a yacht"),
    ]
    real = [
        Fact("salary", "amount", 450_000, "USD", text="450k"),
        Fact("portfolio", "amount", "3.2M", "USD"),
        Fact("employer stock share", "percent", 70, "%", base="portfolio"),
        Fact("residence", "place", "US-CA", text="California"),
        Fact("exchange fund", "instrument", "exchange fund", text="Exchange Fund"),
        Fact("goal", "goal", "diversify", text="diversify over the next few years"),
    ]
    kept = ground(invented + real, CALIFORNIAN)
    assert [(f.label, f.value, f.text) for f in kept] == [
        ("salary", 450_000, "$450k"),
        ("portfolio", 3_200_000, "$3.2M"),
        ("employer stock share", 70, "70%"),
        ("residence", "US-CA", "Californian"),
        ("exchange fund", "exchange fund", "exchange fund"),
        ("goal", "diversify", "diversify over the next few years"),
    ]
    assert all(CALIFORNIAN[f.start : f.end] == f.text for f in kept)
    assert kept[2].base == "portfolio"


def test_ground_needs_the_unit_and_the_value_within_what_was_written():
    assert ground([Fact("portfolio", "amount", 3_200_000, "EUR")], CALIFORNIAN) == []
    assert ground([Fact("portfolio", "amount", 3_240_000, "USD")], CALIFORNIAN)[0].text == "$3.2M"
    assert ground([Fact("age", "age", 59, "years")], CALIFORNIAN) == []


def test_ground_matches_each_span_once():
    problem = "Two gifts of $50k each: $50k to Ann and $50k to Ben."
    kept = ground([Fact("gift", "amount", 50_000, "USD") for _ in range(4)], problem)
    assert [f.start for f in kept] == [problem.index("$50k"), problem.index("$50k to Ann"), problem.index("$50k to Ben")]


def test_extracted_facts_ground_to_themselves():
    for problem in (CALIFORNIAN, SWISS_GERMAN, FLORIDA):
        facts = extract(problem)
        again = ground([Fact.from_dict(f.to_dict()) for f in facts], problem)
        assert [(f.kind, f.start, f.end) for f in again] == [(f.kind, f.start, f.end) for f in facts]


def test_an_opening_place_next_to_the_client_is_the_residence_and_a_market_is_a_place():
    assert [(f.label, f.value) for f in of_kind(extract("Widow, 81, Geneva. CHF 12 Mio."), "place")] == [
        ("residence", "CH-GE")
    ]
    found = of_kind(extract("US-listed shares worth $3M; she lives in Zug."), "place")
    assert [(f.label, f.value) for f in found] == [("place", "US"), ("residence", "CH-ZG")]


def test_labels_name_the_thing_a_figure_belongs_to():
    def labels(text):
        return {f.text: f.label for f in extract(text) if f.kind in ("amount", "percent", "limit")}

    # "X worth Y", "X valued at Y": the thing before, not "value"
    found = labels("Also owns a cabin in Aspen worth $1.2M and a bakery business valued at $3M.")
    assert found["$1.2M"] == "cabin"
    assert found["$3M"] == "bakery business"
    # a deal's price: "sold ... for", "bought ... for"
    found = labels("He sold his print shop for $800k; a loft near Lyon bought for 300 000 € in 2010.")
    assert found["$800k"] == "sale price"
    assert found["300 000 €"] == "purchase price"
    # "X holds Y", "X (Y)", "X balance of Y", a list item, a place between noun and figure
    found = labels("Her pension fund holds CHF 500'000. A flat in Bern (CHF 900'000). Kontokorrent 40.000 EUR.")
    assert found["CHF 500'000"] == "pension fund balance"
    assert found["CHF 900'000"] == "flat"
    assert found["40.000 EUR"] == "kontokorrent"
    # "Y with a bank in X", "Y in a Z portfolio", "Y of it is X"
    found = labels("$2M with a bank in Miami, $5M in a Swiss portfolio; $4M of it is company stock.")
    assert found["$2M"] == "bank account"
    assert found["$5M"] == "portfolio"
    assert found["$4M"] == "company stock"
    # a noun right against the figure beats one further after it; "in total" after a named account
    found = labels("Bonus $90k plus options. Three ISAs with about £300k in total.")
    assert found["$90k"] == "bonus"
    assert found["£300k"] == "ISA balance"
    # the subject of "is": "Spending need is ..."
    assert labels("Spending need is $120,000 a year.")["$120,000"] == "annual spending"
    # "Y in/of Z" names Z unless Z is a place; the subject of a percent
    found = labels("Also $1M in T-bills, $300k of US REITs and CHF 2 Mio. in Austria. The custody fee is 0.4%.")
    assert found["$1M"] == "t-bills"
    assert found["$300k"] == "US REITs"
    assert found["CHF 2 Mio."] == "amount"
    assert found["0.4%"] == "custody fee"
    # a floor, a cash reserve, a name right after the figure at the clause's end
    found = labels("Savings must not fall below $50k. Keep CHF 80'000 liquid. Warrants with a $700k spread.")
    assert found["$50k"] == "savings floor"  # a limit now (role floor, base savings)
    assert found["CHF 80'000"] == "liquidity minimum"  # a limit: keep at least this much liquid
    assert found["$700k"] == "spread"
    # "(now ...)" after a thing's price is its value today; "X starts ... at Y"
    found = labels("A chalet bought for CHF 400'000 in 1999 (now about CHF 1.1 Mio.). Her pension starts in 2027 at $2,000.")
    assert found["CHF 1.1 Mio."] == "chalet value"
    assert found["$2,000"] == "pension"
    # "a year" after a percent is when, not what; "at least" makes it a minimum
    assert labels("The trust must pay out at least 4% a year.")["4%"] == "minimum"
    # an acronym in a list, "the two X (Y)", a reserve kept in a place, money toward a purchase
    found = labels("Assets: PEA 90 000 €, the two VCTs (£40k). Must keep $1M in Canada for staff. They help their son buy a flat with $150k.")
    assert found["90 000 €"] == "PEA balance"  # a PEA is an account (data/vocabulary.toml)
    assert found["£40k"] == "VCTs"
    assert found["$1M"] == "reserve"
    assert found["$150k"] == "flat contribution"
    # a bare value in a parenthesis is the value of the thing the parenthesis follows
    found = labels("He gives appreciated shares (basis $10k, value $90k) and a villa in Ibiza (market value €2M).")
    assert found["$90k"] == "shares value"
    assert found["€2M"] == "villa value"
    # "net worth" is not a thing called "net"; time words after a figure name nothing; "is valued at"
    found = labels("Net worth roughly €12m. She received $500k last year. The estate is valued at $30M.")
    assert found["€12m"] == "net worth"
    assert found["$500k"] == "amount"
    assert found["$30M"] == "estate"
    # a note's heading names its figure, unless the words after it name it
    found = labels("Cash: $250k. Holdings: $2M in a brokerage account.")
    assert found["$250k"] == "cash"
    assert found["$2M"] == "brokerage account balance"
    # a name from the words before ends at its noun, not at the verb after it
    assert labels("Annual expenses run around $200k.")["$200k"] == "annual expenses"


# ---- the three cases, phrased afresh (not the benchmark's wording) --------------------------------------------------

CALIFORNIAN_AFRESH = (
    "My client is a 61-year-old software executive living in San Jose, California. Of her $3.2M investable "
    "portfolio, about 70% is her employer's stock (a single tech name), with a cost basis of roughly $400k. She earns "
    "a $450k salary plus RSUs and is already hit by the 3.8% NIIT. She wants to get the single-stock position below "
    "20% of the portfolio within three years while keeping the tax bill manageable."
)


def test_a_fronted_base_a_tax_rate_and_a_limit_the_client_sets_are_read_as_what_they_are():
    percents = {f.text: f for f in extract(CALIFORNIAN_AFRESH) if f.kind == "percent"}
    assert (percents["70%"].label, percents["70%"].base) == ("employer stock share", "portfolio")  # "Of her $3.2M ..."
    assert (percents["3.8%"].label, percents["3.8%"].base) == ("NIIT rate", "")  # a tax's rate, no share of anything
    [cap] = of_kind(extract(CALIFORNIAN_AFRESH), "limit")  # "get the single-stock position below 20%"
    assert (cap.label, cap.value, cap.unit, cap.role, cap.base) == ("position cap", 20, "%", "cap", "single-stock position")


FLORIDA_AFRESH = (
    "A retired couple in Naples, Florida, both 68, have $1.1M in traditional IRAs and $250k in Roth IRAs. They want "
    "a withdrawal order for the next ten years that keeps them under the IRMAA thresholds and uses Roth conversions "
    "in the low-bracket years. What sequence do you recommend?"
)


def test_a_thing_wanted_is_a_goal_and_a_roth_conversion_is_an_instrument_the_client_listed():
    facts = extract(FLORIDA_AFRESH)
    assert [f.text for f in of_kind(facts, "goal")] == [
        "a withdrawal order for the next ten years that keeps them under the IRMAA thresholds and uses Roth "
        "conversions in the low-bracket years"
    ]
    assert [(f.value, f.text) for f in of_kind(facts, "instrument")] == [("Roth conversion", "Roth conversions")]
    assert [f.value for f in of_kind(facts, "place")] == ["US-FL"]  # Naples, Florida: not Naples, Italy


def test_a_share_is_not_named_after_the_time_it_takes():
    facts = extract("He wants to bring equities under 60% of the $2M portfolio within two years.")
    [limit] = of_kind(facts, "limit")
    assert (limit.label, limit.role, limit.base) == ("equities cap", "cap", "equities") and "year" not in limit.label
    [horizon] = of_kind(facts, "horizon")
    assert (horizon.value, horizon.unit, horizon.role) == (2, "years", "within")


def test_the_reader_generalises_its_rules():
    """Issue 30, the burned held-out set's causes, each as a rule on new words (not the set's sentences)."""

    def facts(text):
        return [(f.kind, f.role, f.label, f.value, f.base) for f in extract(text)]

    # a heading word is no person; the whole is what the text names, not the word after the figure's period
    read = facts("Church endowment, Lucerne, CHF 80 Mio. Strategy 50/30/20 equities/bonds/real estate.")
    assert not any(k in ("person", "age") for k, *_ in read)
    assert any(k == "percent" and r == "target" and lab == "equities target" and "endowment" in b for k, r, lab, v, b in read)
    # a heading figure is the base of the shares under it; a tenor is no horizon; a class after a tenor
    read = facts("Client Ben (47), Tempe. $2M: 70% equities / 30% cash. Wants 20% in 10-year gilts.")
    assert any(k == "percent" and r == "share" and lab.startswith("equities") and v == 70 and b == "portfolio" for k, r, lab, v, b in read)
    assert not any(k == "horizon" for k, *_ in read)
    assert any(k == "percent" and r == "target" and "gilts" in lab for k, r, lab, *_ in read)
    # twins are two children; a stake written after the figure
    read = facts("The firm is an S corp valued near $9M, owned 60% by Ana (58) and 40% by her sister Eva (55). The twins (age 9).")
    assert ("person", "child", "twins", 2, "") in read
    assert ("percent", "share", "Ana's stake", 60.0, "S corp") in read
    # a list of bare numbers after as many shares is the other role; a noun before "min." is its base
    read = facts("It holds sixty percent stocks and forty percent bonds, against a target of fifty and fifty. Cash min. CHF 2 Mio.")
    assert ("percent", "target", "stocks target", 50.0, "") in [(k, r, lab, v, "") for k, r, lab, v, _ in read]
    assert any(k == "limit" and r == "minimum" and b == "cash" for k, r, lab, v, b in read)


def test_where_an_owner_sits_and_the_word_after_a_class_name_no_fact():
    """Tried as a new user (issue 30): "seated zurich" was a foundation's capital, "alternatives against a" a class."""
    text = (
        "Stiftung Alpenlicht, seated in Zurich, CHF 45M. Today 52/33/15 equities/bonds/alternatives against a target "
        "of 40/40/20."
    )
    facts = extract(text)
    capital = next(f for f in facts if f.kind == "amount")
    assert capital.label == "stiftung alpenlicht" and capital.value == 45_000_000
    shares = {(f.label, f.role) for f in facts if f.kind == "percent"}
    assert ("alternatives", "share") in shares and ("alternatives target", "target") in shares
    assert all(f.base == "stiftung alpenlicht" for f in facts if f.kind == "percent")


def test_an_amount_moved_into_a_holding_does_not_name_the_holding():
    # The demo's first problem: the equities go *to* the portfolio, so the CHF 18m is the portfolio (not "equities 2"),
    # and its shares are of the portfolio: 60% of CHF 2.4m passed as 60% of the equities.
    text = (
        "Build an investment thesis for adding CHF 2.4m of European healthcare equities to a CHF 18m family portfolio "
        "that is 60% global equities, 30% CHF bonds and 10% cash, for a client aged 58 retiring in 7 years."
    )
    facts = {f.label: f for f in extract(text)}
    assert facts["portfolio"].value == 18_000_000 and facts["equities"].value == 2_400_000
    assert facts["global equities share"].base == "portfolio"


def test_a_verb_of_size_names_its_subject_and_what_a_body_manages_is_its_assets():
    # "stands at" reaches back past the place in commas to the endowment; "manages" names managed assets; the
    # shares in the next sentence are then of that whole, not of a verb.
    text = (
        "The Aldine College endowment in Dayton, Ohio, stands at $310M. Policy is 60% equities, 40% bonds. "
        "Separately, the Stiftung Seeblick in Lausanne manages CHF 48M."
    )
    facts = [f for f in extract(text) if f.kind in ("amount", "percent")]
    assert [(f.label, f.value) for f in facts if f.kind == "amount"] == [
        ("endowment", 310_000_000), ("managed assets", 48_000_000)
    ]
    assert {f.base for f in facts if f.kind == "percent"} == {"endowment"}


def test_homes_in_the_plural_place_their_town_as_a_property_beside_the_residence():
    found = of_kind(extract("Hugo (68), Lyon\n- two flats in Lyon, EUR 900k\n- cash EUR 80k"), "place")
    assert [(f.role, f.value, f.start) for f in found] == [("residence", "FR", 11), ("property", "FR", 31)]


def test_a_second_goal_after_a_participle_clause_is_read_too():
    text = "They hope to sell the chalet in Verbier, keeping the furniture, and to buy a flat in Sion. Cash CHF 2M."
    goals = [f.value for f in extract(text) if f.kind == "goal"]
    assert goals == ["sell the chalet in Verbier", "buy a flat in Sion"]


def test_a_goal_that_is_only_its_verb_before_a_bound_is_no_goal_the_bound_is_the_limit():
    facts = extract("He wants to hold at least three hundred thousand euros in cash. He plans to retire at 60.")
    assert [f.value for f in facts if f.kind == "goal"] == ["retire at 60"]
    assert [(f.value, f.role) for f in facts if f.kind == "limit"] == [(300_000.0, "minimum")]


def test_a_generic_name_after_the_specific_instrument_is_the_same_instrument():
    text = "The Keller family foundation in Zug holds CHF 30M. Next year the foundation wants to add a donor-advised fund."
    assert [f.value for f in extract(text) if f.kind == "instrument"] == ["family foundation", "donor-advised fund"]


@pytest.mark.parametrize(
    "text",
    [
        "Anna Meier (63) lives in Basel. From her years in Stuttgart she still keeps EUR 200'000 in a German account.",
        "Paul Roux, 58, lives in Geneva; he grew up in Lyon and keeps a flat-free portfolio of CHF 2M.",
        "Maria Rossi (70) lives in Lugano. She was born in Milan and holds CHF 3M at a Lugano bank.",
    ],
)
def test_a_place_of_the_clients_past_is_no_residence(text):
    residences = [f.value for f in extract(text) if f.kind == "place" and f.role == "residence"]
    assert len(residences) == 1 and residences[0].startswith("CH-"), residences


@pytest.mark.parametrize(
    "text, shares",
    [
        # where a holding drifted to is today's share; the word after the slashes names them the target
        (
            "Rebalance a CHF 12m portfolio drifted to 72% equities against a 60/40 target, minimising realised gains.",
            [("equities share", 72.0, "share"), ("equities target", 60.0, "target"), ("bonds target", 40.0, "target")],
        ),
        (
            "A CHF 5m portfolio at 72% equities versus a 60/40 policy.",
            [("equities share", 72.0, "share"), ("equities target", 60.0, "target"), ("bonds target", 40.0, "target")],
        ),
        (
            "Equities drifted to 72% against a 60/40 target.",
            [("equities share", 72.0, "share"), ("equities target", 60.0, "target"), ("bonds target", 40.0, "target")],
        ),
        ("Equities have risen to 68% versus a 55% target.", [("equities share", 68.0, "share"), ("equities target", 55.0, "target")]),
        ("Move the portfolio to 60% equities.", [("equities target", 60.0, "target")]),
        ("Bring equities back to target 70%.", [("equities target", 70.0, "target")]),  # the class before "target"
        ("Move bonds to the target of 40%.", [("bonds target", 40.0, "target")]),
    ],
)
def test_a_drifted_share_is_todays_and_a_share_named_a_target_after_it_is_the_target(text, shares):
    assert [(f.label, f.value, f.role) for f in extract(text) if f.kind == "percent"] == shares


@pytest.mark.parametrize(
    "text, share",
    [
        # a hedge word first is no owner ("Roughly's stake"); the case's total is the whole of a class's share
        (
            "Client based in London, 52, £2.1m in total: SIPP £780k, ISA £320k, the rest in a general brokerage "
            "account. Roughly sixty percent is UK large caps.",
            ("UK large caps share", 60.0, "share", "total assets"),
        ),
        # "dont" and "davon" are "of which": a share of the amount before, not a rate of a name in capitals
        ("Client à Nantes, 59, 1 850 000 € de patrimoine financier dont 25 % en SCPI.", ("SCPI share", 25.0, "share", "portfolio")),
        ("Depot EUR 2M, davon 60 % in Aktien.", ("aktien share", 60.0, "share", "brokerage account balance")),
    ],
)
def test_a_share_of_the_clients_wealth_is_read_with_its_base(text, share):
    assert [(f.label, f.value, f.role, f.base) for f in extract(text) if f.kind == "percent"] == [share]


@pytest.mark.parametrize(
    "text, percent",
    [
        # a loss limit on a named holding is of that holding; with none named, of all the client holds
        ("She has a $5 million bond ladder and $2 million in T-bills. Cannot accept more than a 5% drawdown on the bond sleeve.",
         ("drawdown limit", 5.0, "bond ladder")),
        ("$3.1M in total: $1.8M in IRAs, $400k cash. They can't stomach more than a 20% drop.",
         ("drop limit", 20.0, "total assets")),
        # a rate right after an amount is that amount's: "$420k of student loans at 6.8%"
        ("Boston physician, 36: $420k of student loans at 6.8%, salary $390k.", ("loans interest rate", 6.8, "loans")),
        # of two accounts, the one the text placed where the hedge's words name it
        ("Two million euros in a German Depot and CHF 750'000 with a bank in Kreuzlingen. What would a fifty percent "
         "hedge of the Kreuzlingen account have cost?", ("hedge share", 50.0, "bank account")),
    ],
)
def test_a_percent_tied_to_one_amount_by_its_words_takes_it_as_its_base(text, percent):
    """So that the same percent taken of another amount is a wrong base (the noisy model's '5% of the USD 2M t-bills
    = USD 100k' and '6.8% of the USD 60k IRA balance' had ended sessions solved, issue 31 section 3)."""
    assert [(f.label, f.value, f.base) for f in extract(text) if f.kind == "percent"] == [percent]


@pytest.mark.parametrize(
    "text, amount",
    [
        # an account "with" an amount of something: the amount is that thing, not a second balance of the account
        ("A $2.4M taxable brokerage account with $180k of unrealised losses in two bond funds.", ("unrealised losses", 180_000.0)),
        ("A CHF 3M portfolio with CHF 900k in T-bills, rolled monthly.", ("t-bills", 900_000.0)),
    ],
)
def test_an_amount_an_account_has_of_something_is_that_thing(text, amount):
    assert amount in [(f.label.lower(), f.value) for f in extract(text) if f.kind == "amount"]


@pytest.mark.parametrize(
    "text, limit",
    [
        ("She has $300k in cash, of which at least $120k must stay as an emergency fund.",
         ("emergency fund minimum", 120_000.0, "cash")),
        ("She has $300k in cash, of which at least $120k must stay liquid.", ("liquidity minimum", 120_000.0, "cash")),
        ("At least $120k must stay in cash.", ("cash minimum", 120_000.0, "cash")),
    ],
)  # fmt: skip
def test_a_minimum_is_named_by_what_it_is_kept_as_and_of_which_amount(text, limit):
    assert [(f.label, f.value, f.base) for f in extract(text) if f.kind == "limit"] == [limit]


def test_a_turnover_cap_is_named_for_its_period():
    """It was a bare "cap" on the sheet an advisor reads: "No more than 5 % turnover per quarter"."""
    limits = [(f.label, f.value, f.role) for f in extract("Fonds euros 1,6 M€. No more than 5 % turnover per quarter.")
              if f.kind == "limit"]  # fmt: skip
    assert limits == [("turnover cap per quarter", 5.0, "cap")]
