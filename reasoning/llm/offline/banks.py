"""Text banks of the offline model: per-kind step templates ordered by stage, synthesis notes, evaluator words.

Each template is "Title: body". The title names the approach (so a later step can cite it and a taken
step is not proposed again); the body uses the placeholders offline_wealth.facts() fills from the client's fact sheet, never from the problem
text: {amount} the sum the plan acts on and {whole} the client's whole wealth, each with its label and its figure
("the portfolio (USD 3.2M)", a derived one with its arithmetic), {tranche} a third of {amount} with the division
shown, {move} the sale or purchase a target implies; with no figure on the sheet they read as plain words.
A money amount in a template is always one of these: rules of thumb are percents or words, never amounts.

A template may start with "[tags] ": it fits only a case whose sheet has every plain tag and none of the "!" ones.
Jurisdictions come from the sheet's places only: ch, us, de, uk (the country), us-ca, ch-zh... (a state or canton),
no-state-tax (a US state without income tax), cross-border (two countries); business, widow, couple: the client's
case; move: a holding with a target or limit on the sheet; sale: the plan sells a holding down (a limit implies a
sale, or a goal asks to hold less). No template names a state's or canton's own rules
except through {state_rule}, which names the sheet's own state.
"""

from reasoning.llm.offline.facts import REDUCING

STAGES = ("framing", "action", "sequencing", "controls")

BANKS = {
    "investment-thesis": (
        (
            "Thesis framing: State the thesis for {asset} in one line: what must be true over {horizon} for "
            "{amount} to earn its risk, which two or three metrics would prove it wrong, and what it replaces.",
            "Base-rate check: Test the idea against history before committing {amount}: how comparable exposures "
            "to {asset} did across the last two rate cycles, the drawdown a holder sat through, and today's valuation.",
            "Client-fit diagnosis: Start from the client, not the idea: map {amount} against liquidity needs, "
            "existing exposure to {asset} and obligations in {cur}, sized so {client} can hold through a 30% drawdown.",
            "Bear-case first: Write the bear case for {asset} first: the scenario that loses 30-40%, its odds and "
            "the signal that it is unfolding; go ahead only if the expected return still beats cash by 3-4 points.",
        ),
        (
            "[!sale] Staged entry: Build the position in three tranches{tranche}, the first now and the others at "
            "fixed dates or after 10% pullbacks, so the entry price of {asset} is averaged rather than bet on one day.",
            "Core-satellite sizing: Hold the thesis as a satellite capped at 5-10% of total wealth, keep the core in low-cost "
            "diversified funds, and fund the satellite from the holding that overlaps most with {asset}.",
            "[move] Staged sale: Sell down in three stages: {move}, each stage at a fixed date and timed so gains fall "
            "into the tax years that cost least.",
            "[sale] Lot selection: Sell the highest-basis lots of {asset} first, and keep the lowest-basis lots for "
            "gifts or a charitable vehicle, so each stage realises as little gain as the plan allows.",
            "Instrument choice: Compare direct shares, a low-cost ETF and a capital-protected note on all-in cost, "
            "tax treatment in {place}, liquidity and issuer risk; pick the cheapest one with daily liquidity.",
            "Hedged expression: Express the view on {asset} with the currency risk removed, hedging the part outside "
            "{cur} at roughly 0.5-1.5% a year, so the result depends on the thesis rather than on exchange rates.",
        ),
        (
            "[!sale] Milestone release: Release each further tranche only if the thesis metrics move as expected "
            "within two quarters; otherwise pause, re-underwrite {asset} and record the decision in the client file.",
            "[!sale] Funding order: Fund the position tax-aware: first idle cash above a 6-month reserve, then "
            "maturing bonds, and appreciated holdings last, so {amount} is deployed without realising gains "
            "needlessly.",
            "Scenario sizing: Run bull, base and bear cases over {horizon} weighted 25/50/25, and size the final "
            "weight so the bear case costs no more than 3% of total wealth, measured in {cur}.",
            "[sale] Gain budget: Spread the sales of {asset} over the tax years, so each year's gains stay within the "
            "bracket the client can bear in {place}; move to the next stage when a year's budget is used.",
            "Peer comparison: Before the last tranche, compare {asset} with its two closest alternatives on "
            "valuation, balance sheet and earnings revisions; switch the rest if one offers the same view cheaper.",
        ),
        (
            "Exit rules: Agree exit rules now: sell a third if {asset} falls 20% below cost with no thesis change, "
            "sell all if a kill metric breaks, and trim to target when the weight exceeds 1.5 times its cap.",
            "Risk budget: Cap the thesis by risk, not conviction: its contribution must stay below 2% of portfolio "
            "volatility, checked quarterly, and a breach triggers an automatic trim rather than a debate.",
            "[!sale] Implementation plan: Buy with limit orders over 5-10 trading days, log rationale and costs in the "
            "suitability file, and book a 6-month review with {client} that checks thesis metrics, not price.",
            "[sale] Sale discipline: Sell each stage with limit orders over several trading days, log the proceeds "
            "and the tax cost in the client file, and review what is left of {asset} against its limit quarterly.",
            "Liquidity guard: Keep 12 months of spending outside the thesis in money market funds in {cur}, so no "
            "forced sale of {asset} is ever needed, and revisit the reserve whenever cash needs change.",
        ),
    ),
    "allocation-rebalance": (
        (
            "Drift diagnosis: Measure current weights of {whole} against the strategic mix: each asset class "
            "outside its band ({band}), the gap in {cur}, and whether markets or cash flows caused it.",
            "Risk-capacity check: Re-check the target before trading: confirm the risk capacity and income needs "
            "of {client} over {horizon} still justify the mix, since rebalancing to a stale target locks in risk.",
            "Cost-of-drift estimate: Quantify what the drift costs in extra volatility and drawdown versus target, "
            "against trading costs and taxes in {place}; fix only the gaps where risk clearly outweighs friction.",
            "Currency view: Split the drift by currency as well as asset class: how much of {whole} sits outside "
            "{cur}, and whether the currency exposure rather than the asset mix is the real deviation.",
        ),
        (
            "Band rebalance: Trade only the classes outside their bands, back to the band edge rather than the "
            "midpoint, which roughly halves turnover and usually moves less than a tenth of {whole}.",
            "Cash-flow rebalance: Rebalance with flows instead of sales: send new money, dividends and coupons to "
            "the underweight classes for two quarters, and sell only what the flows cannot fix.",
            "Full reset to target: Reset every class to target in one trade list for a clean start, netting buys "
            "and sells inside each fund family to keep total costs under 0.2% of the portfolio's value.",
            "[move] Gap trade: Trade exactly the gap the target leaves: {move}, in two or three tickets, sells settled "
            "before any buy, so the rebalance moves no more than it must.",
            "Tax-lot selection: Sell the overweight classes through the tax lots with the smallest gains first and "
            "realise losses elsewhere to offset them, so the rebalance costs as little tax as possible in {place}.",
        ),
        (
            "Staggered execution: Execute in three steps{tranche} over six weeks, so {amount} is not "
            "moved at one day's prices, and stop early if market moves restore the bands.",
            "Sells before buys: Sequence sells before buys and settle each leg first, keeping cash above the "
            "6-month reserve throughout; park proceeds awaiting reinvestment in a money market fund in {cur}.",
            "Calendar plus bands: Check bands monthly and rebalance when a class breaches {band}; otherwise "
            "rebalance once a year in a fixed month, so trading stays predictable for {client}.",
            "Glide path: Replace one large rebalance with a glide path that moves a fixed number of points a "
            "quarter toward target over {horizon}, suiting a client who dislikes big single decisions.",
        ),
        (
            "Drift bands: Write the policy into the mandate: 5-point bands for major classes, 2.5 points for small "
            "ones, a quarterly check and a cost ceiling; breaches are acted on within 10 working days.",
            "Liquidity floor: Keep 6-12 months of spending in cash and short bonds at every point, and never fund "
            "the rebalance by selling illiquid or locked-up positions at a discount.",
            "Post-trade check: After trading, compare realised weights, costs and taxes with the plan, report the "
            "deviation to {client}, and log why any class was left outside its band.",
            "Stress test: Stress the rebalanced mix with a 25% equity fall and a 10% move in {cur}; if the loss on "
            "{whole} exceeds the client's stated limit, lower the equity target before the next review.",
        ),
    ),
    "tax-optim-sequence": (
        (
            "[ch] Tax inventory: List every lever for {client} in {place}: income bracket, wealth tax on {whole}, "
            "pillar 3a and pension buy-in room, unrealised gains and losses, and when each lever expires.",
            "[!us] Marginal-rate map: Map the marginal tax rate for each of the next five years, so deductions land in "
            "high-income years and taxable withdrawals in low-income ones, usually after retirement.",
            "[ch] Residence check: Confirm tax residence in {place} and investor status first: any cross-border income, "
            "and whether frequent trading of {amount} could make gains taxable as professional income.",
            "[ch] Withdrawal-tax baseline: Compute the tax if all pension and 3a capital were drawn in one year, then "
            "how much staggering withdrawals at {pillar_ages} saves: the yardstick for every later step.",
            "[us] Federal and state map: Map each tax that applies in {place}: federal long-term gains at 0, 15 or 20% "
            "plus the 3.8% net investment income tax; {state_rule}.",
            "[us] Lot inventory: List every lot of {asset} with cost, date bought and unrealised gain or loss, and split "
            "the losses into short-term (held a year or less) and long-term, since each nets first against its own kind.",
            "[us] Withdrawal order map: Map each account's tax treatment and the order to draw on them: taxable "
            "accounts first, tax-deferred next, tax-free last, each year's draw sized to stay in the intended bracket.",
            "[!ch,!us] Tax map: Map the taxes that apply in {place}: income, capital gains, wealth or estate taxes, with "
            "the rate and the deadline of each, and which of them {amount} is exposed to.",
        ),
        (
            "[ch] Pension buy-in: Make a voluntary pension-fund buy-in in the highest-income year, fully deductible and "
            "sized to drop a bracket, respecting the three-year lock before any capital withdrawal.",
            "[ch] Staggered 3a accounts: Spread pillar 3a saving over several accounts (each year up to the legal "
            "maximum for someone insured in a pension fund) and withdraw one account a year at {pillar_ages}.",
            "[!us,!ch] Loss harvesting: Realise losses on positions that no longer fit to offset taxable gains of the same "
            "year, and reinvest in similar but not identical funds so market exposure is unchanged.",
            "[ch] Income-to-capital shift: Move part of {whole} from high-coupon bonds into low-coupon or accumulating "
            "funds, since private capital gains are tax-free in Switzerland while coupons are taxed as income.",
            "[us] Wash-sale-safe harvest: Sell the losing lots and buy a similar but not substantially identical fund at "
            "once; never rebuy the same security within 30 days before or after, or the wash-sale rule disallows the loss.",
            "[us] Loss netting: Net harvested losses against realised gains first; a small capped part of any excess "
            "offsets ordinary income each year, and the rest carries forward with no time limit.",
            "[us] Conversion window: Use the low-income years before pensions and required withdrawals start to "
            "convert part of the tax-deferred savings each year, up to the top of the current bracket.",
            "[!ch,!us] Allowances first: Use each yearly allowance and tax-favoured wrapper available in {place} before "
            "anything else, since an unused allowance is usually lost for that year.",
        ),
        (
            "[move] Gain budget: Spread the sale over at least two tax years, {move}, so each year's realised gain "
            "stays as low in the brackets as possible.",
            "[ch] Year-by-year schedule: Lay out the years: buy-ins first while income is high, 3a contributions every "
            "year, withdrawals only after retirement, each year checked against the marginal-rate map.",
            "[ch,couple] Spouse coordination: Sequence both spouses' accounts together, alternating withdrawal years between "
            "them and the pension fund, so no tax year combines two capital withdrawals.",
            "Gain realisation timing: Realise gains in the lowest-income years, and spread larger sales of "
            "{asset} across two tax years to stay below a bracket threshold.",
            "[ch] Mortgage interplay: Weigh mortgage repayment against indirect amortisation through pillar 3a: keep "
            "deductible interest while 3a contributions compound, and repay when the rate gap turns negative.",
            "[us] Year-end calendar: Harvest before the last trading days of December, keep a 31-day log for every sale "
            "and every purchase in all accounts (IRA included), so no replacement trade triggers a wash sale.",
            "[us] Gain pairing: Realise gains the harvested losses can absorb in the same year, and give appreciated "
            "lots to charity instead of selling them, which avoids the gain entirely.",
            "[!ch,!us] Realisation timing: Spread realisations of {asset} across tax years so each year stays within "
            "its allowance or lower band, and pair gains with losses in the same year.",
        ),
        (
            "[ch] Tax ruling: Where a step relies on interpretation, such as buy-ins near retirement or trader status, "
            "ask the tax authority in {place} for an advance ruling before acting.",
            "Tax calendar: Record each step's expected saving, deadline and owner, and review every December so "
            "contributions and realisations fall into the intended tax year.",
            "[ch] Liquidity check: Confirm the buy-in and 3a lock-ups still leave 12 months of spending liquid; no tax "
            "saving is worth a forced sale of investments at a bad time.",
            "Rule-change buffer: Prefer levers that still pay off if rates or limits change, and avoid steps whose "
            "saving depends on one year's law, so a reform in {place} does not undo the plan.",
            "[us] Wash-sale audit: Before filing, check every account of the household (spouse and IRAs included) for "
            "purchases of the same securities within 30 days of a loss sale; the broker's 1099-B does not see them all.",
            "[us] Advisor check: Have a CPA confirm the harvest, the state treatment in {place} and the carry-forward "
            "before year end, and record the replacement funds chosen and why.",
            "[!ch,!us] Local review: Have a tax adviser in {place} confirm each step and its timing before acting, and "
            "record the expected saving and the assumption it rests on.",
        ),
    ),
    "wealth-transfer": (
        (
            "Family and goals map: Map the family and goals first: who should receive what share of {amount}, when "
            "and with what control, plus marital regime and forced-heirship shares that limit freedom.",
            "[ch] Tax and law baseline: Establish the baseline in {place}: succession law, gift and inheritance tax per "
            "heir (spouse and children are exempt in most cantons), and rules for heirs living abroad.",
            "Estate liquidity: Check whether heirs could pay taxes and equalisation payments without selling "
            "{asset}, and how much of {amount} is illiquid or hard to divide.",
            "[business] Control question: Decide how much control {client} keeps: outright gifts, gifts with usufruct, or a "
            "holding with voting and non-voting shares, each shaping who decides about {asset}.",
            "[de] German inheritance tax: German inheritance tax (Erbschaftsteuer) applies when the deceased or an heir "
            "lived in Germany; a spouse and each child have an allowance of their own, and the rest is taxed by class.",
            "[cross-border] Which country taxes: Fix which country taxes the estate: where the deceased lived, where the "
            "heirs live and where each asset sits, and whether a treaty decides it; leave nothing to be taxed twice.",
            "[widow] Her own needs first: Secure what {client} needs for the rest of her life before any transfer: "
            "spending, care and a reserve, and only then decide what of {amount} can pass to the heirs.",
        ),
        (
            "Lifetime gifts: Start yearly gifts of a fixed, modest share per child, documented as advances on "
            "inheritance, so value leaves the estate gradually while {client} keeps enough to live on.",
            "Usufruct transfer: Transfer ownership of {asset} to the children now while keeping a life usufruct, "
            "so income stays with {client} and future growth accrues to the heirs.",
            "[couple] Inheritance contract: Combine a marriage contract with an inheritance contract signed by all heirs "
            "that fixes the shares of {amount}, which removes most room for disputes over reserved portions.",
            "[business] Family holding: Place {asset} in a family holding with separate voting and economic rights, passing "
            "economic value to the next generation while voting control stays with the founder.",
            "[de] Ten-year allowances: Use the German allowances every ten years: gifts within ten years are added to "
            "the inheritance, so gifts made now renew each child's allowance for a transfer a decade later.",
            "[widow] Will and beneficiaries: Write or update her will and the beneficiaries of her accounts and "
            "policies, so the children's shares of {amount} follow her wishes rather than the default rules.",
        ),
        (
            "[business] Staged handover: Stage the handover over {horizon}: economic value first, management roles next, "
            "voting control last, each stage tied to a milestone such as a successor's track record.",
            "Equalisation plan: Sequence transfers so heirs end up treated fairly: if one child takes {asset}, "
            "fix the equalisation payments or insurance for the others in the same documents.",
            "[!de] Gift timing: Spread gifts over several tax years, keep each below any exemption threshold that "
            "applies in {place}, and file every gift declaration on time.",
            "Insurance funding: Fund taxes and equalisation with a life policy owned by the heirs, sized to the "
            "expected bill, so the estate never has to sell assets at a bad moment.",
            "[de] Filing calendar: Report the inheritance to the German tax office within three months, and pay the tax "
            "from liquid assets in {cur}, so nothing of {asset} has to be sold under time pressure.",
        ),
        (
            "Document review: Update the will, powers of attorney and advance care directive together, and review "
            "them every three years or after a marriage, divorce, birth or move.",
            "Family meeting: Explain the plan to the heirs in a family meeting before anything is signed; "
            "unexplained plans are the main source of later disputes.",
            "Cross-border check: If heirs or assets sit outside {place}, check double-tax treaties and foreign "
            "forced-heirship rules with local counsel before signing.",
            "[business] Fallback provisions: Add provisions for the founder's incapacity and for a successor who drops out, "
            "so {asset} is never left without a decision-maker.",
            "[cross-border] Counsel in both countries: Have tax counsel in each country confirm the plan and the credit "
            "for tax paid abroad before signing, and keep the estate's documents in both languages.",
        ),
    ),
    "data-driven-research": (
        (
            "Question definition: Turn the request into one testable question about {asset}, with {amount} riding "
            "on the answer: fix metric, period and benchmark in advance so the data cannot be mined for it.",
            "Source inventory: List the data needed: prices and fundamentals for {asset}, macro series and the "
            "client's holdings, with each source's update frequency, licence and known gaps.",
            "Competing hypotheses: Write two or three competing explanations, such as valuation, earnings momentum "
            "or currency, and the data that would tell them apart, before looking at any result.",
            "Benchmark choice: Fix the comparison first: which index or peer group {asset} is judged against, over "
            "which window and in {cur}, and what return {amount} must earn there to justify the risk.",
        ),
        (
            "Factor screen: Screen {asset} against peers on valuation, quality and momentum, rank each factor by "
            "percentile, and flag any factor in the bottom quartile for a closer look.",
            "Event study: Measure how {asset} behaved around comparable past events, such as earnings misses or "
            "rate changes, averaging returns over the 5 and 20 days after each one.",
            "Drawdown analysis: Compute the drawdowns of {asset}: maximum loss, time to recover, and behaviour in "
            "the 2008, 2020 and 2022 sell-offs, to size the position against {amount} realistically.",
            "Correlation check: Measure the correlation of {asset} with the current portfolio over rolling 3-year "
            "windows, to see whether it diversifies or adds more of the same risk.",
        ),
        (
            "Out-of-sample test: Build the signal on the first two thirds of the history and test it on the last "
            "third; keep only findings that survive out of sample.",
            "Sensitivity runs: Re-run the main result with other windows, benchmarks and currencies; a conclusion "
            "that flips with a small change is reported as weak.",
            "Cost-adjusted result: Restate the finding as net return after trading costs, taxes and hedging, since "
            "a gross edge below 1% a year rarely survives implementation.",
            "Independent replication: Have a second analyst reproduce the key numbers from the raw data before "
            "anything reaches the client, and record any discrepancy.",
        ),
        (
            "Data quality log: Log missing values, survivorship bias and stale prices with how each was handled, "
            "and attach the log to the research note.",
            "Decision memo: Write a one-page memo for the adviser of {client}: the question, the answer with a "
            "confidence level, the key chart, and what would change the view.",
            "Monitoring signal: Turn the result into a threshold checked monthly, so the research keeps informing "
            "the position in {asset} after the decision.",
            "Limits disclosure: State sample size, period and the assumptions that matter most, so the client does "
            "not read a backtest as a forecast.",
        ),
    ),
    "general": (
        (
            "Situation summary: Summarise the case in numbers: {amount} in scope, the goals of {client}, liquidity "
            "and tax constraints in {place}, and the decision to be made with its deadline.",
            "Objective ranking: Rank the objectives (security, income, growth, legacy) and make the trade-offs "
            "explicit, since every later step has to serve the top one first.",
            "Constraint check: Check constraints first: liquidity needs, legal limits, existing commitments and "
            "risk tolerance, and drop any option that breaches one.",
            "Options list: List three genuinely different options for {amount}, with rough expected outcome, cost "
            "and risk for each, before choosing a direction.",
        ),
        (
            "Preferred option: Pick the option that best serves the top objective, quantify its expected outcome "
            "for {amount}, and state what is given up against the runner-up.",
            "Phased commitment: Commit {amount} in three phases{tranche}, the first now and the rest after a review, "
            "so the decision can be corrected without large costs.",
            "Reserve first: Set aside 6-12 months of spending as a liquidity reserve before anything else, then "
            "apply the plan to what remains of {amount}.",
            "Cost reduction: Remove avoidable costs first: overlapping products, high-fee funds and idle cash; "
            "0.5% a year saved compounds over {horizon}.",
        ),
        (
            "Action timeline: Put the actions on a timeline with owners: this month, this quarter, this year, and "
            "which decision depends on which.",
            "Reversible first: Order the steps so reversible changes come first, tax-relevant moves next, and "
            "anything that locks money up last.",
            "Checkpoint reviews: Add a review after each phase, with the one number that decides whether to "
            "continue, adjust or stop.",
            "Client sign-off: Present the sequence to {client} with the cost and risk of each step, and get "
            "sign-off before execution starts.",
        ),
        (
            "Risk controls: Name the plan's main risk, its early-warning signal and the response, and review them "
            "quarterly with the client.",
            "Suitability record: Record the recommendation, the alternatives rejected and why in the client file, "
            "to meet suitability and documentation duties.",
            "Reserve discipline: Keep liquidity above the reserve at every step, so no part of the plan forces a "
            "sale at a bad time.",
            "Annual review: Re-check goals, the tax position in {place} and performance against plan once a year, "
            "and adjust the steps if the situation changed.",
        ),
    ),
}

# What the synthesis says per kind: the lead of the recommendation, the main risk, and its mitigation.
NOTES = {
    "investment-thesis": (
        "Take a sized, staged position in {asset} with {amount} in scope, held only while the thesis metrics hold",
        "the thesis on {asset} proves wrong or takes longer than {horizon}",
        "staged entry, a hard cap on the position and exit rules agreed before the first trade",
    ),
    "allocation-rebalance": (
        "Bring {whole} back inside its strategic bands at the lowest cost and tax",
        "trading into a sharp market move and realising avoidable gains",
        "staggered execution, band-edge targets and careful tax-lot selection",
    ),
    "tax-optim-sequence": (
        "Follow a multi-year tax sequence for {client} in {place}, using deductions early and spreading withdrawals",
        "a rule change or a reclassification by the tax authority",
        "advance rulings for the key steps and levers that still pay off if limits change",
    ),
    "wealth-transfer": (
        "Transfer {amount} in stages, with control passing last and heirs treated fairly",
        "a family dispute, or heirs forced to sell {asset} to pay taxes and equalisation",
        "signed inheritance contract, an equalisation plan, and insurance or liquidity set aside for taxes",
    ),
    "data-driven-research": (
        "Base the decision on {asset} on a pre-registered question and results that survive out of sample",
        "a finding that does not hold outside the tested period",
        "out-of-sample tests, sensitivity runs and a monitored threshold that reopens the decision",
    ),
    "general": (
        "Act on {amount} in phases, serving the client's top objective first",
        "committing too early to a step that cannot be reversed",
        "phased commitment, checkpoint reviews and a liquidity reserve kept throughout",
    ),
}

# The main risk and its mitigation when the sheet implies a sale to bring a holding to its target or limit.
SALE_NOTES = (
    "{asset} falls sharply before the sales are done, or the gains land in costly tax years",
    "sale dates fixed in advance, gains spread across tax years, and a hedge on the part still held",
)

# The evaluator's vocabulary: words a rubric line carries no meaning with, and words that count for a criterion.
STOPWORDS = set(
    "the and for are but not all any how its who why can may use uses used via per one two with that "
    "this from into have each step steps does when what which where will would their them they there "
    "these those about also more most much well clear clearly names main good shows show given gives "
    "plan should must whether than then only over under".split()
)
RELATED = {  # a rubric says "tax" while a step says "deductible": both should count
    "tax": ("deduct", "withdraw", "gain", "ruling"),
    "risk": ("drawdown", "volatil", "stress", "hedg", "exit", "downside", "loss", "lose", "bear", "scenario"),
    "downsi": ("drawdown", "loss", "lose", "bear", "sell", "stop"),
    "exit": ("sell", "trim", "kill"),
    "liquid": ("cash", "reserve", "money market", "lock"),
    "cost": ("fee", "turnover", "expens"),
    "suitab": ("client", "capacity", "toleran", "objective"),
    "eviden": ("data", "history", "metric", "earning", "valuation", "base rate"),
    "sequen": ("first", "then", "before", "after", "tranche", "quarter", "stage"),
    "order": ("first", "then", "before", "after", "schedule"),
    "timing": ("year", "date", "deadline", "stage", "before"),
    "compli": ("lawful", "ruling", "declar", "document", "authorit"),
    "govern": ("control", "voting", "holding", "decision"),
    "family": ("heir", "child", "spouse", "founder"),
    "ground": ("data", "source", "observ", "measure"),
    "method": ("benchmark", "test", "sample", "window", "screen"),
    "caveat": ("limit", "bias", "assumption", "sample"),
    "target": ("band", "weight", "drift"),
}

# Fallbacks when the problem names no amount or asset: each reads naturally in that kind's templates.
DEFAULT_AMOUNT = {
    "investment-thesis": "the capital to invest",
    "allocation-rebalance": "the portfolio",
    "tax-optim-sequence": "the client's assets",
    "wealth-transfer": "the estate",
    "data-driven-research": "the capital at stake",
    "general": "the investable assets",
}

DEFAULT_ASSET = {
    "investment-thesis": "the target asset",
    "allocation-rebalance": "the largest holding",
    "tax-optim-sequence": "the appreciated holdings",
    "wealth-transfer": "the family assets",
    "data-driven-research": "the asset under study",
    "general": "the core holding",
}

# A goal the sheet names that the kind's own lead does not: the recommendation leads with it.
GOAL_LEADS = (
    (
        r"\btax[- ]loss|\bharvest",
        "Harvest the losses in {whole} before the tax year ends and keep the market exposure, within the rules that "
        "apply in {place}",
    ),
    (
        REDUCING.pattern,
        "Reduce {asset} in stages, at the lowest tax and market cost, keeping the rest of the portfolio on its plan",
    ),
)

# What an answer says about an instrument the client listed, by words of its name (the first match wins): written
# for any jurisdiction, no place's own rule. The part before ";" is the short note an answer near its limit keeps.
LISTED_NOTES = (
    (
        r"exchange fund",
        "swaps the concentrated shares into a diversified pool without a sale; the price is a lock-up of about "
        "seven years and a yearly fee, so it suits shares the client will not need to sell",
    ),
    (
        r"\bCRTs?\b|charitable remainder",
        "sells the shares inside the trust with no tax on the gain at once; it pays an income for a term or for "
        "life and the rest goes to charity, so it suits only a real charitable wish",
    ),
    (
        r"\bDAFs?\b|donor[- ]advised",
        "gift it the most appreciated shares now, at full value; it grants to charities later, so it suits giving the "
        "client plans anyway",
    ),
    (
        r"collar",
        "a bought put and a sold call set a floor and a cap on the shares; it buys time for a staged sale without "
        "selling today",
    ),
    (
        r"prepaid variable forward|\bPVF\b",
        "pays most of the shares' value now against their delivery later; it defers the sale, at a cost, and the "
        "upside above the cap is given up",
    ),
    (r"direct index", "holds the index share by share; losses harvested along the way offset gains on the sale"),
    (r"10b5-1|trading plan|selling plan", "sells on a schedule set in advance; sales go on through closed windows"),
    (r"trust", "holds the assets for the beneficiaries under set terms; it fixes control and timing, at a yearly cost"),
    (r"foundation|stiftung", "holds the assets for a purpose; it fixes control for the long term but is hard to undo"),
    (r"insurance|life policy", "can fund taxes or equalisation at death; no asset then has to be sold"),
    (r"option|\bputs?\b|\bcalls?\b", "can hedge part of the position for a period; the premium is the price of time"),
    (r"\bETFs?\b|index fund", "a low-cost, diversified home for the proceeds; bought in the same stages"),
    (r"bond", "buy them in the same stages to steady the portfolio; they fund spending while the rest is repositioned"),
    (r"annuit", "convert part of the capital into a lifelong income at the last stage; it cannot be undone"),
    (r"mortgage", "weigh repaying it against keeping the liquidity; the rate gap decides"),
    (r"holding", "transfer the shares into it first to separate voting control from economic value; value can pass "
     "before control"),
)
# A listed item's line acts on it (facts/acting.py: a figure, an action or a date), and never points back at "the
# plan above" or "each yearly review" alone: coverage reads such a line as named, not addressed.
INSTRUMENT_NOTE = (
    "compare its cost, lock-up, tax treatment and control in the first quarter, and implement it only if it wins"
)
ACCOUNT_NOTE = "contribute and withdraw in a set order; each move in or out is timed for tax"
ACCOUNT_AMOUNT_NOTE = "its {amount} is drawn or topped up in a set order; each move in or out is timed for tax"
GOAL_NOTE = "served first by the lead step: {figure}"
GOAL_NO_FIGURE_NOTE = "no figure on the sheet sizes it yet; confirm the amounts with the client before the first step"
CONSTRAINT_NOTE = "every step keeps to it"
# A commitment or liability on the sheet is provided for before anything is invested (facts/constraints.py checks it).
OBLIGATION_NOTE = "set aside its full amount in short-term bonds first, to meet each call or payment as it falls due"
