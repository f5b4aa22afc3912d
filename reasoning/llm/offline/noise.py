"""The imperfect offline model's mistakes on wealth problems, made the ways real models make them.

The exact model's reply is written first (from the client's fact sheet); then each chance to err is taken on its own
at rate ε. A judgement (a score, a verdict, a stated confidence) becomes a guess. Each step (a thought, an attempt's
step) and each answer slips once at rate ε, in one of the ways below its text allows, drawn with equal odds (never
weighted towards what a checker catches or misses):

    figure        a figure misstated: one number scaled or shifted
    label         a figure attached to another fact's label ("the portfolio (USD 450k)": the salary's figure)
    scale         a dropped scale ("USD 3.2" for USD 3.2M)
    base          a percent applied to another amount than its base ("70% of the USD 450k salary = USD 315k")
    jurisdiction  a tax rule of a place the client is not tied to, named ("California taxes ...") or not ("the
                  state taxes ...")
    currency      two currencies combined with no rate ("EUR 650k as a share of CHF 1.8M is 36.1%")
    coverage      (answers only) one instrument the client listed left out

The shape of the reply never changes, so every contract still holds.

What a deterministic checker (reasoning/facts/check.py) can and cannot catch, by kind, and what it caught on
fixtures/wealth_cases.json at ε 0.3, seed 7, every strategy, with check.py and the reader of 2026-12-03
(tests/llm/test_offline_facts.py;
slips caught / made):

    figure        caught: the wrong number is no fact and no one-step derivation of facts (43/104).
                  missed: it equals another fact, a percent of one, or a sum of two; or it is a number no check
                  reads (a rule of thumb's "30% drawdown", a count, an age).
    label         caught: the figure sits next to another fact's label (58/59).
                  missed: the two facts' labels share their words, or no label is next to the figure.
    scale         caught: always, as "drops its scale" or as no fact (54/54).
    base          caught: the percent is a fact with a base, and another fact's amount follows "of" (42/137).
                  missed: the percent has no base on the sheet (a limit, a target): nothing says which amount it
                  belongs to.
    jurisdiction  caught: the rule is named (NIIT, IHT, California, pillar 3a), or is a kind of tax the client's place
                  does not levy ("the state taxes ..." for a Florida client) (169/228).
                  missed: the words tie it to no place ("a flat 25% tax", "inheritance tax at 40% above the
                  allowance").
    currency      caught: the two amounts are joined by an operator or "as a share of" (59/59).
                  missed: they are combined in words the checker does not read as combining.
    coverage      caught: in an answer checked as final (21/21); a step is never checked for it.
    judgement     never: a guessed score, verdict or confidence has no figure to check (0/63).
"""

import re
from dataclasses import dataclass

from reasoning.facts.extract import INSTRUMENTS
from reasoning.facts.quantities import format_amount, format_percent

VERDICTS = ("sure", "likely", "impossible")
FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:[,'’]\d{3})+|\d+)(?:\.(\d+))?(?![\d])")
CONFIDENCE_LINE = re.compile(r"^(CONFIDENCE:\s*)([\d.]+)", re.MULTILINE)
SCALED = re.compile(r"\b(?P<code>[A-Z]{3}) (?P<figure>\d[\d,]*(?:\.\d+)?)(?P<scale>bn|M|k)\b")
APPLIED = re.compile(
    r"(?P<percent>\d+(?:\.\d+)?)% of the (?P<base>[A-Z]{3} [\d,.]+(?:bn|M|k)?) (?P<label>[^=;()\n]+?) = "
    r"(?P<result>[A-Z]{3} [\d,.]+(?:bn|M|k)?)"
)
# Rules real models carry over from another place: (its place, named, phrased without naming the place).
FOREIGN_RULES = (
    ("US-CA", "California taxes the gains as ordinary income, at up to 13.3%.",
     "The state taxes the gains as ordinary income, at up to 13.3%."),
    ("US", "The 3.8% NIIT applies to the gains.", "A 3.8% surtax applies to the investment income."),
    ("CH", "The Swiss wealth tax applies to the whole portfolio every year.",
     "A yearly wealth tax applies to the whole portfolio."),
    ("CH", "Pillar 3a contributions cut the taxable income first.",
     "Contributions to the tax-favoured retirement account cut the taxable income first."),
    ("DE", "The German Abgeltungsteuer takes 25% of the gains.", "A flat 25% tax takes the gains."),
    ("GB", "IHT at 40% applies above the nil-rate band.", "Inheritance tax at 40% applies above the allowance."),
)  # fmt: skip


@dataclass(frozen=True)
class Slip:
    """One mistake made: its kind, and the text before and after it ("" for a judgement)."""

    kind: str
    before: str = ""
    after: str = ""
    answer: bool = False  # made in an answer (else in a step)


def disturb(reply, rng, noise, case=None, log=None):
    """The reply with its mistakes made, each chance at rate `noise` on its own; `case` is the client's sheet
    (offline_facts.Case) the slips draw on; `log`, a list, receives a Slip for each mistake made."""
    if not noise:
        return reply

    def slips():
        return rng.random() < noise

    def noted(kind, before="", after="", answer=False):
        if log is not None:
            log.append(Slip(kind, before, after, answer))

    reply = dict(reply)
    if "score" in reply and slips():
        reply["score"] = round(rng.uniform(0.0, 1.0), 3)
        noted("judgement")
    if "verdict" in reply and slips():
        reply["verdict"] = rng.choice(VERDICTS)
        noted("judgement")
    if "analysis" in reply and slips():
        reply["analysis"] = CONFIDENCE_LINE.sub(lambda m: f"{m[1]}{rng.uniform(0.0, 1.0):.2f}", reply["analysis"])
        noted("judgement")
    for key in ("thoughts", "steps"):
        if isinstance(reply.get(key), list):
            reply[key] = [
                item | {"thought": slip(item["thought"], rng, case, False, noted)} if slips() else item
                for item in reply[key]
            ]
    if isinstance(reply.get("answer"), str) and slips():
        reply["answer"] = slip(reply["answer"], rng, case, True, noted)
    action = reply.get("action") or {}
    if action.get("tool") == "final_answer" and isinstance(action.get("args", {}).get("answer"), str) and slips():
        args = action["args"] | {"answer": slip(action["args"]["answer"], rng, case, True, noted)}
        reply["action"] = action | {"args": args}  # ReAct's answer comes with its last step
    return reply


def slip(text, rng, case, answer, noted=lambda *slip: None):
    """The text with one mistake, of a kind drawn with equal odds among those the text allows; unchanged if none."""
    kinds = [kind for kind, (can, _) in SLIPS.items() if can(text, case, answer)]
    if not kinds:
        return text
    kind = rng.choice(kinds)
    wrong = SLIPS[kind][1](text, rng, case)
    noted(kind, text, wrong, answer)
    return wrong


# ---- each kind: whether the text allows it, and the text with it made ------------------------------------------


def misstate(text, rng, case=None):
    """One figure of the text written wrong (scaled or shifted), the rest untouched; text without figures stays."""
    figures = _figures(text)
    if not figures:
        return text
    match = rng.choice(figures)
    whole = int(re.sub(r"[,'’]", "", match[1]))
    wrong = whole * rng.choice((2, 3, 10)) if whole > 12 else whole + rng.choice((1, 2, 3, 5))
    written = f"{wrong:,}" if "," in match[1] else str(wrong)
    return text[: match.start()] + written + (f".{match[2]}" if match[2] else "") + text[match.end() :]


def _figures(text):
    """The numbers a reader takes for figures: not a list's numbering, not a reference to a step ("step 2")."""
    return [m for m in FIGURE.finditer(text) if not _is_list_number(text, m) and not _is_reference(text, m)]


def _is_reference(text, match):
    return bool(re.search(r"\b(?:step|attempt|iteration)\s+$", text[max(0, match.start() - 12) : match.start()], re.I))


def _is_list_number(text, match):
    """`1.` or `2)` at the start of a line numbers a list; it is no figure."""
    start = match.start()
    before = text[:start].rsplit("\n", 1)[-1]
    return not before.strip() and text[match.end() : match.end() + 1] in ".)" and not match[2]


def _shown(case):
    """(written, figure) of each amount on the sheet, as the exact model writes it."""
    return [(format_amount(f.value, f.unit), f) for f in (case.amounts if case else [])]


def _can_label(text, case, answer):
    shown = _shown(case)
    return len({w for w, _ in shown}) > 1 and any(w in text for w, _ in shown)


def _label(text, rng, case):
    """One fact's figure written where another fact's belongs: the label stays, the figure is the other's."""
    shown = _shown(case)
    here = [(w, f) for w, f in shown if w in text]
    written, fact = rng.choice(here)
    other = rng.choice([w for w, f in shown if w != written])
    return _replace_one(text, written, other, rng)


def _can_scale(text, case, answer):
    return bool(SCALED.search(text))


def _scale(text, rng, case):
    match = rng.choice(list(SCALED.finditer(text)))
    return text[: match.start()] + f"{match['code']} {match['figure']}" + text[match.end() :]


def _can_base(text, case, answer):
    return bool(case and len(case.amounts) > 1 and (APPLIED.search(text) or case.percents))


def _base(text, rng, case):
    """A percent applied to another amount: in the text's own working if it has one, else in a sentence added."""
    found = list(APPLIED.finditer(text))
    if found:
        match = rng.choice(found)
        others = [f for w, f in _shown(case) if w != match["base"]] or [f for _, f in _shown(case)]
        other = rng.choice(others)
        applied = _applied(float(match["percent"]), other)
        return text[: match.start()] + applied + text[match.end() :]
    percent = rng.choice(case.percents)
    other = rng.choice([f for f in case.amounts if f.label.lower() != percent.base.lower()] or case.amounts)
    return _added(text, f"Put differently, {_applied(float(percent.value), other)}.")


def _applied(percent, fact):
    result = format_amount(fact.value * percent / 100, fact.unit)
    return f"{format_percent(percent)} of the {format_amount(fact.value, fact.unit)} {fact.label} = {result}"


def _can_jurisdiction(text, case, answer):
    return bool(_foreign(case))


def _jurisdiction(text, rng, case):
    _code, named, unnamed = rng.choice(_foreign(case))
    return _added(text, named if rng.random() < 0.5 else unnamed)


def _foreign(case):
    """The rules of places the client is not tied to: neither the place nor (for a country's rule) its country."""
    places = set(case.places) if case else set()
    countries = {p.split("-")[0] for p in places}
    return [rule for rule in FOREIGN_RULES if rule[0] not in places and ("-" in rule[0] or rule[0] not in countries)]


def _can_currency(text, case, answer):
    return bool(case) and len({f.unit for f in case.amounts}) > 1


def _currency(text, rng, case):
    """Two amounts in different currencies combined as if one: a share, or a sum in the second's currency."""
    a = rng.choice(case.amounts)
    b = rng.choice([f for f in case.amounts if f.unit != a.unit])
    shown_a, shown_b = format_amount(a.value, a.unit), format_amount(b.value, b.unit)
    if rng.random() < 0.5:
        share = format_percent(100 * a.value / b.value)
        return _added(text, f"The {a.label}, {shown_a}, is {share} of the {b.label} ({shown_a} / {shown_b}).")
    total = format_amount(a.value + b.value, b.unit)
    return _added(text, f"Together they come to {shown_a} + {shown_b} = {total}.")


def _can_coverage(text, case, answer):
    return answer and bool(_named_instruments(text, case))


def _coverage(text, rng, case):
    """Every line (or, in one paragraph, every sentence) naming one listed instrument, in any of its writings, taken
    out."""
    named = _naming(rng.choice(_named_instruments(text, case)))
    lines = text.split("\n")
    if len(lines) > 1:
        return "\n".join(line for line in lines if not named.search(line))
    sentences = re.split(r"(?<=\.)\s+", text)
    return " ".join(s for s in sentences if not named.search(s))


def _named_instruments(text, case):
    names = case.instruments if case else []
    return [n for n in names if _naming(n).search(text)]


def _naming(name):
    """The instrument as the fact reader knows its writings ("life insurance" is also "assurance-vie"; "Roth
    conversions" names the Roth conversion), else its name as given."""
    writing = INSTRUMENTS.get(name)
    pattern = rf"(?<!\w)(?:{writing})(?!\w)" if writing else rf"(?<!\w){re.escape(name)}s?(?!\w)"
    return re.compile(pattern, re.I)


def _can_figure(text, case, answer):
    return bool(_figures(text))


def _added(text, sentence):
    """A sentence added where a model would put it: before the main risk in an answer, else at the end."""
    at = text.find("\n\nMain risk:")
    if at >= 0:
        return text[:at] + " " + sentence + text[at:]
    return text.rstrip() + " " + sentence


def _replace_one(text, old, new, rng):
    starts = [m.start() for m in re.finditer(re.escape(old), text)]
    at = rng.choice(starts)
    return text[:at] + new + text[at + len(old) :]


SLIPS = {
    "figure": (_can_figure, misstate),
    "label": (_can_label, _label),
    "scale": (_can_scale, _scale),
    "base": (_can_base, _base),
    "jurisdiction": (_can_jurisdiction, _jurisdiction),
    "currency": (_can_currency, _currency),
    "coverage": (_can_coverage, _coverage),
}
