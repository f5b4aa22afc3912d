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


def figure_contracts():
    """The contracts whose prompts ask for declared figures (a `$declare_figures` line in the template)."""
    from reasoning.prompts import HERE
    from reasoning.strategies import STRATEGIES, get_strategy

    contracts = {c.name: c for mode in STRATEGIES for c in get_strategy(mode).contracts}
    return sorted(n for n, c in contracts.items() if "$declare_figures" in (HERE / c.template).read_text())


def puzzle_prompt(contract, **asked):
    """A Game of 24 prompt for the contract, of a puzzle no corpus holds."""
    return render(contract, problem="Use 2 5 7 11 to make 24.", kind="game24", k=3, step=1, depth=4,
                  path=format_path(["7 - 5 = 2 (left: 2 2 11)"]), max_steps=4, **asked)  # fmt: skip


@pytest.mark.parametrize("contract", figure_contracts())
def test_a_prompt_not_asked_for_figures_is_the_asking_one_without_the_request(contract):
    # A puzzle's prompts leave the request out: what is left must be the prompt as it was before figures were asked
    # for, with no blank line in the request's place (the offline model keys its draws on exactly that text).
    from reasoning.prompts import DECLARE_FIGURES

    asking = puzzle_prompt(contract)
    assert DECLARE_FIGURES in asking
    assert puzzle_prompt(contract, declare_figures="") == asking.replace("\n" + DECLARE_FIGURES, "")


def test_the_offline_model_draws_alike_on_a_puzzle_whether_figures_are_asked_or_not():
    # The request changes no draw: a seed's puzzle search is the same whether or not its prompts ask for figures.
    from reasoning.llm.offline.answers import answer

    asking, not_asking = puzzle_prompt("tot.propose"), puzzle_prompt("tot.propose", declare_figures="")
    for seed in range(8):
        assert answer(not_asking, seed, noise=0.5) == answer(asking, seed, noise=0.5)
