"""ReAct (Yao et al. 2022): reason and act in turns, each step a thought, one tool call and what the tool returned.

The trajectory is a chain from the root: each step a child of the step before, its edge carrying the action
and the tool's real output. A step asks the model for a thought and an action, given the whole trajectory
and the tool catalogue; the tool runs (a bad call becomes an observation, never a crash) and the step is
stored. The final_answer action ends the search, its step holding the answer; so does the step limit, and
then the answer is written from the trajectory.

Everything is read from the stored tree: the trajectory's tip is the deepest live step, so a resumed run
continues after its last stored step, and a pruned step leaves the trajectory with all that followed it;
the search goes on from the last live step, as a new branch told which actions were already tried there.
ReAct keeps no scores: an edited thought is taken as written (its action and observation stand, since a
tool's output depends on its arguments only), and the answer comes from the final step, else the deepest.
"""

import json
import logging
from typing import Literal, Union

from pydantic import BaseModel, Field, ValidationError, create_model

from reasoning.modes import LABELS
from reasoning import tools
from reasoning.llm.contracts import first_error
from reasoning.prompts import render

from .base import Answer, Contract, Strategy, StrictParams, settle_all
from .replies import AnswerOut, FigureOut, Figures, Prose

FINAL = tools.FINAL_ANSWER
ACTION_LIMIT = 500  # the edge's action column
PROMPT_OBSERVATION_LIMIT = 2500  # characters of each observation the next prompt repeats
MAX_ALTERNATIVES = 8
log = logging.getLogger(__name__)


def tool_names(schema):
    """The schema a model is held to names every registered tool (read when the schema is made, so a tool registered
    later is offered too): a model bound by a grammar cannot invent one."""
    schema["enum"] = [t.name for t in tools.available()] + [FINAL]


class Action(BaseModel):
    # An unknown name still parses (a model without structured output may write one): it becomes the observation.
    tool: str = Field(min_length=1, max_length=60, json_schema_extra=tool_names)
    args: dict = Field(default_factory=dict)


class StepOut(BaseModel):
    thought: Prose = Field(min_length=1, max_length=4000)
    action: Action
    figures: Figures  # of the thought and, with final_answer, of the answer


class FinalArgs(BaseModel):
    answer: str = Field(description="The recommendation for the advisor, written in full.")


class StepWire(BaseModel):
    """The step as a model bound to a JSON grammar is held to it: `action` is one of the registered tools, each with
    its own arguments (and final_answer with its answer), so the grammar cannot pair a tool with another's arguments
    or leave final_answer without its text. Built from the registry each time a schema is made."""

    @classmethod
    def model_json_schema(cls, *args, **kwargs):
        calls = [_call_of(t.name, t.args_model) for t in tools.available()] + [_call_of(FINAL, FinalArgs)]
        step = create_model(
            "StepOut", thought=(str, ...), action=(Union[tuple(calls)], ...), figures=(list[FigureOut], [])
        )
        return step.model_json_schema(*args, **kwargs)


def _call_of(name, args_model):
    return create_model(f"Call_{name}", tool=(Literal[name], ...), args=(args_model, ...))


STEP = Contract("react.step", StepOut, max_tokens=1200, wire=StepWire)
SYNTHESIZE = Contract("react.synthesize", AnswerOut, max_tokens=1500)


class ReActParams(StrictParams):
    max_steps: int = Field(
        6, ge=1, le=12, description="Steps (thought, action, observation) before the answer is written anyway."
    )


def is_final(node):
    """A step that ended the run with an answer (its state holds it)."""
    return node.state.get("tool") == FINAL and bool(node.state.get("answer"))


def deepest(nodes):
    """The deepest of the nodes; among equally deep ones a final step, else the first stored (the main line's)."""
    ranked = max(enumerate(nodes), key=lambda pair: (pair[1].depth, is_final(pair[1]), -pair[0]), default=None)
    return ranked[1] if ranked else None


class ReAct(Strategy):
    name = "react"
    label = LABELS["react"]
    scale = None
    legend = ("step", "answer", "action")
    Params = ReActParams
    contracts = (STEP, SYNTHESIZE)

    async def search(self):
        while True:
            # The step boundary: overseers first (their prunes move the tip), and the budget, in one round.
            (remaining,) = await self.step_boundary(self.ctx.gateway.remaining_usd())
            tip = self._tip()
            if self.promoted or self.exhausted or not self._can_step_from(tip):
                return
            if not self._can_afford(remaining):
                self.exhausted = True
                return
            await self._take_step(tip, rank=len(self.ctx.store.children(tip)) + 1)

    def _live(self):
        return [n for n in self.ctx.store.nodes() if not self.ctx.store.is_pruned(n)]

    def _tip(self):
        """Where the trajectory stands: the deepest live step (the root before the first)."""
        return deepest(self._live())

    def _can_step_from(self, tip):
        # A step whose next step came back unparseable keeps its error rather than being asked forever.
        return not is_final(tip) and tip.depth < self.ctx.params.max_steps and not tip.parse_error

    def _can_afford(self, remaining):
        """This step and, should the run end without a final answer, the synthesis, at the observed cost per call."""
        return self.affords(2, remaining, "step and the synthesis")

    async def expand(self, node, k):
        """k alternative next steps from a node, asked concurrently, each told to take a different action."""
        k = max(1, min(MAX_ALTERNATIVES, k))
        tried = len(self.ctx.store.children(node))
        steps = await settle_all(*(self._take_step(node, rank=tried + i) for i in range(1, k + 1)))
        return [s for s in steps if s is not None]

    async def rescore(self, node):
        """Nothing to score: the edited thought stands as written, so it is no longer stale."""
        await self.ctx.store.update(node, stale=False)

    async def _take_step(self, parent, rank):
        """Ask for one thought and action after `parent`, run the action, store the step; None if no step came."""
        prompt = self._render(STEP, self.ctx.store.path(parent), **self._step_fields(parent, rank))
        answer = await self.ask_about(STEP, prompt, parent, "step")  # a failure is written on the parent
        if answer is None:
            return None
        item = await self._act(parent, answer.parsed)
        [step] = await self.ctx.store.add_children(parent, [item], answer)
        if is_final(step):
            await self.ctx.store.update(step, is_terminal=True)
        return step

    async def _act(self, parent, step):
        """Run the step's action: the stored step with its action and the tool's real output."""
        tool, args = step.action.tool.strip(), step.action.args
        state = {"step": parent.depth + 1, "tool": tool, "args": args}
        if tool == FINAL:
            answer = args.get("answer")
            if isinstance(answer, str) and answer.strip():
                observation, state["answer"] = answer.strip(), answer.strip()
            else:
                # Said in words, with nothing to fill in: a placeholder here was copied into the answer (issue 24).
                observation = f"error: the {FINAL} action came with no answer text, so the run goes on"
        else:
            observation = await tools.call(tool, args)
        return {"thought": step.thought, "action": action_text(tool, args), "observation": observation, "state": state,
                "figures": step.figures}  # fmt: skip

    async def synthesize(self, path):
        """The final step's own answer when the run ended with one; else (or when asked again) written by the model."""
        last = path[-1]
        rewrite = self.resynthesize and last.id == self.ctx.prior.final_node_id
        prompt = self._render(SYNTHESIZE, path)
        if is_final(last) and not rewrite:
            try:  # the step's own answer is held to the answer's contract too: else written from the trajectory
                own = {"answer": last.state["answer"], "figures": last.state.get("figures") or []}
                parsed = AnswerOut.model_validate(own, context={"prompt": prompt})
                return Answer(parsed=parsed, model="", cost_usd=0.0, latency_ms=0)
            except ValidationError as error:
                log.info("ReAct's final step answer refused (%s): written from the trajectory", first_error(error))
        return await self.ctx.gateway.ask(SYNTHESIZE, prompt, node_id=last.id)

    @classmethod
    def best_node(cls, store):
        """The live final step if there is one, else the deepest live step."""
        live = [n for n in store.nodes() if n.depth > 0 and not store.is_pruned(n)]
        return deepest([n for n in live if is_final(n)] or live)

    # ---- prompts ---------------------------------------------------------------------------

    def _step_fields(self, parent, rank):
        step = parent.depth + 1
        edges = {e.to_id: e for e in self.ctx.store.edges()}
        tried = [edges[c.id].action for c in self.ctx.store.children(parent) if c.id in edges]
        return {
            "tools": tools.catalogue(),
            "step": step,
            "max_steps": max(step, self.ctx.params.max_steps),
            "k": rank,
            "tried": "\n".join(f"- {a}" for a in tried) or "(none)",
        }

    def _render(self, contract, path, **fields):
        return render(
            contract,
            **self.case_fields(
                trajectory=self._trajectory(path),
                **fields,
            ),
        )

    def _trajectory(self, path):
        """Numbered steps, one line each for thought, action and observation (the prompt's STEPS SO FAR)."""
        edges = {e.to_id: e for e in self.ctx.store.edges()}
        lines = []
        for i, node in enumerate(path[1:], 1):
            edge = edges.get(node.id)
            action, observation = (edge.action, edge.observation) if edge else no_action(node)
            lines += [
                f"{i}. Thought: {one_line(node.thought)}",
                f"   Action: {action}",
                f"   Observation: {one_line(observation, PROMPT_OBSERVATION_LIMIT)}",
            ]
        return "\n".join(lines) or "(none yet: this is the first step)"


def no_action(node):
    """(action, observation) of a step with no edge: a reasoning step a fork copied from another mode is a prior step
    that called no tool; any other such step (the root's) has none."""
    if node.state.get("copied"):
        return "(no tool: a reasoning step copied from the forked session)", "(none)"
    return "(none)", "(none)"


def action_text(tool, args):
    """`tool({"arg":...})` as the edge shows it, shortened at a word when an argument is long (an answer)."""
    text = f"{tool}({json.dumps(args, ensure_ascii=False, separators=(',', ':'))})"
    if len(text) <= ACTION_LIMIT:
        return text
    return text[: ACTION_LIMIT - 3].rsplit(" ", 1)[0] + " …)"


def one_line(text, limit=None):
    text = " ".join(str(text).split())
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + f" … (cut at {limit} characters)"
