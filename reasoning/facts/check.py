"""Every thought and answer checked against the client's fact sheet: figures, arithmetic, currencies, places, labels.

`check(text, facts, final)` returns Findings of the kinds in sheet.CHECK_KINDS, ok=True ones too (each figure and
sum that checks out), so `badge` can say "figures checked: 5 of 5". False alarms cost as much as misses: whatever
the checker cannot tell apart is left alone, and each check says what it leaves alone.

The checks themselves are modules of reasoning/facts/checks/, one per kind (figures, arithmetic, currency,
jurisdiction, labels, coverage), each a `run(doc)` over the shared reading of the text (checks/doc.py), listed in
checks.CHECKS; their word tables are data in reasoning/facts/data/. This module is the facade the project uses:
check, failures, capped, badge and CAP.

CAP: a node with a failed check scores at most 0.3. Evaluators score a sound but ordinary step about 0.4-0.6, so a
step that misstates the client's figures or applies another country's law ranks below every sound sibling and is
not chosen for the answer; it stays above zero so the tree still shows it and an advisor can correct it.
"""

from __future__ import annotations

from reasoning.facts.checks import CHECKS, read
from reasoning.facts.sheet import Fact, Finding

CAP = 0.3


def check(text: str, facts: list[Fact], final: bool = False, figures=None) -> list[Finding]:
    """The findings of one text against the client's facts, in text order (coverage last); `figures`, the figures the
    model declared with it, are checked by their derivations instead of guessed at in the prose."""
    doc = read(text or "", facts)
    doc.final = final
    doc.declared = list(figures) if figures else None
    found = _one_per_span([f for c in CHECKS if not c.FINAL_ONLY for f in c.run(doc)])
    found.sort(key=lambda f: (f.start, f.end))
    return found + [f for c in CHECKS if c.FINAL_ONLY and final for f in c.run(doc)]


def _one_per_span(findings):
    """Two checks read the places (a regime's name, and the rule table's entry for it), and two a figure (what it is,
    and the trade to a target it states): of their findings on one span the failed one is kept, else the verified
    one, else the first."""
    kept = {}
    for f in findings:
        if f.start < 0 or f.kind not in ("jurisdiction", "figure"):
            kept[(f.kind, id(f))] = f
            continue
        key = (f.kind, f.start, f.end)
        have = kept.get(key)
        if have is None or (have.ok and not f.ok) or (have.ok == f.ok and not have.verified and f.verified):
            kept[key] = f
    return list(kept.values())


def failures(findings) -> list[Finding]:
    return [f for f in findings if not f.ok]


def capped(score: float | None, findings: list[Finding]) -> tuple[float | None, str]:
    """The score a node's findings allow, and the reason to append to its judgement ("" when nothing failed)."""
    failed = failures(findings)
    if not failed:
        return score, ""
    reason = f"fact check: {failed[0].detail}" + (f" (+{len(failed) - 1} more)" if len(failed) > 1 else "")
    if score is None or score <= CAP:
        return score, reason
    return CAP, f"capped at {CAP} by the {reason}"


def badge(findings, facts=None, declared=None) -> str:
    """What was checked and what was not, in one line: "12 figures checked, 1 unverified; 4 constraints kept; the
    sheet has 2 percents without a base", or with the failures named: "5 figures checked; 1 failed: USD 3.2 (scale
    dropped)". A finding that could not decide (verified False) is counted as unverified, never as checked; a text
    with nothing checked says "not checked". `declared` False (the model declared no figures: they were read from the
    prose) says "figures not declared"; None says nothing of it."""
    items = {}  # one item per span (several checks of one figure count once), or per coverage line
    for f in findings:
        key = (f.start, f.end, f.text) if f.start >= 0 else (f.kind, f.detail)
        kinds, ok, verified = items.get(key, (set(), True, False))
        items[key] = (kinds | {f.kind}, ok and f.ok, verified or getattr(f, "verified", True) or not f.ok)
    counts = {}  # (group, state) -> how many items
    for kinds, ok, verified in items.values():
        group = next((g for g in ("constraint", "jurisdiction", "coverage") if g in kinds), "figure")
        state = "failed" if not ok else "checked" if verified else "unverified"
        counts[(group, state)] = counts.get((group, state), 0) + 1
    parts = []
    for group, (noun, kept) in GROUPS.items():
        done, failed = counts.get((group, "checked"), 0), counts.get((group, "failed"), 0)
        undecided = counts.get((group, "unverified"), 0)
        if group == "figure":  # "5 figures checked": a failed figure was checked too
            said = [f"{_count(done + failed, noun)} {kept}"] if done + failed else []
        else:  # "3 of 4 constraints kept"
            said = [f"{done} of {_count(done + failed, noun)} {kept}" if failed else f"{_count(done, noun)} {kept}"]
            said = said if done + failed else []
        if undecided:
            said.append(f"{undecided} unverified" if said else f"{_count(undecided, noun)} unverified")
        if said:
            parts.append(", ".join(said))
    failed = failures(findings)
    if failed:
        shown = list(dict.fromkeys(_short(f) for f in failed))
        more = f", +{len(shown) - 3} more" if len(shown) > 3 else ""
        n = sum(count for (_group, state), count in counts.items() if state == "failed")
        parts.append(f"{n} failed: " + ", ".join(shown[:3]) + more)
    if not any(state != "unverified" for _group, state in counts):
        parts = ["not checked" + (f": {parts[0]}" if parts else "")] + parts[1:]
    gaps = _sheet_gaps(facts or [])
    undeclared = [NOT_DECLARED] if declared is False else []
    return "; ".join(parts + undeclared + ([gaps] if gaps else []))


NOT_DECLARED = "figures not declared"


# What the badge counts, by the kinds of the findings on one span: the noun, and what a passed one was.
GROUPS = {
    "figure": ("figure", "checked"),  # figure, arithmetic, currency, label: failed ones were checked too
    "constraint": ("constraint", "kept"),
    "jurisdiction": ("place", "checked"),
    "coverage": ("listed item", "addressed"),
}


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


# A percent with one of these roles is a share of something: without a base, applying it to the wrong amount passes.
SHARE_ROLES = ("", "share", "target")


def _sheet_gaps(facts) -> str:
    """"the sheet has 2 percents without a base": what the checker could not check for want of a fact's base."""
    loose = [f for f in facts if f.kind == "percent" and not f.base and f.role in SHARE_ROLES]
    return f"the sheet has {_count(len(loose), 'percent')} without a base" if loose else ""


def _short(finding):
    """"USD 3.2 (scale dropped)", "collar (not addressed)": a failed finding in a few words."""
    if finding.kind == "coverage":
        what = finding.detail.removeprefix("the answer never addresses ").removesuffix(" the client listed")
        what = what.removeprefix("the ").replace("client's goal: ", "goal: ")
        return f"{_clip(what, 40)} (not addressed)"
    reason = {
        "figure": "scale dropped" if "drops its scale" in finding.detail else "not on the sheet",
        "label": "wrong label",
        "arithmetic": "wrong sum",
        "currency": "no exchange rate",
        "jurisdiction": "not the client's place",
        "constraint": "constraint broken",
    }.get(finding.kind, finding.kind)
    misstated = " restates " in finding.detail or " given as the " in finding.detail.replace("the client's share", "")
    if finding.kind == "figure" and misstated:
        reason = "not the client's figure"
    what = finding.text.strip() or _clip(finding.detail)  # a finding with no span is named by what it found
    return f"{what} ({reason})"


def _clip(text, size=60):
    return text if len(text) <= size else text[: size - 3].rstrip() + "..."
