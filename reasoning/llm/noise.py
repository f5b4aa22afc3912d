"""The imperfect offline model's mistakes on wealth problems: a judgement that is a guess, a figure misstated.

The exact model's reply is written first; at rate ε each chance to err is taken on its own: a score, a verdict or
a stated confidence becomes a guess, and a step or an answer misstates one of its figures (a number that is not the
problem's). The shape of the reply never changes, so every contract still holds.
"""

import re

VERDICTS = ("sure", "likely", "impossible")
FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:[,'’]\d{3})+|\d+)(?:\.(\d+))?(?![\d])")
CONFIDENCE_LINE = re.compile(r"^(CONFIDENCE:\s*)([\d.]+)", re.MULTILINE)


def disturb(reply, rng, noise):
    """The reply with its mistakes made, each at rate `noise` on its own."""
    if not noise:
        return reply

    def slips():
        return rng.random() < noise

    reply = dict(reply)
    if "score" in reply and slips():
        reply["score"] = round(rng.uniform(0.0, 1.0), 3)
    if "verdict" in reply and slips():
        reply["verdict"] = rng.choice(VERDICTS)
    if "analysis" in reply and slips():
        reply["analysis"] = CONFIDENCE_LINE.sub(lambda m: f"{m[1]}{rng.uniform(0.0, 1.0):.2f}", reply["analysis"])
    for key in ("thoughts", "steps"):
        if isinstance(reply.get(key), list):
            reply[key] = [
                item | {"thought": misstate(item["thought"], rng)} if slips() else item for item in reply[key]
            ]
    if isinstance(reply.get("answer"), str) and slips():
        reply["answer"] = misstate(reply["answer"], rng)
    return reply


def misstate(text, rng):
    """One figure of the text written wrong (scaled or shifted), the rest untouched; text without figures stays."""
    figures = [m for m in FIGURE.finditer(text) if not _is_list_number(text, m)]
    if not figures:
        return text
    match = rng.choice(figures)
    whole = int(re.sub(r"[,'’]", "", match[1]))
    wrong = whole * rng.choice((2, 3, 10)) if whole > 12 else whole + rng.choice((1, 2, 3, 5))
    written = f"{wrong:,}" if "," in match[1] else str(wrong)
    return text[: match.start()] + written + (f".{match[2]}" if match[2] else "") + text[match.end() :]


def _is_list_number(text, match):
    """`1.` or `2)` at the start of a line numbers a list; it is no figure."""
    start = match.start()
    before = text[:start].rsplit("\n", 1)[-1]
    return not before.strip() and text[match.end() : match.end() + 1] in ".)" and not match[2]
