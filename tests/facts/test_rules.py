"""The rule table per jurisdiction (reasoning/facts/data/jurisdictions.toml) and the check that a text applies only the
taxes and measures of the client's places (reasoning/facts/rules.py), on sentences written in an advisor's style."""

import pytest

from reasoning.facts import rules
from reasoning.facts.sheet import Fact, Finding

CANTONS = "AG AI AR BE BL BS FR GE GL GR JU LU NE NW OW SG SH SO SZ TG TI UR VD VS ZG ZH".split()
STATES = (
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR "
    "PA RI SC SD TN TX UT VT VA WA WV WI WY"
).split()


def places(*codes):
    return [Fact("residence", "place", code, "ISO 3166") for code in codes]


def kinds_of(code):
    return {k for t in rules.table().places[code].taxes for k in t.kinds}


# ---- the table --------------------------------------------------------------------------------------------------


def test_the_table_covers_every_canton_state_and_named_country():
    table = rules.table()
    assert table.as_of == "2025" and "not advice" in table.disclaimer
    assert {f"CH-{c}" for c in CANTONS} <= set(table.places) and len(CANTONS) == 26
    assert {f"US-{s}" for s in STATES} <= set(table.places) and len(STATES) == 51
    assert {"CH", "DE", "AT", "GB", "FR", "IT", "US", "SG"} <= set(table.places)


def test_every_canton_taxes_wealth_and_income_but_schwyz_no_inheritance():
    for canton in CANTONS:
        assert {"wealth", "income"} <= kinds_of(f"CH-{canton}"), canton
    assert "inheritance" not in kinds_of("CH-SZ")
    assert "inheritance" in kinds_of("CH-ZH")
    assert "capital_gains" not in kinds_of("CH")  # private movable gains are tax-free


@pytest.mark.parametrize("state", ["AK", "FL", "NV", "SD", "TN", "TX", "WY", "NH", "WA"])
def test_states_without_an_income_tax(state):
    assert "income" not in kinds_of(f"US-{state}")


@pytest.mark.parametrize("state", ["CT", "DC", "HI", "IL", "ME", "MD", "MA", "MN", "NY", "OR", "RI", "VT", "WA"])
def test_states_with_an_estate_tax(state):
    assert "estate" in kinds_of(f"US-{state}")


@pytest.mark.parametrize("state", ["KY", "MD", "NE", "NJ", "PA"])
def test_states_with_an_inheritance_tax(state):
    assert "inheritance" in kinds_of(f"US-{state}")


def test_the_countries_rules():
    assert "wealth" not in kinds_of("DE") and "wealth" not in kinds_of("AT") and "wealth" not in kinds_of("GB")
    assert "inheritance" not in kinds_of("AT") and "inheritance" in kinds_of("DE")
    assert "wealth" not in kinds_of("US") and "inheritance" not in kinds_of("US-IA")
    assert "capital_gains" in kinds_of("US-WA")
    assert any(26.375 in t.rates for t in rules.table().places["DE"].taxes)
    assert any(27.5 in t.rates for t in rules.table().places["AT"].taxes)
    assert any(30 in t.rates and t.flat for t in rules.table().places["FR"].taxes)


# ---- slips: a tax or measure the client's places do not have ------------------------------------------------------

SLIPS = [
    # (the client's places, the sentence, the span flagged)
    (("US-TX",), "A flat 25% tax takes the gains, so the sale nets about $1.5M.", "25%"),
    (("US-FL",), "At the 45% top rate, most of the bonus goes to tax.", "45%"),
    (("US-TX",), "Budget for 13.3% state tax on the sale of the business.", "state tax"),
    (("US-TX",), "The Californian 13.3% would take a large bite out of the gain.", "13.3%"),
    (("US-FL",), "Florida's state income tax will take another 5% of the bonus.", "state income tax"),
    (("US-NY",), "IHT at 40% applies above the nil-rate band.", "IHT"),
    (("US-FL", "US"), "Inheritance tax planning should start with the UK's IHT exposure.", "IHT"),
    (("CH-ZH",), "Use tax-loss harvesting on the equities to offset this year's gains.", "tax-loss harvesting"),
    (("CH-GE",), "Harvest losses in December to reduce the tax on the realised gains.", "Harvest losses"),
    (("CH-SZ",), "The inheritance tax on the children's share will be modest.", "inheritance tax"),
    (("AT",), "Austrian inheritance tax would take around 15% of the flat in Vienna.", "inheritance tax"),
    (("AT",), "She should plan for the wealth tax on the portfolio.", "wealth tax"),
    (("DE",), "The German wealth tax of 1% makes the cash drag worse.", "wealth tax"),
    (("GB",), "A wealth tax of 0.5% a year would cost him £40k.", "wealth tax"),
    (("US-FL",), "Consider state estate tax planning with a SLAT before year end.", "state estate tax planning"),
    (("US-TX",), "The state estate tax exemption is only $1M here.", "state estate tax exemption"),
    (("US-CA",), "Put the surplus into an ISA each year.", "ISA"),
    (("US-NY",), "Top up her SIPP before the tax year ends.", "SIPP"),
    (("DE",), "Max out pillar 3a contributions to cut the tax bill.", "pillar 3a"),
    (("GB",), "A Roth conversion this year would use the lower bracket.", "Roth conversion"),
    (("CH-ZH",), "A 1031 exchange would defer the tax on the rental's sale.", "1031 exchange"),
    (("FR",), "The Abgeltungsteuer of 26.375% applies to the dividends.", "Abgeltungsteuer"),
    (("IT",), "Wrap the bonds in an assurance-vie for the estate.", "assurance-vie"),
    (("US-TX",), "A 7% capital gains tax applies to gains above $270k.", "7%"),
    (("US-FL",), "A wealth tax of 1% would cost $30k a year.", "wealth tax"),
    (("US-NV",), "His marginal rate is 50% once state tax is added.", "state tax"),
    (("US-NV",), "His combined marginal rate on the bonus is 50%.", "50%"),
    (("DE",), "Capital gains are taxed at a flat 30% in Germany.", "30%"),
    (("AT",), "The dividends bear KESt at 30%.", "30%"),
    (("US-TN",), "The 12% state tax on dividends still applies.", "state tax"),
    (("CH-ZH",), "The 1.5% wealth tax would cost CHF 45k a year.", "1.5%"),
    (("US-FL",), "The top estate tax rate of 55% leaves the heirs less than half.", "55%"),
    (("CH-ZH",), "Capital gains tax of 20% on the ETF sale reduces the proceeds.", "Capital gains tax"),
    (("US-WY",), "Wyoming's estate tax would then apply at 16%.", "estate tax"),
    (("US-TX",), "The gain is taxed at 13.3% as ordinary income by the state.", "13.3%"),
    (("US-FL",), "KESt is withheld at source on the dividends.", "KESt"),
    (("US-FL",), "Florida's 5% inheritance tax applies to the nephew.", "5%"),
    (("US-TX",), "The state estate tax of 16% on the excess makes a bypass trust worthwhile.", "state estate tax"),
    (("AT",), "She can use the Sparer-Pauschbetrag of EUR 1,000 against the interest.", "Sparer-Pauschbetrag"),
    (("DE",), "Gains are taxed at 27.5% in Germany.", "27.5%"),
    (("GB",), "The 3.8% NIIT also applies to her gains.", "NIIT"),
    (("CH-ZG",), "Zug's wealth tax of 1.2% is the highest in the country.", "1.2%"),
    (("US-FL",), "The 26% flat tax on capital income keeps things simple.", "26%"),
    (("IT",), "Italy's 30% flat tax on dividends applies.", "30%"),
    (("FR",), "The French PFU of 26.375% applies to the dividends.", "26.375%"),
    (("CH-ZH",), "To cut the bill, realise losses to offset gains before year end.", "realise losses to offset gains"),
    (("US-FL",), "Her top marginal rate is 50.3% (37% federal + 13.3% state).", "13.3%"),
    (("US-FL",), "At the 13.3% top state rate, deferring the bonus saves $40k.", "13.3%"),
    (("CH-ZH",), "Open a Roth IRA for the daughter.", "Roth IRA"),
    (("GB",), "Contribute the maximum to the 401(k).", "401(k)"),
    (("US-NY",), "The 35% Verrechnungssteuer is withheld on the dividends.", "Verrechnungssteuer"),
    (("DE",), "The Swiss wealth tax would cost EUR 20k a year.", "wealth tax"),
    (("AT",), "The estate tax on the children's share is the main risk.", "estate tax"),
    (("US-TX",), "Long-term gains are taxed at 28%.", "28%"),
    (("US-TX",), "The 39.6% top rate applies to the bonus.", "39.6%"),
    # a US state's estate tax where it levies an inheritance tax only
    (("US-KY",), "Kentucky's estate tax exemption is small, so plan for a state estate tax bill.", "estate tax"),
    (("US-NJ",), "The state estate tax will add about 16% above the exemption.", "state estate tax"),
    # a Scot's income at the rest of the UK's rates; a collector taking a share
    (("GB-SCT",), "Her pension withdrawals above £50,270 are taxed at 40%.", "40%"),
    (("GB-SCT",), "Keep the salary under £50,270, so nothing is taxed at 40%.", "40%"),
    (("US-IL",), "Above the exemption, the state takes 20% of the estate.", "20%"),
    # another country's filings
    (("IT",), "She must file an FBAR for the Swiss account.", "FBAR"),
    (("DE",), "Report the Zurich account on Form 8938.", "Form 8938"),
    (("US-NY",), "List the London flat in the quadro RW.", "quadro RW"),
    # a share paid in tax written as a fraction
    (("CH-GE",), "The rebalancing gains lose roughly a fifth to tax, so go slowly.", "a fifth"),
    # withholding on gains is the home country's tax on gains
    (("AT",), "The share gains lose 35% to withholding.", "35%"),
    # another country's threshold named as one
    (("IT",), "Nothing is due on the first £325,000 (the nil-rate band).", "£325,000"),
    (("DE",), "Gifts below the $13.99M exemption pass free of tax.", "$13.99M"),
    # a top rate is the tax's highest, not any rate inside its range; the rate after a comma keeps its clause's tax
    (("US-NY",), "The state taxes the gains as ordinary income, at up to 13.3%.", "13.3%"),
    (("US-NY",), "New York's top rate is 12%.", "12%"),
    # Singapore taxes no capital gains (the table lacked it: the noisy model's flat 25% ended a session solved)
    (("SG",), "A flat 25% tax takes the gains.", "25%"),
    # France's wealth tax (IFI) is on real estate only: said of the portfolio it is the Swiss wealth tax carried over
    (("FR",), "A yearly wealth tax applies to the whole portfolio.", "yearly wealth tax"),
    (("FR",), "The wealth tax would hit the EUR 2.1M portfolio at 1%.", "wealth tax"),
    # one rate on all above the allowance is UK IHT's shape; France taxes each slice at its own rate
    (("FR",), "Inheritance tax at 40% applies above the allowance.", "40%"),
    (("FR",), "Droits de succession at 20% apply above the EUR 100,000 allowance per child.", "20%"),
    # a negation does not reach across "but"
    (("AT",), "There is no wealth tax, but the Erbschaftsteuer applies.", "Erbschaftsteuer"),
]


@pytest.mark.parametrize("codes, text, span", SLIPS, ids=[s[1][:40] for s in SLIPS])
def test_a_slip_is_flagged(codes, text, span):
    failed = [f for f in rules.findings(text, places(*codes)) if not f.ok]
    assert failed, f"not flagged: {text}"
    assert span in [f.text for f in failed], [(f.text, f.detail) for f in failed]
    for f in failed:
        assert f.kind == "jurisdiction" and text[f.start : f.end] == f.text


# ---- right sentences: nothing flagged ---------------------------------------------------------------------------

RIGHT = [
    (("CH-ZH",), "The Zurich wealth tax of about 0.5% costs roughly CHF 15k a year."),
    (("CH-ZH",), "Her wealth tax falls as the mortgage is kept, but private capital gains stay tax-free."),
    (("US-FL",), "She pays 20% federal LTCG plus the 3.8% NIIT on the gain."),
    (("US-FL",), "Florida has no state income tax, so only the federal 37% top rate applies."),
    (("US-TX",), "As a Texan he pays no state tax at all; the federal rate on the gain is 23.8% including NIIT."),
    (("DE",), "Capital income is taxed at 26.375% including the Soli."),
    (("DE",), "The Abgeltungsteuer of 25% plus Soli applies above the Sparer-Pauschbetrag of EUR 1,000."),
    (("AT",), "The 27.5% KESt is withheld on the dividends."),
    (("AT",), "Austria has had no inheritance tax since 2008 and no wealth tax."),
    (("US-NY",), "New York's estate tax tops out at 16%, with a cliff above the exemption."),
    (("US-NY",), "Assume a return of 7% a year on the portfolio."),
    (("US-FL",), "A 4% spending rate keeps the real value intact."),
    (("CH-ZH",), "Rebalance to 60% equities and 40% bonds over the next 9 months."),
    (("US-CA",), "The combined federal and state rate on the gain is about 37.1%."),
    (("US-CA",), "California taxes the gain as income, at up to 13.3%."),
    (("US-WA",), "Washington's 7% capital gains tax applies above about $270k."),
    (("GB",), "Fill both ISAs every April; CGT is 24% on gains above the annual exempt amount."),
    (("GB",), "IHT at 40% applies above the nil-rate band, so gifts now start the seven-year clock."),
    (("FR",), "The PFU of 30% applies to the dividends, and the IFI to the flat in Paris."),
    (("FR",), "The assurance-vie passes EUR 152,500 per beneficiary free of droits de succession."),
    (("IT",), "Gains are taxed at 26%, and IVAFE of 0.2% applies to the Swiss account."),
    (("IT",), "Italian government bonds are taxed at 12.5%, the rest at 26%."),
    (("US-NJ",), "New Jersey's inheritance tax spares the children but hits the nephew at up to 16%."),
    (("US-PA",), "Pennsylvania's inheritance tax takes 4.5% of what the children inherit."),
    (("CH-SZ",), "Schwyz levies no inheritance tax, so the children receive the estate tax-free."),
    (("CH-ZH",), "A Pensionskasse buy-in of CHF 120k is deductible; pillar 3a adds CHF 7,258 a year."),
    (("US-FL",), "A drawdown of 25% in equities would cut the portfolio to $3M."),
    (("US-TX",), "Fees of 1% a year compound to a large sum."),
    (("US-MA",), "Massachusetts adds a 4% surtax on income above $1M, for a 9% top rate."),
    (("US-FL",), "The federal estate tax is 40% above the $13.99M exemption."),
    (("US-FL",), "Unlike California, Florida levies no income tax on the bonus."),
    (("CH-GE",), "Geneva's wealth tax reaches about 1% at this level of wealth."),
    (("US-TX",), "Tax-loss harvesting offsets the federal tax on the gains."),
    (("CH-VD",), "Vaud taxes even the children's inheritance above CHF 250k, at low rates."),
    (("DE",), "Erbschaftsteuer applies to the son above his EUR 400k allowance, at 7% to 30%."),
    (("US-NY",), "Budget for 10.9% state income tax plus the NYC 3.876% on the bonus."),
    (("US-FL", "GB"), "IHT still reaches her UK flat, at 40% above the nil-rate band."),
    (("US-IL",), "Illinois taxes the estate above $4M, at up to 16%."),
    (("ES",), "The Spanish wealth tax applies to assets above EUR 700k."),
    (("CH-ZH",), "**Tax considerations:** Switzerland does not tax private capital gains, so the rebalancing itself is "
     "tax-neutral; dividends are taxed as income and the wealth tax (about 0.4% in Zurich) applies to the portfolio."),
    (("CH-ZH",), "Step 2: buy into the Pensionskasse (CHF 150k capacity), deductible at a marginal rate of about 40%."),
    (("US-FL",), "Gift $19,000 per grandchild under the annual exclusion; GST tax at 40% applies above the exemption."),
    (("US-CA",), "Harvesting losses offsets gains taxed at up to 37.1% combined."),
    (("DE",), "With church tax the rate rises to about 27.99%."),
    (("DE",), "Germany has not levied a wealth tax since 1997."),
    (("GB",), "The IHT bill is 40% of £1.5M above the bands, i.e. £600k."),
    (("FR",), "Succession duties for the children run from 5% to 45% after the EUR 100k allowance."),
    (("IT",), "The inheritance tax is 4% above EUR 1M per child."),
    (("US-TX",), "Texas has no state income tax, no estate tax and no inheritance tax."),
    (("US-TX",), "Withdraw 4% a year, about $200k, adjusted for inflation."),
    (("US-TX",), "The management fee is 0.75% and the performance fee 10%."),
    (("US-TX",), "Roughly 30% of the gain would go to taxes."),
    (("US-FL",), "The mortgage rate is 6.5% fixed for 30 years."),
    (("US-FL",), "The GRAT's 7520 rate of 5.2% sets the hurdle."),
    (("CH-ZH",), "The canton's tax multiplier is 98%."),
    (("CH-ZH",), "Zurich taxes the real estate gain on the flat at up to 40%, less for long holdings."),
    (("US-CA",), "Selling the RSUs triggers federal tax at 37% plus California's 13.3%, about 50% in total."),
    (("US-NJ",), "New Jersey's estate tax was repealed in 2018; its inheritance tax remains."),
    (("US-WA",), "Washington's estate tax now reaches 35%."),
    (("CH-GE",), "Geneva's top marginal rate, federal included, is about 45%."),
    (("CH-ZH", "US"), "As a US citizen she should still harvest losses for the IRS."),
    (("DE",), "Die Abgeltungsteuer beträgt 25% zuzüglich Solidaritätszuschlag, insgesamt 26,375%. Eine Vermögensteuer "
     "gibt es seit 1997 nicht mehr."),
    (("US-NY",), "The NYC resident pays 10.9% state plus 3.876% city tax, so the combined marginal rate on short-term "
     "gains is about 51.8% with the 37% federal rate."),
    (("AT",), "Austria has no inheritance tax, so the transfer to the children costs only the 3.5% land transfer tax "
     "on the house."),
    (("US-FL",), "1. Sell over three tax years to stay in the 15% LTCG bracket; gains above $600k are taxed at 20% "
     "plus 3.8% NIIT.\n2. Fund a donor-advised fund with the lowest-basis shares: no capital gains tax, and a "
     "deduction worth about 37%.\n3. Keep 18 months of expenses in T-bills yielding 4.3%.\n4. Florida levies no "
     "income or estate tax, so the federal estate tax (40% above $13.99M) is the only transfer tax to plan for."),
    (("CH-ZH",), "- Wealth tax: about 0.45% on CHF 8M, i.e. roughly CHF 36k a year.\n- Income tax: dividends of CHF "
     "120k at a marginal rate of 38% cost about CHF 45k.\n- Capital gains on the securities are tax-free for a "
     "private investor."),
    (("FR",), "Dividends: PFU 30% (12.8% + 17.2% social charges). IFI: 1% on the EUR 3M Paris flat above the EUR "
     "1.3M threshold."),
    (("US-TX",), "Her gains are taxed at 15% federally (the Texas state tax adds nothing)."),
    (("US-CA",), "The combined rate on gains is 37.1% (20% + 3.8% + 13.3%)."),
    (("US-TX",), "Donating appreciated stock avoids the 23.8% tax and gives a deduction at 37%."),
    (("GB",), "Gains above the annual exempt amount are taxed at 20%, or 28% on residential property."),
    (("CH-ZH",), "Dividends from the Swiss shares bear 35% withholding tax, reclaimable in full."),
    (("US-FL",), "Put the house in a QPRT and the shares in a GRAT."),
    (("CH-BE",), "The 3a account and the Pensionskasse buy-in both cut taxable income."),
    (("US-TX",), "At 6% a year, the $2M grows to $3.6M in 10 years; after the 23.8% federal tax on the gain, about "
     "$3.2M remains."),
    (("US-PA",), "Pennsylvania taxes what passes to the grandchildren at 4.5%."),
    (("US-KY",), "Kentucky has no estate tax, only an inheritance tax that spares the children."),
    (("US-MD",), "Maryland levies both a state estate tax and an inheritance tax."),
    (("US-TX",), "The estate tax is federal only; the inheritance passes free of state tax."),
    (("GB-SCT",), "Her pension withdrawals above £43,663 are taxed at 42%."),
    (("GB-SCT",), "Interest on the cash above her savings allowance is taxed at 40%."),
    (("GB",), "Above £50,270 her pension withdrawals are taxed at 40%."),
    (("US-CA",), "They file an FBAR for the Swiss account each April."),
    (("US-NJ",), "The state takes up to 16% of what the nephew inherits."),
    (("DE",), "The dividends lose about a quarter to tax."),
    (("US-CA",), "The bonus loses almost half to taxes."),
    (("AT",), "The US dividends lose 15% to withholding."),
    (("DE",), "The fund gains lose 26.375% to withholding."),
    (("DE",), "Under the partial-income method 60% of the sale gain is taxable."),
    (("CH-ZH",), "Only 70% of the dividends from the qualifying stake are taxable."),
    (("CH-LU",), "Harvesting the fund's loss saves no tax here, since private gains are untaxed."),
    (("US-TX",), "Estates above the $2M threshold pay Massachusetts tax, not Texan ones."),
    (("GB",), "Nothing is due on the first £325,000 (the nil-rate band)."),
    (("US-NY",), "The state taxes the gains as ordinary income, at up to 10.9%."),
    (("US-NY",), "In New York City the income tax reaches up to 14.8% with the city's."),
    (("US-NY",), "The gains are taxed by New York at 6.85%."),
    (("SG",), "Income is taxed at up to 24%; Singapore has no capital gains tax."),
    # a private foundation's excise tax on its net investment income (IRC §4940)
    (("US-MN",), "At the 1.39% excise rate, the foundation's $2M of net investment income costs about $27.8k."),
    # a list named as absent, to its last rule
    (("AT",), "Österreich erhebt keine Vermögen-, Schenkungs- oder Erbschaftsteuer."),
    (("AT",), "Austria has no wealth tax, gift tax or IHT."),
    # what the IFI does and does not tax, said rightly
    (("FR",), "The IFI applies only to her real estate, not to the portfolio."),
    (("FR",), "She owes no wealth tax on the securities portfolio."),
    (("FR",), "France's wealth tax (IFI) of 0.7% applies to her rental flat in Lyon."),
    # one rate on all above the allowance, where one rate does apply: the UK, the US estate tax, Italy, France's
    # assurance-vie, and Germany (one rate for the whole taxable amount, set by its size and class)
    (("FR",), "At death, 20% applies above the EUR 152,500 allowance per beneficiary of the assurance-vie."),
    (("GB",), "IHT at 40% applies above the nil-rate band."),
    (("US-WA",), "Federal estate tax at 40% applies above the exemption."),
    (("IT",), "Imposta di successione at 4% applies above the EUR 1M allowance for each child."),
    (("DE",), "Erbschaftsteuer at 11% applies above the EUR 400,000 allowance for a child inheriting EUR 600,000."),
]


@pytest.mark.parametrize("codes, text", RIGHT, ids=[r[1][:40] for r in RIGHT])
def test_a_right_sentence_is_not_flagged(codes, text):
    failed = [(f.text, f.detail) for f in rules.findings(text, places(*codes)) if not f.ok]
    assert not failed


# ---- what a rate that fits says, and what is not checked --------------------------------------------------------


def test_a_rate_that_fits_names_its_tax():
    found = rules.findings("Capital income is taxed at 26.375% including the Soli.", places("DE"))
    assert [(f.ok, f.text) for f in found] == [(True, "26.375%")]
    assert "Abgeltungsteuer" in found[0].detail


def test_no_place_facts_no_findings():
    assert rules.findings("IHT at 40% and a flat 25% tax on the gains.", []) == []


def test_a_return_or_an_allocation_is_no_tax_rate():
    text = "Expect a 7% return, a 4% spending rate, 60% in equities and a 25% drawdown in a bad year."
    assert rules.findings(text, places("US-TX")) == []


def test_a_country_without_its_state_is_undecided_not_flagged():
    found = rules.findings("Budget for 9.9% state income tax on the bonus.", places("US"))
    assert not [f for f in found if not f.ok]
    if "verified" in Finding.__dataclass_fields__:
        assert all(not f.verified for f in found)


def test_a_citizen_living_abroad_owes_no_states_rate():
    # A US citizen living in Zurich pays federal tax, and no state's: California's 13.3% is not the client's.
    citizen = Fact("citizenship", "place", "US", "ISO 3166", role="citizenship")
    abroad = [citizen, Fact("residence", "place", "CH-ZH", "ISO 3166", role="residence")]
    found = rules.findings("California's 13.3% top rate applies to the dividends.", abroad)
    assert [f.text for f in found if not f.ok] == ["13.3%"] and "California" in found[0].detail
    assert not [f for f in rules.findings("Federal tax takes 37% of the interest.", abroad) if not f.ok]
    # An account in New York is a source of New York's taxes, not a home: no state's income tax rate is the client's.
    account = Fact("asset location", "place", "US-NY", "ISO 3166", role="assets")
    found = rules.findings("The state taxes the gains as ordinary income, at up to 13.3%.", [*abroad, account])
    assert [f.text for f in found if not f.ok] == ["13.3%"]
    # Living somewhere the sheet does not say, a US citizen may live in any state: undecided, as before.
    at_home = [citizen]
    assert not [f for f in rules.findings("California's 13.3% top rate applies to the dividends.", at_home) if not f.ok]


def test_a_place_the_table_lacks_is_never_flagged():
    found = rules.findings("The 19% tax on the gains and the wealth tax both apply.", places("ES"))
    assert not [f for f in found if not f.ok]


def test_undecided_is_marked_unverified_once_finding_has_the_field(monkeypatch):
    from dataclasses import dataclass

    @dataclass
    class Checked:
        kind: str
        ok: bool
        text: str
        detail: str
        start: int = -1
        end: int = -1
        verified: bool = True

    monkeypatch.setattr(rules, "Finding", Checked)
    found = rules.findings("Budget for 9.9% state income tax on the bonus.", places("US"))
    assert [(f.ok, f.verified, f.text) for f in found] == [(True, False, "9.9%")]
    found = rules.findings("Capital income is taxed at 26.375% including the Soli.", places("DE"))
    assert [(f.ok, f.verified) for f in found] == [(True, True)]


# ---- a place the client only holds assets in ---------------------------------------------------------------------


def _abroad(amount):
    return [
        Fact("residence", "place", "IT-MI", "ISO 3166", role="residence"),
        Fact("assets", "place", "GB", "ISO 3166", text="a deposit in London", role="assets"),
        Fact("London deposit", "amount", amount, "GBP", text=f"£{amount:,} on deposit in London", role="holding"),
    ]


def test_a_tax_on_non_residents_below_its_threshold_does_not_reach_the_assets_there():
    text = "The heirs will owe inheritance tax at 40% on the estate."
    assert [f.text for f in rules.findings(text, _abroad(250_000)) if not f.ok] == ["40%"]  # under the GBP 325k band
    assert not [f for f in rules.findings(text, _abroad(900_000)) if not f.ok]  # UK IHT reaches UK assets above it


# ---- rates implied in other forms (pass four) ---------------------------------------------------------------------


def failed_rates(text, *codes):
    return [f for f in rules.findings(text, places(*codes)) if not f.ok]


def test_a_bands_rate_must_be_one_of_the_scales_rates():
    """21% is inside England's 20-45% range but no band of it (Scotland's intermediate rate)."""
    assert failed_rates("Her pension income above the allowance is taxed at 21% in the intermediate band.", "GB-NIR")
    assert not failed_rates("Her pension income above the allowance is taxed at 40% in the higher band.", "GB-NIR")


def test_a_rate_above_an_allowance_is_a_tax_rate():
    """6% on what each child gets above an allowance is Italy's sister rate, not a German class I rate."""
    assert failed_rates("At 6% above a EUR 100,000 allowance per child, the son pays about EUR 12,000.", "DE-HH")
    assert not failed_rates("At 11% above a EUR 400,000 allowance per child, the son pays about EUR 22,000.", "DE-HH")


def test_a_fraction_set_aside_for_the_collector_is_a_rate():
    """No Swiss tax on private gains: a third of them put aside for the tax office implies one."""
    assert failed_rates("Put a third of the fund gains aside for the tax office.", "CH-BE")
    assert not failed_rates("Put a third of the fund gains aside for the tax office.", "US-CA")


def test_what_is_taxed_opening_the_clause_then_its_rate():
    """Dividends at 15% is the US treaty rate, no rate of an Austrian's KESt; 'at 6% a year' is a return."""
    assert failed_rates("Dividends from the fund at 15%: about EUR 3,000.", "AT-9")
    assert not failed_rates("Dividends from the fund at 27.5%: about EUR 5,500.", "AT-9")
    assert not failed_rates("Gains on the fund at 6% a year: about EUR 12,000.", "AT-9")


def test_the_foundation_excise_rate_is_only_read_where_the_sentence_speaks_of_one():
    failed = [f.text for f in rules.findings("Dividends are taxed at 1.39% in Minnesota.", places("US-MN")) if not f.ok]
    assert failed == ["1.39%"]


def test_a_rate_of_the_gains_kept_back_for_tax_is_a_tax_rate():
    from reasoning.facts.rules import findings
    from reasoning.facts.sheet import Fact

    basel = [Fact("residence", "place", "CH-BL", "ISO 3166", role="residence")]
    # a Swiss private investor pays no tax on the profit of an equity sale: 26.375 % is Germany's rate
    found = findings("Hold back 26.375 % of the profit on the equity sale for the tax bill.", basel)
    assert [f for f in found if not f.ok]
    assert not [f for f in findings("Put 20 % of the profit on the equity sale into the new roof.", basel)
                if not f.ok]  # fmt: skip


def test_the_share_of_a_gain_that_is_taxable_in_german_is_no_rate():
    from reasoning.facts.rules import findings
    from reasoning.facts.sheet import Fact

    stuttgart = [Fact("residence", "place", "DE-BW", "ISO 3166", role="residence")]
    found = findings("Nach dem Teileinkünfteverfahren sind davon 60 % steuerpflichtig.", stuttgart)
    assert not [f for f in found if not f.ok]


def test_a_rate_that_needs_a_far_larger_estate_than_the_client_has_is_none_of_theirs():
    """Germany's 40% inheritance rate applies from EUR 13M (class II): not to a client with EUR 2M and CHF 750k."""
    sheet = [*places("DE-BW"), Fact("Depot", "amount", 2_000_000, "EUR"), Fact("account", "amount", 750_000, "CHF")]

    def failed(text, facts=sheet):
        return [f for f in rules.findings(text, facts) if not f.ok]

    found = failed("Inheritance tax at 40% applies above the allowance.")
    assert [f.text for f in found] == ["40%"] and "EUR 13,000,000" in found[0].detail
    # a rate that applies at any size, a smaller estate's rate, and a client rich enough: no finding
    assert not failed("Her nephew would pay Erbschaftsteuer at 30%.")
    assert not failed("The son pays Erbschaftsteuer at 11% above the allowance.")
    rich = [*places("DE-BW"), Fact("Depot", "amount", 9_000_000, "EUR")]
    assert not failed("Inheritance tax at 40% applies above the allowance.", rich)
