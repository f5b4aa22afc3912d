"""Prompt contracts: strict JSON first, then JSON found in prose; clear errors otherwise."""

import pytest

from reasoning.prompts import ParseError, format_path, parse, render


def test_every_template_names_its_contract():
    for contract in ["tot.propose", "tot.evaluate", "tot.value", "tot.synthesize"]:
        text = render(
            contract,
            problem="P",
            kind="general",
            rubric="R",
            path=format_path([]),
            k=3,
            step=1,
            depth=4,
            thought="T",
            proposed="(none)",
            facts="(no facts were read from the problem)",
            findings="(none)",
        )
        assert text.startswith(f"### CONTRACT\n{contract}\n") and "$" not in text


def test_it_parses_strict_json_and_json_inside_prose():
    assert parse("tot.evaluate", '{"score": 0.7, "reason": "ok"}')[1] == "strict"
    parsed, how = parse("tot.evaluate", 'Sure! ```json\n{"score": 0.7, "reason": "ok"}\n```')
    assert how == "extracted" and parsed.score == 0.7


@pytest.mark.parametrize("reply", ['{"score": 7}', '{"score": -1}', '{"score": 1.01}'])
def test_a_score_off_the_scale_breaks_the_contract_rather_than_being_clamped(reply):
    with pytest.raises(ParseError, match="score"):
        parse("tot.evaluate", reply)


@pytest.mark.parametrize("reply", ["", "no json here", '{"score": "high"}', '{"thoughts": []}', "{broken"])
def test_it_reports_what_broke_the_contract(reply):
    with pytest.raises(ParseError):
        parse("tot.evaluate" if "thoughts" not in reply else "tot.propose", reply)
