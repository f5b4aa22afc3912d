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


def check(text: str, facts: list[Fact], final: bool = False) -> list[Finding]:
    """The findings of one text against the client's facts, in text order (coverage last)."""
    doc = read(text or "", facts)
    found = [f for c in CHECKS if not c.FINAL_ONLY for f in c.run(doc)]
    found.sort(key=lambda f: (f.start, f.end))
    return found + [f for c in CHECKS if c.FINAL_ONLY and final for f in c.run(doc)]


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


def badge(findings) -> str:
    """'figures checked: 5 of 5', or 'figures checked: 3 of 5; 2 failed: USD 3.2 (scale dropped), ...'."""
    items = {}
    for f in findings:
        key = (f.start, f.end, f.text) if f.start >= 0 else (f.kind, f.detail)
        items[key] = items.get(key, True) and f.ok
    failed = [f for f in failures(findings)]
    total, passed = len(items), sum(items.values())
    line = f"figures checked: {passed} of {total}"
    if not failed:
        return line
    shown = list(dict.fromkeys(_short(f) for f in failed))
    more = f", +{len(shown) - 3} more" if len(shown) > 3 else ""
    return f"{line}; {total - passed} failed: " + ", ".join(shown[:3]) + more


def _short(finding):
    """"USD 3.2 (scale dropped)", "collar (not addressed)": a failed finding in a few words."""
    if finding.kind == "coverage":
        what = finding.detail.removeprefix("the answer never addresses ").removesuffix(" the client listed")
        what = what.removeprefix("the ").replace("client's goal: ", "goal: ")
        return f"{what if len(what) <= 40 else what[:37].rstrip() + '...'} (not addressed)"
    reason = {
        "figure": "scale dropped" if "drops its scale" in finding.detail else "not on the sheet",
        "label": "wrong label",
        "arithmetic": "wrong sum",
        "currency": "no exchange rate",
        "jurisdiction": "not the client's place",
    }.get(finding.kind, finding.kind)
    misstated = " restates " in finding.detail or " given as the " in finding.detail.replace("the client's share", "")
    if finding.kind == "figure" and misstated:
        reason = "not the client's figure"
    return f"{finding.text} ({reason})"
