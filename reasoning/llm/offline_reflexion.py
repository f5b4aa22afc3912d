"""The offline model's Reflexion replies: attempts from the kind's step bank, judged criterion by criterion (full
credit for a criterion taken up by name, half for one only touched), critiques naming the heaviest gaps, and later
attempts that keep their steps and take up every criterion the reviews in MEMORY raised, so scores rise.
Game of 24 gets real arithmetic (game24.py) instead.
"""

import re
from dataclasses import replace

from reasoning.llm import game24
from reasoning.llm import offline_answers as oa

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


def figure(problem, index=0):
    """A number from the problem for the critique and the next attempt to work from."""
    numbers = oa.key_numbers(problem, []) or [oa.facts(problem, "general")["amount"]]
    return numbers[index % len(numbers)]


def attempt(p, rng):
    s = p.sections
    count = int(min(6, max(1, first_number(s.get("STEPS"), 3))))
    if game24.puzzle_numbers(p.problem):
        return {"steps": [{"thought": t} for t in game_attempt(p.problem, count, s.get("MEMORY", ""))]}
    f = oa.facts(p.problem, p.kind)
    bank = oa.BANKS.get(p.kind, oa.BANKS["general"])
    steps = [bank[oa.stage_index(i, count)][(i - 1) % 4].format_map(f) for i in range(1, count + 1)]
    # Each criterion the reviews raised is taken up by name, spread over the steps from the last one back.
    for j, ((name, *_), review) in enumerate(raised(criteria_of(p), s.get("MEMORY", ""))):
        steps[(count - 1 - j) % count] += (
            f' {name}, as the review of attempt {review} asked ("{rubric_line(rubric_of(p), name)}"): worked '
            f"through here from {figure(p.problem, j)} for {f['client']}."
        )
    return {"steps": [{"thought": t} for t in steps]}


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
    steps = oa.parse_steps(p.sections.get("ATTEMPT", ""))
    if game24.puzzle_numbers(p.problem):
        return game24.evaluate(replace(p, steps=steps[:-1], last_step=steps[-1] if steps else ""), rng)
    text = " ".join(steps)
    criteria = criteria_of(p)
    credits = [(c, credit(c, text)) for c in criteria]
    coverage = sum(c[1] * k for c, k in credits) / sum(c[1] for c in criteria)
    concrete = 0.04 * (oa.facts(p.problem, p.kind)["amount"] in text) + 0.02 * bool(re.search(r"\d", text))
    score = round(min(0.98, max(0.02, 0.3 + 0.6 * coverage + concrete + rng.uniform(-0.02, 0.02))), 3)
    return {"score": score, "reason": judgement(credits)}


def judgement(credits):
    verbs = {1.0: "takes up", 0.5: "touches only in passing", 0.0: "misses"}
    named = {k: ", ".join(f"{c[0]} (weight {c[1]:g})" for c, level in credits if level == k) for k in verbs}
    return "The attempt " + "; it ".join(f"{verbs[k]} {names}" for k, names in named.items() if names) + "."


def reflect(p, rng):
    s = p.sections
    steps, num = oa.parse_steps(s.get("ATTEMPT", "")), int(first_number(s.get("ATTEMPT NUMBER"), 1))
    score = first_number(s.get("SCORE"), 0.0)
    if game24.puzzle_numbers(p.problem):
        return {"critique": game_critique(p.problem, steps, num, score)}
    missed = gaps(criteria_of(p), " ".join(steps))[:GAPS_PER_CRITIQUE]
    number = figure(p.problem)
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


# Game of 24: a greedy first attempt, then one that keeps 24 reachable at every step.


def game_attempt(problem, count, memory):
    """The first move each time on a first attempt; once reviewed, only moves that keep 24 reachable."""
    numbers, reviewed = game24.puzzle_numbers(problem), memory.strip().startswith("-")
    items, lines = game24.board(numbers), []
    while len(items) > 1:
        options = game24.moves(items)
        text, items = ([o for o in options if reviewed and game24.reachable(o[1])] or options)[0]
        lines.append(text)
    (value, expr), start = items[0], game24.board(numbers)
    final = f"Answer: {game24.strip_outer(expr)} = {value}"
    if value != game24.TARGET and reviewed and game24.solve(start) is None:
        final = f"Answer: no solution reached from {game24.left_text(start)}"
    return lines[: count - 1] + [final] if count < 4 else lines + [final]


def game_critique(problem, steps, num, score):
    numbers = game24.puzzle_numbers(problem)
    items, cards = game24.board(numbers), " ".join(map(str, numbers))
    if game24.solve(items) is None:
        return f"Attempt {num} scored {score:g}: 24 cannot be made from {cards} at all; the answer must say so."
    if any(game24.is_answer(s) and game24.check_answer(s, numbers)[0] for s in steps):
        return f"Attempt {num} scored {score:g}: its answer is right; show each operation with the numbers left."
    for step in [s for s in steps if not game24.is_answer(s)]:
        items = game24.apply_step(items, step)
        if not game24.reachable(items):
            return (
                f"Attempt {num} scored {score:g}: after '{step.split(' (')[0]}' 24 can no longer be reached from "
                f"{game24.left_text(items)}. Next attempt: choose each operation on {cards} so 24 stays reachable."
            )
    return f"Attempt {num} scored {score:g}: its answer does not make 24 from {cards}. Next attempt: check it first."


# reflexion.expand and reflexion.synthesize read like ToT's propose and synthesize prompts.


def expand(p, rng):
    propose = game24.propose if game24.puzzle_numbers(p.problem) else oa.tot_propose
    return {"thoughts": [{"thought": t["thought"]} for t in propose(p, rng)["thoughts"]]}


def synthesize(p, rng):
    return (game24.synthesize if game24.puzzle_numbers(p.problem) else oa.tot_synthesize)(p, rng)


HANDLERS = {f"reflexion.{handler.__name__}": handler for handler in (attempt, evaluate, reflect, expand, synthesize)}
