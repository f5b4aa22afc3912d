"""The offline model's declared figures: each amount its text writes, with where it comes from, as a real model
returns them in the contracts' `figures` list.

The exact model knows how it wrote each amount it derived (a fact of the sheet, a percent applied to its base, a sale to a
target, a third of a sum): `declare` names that derivation over the facts' labels. A noisy model declares what it
meant and the figure it wrote: when a slip (noise.py) changes an amount, the declaration keeps the derivation of the
amount that stood there and takes the value written, so the slip is carried into the declaration for the checker to
find, as a real model's own slip would be. An amount a slip adds is declared by the working written beside it.
"""

from __future__ import annotations

import difflib
import re

from reasoning.facts.quantities import find_quantities, matches
from reasoning.llm.offline.noise import APPLIED
from reasoning.llm.offline.facts import base_of, holding_name

SUM = re.compile(r"(?P<a>[A-Z]{3} [\d,.]+(?:bn|M|k)?) (?P<op>[+-]) (?P<b>[A-Z]{3} [\d,.]+(?:bn|M|k)?) = ")
THIRD = re.compile(r"(?P<a>[A-Z]{3} [\d,.]+(?:bn|M|k)?) / 3 = ")


def known(case):
    """(label, value, unit, derivation) of every amount the exact model may write from this sheet."""
    if case is None:
        return []
    found = [(f.label, f.value, f.unit, f.label) for f in case.amounts]
    for percent in case.percents:
        base = base_of(percent, case.amounts)
        if base is not None:
            value = base.value * float(percent.value) / 100
            found.append((holding_name(percent.label), value, base.unit, f"{percent.label} × {base.label}"))
    for move in case.moves:
        level = _of(found, move.level.value, move.level.unit) or (move.level.label, move.level.value, "", "")
        holding = _of(found, move.holding.value, move.holding.unit) or (move.holding.label, 0, "", move.holding.label)
        high, low = (holding, level) if move.sale else (level, holding)
        if not level[3]:  # the level is a limit's percent of its base: its derivation from the move's working
            limit = next((p for p in case.percents if p.label == move.limit_label.split(" (")[0]), None)
            base = base_of(limit, case.amounts) if limit else None
            level = (move.level.label, move.level.value, move.level.unit, f"{limit.label} × {base.label}" if base else "")
            high, low = (holding, level) if move.sale else (level, holding)
            found.append(level)
        derivation = f"({high[3]}) − ({low[3]})" if high[3] and low[3] else ""
        found.append((move.amount.label, move.amount.value, move.amount.unit, derivation))
    return found


def _of(found, value, unit):
    return next((k for k in found if k[2] == unit and abs(k[1] - value) <= 1e-6 * max(1.0, abs(value))), None)


def declare(text, case) -> list[dict]:
    """The figures of one text as the exact model wrote it: each amount it derived or chose (a fact of the sheet is
    accounted for by the sheet itself, so the list stays short enough for the reply's token limit)."""
    table = known(case)
    figures = []
    for q in _amounts(text):
        if not _is_fact(q, table):
            figures.append(_declared(q, table, text, figures, case))
    return _unique(figures)


def _is_fact(q, table):
    return any(k[3] == k[0] and matches(q, k[1], k[2]) for k in table)


def _declared(q, table, text, before, case=None):
    for label, value, unit, derivation in table:
        if matches(q, value, unit):
            return {"label": label, "value": q.value, "unit": q.unit, "derivation": derivation}
    return {"label": f"figure {len(before) + 1}", "value": q.value, "unit": q.unit,
            "derivation": _working(q, table, text, case)}  # fmt: skip


def _working(q, table, text, case=None):
    """The derivation of an amount from the working written just before it ("70% of the USD 450k salary = USD
    315k", "EUR 650k + CHF 1.8M = CHF 2.45M", "USD 2.24M / 3 = USD 746,667"), over the facts' labels where the
    operands are facts; "" for an amount with none (one the model proposes)."""
    before = text[max(0, q.start - 160) : q.start]
    if (m := _ending(APPLIED, before)) is not None:
        base = _label_of(m["base"], table)
        return f"{_percent_label(m['percent'], case)} × {base}"
    if (m := _ending(SUM, before)) is not None:
        return f"{_label_of(m['a'], table)} {'+' if m['op'] == '+' else '−'} {_label_of(m['b'], table)}"
    if (m := _ending(THIRD, before)) is not None:
        return f"{_label_of(m['a'], table)} / 3"
    return ""


def _percent_label(written, case):
    """A percent by the sheet's label for it, as a declaring model names its operands; as written if none has it."""
    same = [p for p in (case.percents if case else []) if abs(float(p.value) - float(written)) < 1e-9]
    return same[0].label if len(same) == 1 else f"{written}%"


def _ending(pattern, before):
    """The pattern's match that ends where the amount begins (its working is written right before it)."""
    found = [m for m in pattern.finditer(before + "\0") if m.end() == len(before)]
    if found:
        return found[-1]
    found = [m for m in pattern.finditer(before) if not before[m.end() :].strip()]
    return found[-1] if found else None


def _label_of(written, table):
    """An operand by what it is: a fact's label, a derived figure's derivation in brackets, else as written."""
    q = next(iter(_amounts(written)), None)
    figure = next((k for k in table if k[3] and matches(q, k[1], k[2])), None) if q else None
    if figure is None:
        return written
    return figure[3] if figure[3] == figure[0] else f"({figure[3]})"


def _amounts(text):
    return [q for q in find_quantities(text) if q.kind == "amount"]


def _unique(figures):
    seen, kept = set(), []
    for f in figures:
        key = (f["label"], f["value"], f["unit"])
        if key not in seen:
            seen.add(key)
            kept.append(f)
    return kept


def carried(exact_text, exact_figures, written, case) -> list[dict]:
    """The figures of a text a slip changed: each amount still where the exact text had one keeps its declaration,
    with the value now written (the slip carried); an amount the slip added is declared by its own working."""
    if written == exact_text:
        return exact_figures
    table = known(case)
    old, new = _amounts(exact_text), _amounts(written)
    by_value = {}
    for q in old:
        meant = next((f for f in exact_figures if matches(q, f["value"], f["unit"])), None)
        fact = next((k for k in table if k[3] == k[0] and matches(q, k[1], k[2])), None)
        if meant is None and fact is not None:  # a fact it wrote: declared only once a slip changes it
            meant = {"label": fact[0], "value": fact[1], "unit": fact[2], "derivation": fact[0], "fact": True}
        by_value[id(q)] = meant
    figures = []
    steps = difflib.SequenceMatcher(a=[q.text for q in old], b=[q.text for q in new], autojunk=False).get_opcodes()
    for tag, a1, a2, b1, b2 in steps:
        for offset, q in enumerate(new[b1:b2]):
            meant = by_value.get(id(old[a1 + offset])) if tag in ("equal", "replace") and a1 + offset < a2 else None
            if meant is not None and meant.get("fact") and tag == "equal":
                continue  # a fact written as the sheet gives it: the sheet accounts for it
            if meant is not None:
                kept = {k: v for k, v in meant.items() if k != "fact"}
                figures.append({**kept, "value": q.value, "unit": q.unit})
            elif not _is_fact(q, table):
                figures.append(_declared(q, table, written, figures, case))
    return _unique(figures)


# ---- a whole reply -------------------------------------------------------------------------------------------------


def _texts(reply):
    """(holder, text) of each text of a reply that writes figures: a list's items, the answer, a ReAct step."""
    for key in ("thoughts", "steps"):
        for item in reply.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("thought"), str):
                yield item, item["thought"]
    if isinstance(reply.get("answer"), str):
        yield reply, reply["answer"]
    if isinstance(reply.get("thought"), str) and isinstance(reply.get("action"), dict):
        answer = (reply["action"].get("args") or {}).get("answer")
        yield reply, reply["thought"] + ("\n" + answer if isinstance(answer, str) else "")


def declared_reply(reply, case):
    """The exact model's reply with the figures of each of its texts declared."""
    if case is None or not isinstance(reply, dict):
        return reply
    reply = {k: ([dict(i) if isinstance(i, dict) else i for i in v] if isinstance(v, list) else v)
             for k, v in reply.items()}  # fmt: skip
    for holder, text in list(_texts(reply)):
        figures = declare(text, case)
        if figures:  # a text with no amounts declares none, as a model leaves the list out
            holder["figures"] = figures
    return reply


def carried_reply(exact, written, case):
    """The reply as the noise left it, each text's figures carrying its slip (see carried)."""
    if case is None or written is exact or not isinstance(written, dict):
        return written
    before = list(_texts(exact))
    after = list(_texts(written))
    if len(before) != len(after):
        return written
    for (old_holder, old_text), (holder, text) in zip(before, after):
        figures = carried(old_text, old_holder.get("figures") or [], text, case)
        if figures or "figures" in holder:
            holder["figures"] = figures
    return written
