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


# ---- per kind, on a labelled set (tests/facts/test_reading_set.py, bench/fact_reading.py) ---------------------------
#
# A stricter rule than same_fact, for the whole case (issue 30): kinds are scored apart, a commitment or liability
# (an amount with that role) as its own kind; a percent matches only with the same base and role, a limit with the
# same role and unit, a person with a label sharing a content word (the name or the relation); accounts and
# instruments by their canonical name (vocabulary.toml: "CRUT" is "charitable remainder trust"). A label agrees
# when it shares a content word with the expected one; that is reported apart, and breaks ties when choosing a match.

REPORT_KINDS = (
    "amount", "percent", "person", "age", "limit", "horizon", "commitment", "place", "instrument", "account",
    "goal", "constraint", "year",
)  # fmt: skip
# Words a label shares with any other of its kind: they say nothing about which fact it is.
GENERIC = set(
    "a an the of in on for to and or s his her their its my our client client's clients age target targets share "
    "current today now balance annual monthly yearly value percent amount total rate horizon limit".split()
)
# What fixtures/wealth_cases*.json label (their "about"): no people, limits, horizons or roles, and closed lists of
# accounts and instruments. Their facts are scored after reading ours in their terms (legacy_view).
LEGACY_ACCOUNTS = {"401(k)", "IRA", "Roth IRA", "529 plan", "HSA", "pillar 3a", "pension fund", "ISA", "SIPP",
                   "brokerage account"}  # fmt: skip
LEGACY_INSTRUMENTS = {
    "exchange fund", "charitable remainder trust", "donor-advised fund", "collar", "prepaid variable forward",
    "covered calls", "Roth conversion", "ETF", "municipal bonds", "annuity", "family foundation", "trust", "GRAT",
    "life insurance", "mortgage",
}  # fmt: skip


def scored_kind(fact: Fact) -> str:
    if fact.kind == "amount" and fact.role in ("commitment", "liability"):
        return "commitment"
    return fact.kind


def content_words(label) -> set[str]:
    words = {w.strip(".,;:()'’").lower() for w in str(label or "").replace("’s", " ").replace("'s", " ").split()}
    words = {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words}
    return {w for w in words if w and w not in GENERIC and not w.isdigit()}


def labels_agree(got, want) -> bool:
    """A content word in common, after naming an account or instrument by its canonical name ("compte-titres"
    is the "brokerage account")."""
    expected = content_words(want)
    return not expected or bool(expected & content_words(got)) or bool(_named(want) & _named(got))


def _named(label):
    from reasoning.facts import vocabulary

    words = str(label or "").replace(" balance", "").strip()
    name = vocabulary.canonical(words)
    return {name} if name != words or name in vocabulary.tables()[0] or name in vocabulary.tables()[1] else set()


def _base_agrees(got, want, legacy, amounts=None):
    """Whether two bases are the same: the same words, or, given each side's amounts, names of the same amount (the
    reader calls "Vermögen CHF 27 Mio." the "vermögen" where a labeller writes "assets": one base, two names)."""
    if legacy and not want:
        return True  # the old sets write no base where the new convention names the whole ("portfolio")
    if not want or not got:
        return not want and not got
    if got.strip().lower() == want.strip().lower() or labels_agree(got, want):
        return True
    if amounts is None:
        return False
    mine, theirs = _amount_named(got, amounts[0]), _amount_named(want, amounts[1])
    return mine is not None and theirs is not None and same_fact(mine, theirs)


def _amount_named(base, facts):
    """The one amount a base names among a case's facts (by its label), or None where none or several do."""
    amounts = [f for f in facts if f.kind == "amount"]
    exact = [f for f in amounts if f.label.strip().lower() == base.strip().lower()]
    named = exact or [f for f in amounts if labels_agree(f.label, base) and content_words(base)]
    return named[0] if len(named) == 1 else None


def _percent_role(role):
    return role or "share"


def matches_strictly(got: Fact, want: Fact, legacy=False, amounts=None) -> bool:
    """The issue-30 rule: same kind, value, unit; a percent's base and role; a limit's role; a person's name.
    `amounts`, (the read facts, the labelled facts), lets a base match by the amount it names."""
    from reasoning.facts import vocabulary

    if scored_kind(got) != scored_kind(want):
        return False
    if want.kind in ("account", "instrument"):
        if want.value and got.value:
            return vocabulary.canonical(str(got.value)) == vocabulary.canonical(str(want.value))
        return min(got.start, want.start) >= 0 and got.start < want.end and want.start < got.end
    if not same_fact(got, want):
        return False
    if want.kind == "percent":
        if not _base_agrees(got.base, want.base, legacy, amounts):
            return False
        return legacy or _percent_role(got.role) == _percent_role(want.role)
    if want.kind == "limit":
        return got.role == want.role
    if want.kind == "person":
        return labels_agree(got.label, want.label) or (bool(want.role) and got.role == want.role and want.value != 1)
    return True


def legacy_view(facts, problem=""):
    """Our facts read in the old sets' terms: a percent or money limit is a percent or an amount, a deadline year a
    year, a target age an age, and the clause that states a bound a constraint too; people, durations and names
    outside the old closed lists are not scored."""
    from reasoning.facts.extract import clauses

    limits = [f for f in facts if f.kind == "limit"]
    stated = {(f.start, f.end) for f in facts if f.kind == "constraint"}
    facts = list(facts) + [
        c for c in clauses(problem or "")
        if c.kind == "constraint" and (c.start, c.end) not in stated and any(c.start <= f.start < c.end for f in limits)
    ]
    from reasoning.facts.extract import place_facts

    codes = {f.value for f in facts if f.kind == "place"}
    facts += [p for p in place_facts(problem or "", markets=True) if p.value not in codes]  # "Swiss equities"
    facts.sort(key=lambda f: f.start)
    seen, out = set(), []
    for fact in facts:
        f = Fact.from_dict(fact.to_dict())
        if f.kind == "person":
            continue
        if f.kind == "limit":
            if f.unit == "%":
                f.kind, f.role = "percent", ""  # its base stays: "40% of the SIPP"
            elif len(f.unit) == 3 and f.unit.isupper():
                f.kind, f.role = "amount", ""
            else:
                continue
        elif f.kind == "horizon":
            if f.unit == "year":
                f.kind, f.unit = "year", ""
            elif f.unit == "age":
                f.kind, f.unit = "age", "years"
            else:
                continue
        elif f.kind == "amount":
            f.role = ""
        elif f.kind == "account" and f.value not in LEGACY_ACCOUNTS:
            continue
        elif f.kind == "instrument" and f.value not in LEGACY_INSTRUMENTS:
            continue
        if f.kind == "place" and ("place", f.value) in seen:
            continue  # the old sets keep one place per code
        seen.add((f.kind, f.value)) if f.kind == "place" else None
        key = (f.kind, f.value, f.start, f.end)
        if f.kind in ("year", "age") and key in seen:
            continue  # "by 2031" read as a deadline and as a year: one year
        seen.add(key)
        out.append(f)
    return out


def score_by_kind(extracted, labelled, legacy=False, problem="") -> dict:
    """{kind: {"labelled", "extracted", "matched", "labels_agree"}} for one case, and the misses and extras."""
    extracted = [_fact(f) for f in extracted]
    labelled = [_fact(f) for f in labelled]
    if legacy:
        extracted = legacy_view(extracted, problem)
    counts = {k: {"labelled": 0, "extracted": 0, "matched": 0, "labels_agree": 0} for k in REPORT_KINDS}
    taken, missed, pairs = set(), [], []
    for want in labelled:
        kind = scored_kind(want)
        counts.setdefault(kind, {"labelled": 0, "extracted": 0, "matched": 0, "labels_agree": 0})["labelled"] += 1
        candidates = [
            i for i, got in enumerate(extracted)
            if i not in taken and matches_strictly(got, want, legacy, (extracted, labelled))
        ]  # fmt: skip
        agreeing = [i for i in candidates if labels_agree(extracted[i].label, want.label)]
        hit = (agreeing or candidates or [None])[0]
        if hit is None:
            missed.append(want)
            continue
        taken.add(hit)
        pairs.append((want, extracted[hit]))
        counts[kind]["matched"] += 1
        counts[kind]["labels_agree"] += bool(agreeing)
    for got in extracted:
        counts.setdefault(scored_kind(got), {"labelled": 0, "extracted": 0, "matched": 0, "labels_agree": 0})
        counts[scored_kind(got)]["extracted"] += 1
    extra = [got for i, got in enumerate(extracted) if i not in taken]
    return {"counts": counts, "matched": pairs, "missed": missed, "extra": extra}


def score_set(cases, read, legacy=False) -> dict:
    """The per-kind totals of `read(problem_text)` over a labelled set: {"kinds": {kind: {..., "recall",
    "precision", "label_agreement"}}, "all": {...}, "cases": [(case id, score)]}. A kind the set never labels is
    left out (its facts are not scored), so an old set is not charged for kinds it does not write down."""
    labelled_kinds = {scored_kind(_fact(f)) for case in cases for f in case["facts"]}
    if legacy:
        labelled_kinds -= {"commitment"}
    totals, per_case = {}, []
    for case in cases:
        text = case.get("problem_text") or case.get("text") or ""
        score = score_by_kind(read(text), case["facts"], legacy=legacy, problem=text)
        score["extra"] = [f for f in score["extra"] if scored_kind(f) in labelled_kinds]
        per_case.append((case.get("id", ""), score))
        for kind, c in score["counts"].items():
            if kind not in labelled_kinds:
                continue
            t = totals.setdefault(kind, {"labelled": 0, "extracted": 0, "matched": 0, "labels_agree": 0})
            for key in t:
                t[key] += c[key]
    every = {"labelled": 0, "extracted": 0, "matched": 0, "labels_agree": 0}
    for t in totals.values():
        for key in every:
            every[key] += t[key]
    for t in list(totals.values()) + [every]:
        t["recall"] = t["matched"] / t["labelled"] if t["labelled"] else 1.0
        t["precision"] = t["matched"] / t["extracted"] if t["extracted"] else 1.0
        t["label_agreement"] = t["labels_agree"] / t["matched"] if t["matched"] else 1.0
    order = {k: i for i, k in enumerate(REPORT_KINDS)}
    kinds = dict(sorted(totals.items(), key=lambda kv: order.get(kv[0], 99)))
    return {"kinds": kinds, "all": every, "cases": per_case}


def table(result) -> str:
    """The per-kind figures as a markdown table."""
    rows = ["| kind | labelled | read | matched | recall | precision | labels agree |", "|---|---|---|---|---|---|---|"]
    for kind, t in list(result["kinds"].items()) + [("all", result["all"])]:
        rows.append(
            f"| {kind} | {t['labelled']} | {t['extracted']} | {t['matched']} | {t['recall']:.2f} | "
            f"{t['precision']:.2f} | {t['label_agreement']:.2f} |"
        )
    return "\n".join(rows)


# ---- the checker on hand-written sentences (fixtures/checker_corpus.json) -----------------------------------------

SLIP_SPAN = re.compile(r'^span "(.*?)" is wrong')


def score_checker(corpus: dict, check) -> dict:
    """The checker on a labelled corpus of sentences (issue 30): per slip kind, how many slips it caught (a failed
    finding whose span overlaps the sentence) and how many at the slip's own span (the note's `span "..."`); on
    right sentences, its false alarms (any failed finding) and its unverified findings.

    Returns {"kinds": {kind: {"slips", "caught", "at_span", "missed": [ids]}}, "right": n, "false_alarms": [ids],
    "unverified": n}. `check` is reasoning.facts.check.check (passed in so this module stays free of it)."""
    facts = {c["id"]: [Fact.from_dict(f) for f in c["facts"]] + rate_facts(c) for c in corpus["cases"]}
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


def rate_facts(case) -> list[Fact]:
    """The exchange rates a case quotes ({"GBP/CHF": 1.12}), as the reader puts them on the sheet."""
    facts = []
    for pair, value in (case.get("rates") or {}).items():
        quote = pair.split("/")[1]
        facts.append(Fact(f"{pair} exchange rate", "amount", value, quote, text=f"{pair} {value}"))
    return facts


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
