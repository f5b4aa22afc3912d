"""The client's fact sheet, stored: read from the problem when a session is created, read again by a real model at
the first run (and grounded in the text), corrected by advisors, and every node and answer checked against it.

An advisor's change is audited like any other action. The steps it touches (those whose checks change under the new
sheet, or that state the fact's old value or a figure derived from it) are marked stale with the reason, as an edit marks them; a running search
gets the new sheet as a command at its next step boundary, so its later prompts and checks use it.
"""

import logging
import re

import pycountry
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F, Max

from . import events
from .facts.case import CaseCheck, node_checks, refigure
from .facts.extract import extract
from .facts.quantities import EPS, find_quantities, matches
from .facts.sheet import KINDS, NUMERIC, ROLES, Fact, display
from .llm.contracts import BudgetExhausted, ModelError, Unparseable, one_line
from .models import CaseFact, ReasoningNode, ReasoningSession, is_offline

log = logging.getLogger(__name__)


class FactError(ValueError):
    """A fact an advisor sent that cannot stand: [{"field", "message"}] as the API answers them."""

    def __init__(self, errors):
        super().__init__("; ".join(f"{e['field']}: {e['message']}" for e in errors))
        self.errors = errors


# ---- reading -------------------------------------------------------------------------------------------------------


def read_problem(session):
    """The facts the deterministic reader finds in the problem, stored in the problem's order."""
    rows = [CaseFact.from_fact(session, fact, i) for i, fact in enumerate(extract(session.problem_text))]
    CaseFact.objects.bulk_create(rows)
    return rows


def facts_of(session):
    return [row.as_fact() for row in CaseFact.objects.filter(session=session).order_by("position", "id")]


def case_of(session, facts=None):
    """The session's sheet and its checker (off when the session's params say check_facts: false)."""
    from .llm.game24 import puzzle_numbers

    enabled = (session.params or {}).get("check_facts", True) is not False
    puzzle = puzzle_numbers(session.problem_text)
    return CaseCheck(facts_of(session) if facts is None else facts, enabled=enabled, puzzle=puzzle)


def copy_sheet(source, fork):
    """A fork starts from its parent's sheet as the advisors left it."""
    rows = CaseFact.objects.filter(session=source).order_by("position", "id")
    CaseFact.objects.bulk_create(CaseFact.from_fact(fork, row.as_fact(), row.position) for row in rows)


def merge_model_facts(session, facts):
    """Facts a real model read (already grounded) that the deterministic reader missed: added after its own."""
    have = CaseFact.objects.filter(session=session)
    known = [(row.kind, row.start, row.end) for row in have]
    new = [f for f in facts if not any(k == f.kind and _overlap((s, e), (f.start, f.end)) for k, s, e in known)]
    position = (have.aggregate(top=Max("position"))["top"] or 0) + 1
    CaseFact.objects.bulk_create(CaseFact.from_fact(session, f, position + i) for i, f in enumerate(new))
    return new


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


# ---- an advisor's changes ------------------------------------------------------------------------------------------


def validated(data, current=None):
    """A Fact from an advisor's fields (a PATCH names only what changes); FactError names each bad field."""
    merged = {**(current.to_dict() if current else {}), **{k: v for k, v in data.items() if v is not None}}
    errors = []
    label = str(merged.get("label") or "").strip()
    kind = merged.get("kind")
    if not label:
        errors.append({"field": "label", "message": "a fact needs a label, such as 'salary'"})
    if kind not in KINDS:
        errors.append({"field": "kind", "message": f"one of {', '.join(KINDS)}"})
    fact = Fact(label=label[:120], kind=kind or "", value=merged.get("value"), unit=str(merged.get("unit") or ""))
    fact.base = str(merged.get("base") or "")[:120]
    fact.role = str(merged.get("role") or "")
    if kind in KINDS and fact.role not in ROLES.get(kind, ("",)):
        roles = ", ".join(r for r in ROLES.get(kind, ()) if r) or "none"
        errors.append({"field": "role", "message": f"a {kind}'s role is one of: {roles}"})
    fact.text = str(merged.get("text") or "")
    fact.source = "advisor"
    if not errors:
        errors += _value_errors(fact)
    if errors:
        raise FactError(errors)
    return fact


def _an(kind):
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _value_errors(fact):
    value = fact.value
    if fact.kind in MEASURED:
        return _measure_errors(fact)
    if fact.kind in NUMERIC:
        if isinstance(value, str):
            read = [q for q in find_quantities(value) if q.kind == fact.kind]
            if len(read) == 1:
                # the currency typed with the figure ("EUR 1.8M") wins over the unit field's
                fact.value, fact.unit = read[0].value, read[0].unit or fact.unit
            else:
                return [{"field": "value", "message": f"{_an(fact.kind)} as a number (or as written, like '$450k')"}]
        elif not isinstance(value, int | float) or isinstance(value, bool):
            return [{"field": "value", "message": f"{_an(fact.kind)} is a number"}]
        if fact.kind == "amount" and pycountry.currencies.get(alpha_3=fact.unit.upper() or "-") is None:
            return [{"field": "unit", "message": "an amount's currency as an ISO 4217 code, such as USD or CHF"}]
        fact.unit = fact.unit.upper()
        fact.unit = {"percent": "%", "age": "years", "year": ""}.get(fact.kind, fact.unit)
        return []
    if not isinstance(value, str) or not value.strip():
        return [{"field": "value", "message": f"{_an(fact.kind)} is a name or a sentence"}]
    fact.value = value.strip()[:300]
    if fact.kind == "place":
        fact.value, fact.unit = place_code(fact.value), "ISO 3166"
        if fact.value is None:
            return [{"field": "value", "message": "a place as an ISO 3166 code or subdivision (US-FL), or its name"}]
    return []


MEASURED = ("person", "limit", "horizon")
MEASURE = re.compile(r"^\s*(?P<figure>-?\d+(?:\.\d+)?)\s*(?P<unit>%|[A-Za-z]+)?\s*$")


def _measure_errors(fact):
    """A person's count, a limit's or a horizon's figure: a number with its unit (months, years, year, age, %, or an
    ISO 4217 code), given apart or as written ('18 months', 'CHF 200k', '10%')."""
    value, unit = fact.value, fact.unit.strip()
    if isinstance(value, str):
        amounts = [q for q in find_quantities(value) if q.kind in ("amount", "percent")]
        plain = MEASURE.match(value)
        if len(amounts) == 1:
            value, unit = amounts[0].value, unit or amounts[0].unit
        elif plain:
            value, unit = float(plain["figure"]), unit or (plain["unit"] or "")
        else:
            return [{"field": "value", "message": f"{_an(fact.kind)} as a number (or as written, like '18 months')"}]
    elif not isinstance(value, int | float) or isinstance(value, bool):
        return [{"field": "value", "message": f"{_an(fact.kind)} is a number"}]
    fact.value = int(value) if float(value).is_integer() else value
    if fact.kind == "person":
        fact.unit = "people"
        return []
    unit = {"month": "months", "year": "years", "yrs": "years", "%": "%"}.get(unit.lower(), unit)
    if unit.upper() != unit and unit.lower() in ("months", "years", "year", "age"):
        unit = unit.lower()
    elif len(unit) == 3 and pycountry.currencies.get(alpha_3=unit.upper()):
        unit = unit.upper()
    elif unit != "%":
        return [{"field": "unit", "message": "months, years, year, age, % or an ISO 4217 code such as CHF"}]
    fact.unit = unit
    return []


def place_code(value):
    """An ISO 3166 code as given (US-FL, CH), or the one place a name names (Florida); None for anything else."""
    import pycountry

    from .facts.places import find_places

    code = value.strip().upper()
    if pycountry.countries.get(alpha_2=code) or (len(code) > 3 and pycountry.subdivisions.get(code=code)):
        return code
    places = {p.code for p in find_places(value)}
    return places.pop() if len(places) == 1 else None


def fact_in(session, fact_id):
    """The session's fact, locked for the change; CaseFact.DoesNotExist (also for a malformed id)."""
    try:
        return CaseFact.objects.select_for_update().get(session=session, pk=int(fact_id))
    except (CaseFact.DoesNotExist, TypeError, ValueError):
        raise CaseFact.DoesNotExist from None


def next_position(session):
    top = CaseFact.objects.filter(session=session).aggregate(top=Max("position"))["top"]
    return 0 if top is None else top + 1


def apply_fields(row, fact):
    """An advisor's corrected fact written over a stored one (its place in the sheet kept)."""
    fresh = CaseFact.from_fact(row.session, fact, row.position)
    for name in ("label", "kind", "number", "name", "unit", "base", "role", "text", "source"):
        setattr(row, name, getattr(fresh, name))
    return row


def sheet_dicts(session):
    return [row.to_dict() for row in CaseFact.objects.filter(session=session).order_by("position", "id")]


def describe(before, after):
    """The change in a line: the stale steps' reason and the audit's detail."""
    label = (after or before).get("label", "a fact")
    if before and after:
        return f"the client's fact '{label}' was changed ({_shown(before)} -> {_shown(after)})"
    return f"the client's fact '{label}' was {'added' if after else 'removed'}"


def _shown(data):
    return display(Fact.from_dict({**data, "base": data.get("base") or "", "role": data.get("role") or ""}))


def recheck(session, actor, what, changed):
    """Every node and the answer checked again under the session's sheet as it now stands; a node whose findings
    changed, or that states a changed fact's figure or label, is stale until rescored (as an edit above it makes it),
    saying why. The watchers are told."""
    _recheck(session, case_of(session), actor, what, changed)
    events.publish(session.id, [("facts.updated", {"facts": sheet_dicts(session)})])


def _recheck(session, case, actor, what, changed):
    """Every node checked again under the new sheet; a node whose findings changed, or that states a changed fact's
    figure or label, is stale until rescored (as an edit above it makes it), saying why."""
    nodes = list(ReasoningNode.objects.filter(session=session, depth__gt=0).order_by("depth", "created_at"))
    ids = {str(fact.get("id")) for fact in changed if fact}
    sheet = [fact for fact in sheet_dicts(session) if str(fact.get("id")) not in ids]  # the operands of derived figures
    stale, touched = [], []
    for node in nodes:
        refigured = refigure(case, node.state, node.thought)  # a derivation over a changed fact gives another value now
        checks = node_checks(case, node.thought, refigured)
        if checks != (node.checks or []) or refigured != node.state:
            node.checks, node.state = checks, refigured
            touched.append(node)
            stale.append(node.pk)
        elif any(_states(node.thought, fact, sheet) for fact in changed if fact):
            stale.append(node.pk)
    ReasoningNode.objects.bulk_update(touched, ["checks", "state"])
    if stale:
        ReasoningNode.objects.filter(pk__in=stale).update(
            stale=True, stale_mark=F("stale_mark") + 1, stale_reason=f"{what} by {actor}"[:300]
        )
    if session.final_answer:
        declared = session.answer_figures or None
        answer = [f.to_dict() for f in case(session.final_answer, final=True, figures=declared)]
        ReasoningSession.objects.filter(pk=session.pk).update(answer_checks=answer, answer_figures=case.figures(declared, session.final_answer))
    changed_ids = {n.pk for n in touched} | set(stale)
    rows = ReasoningNode.objects.filter(pk__in=changed_ids).order_by("depth", "created_at")
    fresh = ReasoningSession.objects.select_related("tenant").get(pk=session.pk)
    events.publish(session.id, [events.node_event("node.updated", r) for r in rows] + [events.session_updated(fresh)])


def _states(text, fact, sheet=()):
    """True if the text states this fact: its figure (as any quantity matching it), a figure derived from it (see
    _derives), or its label."""
    if fact.get("kind") in NUMERIC and isinstance(fact.get("value"), int | float):
        unit = fact.get("unit") or ""
        quantities = find_quantities(text)
        if any(matches(q, float(fact["value"]), unit) for q in quantities if q.kind == fact["kind"]):
            return True
        return fact["kind"] == "amount" and _names(text, fact) and _derives(quantities, float(fact["value"]), unit, sheet)
    label = str(fact.get("label") or "").lower()
    return bool(label) and label in text.lower()


def _names(text, fact):
    """The text names the fact: a word of its label (four letters or more) stands in it. A derived figure alone
    could be anything's; with the fact named it is this one's."""
    words = {w for w in re.findall(r"[^\W\d_]{4,}", str(fact.get("label") or "").lower())}
    return any(re.search(rf"\b{re.escape(w)}", text, re.IGNORECASE) for w in words)


def _derives(quantities, value, unit, sheet):
    """A figure of the text is a share, a sum, a difference or a ratio of the amount `value`: an amount in `unit`
    equal to value x p% (p a percent of the text or the sheet), value + b or |value - b| (b another amount of the
    text or the sheet), or a percent equal to 100 b / value. Equal within what each figure as written can mean."""
    if not value:
        return False
    mine = [q for q in quantities if q.kind == "amount" and q.unit == unit and not matches(q, value, unit)]
    percents = [(q.value, q.precision) for q in quantities if q.kind == "percent"]
    percents += [(float(f["value"]), 0.0) for f in sheet if f.get("kind") == "percent" and _number(f)]
    amounts = [(q.value, q.precision, q) for q in mine]
    amounts += [
        (float(f["value"]), 0.0, None)
        for f in sheet
        if f.get("kind") == "amount" and (f.get("unit") or "") == unit and _number(f)
        and abs(float(f["value"]) - value) > EPS * max(1.0, abs(value))
    ]
    for q in mine:
        slack = q.precision + EPS * max(1.0, abs(q.value))
        if any(abs(q.value - value * p / 100) <= slack + abs(value) * dp / 100 for p, dp in percents if 0 < p < 100):
            return True
        others = [(b, db) for b, db, src in amounts if src is not q]
        if any(abs(q.value - (value + b)) <= slack + db or abs(q.value - abs(value - b)) <= slack + db for b, db in others):
            return True
    for q in quantities:
        if q.kind == "percent" and 0 < q.value < 100:
            if any(abs(q.value - 100 * b / value) <= q.precision + 100 * db / abs(value) for b, db, _ in amounts):
                return True
    return False


def _number(fact):
    return isinstance(fact.get("value"), int | float) and not isinstance(fact.get("value"), bool)


# ---- a real model reads the facts too ------------------------------------------------------------------------------


def model_reads(session, case):
    """A real model reads the facts once, at the session's first run; the offline model's reading is the
    deterministic one, stored already (the same reader answers its case.facts contract)."""
    if not settings.REASONING.get("MODEL_READS_FACTS", True) or not case.enabled or case.puzzle:
        return False
    return not is_offline(session.model_primary) and "facts_read" not in (session.meta or {})


async def read_with_model(session, ctx):
    """Ask the model for the facts (its own contract, case.facts), keep only those the text bears out (ground), add
    the ones the deterministic reader missed, and record what was kept. A failed call leaves the sheet as it is."""
    from .facts.contract import CASE_FACTS, facts_from_reply
    from .prompts import render

    # The reading is charged to the root, as every call is charged to a node: the ledger and the tree's costs agree.
    root = next((n for n in ctx.store.nodes() if n.depth == 0), None)
    root = root or await ctx.store.add_root(ctx.problem, {"problem_kind": ctx.kind})
    try:
        answer = await ctx.gateway.ask(CASE_FACTS, render(CASE_FACTS, problem=session.problem_text), node_id=root.id)
    except (BudgetExhausted, Unparseable, ModelError) as error:
        log.warning("session %s: the model did not read the facts: %s", session.id, one_line(error))
        if isinstance(error, Unparseable):
            await ctx.store.update(root, spent=error)
        await sync_to_async(_mark_read)(session, {"error": one_line(error)})
        return
    await ctx.store.update(root, spent=answer)
    facts = facts_from_reply(answer.parsed, session.problem_text)
    added = await sync_to_async(_merge_and_mark)(session, facts, len(answer.parsed.facts), answer.model)
    if added:
        ctx.case.facts = await sync_to_async(facts_of)(session)


def _merge_and_mark(session, facts, asked, model):
    with transaction.atomic():
        added = merge_model_facts(session, facts)
        _mark_read(session, {"model": model, "returned": asked, "grounded": len(facts), "added": len(added)})
        if added:
            events.publish(session.id, [("facts.updated", {"facts": sheet_dicts(session)})])
    return added


def _mark_read(session, what):
    meta = ReasoningSession.objects.filter(pk=session.pk).values_list("meta", flat=True).first() or {}
    ReasoningSession.objects.filter(pk=session.pk).update(meta={**meta, "facts_read": what})
