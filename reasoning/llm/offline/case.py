"""The offline model's reading of the client's facts (contract case.facts): the deterministic reader's own facts.

The engine asks a real model for the facts once; the offline model's answer is what the deterministic reader found
when the session was created, so asking it would only repeat that (the engine does not, and says so).
"""

from reasoning.facts.extract import extract


def case_facts(p, rng):
    return {
        "facts": [
            {"label": f.label, "kind": f.kind, "value": f.value, "unit": f.unit, "text": f.text, "base": f.base}
            for f in extract(p.problem)
        ]
    }


HANDLERS = {"case.facts": case_facts}
