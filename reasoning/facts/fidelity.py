"""How well an extraction matches hand-labelled facts: precision, recall, and which facts were missed or extra.

An extracted fact matches a labelled one when their kinds and units agree and
- numbers (amount, percent, age, year): the values agree within 0.5% (exactly, for zero);
- places: the codes agree;
- accounts, instruments, goals, constraints: the spans overlap (the values agree when either has no span).
Each labelled fact is matched at most once, in text order, to the first extracted fact that matches it and is
not yet taken: a case with two "$400k" needs two extracted "$400k" to score both.
"""

from __future__ import annotations

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
