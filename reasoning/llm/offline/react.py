"""The offline model's ReAct replies: a tool plan from the client's fact sheet, and an answer from what the tools
returned.

The plan: the portfolio of a client id the problem names; the client documents; prices of the symbols the sheet lists
or the largest holdings; the canton's tax table for a Swiss canton on the sheet; one calculation with the client's own
figures, never across two currencies (a Game of 24: the solver's expression). The answer names the source of every
figure (a fact, a tool) and shows the arithmetic of each derived one. A step takes the K-th planned action not yet on the trajectory (K is 1 on the main line,
higher for alternatives), and final_answer when none is left or on the last step.
"""

import json
import re
from dataclasses import dataclass

from reasoning.facts import quantities, regimes
from reasoning.llm import game24
from reasoning.llm.offline import facts as offline_facts, wealth as offline_wealth
from reasoning.llm.offline.banks import STOPWORDS

STEP = re.compile(r"^Thought: (.*?) Action: (\w+)\((.*)\) Observation: (.*)$")
CLIENT_ID = re.compile(r"\b[A-Z]-\d{4}\b")
TICKER = re.compile(r"[A-Z]{2,5}")  # an instrument on the sheet named by its symbol
INCOME = re.compile(r"\b(?:income|salary|earnings)\b", re.I)
GENERIC = set("build adding make help want wants asks check client clients aged year years using given across".split())
ORDER = ("portfolio", "search_documents", "calculate", "swiss_tax", "prices")  # the answer's paragraphs



def trajectory(p):
    """(tool, observation) for each step so far; an observation that is JSON is read as data."""
    steps = [STEP.match(text) for text in p.steps]
    return [(m[2], as_data(m[4])) for m in steps if m]


def as_data(text):
    try:
        return json.loads(text)
    except ValueError:  # an error message, or an observation cut short
        return text


def step(p, rng):
    done = trajectory(p)
    seen = {tool: obs for tool, obs in done if isinstance(obs, dict)}
    todo = [action for action in plan(p, seen) if action[0] not in {tool for tool, _ in done}]
    if p.step < p.depth and p.k <= len(todo):
        tool, args, thought = todo[p.k - 1]
        return {"thought": thought, "action": {"tool": tool, "args": args}}
    why = "this is the last step" if todo else "the observations cover what the answer needs"
    thought = f"I answer now, because {why}: the tools' results and the problem's own figures go into it."
    return {"thought": thought, "action": {"tool": "final_answer", "args": {"answer": answer_text(p, done)}}}


def synthesize(p, rng):
    return {"answer": answer_text(p, trajectory(p))}


def plan(p, seen):
    """(tool, args, thought) for every action worth taking on this problem, the most useful first."""
    puzzle = game24.puzzle_numbers(p.problem)
    if puzzle:
        expression = game24.solve(game24.board(puzzle))
        return [("calculate", {"expression": expression}, f"I check that {expression} makes 24.")] if expression else []
    case, folio, actions = offline_wealth.case_of(p), seen.get("portfolio"), []
    client = client_id(p)
    if client:
        actions.append(("portfolio", {"client_id": client}, f"The problem names {client}: I look up the holdings."))
    query = " ".join(keywords(p.problem))
    search = {"query": query} | ({"client_id": client} if client else {})
    actions.append(("search_documents", search, f"I search the documents for {query}, to find constraints and views."))
    tickers = [name for name in case.instruments if TICKER.fullmatch(name)]
    symbols = list(dict.fromkeys(tickers + [h["symbol"] for h in (folio or {}).get("holdings", [])[:3]]))[:5]
    if symbols:
        actions.append(("prices", {"symbols": symbols}, f"I check the prices of {', '.join(symbols)}."))
    canton = canton_of(case, folio)
    if canton:
        args = {"canton": canton} | tax_amounts(case)
        why = "the tax the plan has to carry (illustrative, not tax advice)"
        actions.append(("swiss_tax", args, f"The client lives in canton {canton}: its tax table shows {why}."))
    calculation = calculation_of(case)
    if calculation:
        thought = f"I compute {calculation.what} exactly, from the client's own figures."
        actions.append(("calculate", {"expression": calculation.expression}, thought))
    return actions


def client_id(p):
    """A client id the problem names (C-1001): an identifier to look up, not a fact about the client."""
    found = CLIENT_ID.search(p.problem)
    return found[0] if found else None


def keywords(problem):
    """Search words from the problem, its figures left out ("two million euros" is a figure, not a keyword)."""
    for q in reversed(quantities.find_quantities(problem)):
        problem = problem[: q.start] + " " + problem[q.end :]
    words = [w for w in re.findall(r"[A-Za-zÀ-ÿ]{4,}", problem) if w.lower() not in STOPWORDS | GENERIC]
    return list(dict.fromkeys(words))[:6] or ["portfolio"]


def canton_of(case, folio):
    """The client's canton: a Swiss canton on the sheet; the portfolio's canton only when the sheet names no place
    (a client the sheet places elsewhere never gets a Swiss tax table)."""
    cantons = [code.split("-")[1] for code in case.places if code.startswith("CH-")]
    if cantons:
        return cantons[0]
    return (folio or {}).get("canton") if not case.places else None


def tax_amounts(case):
    """The income and wealth the tax table estimates for: the sheet's own CHF income and wealth (a tool's figures are
    no client facts)."""
    income = next((f for f in case.amounts if f.unit == "CHF" and INCOME.search(f.label)), None)
    whole = case.whole()
    found = {"income_chf": income, "wealth_chf": whole if whole and whole.unit == "CHF" else None}
    return {k: v.value for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class Calculation:
    expression: str  # what the calculate tool is asked, in plain numbers
    what: str  # what it measures, with the labels of its operands
    shown: str  # the same arithmetic as the answer writes it, each amount with its currency and scale
    unit: str  # the result's: an ISO code, or "%"


def calculation_of(case):
    """One calculation from the client's own figures, never across two currencies, or None: the sale a target implies,
    a holding's share of the whole, a percent of its base, else a third of the sum in scope (the plan's stages).
    A tool's figures are no client facts, so nothing here is computed from them."""
    if case.moves:
        m = case.moves[0]
        high, low = (m.holding, m.level) if m.sale else (m.level, m.holding)
        return Calculation(f"{high.value:.15g} - {low.value:.15g}", m.amount.label, m.amount.how, m.amount.unit)
    whole = case.whole()
    stated = [f for f in case.holdings() if not f.how and whole and f.unit == whole.unit and f.value < whole.value]
    if stated:
        part = stated[0]
        what = f"{offline_facts.the(part.label)} as a share of {whole.as_base()}"
        return Calculation(f"{part.value:.15g} / {whole.value:.15g} * 100", what, f"{part.shown} / {whole.shown}", "%")
    if case.derived:
        d = case.derived[0]
        return Calculation(_plain_numbers(case, d), d.label, d.how.split(" = ")[0], d.unit)
    scope, how = offline_facts.scope_of(case, "general")
    if scope and not how:
        what = f"each of three stages of {offline_facts.the(scope.label)}"
        return Calculation(f"{scope.value:.15g} / 3", what, f"{scope.shown} / 3", scope.unit)
    return None


def _plain_numbers(case, derived):
    """ "3200000 * 70 / 100" for "70% of the USD 3.2M portfolio": the percent and its base as plain numbers."""
    for fact in case.percents:
        base = offline_facts.base_of(fact, case.amounts)
        if base and offline_facts.holding_name(fact.label) == derived.label:
            return f"{base.value:.15g} * {float(fact.value):.15g} / 100"
    return ""


def answer_text(p, done):
    """A lead, what each tool showed, what the client listed, and the main risk: whole sentences, at most 250 words."""
    seen = {tool: obs for tool, obs in done if isinstance(obs, dict)}
    puzzle = game24.puzzle_numbers(p.problem)
    if puzzle:
        cards, expression = " ".join(map(str, puzzle)), game24.solve(game24.board(puzzle))
        if not expression:
            return f"No expression makes 24 from {cards} with + - * /."
        checked = " The calculate tool confirmed the value 24." if "calculate" in seen else ""
        return f"Answer: {expression} = 24.{checked} Each of {cards} is used exactly once."
    offline = offline_wealth
    f = offline.facts(p)
    case = offline.case_of(p)
    risk, mitigation = offline.risk_of(p, f)
    calculation = calculation_of(case)
    findings = [found(tool, seen[tool], calculation, client_id(p), case) for tool in ORDER if tool in seen]
    failed = sorted({tool for tool, obs in done if isinstance(obs, str) and obs.startswith("error")})
    if failed:
        findings.append(f"The {', '.join(failed)} call returned an error, so nothing here relies on it.")
    numbers = offline.key_numbers(p)
    shown = "; ".join(numbers) if numbers else "none on the client's fact sheet; confirm the figures with the client"
    listed = offline.listed_lines(p, short=True)
    head = [f"Recommendation: {offline.lead_of(p, f)}.", f"Actions in order: {actions_of(p, f)}."]
    tail = [f"Key numbers: {shown}."]
    tail += ["What the client listed:\n" + "\n".join(listed)] if listed else []
    tail += [f"Main risk: {risk}. Mitigation: {mitigation}."]
    while len(" ".join(head + findings + tail).split()) > 250 and findings:
        findings.pop()  # the least important finding goes first; the lead, the figures and the risk stay
    return "\n\n".join(head + findings + tail)


def actions_of(p, f):
    """The plan's four stages, by the titles of the kind's first approach for each that fits the case."""
    offline = offline_wealth
    bank = offline.BANKS[p.kind]
    titles = []
    for stage in range(4):
        fitting = offline.fitting(bank[stage], f) or offline.BANKS["general"][stage]
        titles.append(offline.title_of(fitting[0]).lower())
    return ", then ".join(titles)


def found(tool, obs, calculation, client, case):
    """One paragraph saying what a tool's observation showed, each figure named by the tool that gave it."""
    money = offline_facts.format_amount
    if tool == "portfolio":
        who = f"{obs['client_id']} ({obs['name']}, canton {obs['canton']}, {obs['risk_profile']} profile)"
        top = "; ".join(h["name"] for h in obs["holdings"][:3])
        return f"The portfolio tool lists the holdings of client {who}; the largest positions: {top}."
    if tool == "calculate":
        if not calculation or calculation.expression != obs["expression"]:
            return "The calculate tool's result concerns none of the client's figures, so it is left out."
        result = obs["result"]
        shown = f"{result:.3g}%" if calculation.unit == "%" else money(result, calculation.unit)
        arithmetic = calculation.shown if calculation.unit != "%" else f"{calculation.shown} = {shown}"
        if calculation.unit != "%" and " = " not in arithmetic:
            arithmetic = f"{arithmetic} = {shown}"
        return f"Calculation (checked with the calculate tool): {arithmetic}, {calculation.what}."
    if tool == "search_documents":
        # Another client's file says nothing about this one: only house notes and the client's own documents count.
        # A house note on another country's rules says nothing about this client either.
        relevant = [r for r in obs["results"] if r["client_id"] in (None, client) and tied(r["title"], case)]
        if not relevant:
            return f"The document search for {obs['query']} found nothing that applies to this client."
        titles = "; ".join(f"{r['title']} ({r['id']})" for r in relevant[:2])
        quote = next((r["excerpt"] for r in relevant if quotable(r["excerpt"], case)), None)
        said = f" The most relevant one says: {quote}" if quote else ""
        return f"Documents consulted: {titles}.{said}"
    if tool == "swiss_tax":
        burden = " and ".join(tax_phrase(name, obs[name], case) for name in ("wealth_tax", "income_tax"))
        advice = f"{obs['capital_gains']} Inheritance: {obs['descendants_inheritance']}."
        return f"Tax in {obs['name']} (the swiss_tax tool's table, illustrative, not tax advice): {burden}. {advice}"
    symbols = ", ".join(obs["prices"])
    return f"The prices tool quoted {symbols} (illustrative, as of {obs['as_of']}), for the timing of each stage."


def quotable(excerpt, case):
    """A document's sentence may be quoted when it states no money figure (the client's figures come from the sheet)
    and names no rule of a place the client is not tied to."""
    amounts = [q for q in quantities.find_quantities(excerpt) if q.kind == "amount"]
    return not amounts and tied(excerpt, case)


def tied(text, case):
    """Every tax rule the text names belongs to a place on the client's sheet (any, when the sheet names none)."""
    return not case.places or all(m.negated or regimes.tied(m, case.places) for m in regimes.find_regimes(text))


def tax_phrase(name, table, case):
    """An estimate with its working, on the client's own income or wealth, when the tool made one; else the range of
    the table's bands."""
    name = name.replace("_", " ")
    money = offline_facts.format_amount
    if isinstance(table, dict):
        key = "wealth_chf" if "wealth_chf" in table else "income_chf"
        rate = table["per_mille"] / 10 if "per_mille" in table else table["effective_rate"] * 100
        fact = next((f for f in case.amounts if f.unit == "CHF" and f.value == table[key]), None)
        base = fact.as_base() if fact else money(table[key], "CHF")
        return f"{name}: {rate:g}% of {base} = {money(table['estimated_chf'], 'CHF')} a year"
    key, shown = ("effective_rate", "{:.0%}") if "effective_rate" in table[0] else ("per_mille", "{} per mille")
    return f"{name} from {shown.format(table[0][key])} to {shown.format(table[-1][key])} by band"


HANDLERS = {"react.step": step, "react.synthesize": synthesize}
