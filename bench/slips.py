"""What a slip the offline model logged changed, read without Django (bench/wealth_success.py counts with it)."""

import difflib
import re


def words(text):
    return re.findall(r"\S+", text)


NUMBER = re.compile(r"\d+(?:[.,'’]\d+)*")
CASE_AMOUNT = re.compile(r"[$€£]|\b[A-Z]{3}\b|\d(?:k|m|M|bn)\b")


def numbers(text):
    """The numbers written in the text, as floats ("900'000" and "1,600" read whole; "1.5" as itself)."""
    found = []
    for n in NUMBER.findall(text):
        plain = re.sub(r"[,'’](?=\d{3}\b)", "", n).replace(",", ".")
        try:
            found.append(float(plain))
        except ValueError:
            continue  # "1.600.000": grouped with points
    return found


def rule_of_thumb(slip, problem_text):
    """A figure slip whose changed numbers the case neither states nor writes as an amount (see the module's doc)."""
    if slip.kind != "figure":
        return False
    before, after = words(slip.before), words(slip.after)
    changed = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "replace":
            changed += [(before[i], before[i - 1] if i else "") for i in range(i1, i2) if NUMBER.search(before[i])]
    if not changed:
        return False
    stated = set(numbers(problem_text))
    return not any(CASE_AMOUNT.search(word) or re.fullmatch(r"[A-Z]{3}", prior) or set(numbers(word)) & stated
                   for word, prior in changed)  # fmt: skip
