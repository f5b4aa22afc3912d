"""The case's terms (reasoning/facts/terms.py) as the reader puts them on the sheet: each percent's base and role."""

from reasoning.facts.extract import extract


def percents(text):
    return [(f.label, f.value, f.role, f.base) for f in extract(text) if f.kind == "percent"]


def test_a_bare_slash_list_after_a_slash_list_of_named_shares_takes_its_classes():
    text = (
        "Harbor Trust (Portland)\n- corpus $80M, payout 4.5% a year\n"
        "- target: 55% stocks / 35% bonds / 10% real assets\n- today: 61% / 31% / 8%"
    )
    assert percents(text)[-3:] == [
        ("stocks", 61.0, "share", "corpus"), ("bonds", 31.0, "share", "corpus"), ("real assets", 8.0, "share", "corpus")
    ]


def test_a_linking_verb_after_a_policy_word_does_not_make_the_policy_today_s_mix():
    text = "Portfolio CHF 9M. Current weights are 70/20/10 equities/bonds/cash; the board's policy is 60/30/10."
    assert [(label, role) for label, _, role, _ in percents(text)] == [
        ("equities", "share"), ("bonds", "share"), ("cash", "share"),
        ("equities target", "target"), ("bonds target", "target"), ("cash target", "target"),
    ]


def test_an_owner_named_first_in_a_sentence_holds_a_stake():
    text = "Their GmbH, a tool maker, has an offer of EUR 15m. Jonas (70) owns 60%, his son Lukas 40%."
    assert percents(text) == [("Jonas's stake", 60.0, "share", "offer"), ("Lukas's stake", 40.0, "share", "offer")]


def test_a_percent_after_an_amount_and_a_comma_is_a_share_of_it_whatever_its_class_yields():
    text = "$4.2M portfolio, 25% in tech stocks yielding 1.1% on average. Portfolio EUR 3.1M, 9% in uranium miners."
    got = percents(text)
    assert got[0][1:] == (25.0, "share", "portfolio") and got[1][1:3] == (1.1, "return")
    assert got[2][1:] == (9.0, "share", "portfolio")


def test_a_share_the_client_means_to_reach_is_a_target_of_the_share_before_it():
    assert percents("Note: Portfolio EUR 3.1M, 9% in uranium miners today; wants 15% by next summer.")[1] == (
        "uranium miners target", 15.0, "target", "portfolio"
    )
    assert percents("Depot EUR 1.9M, of which 5% gold. She wants to raise that to 10% within a year.")[1][1:] == (
        10.0, "target", "brokerage account balance"
    )
    assert percents("Pension fund CHF 800k, of which she plans to take 40% as a lump sum.")[0][1:] == (
        40.0, "target", "pension fund balance"
    )
    # a rate drawn each year stays a spending rate
    assert percents("Endowment $60M. She wants to draw 4% a year of the endowment.")[0][2:] == ("spending", "endowment")


def test_tax_free_and_an_account_name_make_no_tax_rate():
    assert percents("IRA $900k. He wants to draw 30% of the IRA tax-free next year.")[0][1:] == (
        30.0, "target", "IRA balance"
    )
    assert percents("$2M in munis yielding 3.2% tax-free.")[0][2] == "return"


def test_a_tax_rate_has_a_base_only_where_it_is_charged_on_an_amount():
    assert percents("A 30% flat tax on investment income applies.")[0][3] == "investment income"
    assert percents("Gains of £300k; CGT at 20% on the gains.")[0][3] == "gains"
    assert percents("Stamp duty 3% on second homes.")[0][2:] == ("tax", "")
    assert percents("Solidaritätszuschlag 5,5 % on top.")[0][2:] == ("tax", "")


def amounts_and_limits(text):
    return [(f.kind, f.label, f.value, f.role) for f in extract(text) if f.kind in ("amount", "limit")]


def test_a_debt_said_after_another_amount_is_that_amount_s_not_the_holding_s():
    assert amounts_and_limits("Rental portfolio EUR 3.4m with EUR 1.1m of loans; cash EUR 200k.") == [
        ("amount", "portfolio", 3_400_000, ""), ("amount", "loans", 1_100_000, "liability"), ("amount", "cash", 200_000, "")
    ]


def test_an_amount_kept_as_cash_or_needed_as_income_is_a_minimum():
    assert amounts_and_limits("Portfolio $3M. Keep $150k cash.")[1] == ("limit", "cash minimum", 150_000, "minimum")
    assert amounts_and_limits("She needs EUR 6,000 a month to live on.") == [
        ("limit", "monthly income minimum", 6_000, "minimum")
    ]
    assert amounts_and_limits("Needs $120k a year of pension income.") == [("limit", "income minimum", 120_000, "minimum")]


def horizons(text):
    return [(f.value, f.unit, f.role) for f in extract(text) if f.kind == "horizon"]


def test_a_horizon_in_tax_years_a_month_and_year_or_a_trend_to_a_year():
    assert horizons("He plans to sell three rental flats over 3 tax years.") == [(3.0, "years", "over")]
    assert horizons("Rebalance by March 2028.") == [(2028.0, "year", "by")]
    assert horizons("She expects AI capex to keep rising 20% a year to 2029.") == [(2029.0, "year", "by")]
    assert horizons("Gifts of up to 2030 euros.") == []


def test_a_state_named_in_a_tax_is_no_home_and_an_amount_in_words_is_read_whole():
    text = "Client Ann (60), Boston. Massachusetts estate tax applies above $2M. Bonds of two million four hundred thousand dollars."
    facts = extract(text)
    assert [(f.value, f.role) for f in facts if f.kind == "place"] == [("US-MA", "residence")]
    assert [f.value for f in facts if f.kind == "amount"][-1] == 2_400_000


def test_a_stake_owned_of_a_company_or_held_in_one_is_a_stake_of_it():
    text = ("Anna Rossi, fifty-eight, lives in Parma and owns seventy percent of a tile-making S.r.l. based in Modena, "
            "worth about twelve million euros; her brother Luca holds the other thirty percent.")
    assert percents(text) == [("Anna's stake", 70.0, "share", "company value"), ("Luca's stake", 30.0, "share", "company value")]
    assert percents("Urs Meier (59), Chur, holds 100% of Meier Bau AG (seat: Thusis).") == [
        ("Urs's stake", 100.0, "share", "Meier Bau AG")
    ]
    assert percents("Estate ~$9M: $4M brokerage, a 25% stake (valued at $3.5M) in a Tucson restaurant group.")[0][2:] == (
        "share", "group"
    )


def test_compounding_is_growth_ltcg_a_tax_and_raising_a_draw_keeps_it_a_spending_rate():
    assert percents("Her thesis: cloud software keeps compounding at 18% a year.")[0][2] == "growth"
    assert [p[2] for p in percents("- STCG at 37% - LTCG at 20%")] == ["tax", "tax"]
    text = "Endowment $80M, payout 4%. The trustees want to lift the payout to 4.5% next year."
    assert [p[2] for p in percents(text)] == ["spending", "spending"]


def test_a_real_return_an_aim_that_is_not_this_percent_s_and_a_half_in_words():
    text = "The Barrow Trust, a charity with a £30m endowment, aims for CPI + 3% and spends 3% of a five-year average value."
    assert [(p[1], p[2]) for p in percents(text)] == [(3.0, "return"), (3.0, "spending")]
    assert percents("The endowment, nine hundred million dollars, spends four and a half percent a year.")[0][1:3] == (
        4.5, "spending"
    )


def test_owners_listed_after_a_colon_or_named_before_owns_hold_stakes():
    text = ("Family firm in Linz: Huber Metall GmbH, equity value approx. EUR 12 Mio. "
            "Owners: Eva (55) 60 %, her brother Karl (52) 40 %.")
    assert [p[0] for p in percents(text)] == ["Eva's stake", "Karl's stake"]
    assert percents("Ohio client Dan (61) owns 100% of an S corp (roofing) worth $9M on a recent offer.")[0][0] == "Dan's stake"


def test_a_share_already_in_a_class_after_an_amount_and_an_intent_with_its_own_thing_keeps_no_borrowed_base():
    assert percents("Portfolio $1.8M, 40% already in biotech.") == [("biotech share", 40.0, "share", "portfolio")]
    text = "Joint account EUR 450k, 60/40 bonds/equities. Pensionskasse CHF 700k. She wants to take 30% as capital."
    assert percents(text)[-1][1:] == (30.0, "target", "")


def kinds(text, *wanted):
    return [(f.kind, f.value, f.role) for f in extract(text) if f.kind in wanted]


def test_a_bullet_age_a_commitment_that_totals_a_fee_cap_and_a_stay_under_amount():
    assert ("horizon", 72.0, "by") in kinds("- conversions of $90k/yr until Rosa turns 72 - LTCG at 15%", "horizon")
    assert kinds("Uncalled commitments to growth and credit funds total $21M, spread over years.", "amount") == [
        ("amount", 21_000_000, "commitment")
    ]
    assert kinds("Trustee rules: fees no higher than 45 bps overall.", "limit") == [("limit", 0.45, "maximum")]
    assert kinds("Annual gifts must stay under fifteen thousand euros per grandchild.", "limit", "amount") == [
        ("limit", 15_000, "cap")
    ]


def test_a_list_that_names_each_class_before_its_percent_takes_its_role_from_the_head_of_the_list():
    text = (
        "Stiftung Seeblick, Luzern\n- Vermögen CHF 20 Mio.\n- today: stocks 61 %, bonds 24 %, gold 9 %, cash 6 %\n"
        "- target: stocks 50 %, bonds 35 %, gold 10 %, cash 5 %"
    )
    found = percents(text)
    assert [(label, role) for label, _, role, _ in found] == [
        ("stocks", "share"), ("bonds", "share"), ("gold", "share"), ("cash", "share"),
        ("stocks target", "target"), ("bonds target", "target"), ("gold target", "target"), ("cash target", "target"),
    ]
    assert {base for *_, base in found} == {"vermögen"}


def limits_of(text):
    return [(f.label, f.value, f.role) for f in extract(text) if f.kind == "limit"]


def test_a_bound_said_after_its_percent_caps_the_share_before_it_and_staying_within_a_bracket_is_a_maximum():
    assert limits_of("Portfolio $2M, 12% in biotech today. She wants 20% max, paid for from bonds.") == [
        ("biotech cap", 20.0, "cap")
    ]
    assert limits_of("He converts $90k a year to Roth, staying within the 24% bracket.") == [("bracket cap", 24.0, "maximum")]


def test_stakes_of_children_named_in_the_plural_a_verb_first_and_a_part_the_owner_means_to_sell():
    found = percents("Weber Metall AG is valued at CHF 12 Mio.; Hans (66) holds 70 %, his daughters Eva (38) 20 % "
                     "and Lea (35) 10 %.")
    assert [(label, value) for label, value, *_ in found] == [
        ("Hans's stake", 70.0), ("Eva's stake", 20.0), ("Lea's stake", 10.0)
    ]
    found = percents("Notes: Own 80% of Ridge Roofing LLC, revenue $9M. Tom wants to sell 30% to his foreman by 2028. "
                     "Keep min. $500k cash outside the business.")
    assert found == [("stake", 80.0, "share", "Ridge Roofing LLC"), ("share to sell", 30.0, "target", "Ridge Roofing LLC")]


def test_a_fraction_of_it_is_a_share_of_the_amount_just_said():
    found = percents("He has three million francs invested, a third of it in Swiss equities. No debts.")
    assert found == [("swiss equities", 100 / 3, "share", "assets")]


def horizons_of(text):
    return [(f.label, f.value, f.unit, f.role) for f in extract(text) if f.kind == "horizon"]


def test_the_time_commitments_take_to_be_called_is_a_horizon_and_an_averaging_window_is_none():
    assert horizons_of("Fund $90M. $12M of uncalled commitments, about 3 years to be called.") == [
        ("commitment drawdown", 3.0, "years", "over")
    ]
    assert horizons_of("The trust pays 4% of its trailing value over three years to the charity.") == []


def test_a_name_set_off_by_commas_before_its_age_is_the_client():
    found = [(f.kind, f.label, f.value, f.role) for f in extract("Our client, Nora, is sixty-eight and lives in Bern.")
             if f.kind in ("person", "age")]
    assert found == [("person", "Nora", 1, "client"), ("age", "Nora's age", 68.0, "client")]


def test_another_sum_in_words_is_money_in_the_currency_just_named_and_another_count_of_things_is_not():
    text = ("Her savings are CHF 400,000, and she expects another one hundred and twenty thousand from her mother. "
            "He bought another fifty thousand shares.")
    assert [(f.value, f.unit) for f in extract(text) if f.kind == "amount"] == [(400_000.0, "CHF"), (120_000.0, "CHF")]


def _limits_and_gifts(text):
    from reasoning.facts.extract import extract

    return [(f.kind, f.label, f.value, f.role, f.base) for f in extract(text) if f.kind in ("limit", "amount", "place")]


def test_never_holding_less_than_an_amount_is_a_floor():
    found = _limits_and_gifts("She wants to never hold less than 50.000 EUR on the Tagesgeld.")
    assert ("limit", "tagesgeld minimum", 50000.0, "minimum", "tagesgeld") in found


def test_a_verb_before_no_more_than_names_the_cap_and_a_period_is_no_object():
    found = _limits_and_gifts("He wants to sell no more than CHF 300'000 of equities per year.")
    assert ("limit", "sales cap", 300000.0, "cap", "equities") in found


def test_a_gift_to_each_person_is_the_clients_goal_per_person():
    found = _limits_and_gifts("She wants to give each child 150.000 EUR and each grandchild 20.000 EUR.")
    assert ("amount", "gift per child", 150000.0, "goal", "") in found
    assert ("amount", "gift per grandchild", 20000.0, "goal", "") in found


def test_a_town_after_a_name_and_an_age_is_the_clients_home():
    found = _limits_and_gifts("Client: Megan O'Neill, 52, Portland, Oregon. Goal: sell.")
    assert ("place", "residence", "US-OR", "residence", "") in found
