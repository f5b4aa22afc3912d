"""The offline model's replies for TRM recursive refinement: an analysis in marked lines, then a better answer.

A good answer covers six themes (sizing, risk, tax, liquidity, timeline, monitoring), each written on its own
line under its label. The analysis finds which themes the current answer (the prompt's LAST STEP) covers:
those are its insights, the first two missing ones its issues (with suggestions), the rest missing; its
confidence grows with the coverage. Each improvement adds the two themes the analysis flagged, so a session
climbs through about 0.32, 0.62 and 0.92, stops by the default threshold at the third iteration, and its
last improvement completes the answer. Sentences are filled from the client's fact sheet (offline_wealth.facts);
the first answer already names each instrument, account, goal and constraint the sheet lists, and every later one
keeps it; the wording varies with the prompt (alternatives read differently).
"""

import re

from reasoning.llm.offline import wealth as oa
from reasoning.llm.offline import puzzle_replies

# (label, the issue when it is missing, two ways of writing its line)
THEMES = (
    (
        "Sizing",
        "The answer does not size the commitment: how much of {amount} moves, and in which stages.",
        (
            "commit {amount} in three tranches{tranche}, each released only after a checkpoint review.",
            "keep the decision to {amount}, moved in three stages{tranche}, so no single day's prices "
            "decide the outcome.",
        ),
    ),
    (
        "Risk",
        "The main risk is not named, and nothing mitigates it.",
        (
            "the main risk is {risk}; the mitigation is {mitigation}.",
            "guard against {risk}, through {mitigation}.",
        ),
    ),
    (
        "Tax",
        "The tax consequences in {place} are not addressed.",
        (
            "confirm the tax treatment in {place} before each step, and realise gains only where the tax cost "
            "is known in advance.",
            "sequence the steps so the tax bill in {place} is known before acting, using losses and allowances "
            "where they exist.",
        ),
    ),
    (
        "Liquidity",
        "No liquidity reserve is kept for {client}.",
        (
            "keep 12 months of spending in {cur} cash outside the plan, so {client} never has to sell in a "
            "falling market.",
            "set aside a reserve of at least a year's spending in {cur} before anything is committed.",
        ),
    ),
    (
        "Timeline",
        "The steps are not laid out over {horizon}.",
        (
            "spread the steps over {horizon}, reversible ones first and irreversible ones last.",
            "lay the sequence out over {horizon}, with a date and an owner for each step.",
        ),
    ),
    (
        "Monitoring",
        "Nothing says how progress is reviewed, or what would reopen the decision.",
        (
            "review progress with {client} every six months, against a threshold agreed now that reopens the decision.",
            "set review dates and one measurable trigger that sends the plan back for a decision.",
        ),
    ),
)
PER_ITERATION = 2  # themes an improvement adds


def fill(p):
    f = oa.facts(p)
    risk, mitigation = oa.risk_of(p, f)
    f.update(lead=oa.lead_of(p, f), risk=risk, mitigation=mitigation)
    return f


def covered(answer):
    return [theme for theme in THEMES if f"{theme[0]}:" in answer]


def missing(answer):
    return [theme for theme in THEMES if f"{theme[0]}:" not in answer]


def confidence(answer, rng):
    share = len(covered(answer)) / len(THEMES)
    return round(min(0.98, 0.32 + 0.9 * share + rng.uniform(0.0, 0.02)), 2)


def trm_reason(p, rng):
    f = fill(p)
    answer = p.last_step if p.step > 1 else ""
    lines = []
    if not covered(answer):
        lines.append("INSIGHT: The decision concerns {amount} for {client}, in {place}, over {horizon}.".format_map(f))
        lines.append(f"INSIGHT: A sound direction: {f['lead']}.")
    for label, _, _ in covered(answer):
        lines.append(f"INSIGHT: The {label.lower()} line is specific and should be kept.")
    gaps = missing(answer)
    for label, issue, ways in gaps[:PER_ITERATION]:
        lines.append(f"ISSUE: {issue.format_map(f)}")
        lines.append(f"SUGGESTION: Add a {label.lower()} line: {ways[0].format_map(f)}")
    for label, _, _ in gaps[PER_ITERATION:]:
        lines.append(f"MISSING: A {label.lower()} line, with figures where they matter.")
    lines.append(f"CONFIDENCE: {confidence(answer, rng):.2f}")
    return {"analysis": "\n".join(lines)}


def trm_improve(p, rng):
    f = fill(p)
    answer = p.last_step if p.step > 1 else first_answer(p, f)
    if CHECK_FINDINGS in p.sections.get("KEY POINTS", ""):
        answer = rewritten(p, f, answer, rng)
    added = [f"{label}: {rng.choice(ways).format_map(f)}" for label, _, ways in missing(answer)[:PER_ITERATION]]
    return {"answer": "\n".join([answer.strip(), *added])}


# The head of the points the checker's findings are given under (strategies/base.py findings_note).
CHECK_FINDINGS = "failed these checks against the client's facts"
QUOTED = re.compile(r'your answer says "(.+?)":')


def rewritten(p, f, answer, rng):
    """The answer written again as the findings ask, as a model told "your answer says X" does: its lead, figures and
    listed lines written afresh from the sheet, and each theme's line kept, unless it says what a finding quotes,
    when it is written again from its theme."""
    quoted = QUOTED.findall(p.sections.get("KEY POINTS", ""))
    lines = [first_answer(p, f)]
    for label, _, ways in covered(answer):
        line = next((x for x in answer.splitlines() if x.startswith(f"{label}:")), "")
        if any(q in line for q in quoted) or not quoted:
            line = f"{label}: {rng.choice(ways).format_map(f)}"
        lines.append(line)
    return "\n".join(lines)


def first_answer(p, f):
    """The lead, the client's figures, then a line for each instrument, account, goal and constraint listed."""
    numbers = oa.key_numbers(p)
    shown = "; ".join(numbers) if numbers else f"none on {f['client']}'s fact sheet yet"
    return "\n".join([f"Recommendation: {f['lead']}.", f"Key numbers: {shown}.", *oa.listed_lines(p, short=True)])


HANDLERS = {"trm.reason": trm_reason, "trm.improve": trm_improve}
PUZZLE_HANDLERS = {"trm.reason": puzzle_replies.analysis, "trm.improve": puzzle_replies.improvement}
