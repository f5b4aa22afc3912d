"""What strategies share about thoughts: their identity, merging a reply's repeats, and listing them in a prompt."""

import re

from reasoning.prompts import format_path


def listed(thoughts):
    """Steps already proposed under a node, for its prompt: a new proposal should not repeat them."""
    return format_path(thoughts) if thoughts else "(none)"


def same(thought):
    """A thought's identity for merging: its words, whatever the case, spacing and trailing full stop."""
    return " ".join(re.findall(r"\S+", thought.casefold())).rstrip(".")


def merge_duplicates(items, taken=()):
    """The proposals with each thought once (the first wording kept, state["proposed"] counting how often it came);
    a thought already among the parent's children is left out."""
    merged, seen = [], set(taken)
    for item in items:
        key = same(item["thought"])
        if key in seen:
            for kept in merged:
                if same(kept["thought"]) == key:
                    kept["state"]["proposed"] = kept["state"].get("proposed", 1) + 1
            continue
        seen.add(key)
        merged.append({**item, "state": dict(item.get("state") or {})})
    return merged
