"""The accounts, instruments and entities the reader names, kept as data (data/vocabulary.toml), not as code.

Each entry has a canonical name (the fact's value) and the ways people write it; `tables()` compiles them into
one regex per name, as extract.py reads them: {canonical: pattern} for accounts and for instruments. An alias is
matched whole, in any case and spacing, with a plural "s" allowed; an `exact` writing only in its capitals; a
`pattern` as written. `is_entity(name)` says whether a name is a legal person that is not a human (a company, a
trust, a foundation), which has no age and no citizenship.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "data" / "vocabulary.toml"


@lru_cache(maxsize=1)
def entries():
    """{"account": {canonical: entry}, "instrument": {canonical: entry}} as the file writes them."""
    with PATH.open("rb") as f:
        data = tomllib.load(f)
    return {kind: dict(data.get(kind, {})) for kind in ("account", "instrument")}


def _alias(words):
    body = r"\s*".join(r"\s+".join(re.escape(w) for w in part.split()) for part in re.split(r"(?<=-)|(?=-)", words))
    plural = "" if words.endswith("s") else "(?:e?s)?" if words[-1].isalpha() else "s?"
    return rf"(?<![\w-]){body}{plural}(?![\w])"


def _exact(words):
    return rf"(?-i:(?<![\w-]){re.escape(words)}(?![\w]))"


def pattern(canonical, entry):
    """One regex (case-insensitive unless a part says otherwise) for every writing of an entry, longest first."""
    exact = list(entry.get("exact", []))
    aliases = list(entry.get("aliases", []))
    if canonical not in exact and canonical not in aliases and not entry.get("patterns"):
        aliases.append(canonical)
    parts = [_exact(w) for w in sorted(exact, key=len, reverse=True)]
    parts += [_alias(w) for w in sorted(aliases, key=len, reverse=True)]
    parts += list(entry.get("patterns", []))
    return "|".join(f"(?:{p})" for p in parts)


@lru_cache(maxsize=1)
def tables():
    """(ACCOUNTS, INSTRUMENTS): {canonical: regex} each, in the file's order."""
    data = entries()
    return tuple({name: pattern(name, entry) for name, entry in data[kind].items()} for kind in ("account", "instrument"))


@lru_cache(maxsize=1)
def entities():
    return frozenset(name for kind in entries().values() for name, entry in kind.items() if entry.get("entity"))


def is_entity(name):
    return name in entities()


@lru_cache(maxsize=512)
def canonical(words):
    """The canonical name of a writing ("CRUT" -> "charitable remainder trust"), or the words themselves."""
    words = " ".join(str(words or "").split())
    accounts, instruments = tables()
    for table in (accounts, instruments):
        if words in table:
            return words
    for table in (accounts, instruments):
        for name, regex in table.items():
            if re.fullmatch(regex, words, re.I):
                return name
    return words
