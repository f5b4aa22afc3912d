"""Drive the offline model through every strategy's prompts for one case, as the strategies render them, and collect
every text it writes that a client could read: steps, critiques, analyses and answers. No Django and no network."""

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from reasoning.facts.sheet import Fact, render_sheet
from reasoning.llm.offline.answers import answer
from reasoning.prompts import contract_of, format_path, render
from reasoning.strategies.base import Critique
from reasoning.strategies.reflexion import format_memory

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = {r["problem_kind"]: r for r in json.loads((ROOT / "fixtures" / "rubrics.json").read_text())}
CASES = json.loads((ROOT / "fixtures" / "wealth_cases.json").read_text())["cases"]


def rubric_text(kind):
    """The rubric as Rubric.as_prompt() writes it for the evaluator."""
    rubric = RUBRICS.get(kind, RUBRICS["general"])
    lines = [f"{rubric['name']}: {rubric['description']}"]
    lines += [f"- {c['name']} (weight {c['weight']:g}): {c['description']}" for c in rubric["criteria"]]
    return "\n".join(lines)


def facts_of(case):
    return [Fact.from_dict(f) for f in case["facts"]]


@dataclass
class Text:
    contract: str
    final: bool  # an answer a client reads (checked for coverage too)
    text: str


@dataclass
class Reply:
    contract: str
    texts: int  # the steps or answers it holds: each one chance to slip
    slips: list  # the mistakes noise.py made in it (noise.Slip)


class Driver:
    """One case's prompts, answered by the offline model at a seed and noise."""

    def __init__(self, problem, kind, facts, seed=7, noise=0.0):
        self.seed, self.noise, self.texts, self.replies = seed, noise, [], []
        self.fields = dict(
            problem=problem, kind=kind, rubric=rubric_text(kind), facts=render_sheet(facts), findings="(none)"
        )

    def ask(self, contract, **fields):
        """The parsed reply, checked by the contract as the engine checks it (an echo of the prompt is refused)."""
        prompt = render(contract, **self.fields, **fields)
        slips = []
        text = answer(prompt, self.seed, self.noise, log=slips)
        parsed, _how = contract_of(contract).parse(text, context={"prompt": prompt})
        self.replies.append(Reply(contract, 0, slips))
        return parsed

    def keep(self, contract, final, text, chance=True):
        """A text of the last reply; `chance`: noise.py may slip in it (a step or an answer, not a critique)."""
        self.texts.append(Text(contract, final, text))
        self.replies[-1].texts += chance

    def tot(self, depth=4, k=3):
        steps = []
        for step in range(1, depth + 1):
            fields = dict(path=format_path(steps), k=k, step=step, depth=depth, proposed="(none)")
            parsed = self.ask("tot.propose", **fields)
            for t in parsed.thoughts:
                self.keep("tot.propose", False, t.thought)
            steps.append(parsed.thoughts[0].thought)
        parsed = self.ask("tot.synthesize", path=format_path(steps))
        self.keep("tot.synthesize", True, parsed.answer)

    def lats(self, depth=4, k=2):
        steps = []
        for step in range(1, depth + 1):
            fields = dict(path=format_path(steps), k=k, step=step, depth=depth, proposed="(none)")
            parsed = self.ask("lats.expand", **fields, reflections="(none)")
            for t in parsed.thoughts:
                self.keep("lats.expand", False, t.thought)
            steps.append(parsed.thoughts[0].thought)
        fields = dict(path=format_path(steps[:-1]), thought=steps[-1], score=0.4, reason="Weak.")
        parsed = self.ask("lats.reflect", **fields)
        self.keep("lats.reflect", False, parsed.reflection, chance=False)
        parsed = self.ask("lats.synthesize", path=format_path(steps))
        self.keep("lats.synthesize", True, parsed.answer)

    def reflexion(self, attempts=2):
        memory, steps = [], []
        for num in range(1, attempts + 1):
            fields = dict(memory=format_memory(memory), attempt=num, max_attempts=attempts, steps=3)
            parsed = self.ask("reflexion.attempt", **fields)
            steps = [s.thought for s in parsed.steps]
            for s in steps:
                self.keep("reflexion.attempt", False, s)
            fields = dict(memory=format_memory(memory), attempt=num, path=format_path(steps), score=0.5)
            parsed = self.ask("reflexion.reflect", **fields, threshold=0.8, reason="Plausible.")
            self.keep("reflexion.reflect", False, parsed.critique, chance=False)
            memory.append(Critique(None, num, 0.5, parsed.critique))
        fields = dict(memory=format_memory(memory), path=format_path(steps[:1]), proposed="(none)")
        parsed = self.ask("reflexion.expand", **fields, step=2, depth=3, k=3)
        for t in parsed.thoughts:
            self.keep("reflexion.expand", False, t.thought)
        parsed = self.ask("reflexion.synthesize", path=format_path(steps))
        self.keep("reflexion.synthesize", True, parsed.answer)

    def trm(self, iterations=3):
        answer_text = "(none yet: this is the first iteration)"
        for iteration in range(1, iterations + 1):
            fields = dict(iteration=iteration, max_steps=iterations, answer=answer_text)
            parsed = self.ask("trm.reason", **fields, trace="(none)", latent="(none)", focus="none")
            analysis = "\n".join(f"{f.kind.upper()}: {f.text}" for f in parsed.findings)
            self.keep("trm.reason", False, analysis, chance=False)
            points = "\n".join(f"- {f.kind}: {f.text}" for f in parsed.findings)
            parsed = self.ask("trm.improve", **fields, points=points, rejected="(none)", alternative="none")
            answer_text = parsed.answer
            self.keep("trm.improve", True, answer_text)  # any iteration's answer may be the final one

    def react(self, max_steps=6):
        from reasoning import tools

        lines, step = [], 1
        while step <= max_steps:
            fields = dict(trajectory="\n".join(lines) or "(none yet: this is the first step)", tools="(catalogue)")
            parsed = self.ask("react.step", **fields, tried="(none)", step=step, max_steps=max_steps, k=1)
            self.keep("react.step", False, parsed.thought, chance=False)
            if parsed.action.tool == tools.FINAL_ANSWER:
                self.keep("react.final_answer", True, parsed.action.args["answer"])
                break
            observation = asyncio.run(tools.call(parsed.action.tool, parsed.action.args))
            action = f"{parsed.action.tool}({json.dumps(parsed.action.args, separators=(',', ':'))})"
            lines += [f"{step}. Thought: {parsed.thought}", f"   Action: {action}", f"   Observation: {observation}"]
            step += 1
        parsed = self.ask("react.synthesize", trajectory="\n".join(lines) or "(none)")
        self.keep("react.synthesize", True, parsed.answer)

    def everything(self):
        for strategy in (self.tot, self.lats, self.reflexion, self.trm, self.react):
            strategy()
        return self.texts


def drive(case, seed=7, noise=0.0):
    """The Driver of a fixture case after every strategy ran: its texts and its replies."""
    driver = Driver(case["problem_text"], case["problem_kind"], facts_of(case), seed, noise)
    driver.everything()
    return driver
