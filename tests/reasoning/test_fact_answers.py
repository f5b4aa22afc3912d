"""An answer true to the client's facts: one that fails a check is written again with the findings, then from the
next-best lines; if none passes, the one with the fewest failures stands with its findings and the search fails.
Pure: a fake store and a scripted gateway, and the real checker over a real fact sheet."""

from dataclasses import replace

from reasoning.facts.case import CaseCheck
from reasoning.facts.sheet import Fact
from reasoning.strategies.base import ANSWER_FAILED, FACT_TRIES, FACTS_FAILED, Command
from reasoning.strategies.tot import TreeOfThoughts
from tests.fakes import FakeControl, FakeStore, ScriptedGateway, context

PROBLEM = (
    "A Californian, 58, holds 70% of her $3.2M portfolio in her employer's stock; her salary is $450k. How should "
    "she sell down the stock in stages?"
)
FACTS = [
    Fact("portfolio", "amount", 3_200_000, "USD", "$3.2M"),
    Fact("employer stock share", "percent", 70, "%", "70%", base="portfolio"),
    Fact("salary", "amount", 450_000, "USD", "$450k"),
    Fact("residence", "place", "US-CA", "ISO 3166", "Californian"),
]
TRUE = "Sell USD 1.6M of the USD 2.24M employer stock (70% of USD 3.2M = USD 2.24M) in stages over two tax years."
SLIP = "Sell USD 450k of NIIT in stages."  # the salary's figure put on a tax
SCORES = {"Sell in stages": 0.9, "Exchange fund": 0.6}


def propose(prompt):
    return {"thoughts": [{"thought": t} for t in SCORES]}


def evaluate(prompt):
    last = prompt.split("### LAST STEP\n", 1)[1].split("\n", 1)[0]
    return {"score": SCORES[last], "reason": "scored"}


def script(*answers):
    replies = iter(answers)
    return {"tot.propose": propose, "tot.evaluate": evaluate, "tot.synthesize": lambda prompt: next(replies)}


def run(gateway, store=None, control=None, enabled=True):
    ctx = context(TreeOfThoughts, gateway, store or FakeStore(), control, params={"depth": 1, "keep": 2})
    ctx = replace(ctx, problem=PROBLEM, kind="investment-thesis", case=CaseCheck(FACTS, enabled=enabled))
    return TreeOfThoughts(ctx).run()


def syntheses(gateway):
    return [prompt for name, _, prompt in gateway.calls if name == "tot.synthesize"]


async def test_every_prompt_shows_the_client_s_fact_sheet():
    gateway = ScriptedGateway(script({"answer": TRUE}))
    await run(gateway)
    assert all("- salary [amount]: USD 450,000" in prompt for _, _, prompt in gateway.calls)


async def test_an_answer_that_passes_is_returned_with_its_findings_and_one_synthesis():
    gateway = ScriptedGateway(script({"answer": TRUE}))
    outcome = await run(gateway)
    assert outcome.reason == "solved" and outcome.final_answer == TRUE
    assert outcome.checks and all(f.ok for f in outcome.checks)
    assert len(syntheses(gateway)) == 1 and "### CHECK FINDINGS\n(none)" in syntheses(gateway)[0]


async def test_a_slip_is_written_again_with_what_the_checker_found():
    gateway = ScriptedGateway(script({"answer": SLIP}, {"answer": TRUE}))
    outcome = await run(gateway)
    first, second = syntheses(gateway)
    assert outcome.reason == "solved" and outcome.final_answer == TRUE
    findings = second.split("### CHECK FINDINGS\n", 1)[1].split("### OUTPUT", 1)[0]
    assert "USD 450k" in findings and "salary" in findings  # "your answer says X; the client's facts say Y"
    assert outcome.final_node.thought == "Sell in stages"  # the same line, written again


async def test_then_the_next_best_line_is_tried():
    gateway = ScriptedGateway(script({"answer": SLIP}, {"answer": SLIP}, {"answer": TRUE}))
    outcome = await run(gateway)
    assert outcome.reason == "solved" and outcome.final_answer == TRUE
    assert outcome.final_node.thought == "Exchange fund"


async def test_when_nothing_passes_the_fewest_failures_stand_and_the_search_fails_saying_why():
    worse = "Sell USD 450k of NIIT, then USD 3.2 of the rest."  # two slips
    gateway = ScriptedGateway(script({"answer": worse}, {"answer": SLIP}, {"answer": worse}, {"answer": worse}))
    outcome = await run(gateway)
    assert len(syntheses(gateway)) <= FACT_TRIES
    assert outcome.reason == FACTS_FAILED and outcome.final_answer == SLIP and not outcome.partial
    assert any(not f.ok for f in outcome.checks) and "450k" in outcome.detail


async def test_checks_off_return_the_first_answer_as_it_stands():
    gateway = ScriptedGateway(script({"answer": SLIP}))
    outcome = await run(gateway, enabled=False)
    assert outcome.reason == "solved" and outcome.final_answer == SLIP and outcome.checks == []
    assert len(syntheses(gateway)) == 1


async def test_a_person_s_promote_stands_with_its_findings():
    store, control = FakeStore(), FakeControl()
    gateway = ScriptedGateway(script({"answer": SLIP}, {"answer": SLIP}))
    checkpoint = control.checkpoint

    async def promote_the_second_best():
        if control.boundaries == 1:  # the level is scored (the count moves as the checkpoint runs): the answer is next
            node = next(n for n in store.nodes() if n.thought == "Exchange fund")
            control.commands.append(Command(1, "promote", node.id, {"note": "client prefers it"}, "advisor"))
        return await checkpoint()

    control.checkpoint = promote_the_second_best
    outcome = await run(gateway, store, control)
    assert outcome.chosen_by == "advisor" and outcome.final_answer == SLIP and outcome.reason == "solved"
    assert any(not f.ok and f.kind == "label" for f in outcome.checks)
    assert len(syntheses(gateway)) == 1


async def test_an_advisor_s_corrected_sheet_reaches_the_prompts_that_follow():
    store, control = FakeStore(), FakeControl()
    gateway = ScriptedGateway(script({"answer": TRUE}))
    corrected = [f.to_dict() | ({"value": 480_000} if f.label == "salary" else {}) for f in FACTS]
    control.commands.append(Command(1, "fact.edit", None, {"facts": corrected}, "advisor"))
    await run(gateway, store, control)
    assert control.outcomes[0][:2] == ("fact.edit", True)
    assert "- salary [amount]: USD 480,000" in syntheses(gateway)[0]


PUZZLE = "Game of 24: use each of the numbers 4 9 10 13 exactly once with + - * / to make 24."


async def puzzle_run(answer):
    gateway = ScriptedGateway(script({"answer": answer}))
    ctx = context(TreeOfThoughts, gateway, FakeStore(), params={"depth": 1, "keep": 2})
    ctx = replace(ctx, problem=PUZZLE, kind="general", case=CaseCheck(enabled=True, puzzle=[4, 9, 10, 13]))
    return await TreeOfThoughts(ctx).run(), gateway


async def test_a_game_of_24_answer_is_solved_only_when_its_arithmetic_is():
    outcome, _ = await puzzle_run("Answer: (10 - 4) * (13 - 9) = 24")
    assert outcome.reason == "solved" and all(f.ok for f in outcome.checks)


async def test_junk_that_shares_a_word_with_the_puzzle_fails_and_the_oracle_never_searches_again():
    outcome, gateway = await puzzle_run("A beach trip and an art museum make a lovely day for the numbers.")
    assert outcome.reason == ANSWER_FAILED and outcome.final_answer and not all(f.ok for f in outcome.checks)
    assert len(syntheses(gateway)) == 1  # the check decides the ending; it is no oracle to search with


async def test_a_wealth_answer_stating_none_of_the_client_s_figures_is_not_an_answer_to_this_client():
    junk = "She should sell the stock in stages and keep her portfolio diversified, reviewing it each year."
    gateway = ScriptedGateway(script(*[{"answer": junk}] * FACT_TRIES))
    outcome = await run(gateway)
    assert outcome.reason == FACTS_FAILED and "none of the client's figures" in outcome.detail
