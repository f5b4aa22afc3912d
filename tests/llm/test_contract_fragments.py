"""Every contract's parse refuses a fragment with a ParseError (a refused reply, asked again), never another error:
a pydantic ValidationError escaping a line parser ended a TRM session `failed/error` after one call."""

import json
import random

import pytest

from reasoning.facts.contract import CASE_FACTS
from reasoning.llm.contracts import ParseError
from reasoning.strategies import STRATEGIES, get_strategy

CONTRACTS = [c for mode in STRATEGIES for c in get_strategy(mode).contracts] + [CASE_FACTS]
FRAGMENTS = [
    "",
    "][",
    "{",
    "}",
    '{"insight":"][","issue":"x","missing":"y","suggestion":"z","confidence":0.5}',
    '{"insight": null, "confidence": "high"}',
    '{"confidence": 100.92}',
    "INSIGHT: ][\nCONFIDENCE: 1e999",
    "CONFIDENCE: nan",
    '{"thoughts": [{"thought": null}]}',
    '{"facts": [{"label": "x", "kind": "amount", "value": [], "text": 3}]}',
    '{"answer": {"nested": true}}',
    "null",
    "[]",
    '"just a string"',
    "\x00\x01\x02",
]


def fragments(seed=7, count=60):
    """The fixed fragments, and random slices of valid-looking replies."""
    rng = random.Random(seed)
    whole = json.dumps({"insight": "a", "issue": "b", "missing": "c", "suggestion": "d", "confidence": 0.5})
    sliced = [whole[rng.randrange(len(whole)) : rng.randrange(len(whole))] for _ in range(count)]
    return FRAGMENTS + sliced


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.name for c in CONTRACTS])
def test_a_fragment_is_a_refused_reply_never_a_crash(contract):
    for text in fragments():
        try:
            contract.parse(text, {"prompt": "", "expect": 3})
        except ParseError:
            pass
