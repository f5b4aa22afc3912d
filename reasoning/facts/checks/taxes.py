"""jurisdiction, by the rule table (reasoning/facts/data/jurisdictions.toml, read by reasoning/facts/rules.py): a tax,
a rate or a measure the client's places do not have, named ("Florida's state income tax", "IHT" for a US client,
"tax-loss harvesting" for a Swiss private investor) or implied by its rate beside a tax word ("a flat 25% tax takes
the gains" for a US client). A rate that fits one of the client's taxes passes, naming it; a place the table lacks
is unverified. The regime names of checks/jurisdiction.py are read too; one finding per span is kept (check.py).

    fails:  "the 13.3% state rate" for a Texan        passes: "the 20% federal rate plus the 3.8% NIIT" for a Texan
"""

from __future__ import annotations

from reasoning.facts import rules
from reasoning.facts.checks.doc import Doc
from reasoning.facts.sheet import Finding

KIND = "jurisdiction"
FINAL_ONLY = False


def run(doc: Doc) -> list[Finding]:
    return rules.findings(doc.text, doc.facts)
