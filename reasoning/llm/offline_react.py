"""The offline model's ReAct replies: a tool plan read from the problem, and an answer from what the tools returned.

The plan: the portfolio of a client id named; the client documents; prices of tickers named or the largest holdings;
the canton's tax table for a Swiss canton or town; one calculation with the problem's own numbers (a Game of 24:
the solver's expression). A step takes the K-th planned action not yet on the trajectory (K is 1 on the main line,
higher for alternatives), and final_answer when none is left or on the last step.
"""

import importlib
import json
import re

from reasoning.llm import game24
from reasoning.llm.offline_banks import DEFAULT_ASSET, NOTES, STOPWORDS

STEP = re.compile(r"^Thought: (.*?) Action: (\w+)\((.*)\) Observation: (.*)$")
CLIENT_ID = re.compile(r"\b[A-Z]-\d{4}\b")
THREE_YEARS = re.compile(r"\b(?:three|3)\s+(?:tax\s+)?years\b", re.IGNORECASE)
GENERIC = set("build adding make help want wants asks check client clients aged year years using given across".split())
ORDER = ("portfolio", "search_documents", "calculate", "swiss_tax", "prices")  # the answer's paragraphs


def base():
    # offline_answers loads this module at its end: read it when a reply is asked for, never at import.
    return importlib.import_module("reasoning.llm.offline_answers")


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
    offline, folio, actions = base(), seen.get("portfolio"), []
    client = (CLIENT_ID.search(p.problem) or [None])[0]
    if client:
        actions.append(("portfolio", {"client_id": client}, f"The problem names {client}: I look up the holdings."))
    query = " ".join(keywords(p.problem))
    search = {"query": query} | ({"client_id": client} if client else {})
    actions.append(("search_documents", search, f"I search the documents for {query}, to find constraints and views."))
    tickers = [t for t in offline.TICKER.findall(p.problem) if t not in offline.NOT_TICKERS | set(offline.COUNTRIES)]
    symbols = list(dict.fromkeys(tickers + [h["symbol"] for h in (folio or {}).get("holdings", [])[:3]]))[:5]
    if symbols:
        actions.append(("prices", {"symbols": symbols}, f"I check the prices of {', '.join(symbols)}."))
    place = offline.facts(p.problem, p.kind)["place"]
    canton = place if place in offline.PLACES else (folio or {}).get("canton")
    if canton:
        args = {"canton": canton} | tax_amounts(p.problem, folio, offline)
        why = "the tax the plan has to carry (illustrative, not tax advice)"
        actions.append(("swiss_tax", args, f"The client lives in {canton}: the canton's tax table shows {why}."))
    calculation = calculation_of(p.problem, folio, offline)
    if calculation:
        thought = f"I compute {calculation[1]} exactly, from the numbers at hand."
        actions.append(("calculate", {"expression": calculation[0]}, thought))
    return actions


def keywords(problem):
    words = [w for w in re.findall(r"[A-Za-zÀ-ÿ]{4,}", problem) if w.lower() not in STOPWORDS | GENERIC]
    return list(dict.fromkeys(words))[:6] or ["portfolio"]


def tax_amounts(problem, folio, offline):
    spans = [(problem.find(w), v) for w, v, code in offline.money_spans(problem) if code == "CHF"]
    income = next((v for at, v in spans if "income" in problem[max(0, at - 30) : at].lower()), None)
    wealth = folio["total_chf"] if folio else max((v for at, v in spans if v != income), default=None)
    return {k: v for k, v in (("income_chf", income), ("wealth_chf", wealth)) if v is not None}


def calculation_of(problem, folio, offline):
    """(expression, what it measures, unit) with the problem's own numbers, or None when it has none."""
    main, amounts = offline.main_amount(problem), [(w, v) for w, v, _ in offline.money_spans(problem)]
    others = sorted((a for a in amounts if main and a != main[:2]), key=lambda a: -a[1])
    target, percent = offline.target_percent(problem), offline.PERCENT.search(problem)
    drifted = next((float(m[1]) for m in offline.PERCENT.finditer(problem) if target and float(m[1]) != target), None)
    if main and others:
        (small_w, small), (large_w, large) = sorted([main[:2], others[0]], key=lambda a: a[1])
        return f"{small:.15g} / {large:.15g} * 100", f"{small_w} as a share of {large_w}", "%"
    if main and folio:
        total = offline.money(folio["total_chf"], "CHF")
        return f"{main[1]:.15g} / {folio['total_chf']} * 100", f"{main[0]} as a share of the {total} portfolio", "%"
    if main and percent:
        return f"{main[1]:.15g} * {percent[1]} / 100", f"{percent[1]}% of {main[0]}", main[2]
    if main and THREE_YEARS.search(problem):
        return f"{main[1]:.15g} / 3", f"one of three yearly tranches of {main[0]}", main[2]
    if drifted is not None:
        return f"{drifted:.15g} - {target:.15g}", f"the drift from the {target:.15g}% target", " points"
    if folio and folio["holdings"]:
        top, liquid = folio["holdings"][0], folio["liquid_total_chf"]
        return f"{top['value_chf']} / {liquid} * 100", f"the share of {top['name']} in the liquid assets", "%"
    return None


def answer_text(p, done):
    """A lead, what each tool showed, and the main risk: whole sentences, at most 250 words."""
    seen = {tool: obs for tool, obs in done if isinstance(obs, dict)}
    puzzle = game24.puzzle_numbers(p.problem)
    if puzzle:
        cards, expression = " ".join(map(str, puzzle)), game24.solve(game24.board(puzzle))
        if not expression:
            return f"No expression makes 24 from {cards} with + - * /."
        checked = " The calculate tool confirmed the value 24." if "calculate" in seen else ""
        return f"Answer: {expression} = 24.{checked} Each of {cards} is used exactly once."
    offline = base()
    f = offline.facts(p.problem, p.kind)
    if f["asset"] in offline.CODES.values():  # a currency read as the asset ("CHF bonds") names no asset
        f["asset"] = DEFAULT_ASSET[p.kind]
    lead, risk, mitigation = (text.format_map(f) for text in NOTES[p.kind])
    calculation = calculation_of(p.problem, seen.get("portfolio"), offline)
    client = (CLIENT_ID.search(p.problem) or [None])[0]
    parts = [f"Recommendation: {lead}."]
    parts += [found(tool, seen[tool], calculation, client) for tool in ORDER if tool in seen]
    failed = sorted({tool for tool, obs in done if isinstance(obs, str) and obs.startswith("error")})
    if failed:
        parts.append(f"The {', '.join(failed)} call returned an error, so nothing here relies on it.")
    parts.append(f"Main risk: {risk}. Mitigation: {mitigation}.")
    while len(" ".join(parts).split()) > 250 and len(parts) > 2:
        parts.pop(-2)  # the least important finding goes first; the lead and the risk stay
    return "\n\n".join(parts)


def found(tool, obs, calculation, client_id):
    """One paragraph saying what a tool's observation showed."""
    money = base().money
    if tool == "portfolio":
        total, liquid = money(obs["total_chf"], "CHF"), money(obs["liquid_total_chf"], "CHF")
        who = f"{obs['client_id']} ({obs['name']}, canton {obs['canton']}, {obs['risk_profile']} profile)"
        top = "; ".join(h["name"] for h in obs["holdings"][:3])
        return f"Client {who} holds {total}, {liquid} of it liquid. The largest positions: {top}."
    if tool == "calculate":
        result = f"{obs['result']:,.2f}".removesuffix(".00")
        if not calculation or calculation[0] != obs["expression"]:
            return f"Calculation: {obs['expression']} = {result}."
        _, what, unit = calculation
        result = money(obs["result"], unit) if unit.isupper() else result + unit  # an amount, else % or points
        return f"Calculation: {what} is {result} ({obs['expression']})."
    if tool == "search_documents":
        # Another client's file says nothing about this one: only house notes and the client's own documents count.
        relevant = [r for r in obs["results"] if r["client_id"] in (None, client_id)]
        if not relevant:
            return "The document search found nothing that applies to this client."
        titles = "; ".join(f"{r['title']} ({r['id']})" for r in relevant[:2])
        return f"Documents consulted: {titles}. The most relevant one says: {relevant[0]['excerpt']}"
    if tool == "swiss_tax":
        burden = " and ".join(tax_phrase(name, obs[name], money) for name in ("wealth_tax", "income_tax"))
        advice = f"{obs['capital_gains']} Inheritance: {obs['descendants_inheritance']}."
        return f"Tax in {obs['name']} (illustrative, not tax advice): {burden}. {advice}"
    quotes = ", ".join(f"{s} {q['price']} {q['currency']}" for s, q in obs["prices"].items())
    return f"Prices (illustrative, as of {obs['as_of']}): {quotes}."


def tax_phrase(name, table, money):
    """An estimate when the tool made one, else the range of the table's bands."""
    name = name.replace("_", " ")
    if isinstance(table, dict):
        return f"about {money(table['estimated_chf'], 'CHF')} a year of {name}"
    key, shown = ("effective_rate", "{:.0%}") if "effective_rate" in table[0] else ("per_mille", "{} per mille")
    return f"{name} from {shown.format(table[0][key])} to {shown.format(table[-1][key])} by band"


HANDLERS = {"react.step": step, "react.synthesize": synthesize}
