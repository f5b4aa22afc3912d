"""The offline model's Reflexion replies: attempts from the kind's step bank, judged criterion by criterion (full
credit for a criterion taken up by name, half for one only touched), critiques naming the heaviest gaps, and later
attempts that replace a step for each criterion the reviews in MEMORY raised with one written for it, so scores rise.
Game of 24 is answered by the puzzle player (PUZZLE_HANDLERS, puzzle_replies.py).
"""

import re

from reasoning.llm.offline import wealth as oa
from reasoning.llm.offline import lats as offline_lats, puzzle_replies
from reasoning.llm.offline.prompt import parse_steps

# Judged against when the session has no rubric with criteria: what the engine's fallback rubric names.
FALLBACK_RUBRIC = (
    "- Soundness (weight 3): Facts, arithmetic and rules are right.\n"
    "- Specificity (weight 2): Concrete actions, amounts and dates instead of generalities.\n"
    "- Risk awareness (weight 2): Names the main risks and how to contain them."
)
GAPS_PER_CRITIQUE = 2
REVIEW = re.compile(r"^- Attempt (\d+)\b(.*)$", re.MULTILINE)


def first_number(text, default):
    found = re.findall(r"\d+(?:\.\d+)?", text or "")
    return float(found[0]) if found else default


def rubric_of(p):
    return p.rubric if oa.rubric_criteria(p.rubric) else FALLBACK_RUBRIC


def criteria_of(p):
    return oa.rubric_criteria(rubric_of(p))


def credit(criterion, text):
    """1 when the attempt takes the criterion up by name, 0.5 when it only touches it, else 0."""
    if criterion[0].lower() in text.lower():
        return 1.0
    return 0.5 if oa.meets(criterion, text) else 0.0


def gaps(criteria, text):
    """(criterion, credit) for each criterion not taken up by name, the heaviest shortfall first."""
    short = [(c, credit(c, text)) for c in criteria]
    return sorted(((c, k) for c, k in short if k < 1), key=lambda ck: -ck[0][1] * (1 - ck[1]))


def figure(p, index=0):
    """A labelled figure from the client's facts for the critique and the next attempt to work from (plain words
    when the sheet has none)."""
    numbers = oa.key_numbers(p) or [oa.facts(p)["amount"]]
    return numbers[index % len(numbers)]


def attempt(p, rng):
    s = p.sections
    count = int(min(6, max(1, first_number(s.get("STEPS"), 3))))
    f = oa.facts(p)
    steps = [oa.fill(template, f) for template in first_templates(p.kind, f, count)]
    # Each criterion a review raised is answered by a step written for it, in place of one of the first attempt's,
    # from the last step back (more criteria than steps share a step): a real change in what the attempt does, not a
    # note appended to the old step. The places are fixed, so a later attempt keeps what an earlier one fixed.
    groups = {}
    for j, (criterion, _review) in enumerate(raised(criteria_of(p), s.get("MEMORY", ""))):
        groups.setdefault((count - 1 - j) % count, []).append(criterion)
    titles = [oa.title_of(x) for x in steps]
    for j, (at, criteria) in enumerate(sorted(groups.items(), reverse=True)):
        steps[at] = revised_step(criteria, f, p, titles, j)
    return {"steps": [{"thought": t} for t in steps]}


def first_templates(kind, f, count):
    """The first attempt's steps: for each step, the stage's next template that fits the problem."""
    bank, used, chosen = oa.BANKS.get(kind, oa.BANKS["general"]), set(), []
    for i in range(1, count + 1):
        stage = oa.stage_index(i, count)
        options = [t for t in oa.fitting(bank[stage], f) + oa.fitting(oa.BANKS["general"][stage], f) if t not in used]
        template = options[(i - 1) % len(options)] if options else oa.BANKS["general"][stage][0]
        used.add(template)
        chosen.append(template)
    return chosen


def revised_step(criteria, f, p, titles, j):
    """A step that answers a review's criteria: the bank's approach that meets the first and is not in the attempt yet,
    under the criteria's names, worked from one of the client's own figures."""
    criterion, names = criteria[0], " and ".join(c[0] for c in criteria)
    options = [
        t
        for bank in dict.fromkeys((p.kind, "general"))
        for stage in oa.BANKS[bank]
        for t in oa.fitting(stage, f)
        if oa.meets(criterion, oa.fill(t, f)) and oa.title_of(t) not in titles
    ]
    # An approach whose own title names the criterion ("Risk controls" for "Risk awareness") reads best under it.
    stems = {w[:4] for w in criterion[0].lower().split()}
    options.sort(key=lambda t: not any(s in oa.title_of(t).lower() for s in stems))
    numbers = oa.key_numbers(p)
    # With no approach in the banks for it, a step in its own words (a rubric's line copied back is an echo, refused).
    figures = "; ".join(numbers[:3]) or f["amount"]
    body = (
        oa.fill(options[0], f).partition(":")[2].strip()
        if options
        else f"Recheck the plan against the client's own figures ({figures}) and the rules in {f['place']}, state "
        f"what could go wrong at each step for {f['client']} and the response, and keep the steps consistent."
    )
    figure = numbers[j % len(numbers)] if numbers else ""
    return f"{names}: {body}" + (f" Worked from {figure}." if figure and figure not in body else "")


def raised(criteria, memory):
    """(criterion, the attempt whose review named it) for every criterion the reviews in MEMORY name."""
    found = {}
    for match in REVIEW.finditer(memory):
        for criterion in criteria:
            if criterion[0].lower() in match[2].lower():
                found.setdefault(criterion[0], (criterion, match[1]))
    return list(found.values())


def rubric_line(rubric, name):
    match = re.search(rf"^\s*-\s*{re.escape(name)}\s*\(weight[^)]*\)\s*:?\s*(.*)$", rubric, re.MULTILINE)
    return (match[1].strip().rstrip(".") if match and match[1].strip() else name) + "."


def evaluate(p, rng):
    steps = parse_steps(p.sections.get("ATTEMPT", ""))
    text = " ".join(steps)
    criteria = criteria_of(p)
    credits = [(c, credit(c, text)) for c in criteria]
    coverage = sum(c[1] * k for c, k in credits) / sum(c[1] for c in criteria)
    shown = oa.facts(p)["figure"]
    concrete = 0.04 * bool(shown and shown in text) + 0.02 * bool(re.search(r"\d", text))
    score = round(min(0.98, max(0.02, 0.3 + 0.6 * coverage + concrete + rng.uniform(-0.02, 0.02))), 3)
    return {"score": score, "reason": judgement(credits)}


def judgement(credits):
    verbs = {1.0: "takes up", 0.5: "touches only in passing", 0.0: "misses"}
    named = {k: ", ".join(f"{c[0]} (weight {c[1]:g})" for c, level in credits if level == k) for k in verbs}
    return "The attempt " + "; it ".join(f"{verbs[k]} {names}" for k, names in named.items() if names) + "."


def reflect(p, rng):
    s = p.sections
    steps, num = parse_steps(s.get("ATTEMPT", "")), int(first_number(s.get("ATTEMPT NUMBER"), 1))
    score = first_number(s.get("SCORE"), 0.0)
    missed = gaps(criteria_of(p), " ".join(steps))[:GAPS_PER_CRITIQUE]
    number = figure(p)
    found = offline_lats.checked(p)
    if found:
        return {"critique": f"Attempt {num} failed the checks, whatever its score.{found} Work from {number}."}
    if not missed:
        return {
            "critique": f"Attempt {num} scored {score:g}: it names every criterion but stays general. "
            f"Next attempt: tie each step to {number} and to a date."
        }
    how = [f"{c[0]} (weight {c[1]:g}) {'only in passing' if k else 'not at all'}" for c, k in missed]
    asks = " ".join(f'{c[0]} asks: "{rubric_line(rubric_of(p), c[0])}"' for c, _ in missed)
    return {
        "critique": f"Attempt {num} scored {score:g}, under the bar. It addressed {' and '.join(how)}. {asks} "
        f"Next attempt: address {'both' if len(missed) > 1 else 'it'} by name, working from {number}."
    }


# reflexion.expand and reflexion.synthesize read like ToT's propose and synthesize prompts.


def expand(p, rng):
    return {"thoughts": [{"thought": t["thought"]} for t in oa.tot_propose(p, rng)["thoughts"]]}


def synthesize(p, rng):
    return oa.tot_synthesize(p, rng)


HANDLERS = {f"reflexion.{handler.__name__}": handler for handler in (attempt, evaluate, reflect, expand, synthesize)}
PUZZLE_HANDLERS = {
    "reflexion.attempt": puzzle_replies.attempt,
    "reflexion.evaluate": puzzle_replies.attempt_score,
    "reflexion.reflect": puzzle_replies.critique,
    "reflexion.expand": puzzle_replies.alternatives,
    "reflexion.synthesize": puzzle_replies.synthesis,
}
