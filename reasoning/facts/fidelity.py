"""How well an extraction matches hand-labelled facts: precision, recall, and which facts were missed or extra.

An extracted fact matches a labelled one when their kinds and units agree and
- numbers (amount, percent, age, year): the values agree within 0.5% (exactly, for zero);
- places: the codes agree;
- accounts, instruments, goals, constraints: the spans overlap (the values agree when either has no span).
Each labelled fact is matched at most once, in text order, to the first extracted fact that matches it and is
not yet taken: a case with two "$400k" needs two extracted "$400k" to score both.
"""

from __future__ import annotations

import re

from reasoning.facts.sheet import NUMERIC, Fact

TOLERANCE = 0.005


def _fact(item):
    return item if isinstance(item, Fact) else Fact.from_dict(item)


def same_fact(extracted: Fact, labelled: Fact) -> bool:
    if extracted.kind != labelled.kind or (extracted.unit or "") != (labelled.unit or ""):
        return False
    if labelled.kind in NUMERIC:
        try:
            a, b = float(extracted.value), float(labelled.value)
        except (TypeError, ValueError):
            return False
        return abs(a - b) <= TOLERANCE * max(abs(a), abs(b)) if a and b else a == b
    if labelled.kind == "place":
        return str(extracted.value) == str(labelled.value)
    if min(extracted.start, labelled.start) < 0:
        return str(extracted.value).lower() == str(labelled.value).lower()
    return extracted.start < labelled.end and labelled.start < extracted.end


def score_extraction(extracted, labelled) -> dict:
    """{"precision", "recall", "matched": [(labelled, extracted)], "missed": [labelled], "extra": [extracted]}.

    Facts may be Facts or their dicts. With nothing extracted precision is 1.0; with nothing labelled, recall is.
    """
    extracted = [_fact(f) for f in extracted]
    labelled = [_fact(f) for f in labelled]
    taken, matched, missed = set(), [], []
    for want in labelled:
        hit = next((i for i, got in enumerate(extracted) if i not in taken and same_fact(got, want)), None)
        if hit is None:
            missed.append(want)
        else:
            taken.add(hit)
            matched.append((want, extracted[hit]))
    extra = [got for i, got in enumerate(extracted) if i not in taken]
    return {
        "precision": len(matched) / len(extracted) if extracted else 1.0,
        "recall": len(matched) / len(labelled) if labelled else 1.0,
        "matched": matched,
        "missed": missed,
        "extra": extra,
    }


# ---- the checker on hand-written sentences (fixtures/checker_corpus.json) -----------------------------------------

SLIP_SPAN = re.compile(r'^span "(.*?)" is wrong')


def score_checker(corpus: dict, check) -> dict:
    """The checker on a labelled corpus of sentences (issue 30): per slip kind, how many slips it caught (a failed
    finding whose span overlaps the sentence) and how many at the slip's own span (the note's `span "..."`); on
    right sentences, its false alarms (any failed finding) and its unverified findings.

    Returns {"kinds": {kind: {"slips", "caught", "at_span", "missed": [ids]}}, "right": n, "false_alarms": [ids],
    "unverified": n}. `check` is reasoning.facts.check.check (passed in so this module stays free of it)."""
    facts = {c["id"]: [Fact.from_dict(f) for f in c["facts"]] for c in corpus["cases"]}
    kinds, alarms, right, unverified = {}, [], 0, 0
    for s in corpus["sentences"]:
        text = s["text"]
        findings = check(text, facts[s["case"]], final=s["final"])
        failed = [f for f in findings if not f.ok and f.start < len(text) and f.end > 0]
        unverified += sum(not f.verified for f in findings)
        if not s["slip"]:
            right += 1
            if failed:
                alarms.append(s["id"])
            continue
        row = kinds.setdefault(s["slip"], {"slips": 0, "caught": 0, "at_span": 0, "missed": []})
        row["slips"] += 1
        if not failed:
            row["missed"].append(s["id"])
            continue
        row["caught"] += 1
        m = SLIP_SPAN.match(s["note"])
        at = text.find(m[1]) if m else -1
        if at >= 0 and any(f.start < at + len(m[1]) and at < f.end for f in failed):
            row["at_span"] += 1
    return {"kinds": dict(sorted(kinds.items())), "right": right, "false_alarms": alarms, "unverified": unverified}


def checker_table(score: dict, owned_elsewhere=()) -> str:
    """The score as a Markdown table: a row per slip kind, then the right sentences' false alarms."""
    lines = ["| slip kind | slips | caught | at the slip's span | missed |", "|---|---:|---:|---:|---|"]
    total = caught = 0
    for kind, row in score["kinds"].items():
        mark = " (*)" if kind in owned_elsewhere else ""
        missed = ", ".join(row["missed"][:6]) + (" ..." if len(row["missed"]) > 6 else "")
        lines.append(f"| {kind}{mark} | {row['slips']} | {row['caught']} | {row['at_span']} | {missed} |")
        if kind not in owned_elsewhere:
            total, caught = total + row["slips"], caught + row["caught"]
    lines.append(f"| **all kinds but (*)** | {total} | {caught} ({caught / max(total, 1):.0%}) | | |")
    alarms = score["false_alarms"]
    lines.append(
        f"\nRight sentences: {score['right']}, false alarms: {len(alarms)}"
        + (f" ({', '.join(alarms)})" if alarms else "")
        + f"; unverified findings: {score['unverified']}."
    )
    return "\n".join(lines)
