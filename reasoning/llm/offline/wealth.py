"""The offline model's text for wealth problems, shared by every strategy's offline replies: steps from per-kind
banks (banks.py) filled from the client's fact sheet (the prompt's CLIENT FACTS section, read by
facts.py), never from the problem text: each figure with its label, each derived figure with its arithmetic,
each listed instrument, account and goal named in an answer. Tree of Thoughts' own contracts are answered here.
"""

import functools
import re

from reasoning.facts.checks import prohibitions
from reasoning.llm.offline import facts as offline_facts
from reasoning.llm.offline.banks import (
    ACCOUNT_AMOUNT_NOTE,
    ACCOUNT_NOTE,
    BANKS,
    CONSTRAINT_NOTE,
    DEFAULT_AMOUNT,
    DEFAULT_ASSET,
    GOAL_LEADS,
    GOAL_NO_FIGURE_NOTE,
    GOAL_NOTE,
    INSTRUMENT_NOTE,
    LISTED_NOTES,
    NOTES,
    OBLIGATION_NOTE,
    RELATED,
    SALE_NOTES,
    STAGES,
    STOPWORDS,
)
from reasoning.llm.offline.prompt import BUILDS_ON, parse_steps
from reasoning.strategies.replies import about

# The client's facts: from the prompt's CLIENT FACTS sheet only, never from the problem text.


def case_of(p):
    """The sheet of the prompt, read (offline_facts.Case)."""
    return offline_facts.read_case(p.sections.get("CLIENT FACTS", ""))


def facts(p):
    """Placeholder values for the step templates, from the sheet, with plain words where the sheet has no figure."""
    return offline_facts.words(case_of(p), p.kind, DEFAULT_AMOUNT[p.kind], DEFAULT_ASSET[p.kind])


TAGS = re.compile(r"^\[([^\]]*)\]\s*")


def fits(template, f):
    """A template fits the facts when the problem has each of its tags and none of its "!" tags."""
    match = TAGS.match(template)
    if not match:
        return True
    have = f.get("tags") or set()
    wanted = [tag.strip() for tag in match[1].split(",") if tag.strip()]
    return all((tag[1:] not in have) if tag.startswith("!") else (tag in have) for tag in wanted)


def fill(template, f):
    """The template's text with its tags removed and the facts filled in."""
    return TAGS.sub("", template).format_map(f)


def fitting(group, f):
    """The templates of a stage that fit the problem, in bank order."""
    return [template for template in group if fits(template, f)]


# tot.propose


def stage_index(step, depth):
    """Step 1 frames the problem, the last step sets controls, the steps between act and then sequence."""
    if step <= 1:
        return 0
    if step >= depth:
        return 3
    return 1 if (step - 1) / (depth - 1) <= 0.5 else 2


def title_of(thought):
    thought = TAGS.sub("", thought)
    head, colon, _ = thought.partition(":")
    return head.strip() if colon and len(head.split()) <= 6 else " ".join(thought.split()[:5])


def candidates(kind, stage, steps, rng, f=None):
    """Templates for this step that fit the problem, this kind's own stage first, then the general bank, then nearby
    stages."""
    taken = " ".join(steps).lower()
    order = []
    for distance in range(4):
        for bank in dict.fromkeys((kind, "general")):
            for s in sorted({stage - distance, stage + distance} & set(range(4))):
                group = fitting(BANKS[bank][s], f) if f is not None else list(BANKS[bank][s])
                rng.shuffle(group)
                order += group
    unique = {}
    for template in order:
        title = title_of(template)
        if title.lower() not in taken:
            unique.setdefault(title, template)
    return list(unique.values())


def tot_propose(p, rng):
    f = facts(p)
    stage = stage_index(p.step, p.depth)
    previous = f" Builds on step {len(p.steps)} ({title_of(p.steps[-1])})." if p.steps else ""
    thoughts = []
    proposed = parse_steps(p.sections.get("ALREADY PROPOSED", ""))  # an expand by hand asks for new siblings
    for template in candidates(p.kind, stage, p.steps + proposed, rng, f)[: p.k]:
        title = title_of(template)
        thoughts.append(
            {
                "thought": fill(template, f) + previous,
                "state": {
                    # the state names the sum, not its derivation again: the thought holds that (and a reply
                    # a token a byte stays inside the proposal's max_tokens)
                    "summary": f"after step {p.step}: {title.lower()} for {f['figure'] or f['amount']}",
                    "approach": title,
                    "stage": STAGES[stage],
                    "step": p.step,
                },
            }
        )
    return {"thoughts": thoughts}


# tot.evaluate

CRITERION = re.compile(r"^\s*-\s*(.+?)\s*\(weight\s*([\d.]+)\)\s*:?\s*(.*)$", re.MULTILINE)
NUMERIC = ("number", "figure", "quanti", "concre", "specif")
THEMES = ("risk", "tax", "liquid", "cost")


def keywords(text):
    """Word stems of a rubric text, widened by RELATED so plain synonyms in a step also count."""
    stems = {w[:6] for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in STOPWORDS}
    return stems | {extra for root, more in RELATED.items() if any(s.startswith(root) for s in stems) for extra in more}


def rubric_criteria(rubric):
    """(name, weight, name stems, description stems) for each `- Name (weight W): description` line."""
    return list(_rubric_criteria(rubric))


@functools.lru_cache(maxsize=64)
def _rubric_criteria(rubric):  # every evaluation of a session reads the same rubric; the stems are only read
    return tuple(
        (name, float(weight), keywords(name), keywords(description))
        for name, weight, description in CRITERION.findall(rubric)
    )


def meets(criterion, text):
    """A criterion counts as met if the step uses a word of its name, or two words of its description."""
    _, _, name_stems, description_stems = criterion
    low = text.lower()
    starts = _word_starts(low)

    def used(stem):  # a stem counts at the start of a word only: "gain" must not match "against"
        return stem in low if " " in stem else stem in starts

    if re.search(r"\d", text) and any(s.startswith(NUMERIC) for s in name_stems | description_stems):
        return True
    return any(map(used, name_stems)) or sum(map(used, description_stems)) >= 2


@functools.lru_cache(maxsize=1024)
def _word_starts(low):
    """Every beginning of every word of a text (each criterion of a rubric asks about the same step)."""
    words = re.findall(r"[a-z]+", low)
    return frozenset(w[:i] for w in words for i in range(len(w) + 1)) if words else frozenset()


def tot_evaluate(p, rng):
    text = p.last_step
    criteria = rubric_criteria(p.rubric)
    met = [c for c in criteria if meets(c, text)]
    missed = [c for c in criteria if c not in met]
    words = len(text.split())
    has_numbers = bool(re.search(r"\d", text))
    score = 0.3 + 0.12 * has_numbers + 0.05 * min(3, sum(t in text.lower() for t in THEMES))
    total = sum(c[1] for c in criteria)
    score += 0.3 * sum(c[1] for c in met) / total if total else 0.1
    figure = facts(p)["figure"]
    score += 0.04 if figure and figure in text else 0
    score += -0.15 if words < 8 else (-0.1 if words > 110 else 0.04)
    repeated = bool(p.steps) and title_of(text).lower() in " ".join(p.steps).lower()
    score -= 0.2 if repeated else 0
    score = round(min(0.98, max(0.02, score + rng.uniform(-0.05, 0.05))), 3)
    return {"score": score, "reason": _reason(score, met, missed, has_numbers, repeated)}


def _named(criteria):
    names = [f"{name} (weight {weight:g})" for name, weight, _, _ in criteria]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _reason(score, met, missed, has_numbers, repeated):
    verdict = "Strong" if score >= 0.75 else ("Plausible" if score >= 0.5 else "Weak")
    figures = "with concrete figures" if has_numbers else "but without figures"
    if not met and not missed:
        return (
            f"{verdict}: no rubric criteria given, so judged on concreteness ({figures}) and on coverage of "
            "risk, tax, liquidity and cost."
        )
    first = f"{verdict}: meets {_named(met)} {figures}." if met else f"{verdict}: addresses none of the criteria."
    second = f" Does not address {_named(missed)}." if missed else ""
    return first + second + (" It repeats an earlier step." if repeated else "")


# tot.synthesize


def _short(step, limit=32):
    """One action line: the step without its back-reference, cut when long at the last clause boundary within `limit`
    words that leaves no bracket open, so never mid-phrase; at worst its title alone (`limit` 0: the title)."""
    text = BUILDS_ON.sub("", step).strip()
    if limit and len(text.split()) <= limit:
        return text
    ends = [m.start() for m in CLAUSE_END.finditer(text) if len(text[: m.start()].split()) <= limit]
    ends = [at for at in ends if _closed(text[:at]) == text[:at].rstrip()]
    title = title_of(step)
    return (text[: ends[-1]] if ends and ends[-1] > len(title) else title).rstrip(",;:. ") + "."


# "EUR 400,000" and "USD 1.6M" are one figure, and "0, 15 or 20%" one list: a clause ends before words only.
CLAUSE_END = re.compile(r"[,;:.](?=\s(?!\d))")


def _closed(text):
    """The text up to any bracket or quotation it opens and does not close."""
    opened = [i for i, ch in enumerate(text) if ch in "(“"]
    for at in reversed(opened):
        closer = ")" if text[at] == "(" else "”"
        if closer not in text[at:]:
            text = text[:at]
    if text.count('"') % 2:
        text = text[: text.rfind('"')]
    return text.rstrip()


def key_numbers(p):
    """The sheet's figures with their labels, and what follows from them with the arithmetic shown."""
    return offline_facts.key_numbers(case_of(p))


def lead_of(p, f):
    """The recommendation's lead: a sale or purchase the sheet's target implies, a goal the sheet names, else the
    kind's own lead."""
    case = case_of(p)
    move = case.moves[0] if case.moves else None
    if move and p.kind != "wealth-transfer":
        last = move.amount.how.split("; ")[-1]
        verb = "Sell" if move.sale else "Buy"
        return (
            f"{verb} {move.amount.shown} of {offline_facts.the(move.holding.label)} in stages ({last}), to bring it "
            f"to the {move.limit_label}, at the lowest tax and market cost"
        )
    for pattern, lead in GOAL_LEADS:
        if any(re.search(pattern, goal, re.I) for goal in case.goals):
            return fill(lead, f)
    lead = fill(NOTES[p.kind][0], f)
    subject = subject_of(p.problem) if p.kind == "general" else ""
    # The general lead names no task of its own: without the problem's subject the answer would fit any problem,
    # and the answer's relevance check refuses such an answer, as it should.
    return f"{subject}: {lead[0].lower()}{lead[1:]}" if subject else lead


def subject_of(problem, words=14):
    """The problem's opening words, up to its first figure (at most `words`, never ending on a little word): a name
    for it that quotes no figure, so the fact checks have nothing of the problem's to misread in it."""
    kept = []
    for word in re.split(r"(?<=[.;:?!])\s|\n", problem.strip(), maxsplit=1)[0].split()[:words]:
        if re.search(r"\d|[$€£¥]|^[A-Z]{3}$", word):
            break
        kept.append(word.rstrip(",;:"))
    while kept and kept[-1].lower() in LITTLE_WORDS:
        kept.pop()
    return " ".join(kept)


LITTLE_WORDS = set("a an the of to at after before and or but for in on with by from into that which".split())


def risk_of(p, f):
    """(main risk, mitigation): a staged sale's own when the lead is one, else the kind's."""
    return tuple(fill(text, f) for text in (SALE_NOTES if selling(p) else NOTES[p.kind][1:]))


def selling(p):
    """Whether the recommendation is a staged sale: a target or limit implies one, or a goal asks to reduce."""
    return p.kind != "wealth-transfer" and offline_facts.selling(case_of(p))


def listed_lines(p, short=False):
    """One line for each instrument, account and goal on the sheet, by its name: what the answer says about it
    (`short`: its first clause only, for an answer near its word limit)."""
    lines, case = [], case_of(p)
    barred = [rule for kind, name in case.listed if kind == "constraint" for rule in [prohibitions.rule_of(name)] if rule]
    for kind, name in case.listed:
        rule = next((r for r in barred if kind == "instrument" and name.lower() in r.thing.lower()), None)
        note = f"ruled out: the client {rule.text.strip()}" if rule else listed_note(kind, name, case)
        lines.append(f"- {name}: {note.split(';')[0] if short else note}.")
    return lines


def listed_note(kind, name, case=None):
    """What the answer says about one listed item: a goal by the plan's first figure, an account by its own amount
    where the sheet holds it, an instrument by what it does."""
    if kind == "goal":
        numbers = offline_facts.key_numbers(case) if case else []
        return GOAL_NOTE.format(figure=numbers[0]) if numbers else GOAL_NO_FIGURE_NOTE
    if kind == "constraint":
        return CONSTRAINT_NOTE
    if kind == "account":
        amount = _amount_of(name, case)
        return ACCOUNT_AMOUNT_NOTE.format(amount=amount.shown) if amount else ACCOUNT_NOTE
    if kind == "obligation":
        return OBLIGATION_NOTE
    return next((note for pattern, note in LISTED_NOTES if re.search(pattern, name, re.I)), INSTRUMENT_NOTE)


def _amount_of(name, case):
    """The sheet's amount an account's name labels ("pillar 3a" for "pillar 3a balance"), or None: one, or none."""
    words = {w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in LITTLE_WORDS and w != "account"}
    amounts = case.amounts if case else []
    found = [f for f in amounts if words and words <= set(re.findall(r"[a-z0-9]+", f.label.lower()))]
    return found[0] if len(found) == 1 else None


# The synthesis is cut to 250 words by shortening, in turn: the notes on what the client listed, the key numbers (the
# derived ones come first, so the working stays), then each action (to its title at the last): (words an action
# keeps, notes shortened, key numbers kept).
SHORTER = [(32, False, 8), (32, True, 8), (20, True, 8), (20, True, 5), (12, True, 5), (12, True, 3), (8, True, 3),
           (0, True, 3)]  # fmt: skip


@functools.cache
def bank_titles():
    """The titles of the offline model's own steps (every bank, every stage): a step it wrote itself."""
    return frozenset(title_of(t).lower() for bank in BANKS.values() for stage in bank for t in stage)


def plan_steps(p):
    """The steps of the line that may enter a plan: the offline model's own, and any other that is about the problem
    (a word or figure of its own shared with the problem, the client's sheet or the rubric, as an answer's relevance
    check reads it). Where it answers for a real model (an allowed fallback), a step that drifted off the problem ("I am
    proud of my family") never becomes an action of the plan."""
    subject = "\n".join((p.problem, p.sections.get("CLIENT FACTS", ""), p.rubric))
    return [s for s in p.steps if title_of(s).lower() in bank_titles() or about(s, subject)]


def tot_synthesize(p, rng):
    f = facts(p)
    steps = plan_steps(p)
    if p.steps and not steps:
        # Not one step of the line is about the problem: no plan can be written from it, and none is made up. An empty
        # answer breaks the contract, so the session ends failed with its line as the partial answer, saying why.
        return {"answer": ""}
    risk, mitigation = risk_of(p, f)
    lead = lead_of(p, f)
    steps = steps or [fill(rng.choice(fitting(BANKS[p.kind][s], f) or BANKS["general"][s]), f) for s in range(4)]
    numbers = key_numbers(p)
    for limit, short, kept in SHORTER:
        shown = "; ".join(numbers[:kept]) or "none on the client's fact sheet; confirm the figures with the client"
        actions = "\n".join(f"{i}. {_short(s, limit)}" for i, s in enumerate(steps, 1))
        listed = listed_lines(p, short)
        options = "\n\nWhat the client listed:\n" + "\n".join(listed) if listed else ""
        text = (
            f"Recommendation: {lead}.\n\nSequence of actions:\n{actions}\n\n"
            f"Key numbers: {shown}.{options}\n\nMain risk: {risk}. Mitigation: {mitigation}."
        )
        if len(text.split()) <= 250:
            break
    return {"answer": text}
