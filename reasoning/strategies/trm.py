"""TRM recursive refinement (after Jido AI's TRM reasoning): analyse the current answer, improve it, repeat.

Each answer is one node, the child of the answer before it (the root holds the problem). An iteration asks
the model for an analysis of the current answer in marked lines (INSIGHT, ISSUE, MISSING, SUGGESTION,
CONFIDENCE), stored on that answer's own node: the confidence is that answer's score, so the answer
returned is always one that was judged. Then a better answer is written from those findings, as the next
node, which carries the latent state forward: the trace of earlier iterations, the insights kept, the
issues still open and those resolved. The loop stops at the confidence threshold (once verified: the
answer is judged again, several samples, so one lucky judgement does not stop it), at the step limit, or
when the confidences of the last three answers lie within `convergence` of each other (a dip alone does
not stop it).

The chain of live answer nodes is the whole working state, so a run continues after the deepest live one:
an answer not yet analysed is analysed, one analysed is improved on, without asking for anything twice.
"""

import json
import re
from typing import Literal

from pydantic import BaseModel, Field

from reasoning.modes import LABELS
from reasoning.llm.contracts import ParseError
from reasoning.prompts import format_path, render

from .base import Answer, Contract, Strategy, StrictParams, answer_candidates, settle_all
from .replies import Commentary, Figures, Recommendation

# ---- the reasoning reply: marked lines ------------------------------------------------------

MARKER_LINE = re.compile(
    r"^[\s>*•\-\d.)]*\**\s*(INSIGHT|ISSUE|MISSING|SUGGESTION|CONFIDENCE)S?\s*\**\s*:\s*\**\s*(.*)$", re.IGNORECASE
)
NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)\s*(%?)")
SURE_WORDS = re.compile(
    r"\b(clearly|definitely|certainly|absolutely|obviously|undoubtedly|unquestionably|proven|confirmed|verified|"
    r"correct|accurate)\b"
)
UNSURE_WORDS = re.compile(
    r"\b(maybe|perhaps|possibly|might|could|uncertain|unclear|unsure|ambiguous|potentially|arguably|questionable|"
    r"seems|appears|likely)\b"
)
PROBLEM_WORDS = re.compile(
    r"\b(incorrect|wrong|error|mistake|flaw|problem|issue|gap|missing|incomplete|inaccurate|inconsistent|contradicts)"
)
IMPORTANCE_RANK = {"high": 3, "medium": 2, "low": 1}
MARKERS = ("INSIGHT", "ISSUE", "MISSING", "SUGGESTION", "CONFIDENCE")


class Finding(BaseModel):
    kind: Literal["insight", "issue", "missing", "suggestion"]
    text: Commentary = Field(min_length=1, max_length=2000)
    importance: Literal["high", "medium", "low"]


class Reasoning(BaseModel):
    """One analysis of an answer: its findings in reply order and the confidence in the answer."""

    findings: list[Finding] = Field(default_factory=list, max_length=60)
    confidence: float = Field(ge=0, le=1)
    confidence_from: Literal["explicit", "heuristic"] = "heuristic"

    def texts(self, *kinds):
        return [f.text for f in self.findings if f.kind in kinds]

    @property
    def insights(self):
        return self.texts("insight")

    @property
    def issues(self):
        return self.texts("issue")

    @property
    def suggestions(self):
        # What is missing is a suggestion too (the seed's rule), listed first.
        return self.texts("missing") + self.texts("suggestion")

    def key_points(self):
        """Every finding with its importance, the most important first (reply order within a level)."""
        return sorted(self.findings, key=lambda f: -IMPORTANCE_RANK[f.importance])


def parse_reasoning(text):
    """A Reasoning from marked lines; ParseError if the reply has none of the markers.

    A marker may be in any case, after a bullet or number, in bold; lines after a marked line continue it
    until a blank line. A reply wrapped in JSON (a string, or an object of strings) is unwrapped first.
    """
    text = unwrap_json(text)
    items, current = [], None
    for line in text.splitlines():
        match = MARKER_LINE.match(line)
        if match:
            items.append([match[1].lower(), match[2].strip()])
            current = items[-1] if match[1].lower() != "confidence" else None
        elif current is not None and line.strip():
            current[1] = f"{current[1]} {line.strip()}"
        else:
            current = None  # a blank line (or prose before the first marker) belongs to no finding
    if not items:
        raise ParseError("no INSIGHT, ISSUE, MISSING, SUGGESTION or CONFIDENCE line in the reply")
    found = [(kind, _clip(body, 1990)) for kind, body in items if kind != "confidence" and body][:60]
    findings = [Finding(kind=kind, text=body, importance=importance(kind, body)) for kind, body in found]
    stated = explicit_confidence([body for kind, body in items if kind == "confidence"])
    if stated is not None:
        return Reasoning(findings=findings, confidence=stated, confidence_from="explicit")
    return Reasoning(findings=findings, confidence=heuristic_confidence(text, findings, items))


def unwrap_json(text):
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        return text
    return "\n".join(strings_in(value))


def strings_in(value):
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, dict):  # {"insight": ..., "confidence": 0.7}, as structured output asks: keys are markers
        return [line for key, item in value.items() for line in marked(key, item)]
    if isinstance(value, list):
        return [line for item in value for line in strings_in(item)]
    return []


def marked(key, value):
    lines = [str(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else strings_in(value)
    if str(key).upper() in MARKERS and lines:
        return [f"{str(key).upper()}: {lines[0]}", *lines[1:]]
    return lines


def explicit_confidence(bodies):
    """The first number on a CONFIDENCE line (a percentage is read as one); off the 0..1 scale is a broken reply."""
    for body in bodies:
        match = NUMBER.search(body)
        if match:
            value = float(match[1]) / (100 if match[2] else 1)
            if not 0 <= value <= 1:
                raise ParseError(f"CONFIDENCE {match[0].strip()} is off the scale from 0 to 1")
            return value
    return None


def heuristic_confidence(text, findings, items):
    """No stated confidence: 0.5, moved by insights against issues, sure against unsure words, and structure."""
    insights = sum(f.kind == "insight" for f in findings)
    issues = sum(f.kind == "issue" for f in findings)
    if insights and not issues:
        score = 0.7
    else:
        score = 0.5 + (0.1 if insights > issues else -0.1 if issues > insights else 0.0)
    low = text.lower()
    sure, unsure = len(SURE_WORDS.findall(low)), len(UNSURE_WORDS.findall(low))
    if sure > 2 * unsure:
        score += 0.15
    elif sure > unsure:
        score += 0.05
    elif unsure > 2 * sure:
        score -= 0.15
    elif unsure > sure:
        score -= 0.05
    # Two kinds of marker or more: an analysis with some structure.
    score += 0.05 if len({kind for kind, _ in items}) >= 2 else -0.05
    return round(min(1.0, max(0.0, score)), 3)


def importance(kind, text):
    """Issues and missing elements matter most, then suggestions that name a problem, then long insights."""
    if kind in ("issue", "missing") or (kind == "suggestion" and PROBLEM_WORDS.search(text.lower())):
        return "high"
    return "medium" if len(text) > 100 else "low"


# ---- contracts and params -----------------------------------------------------------------


class ImproveOut(BaseModel):
    answer: Recommendation = Field(min_length=1, max_length=20000)
    figures: Figures


class ReasoningWire(BaseModel):
    """The analysis as one object of marked fields: what a model bound to a JSON grammar is asked for instead of
    lines (unwrap_json turns it back into them)."""

    insight: str
    issue: str
    missing: str
    suggestion: str
    confidence: float = Field(ge=0, le=1)


REASON = Contract("trm.reason", Reasoning, max_tokens=700, parser=parse_reasoning, wire=ReasoningWire)
IMPROVE = Contract("trm.improve", ImproveOut, max_tokens=1500)


CONVERGENCE_WINDOW = 3  # the seed's rule: converged when the last three confidences lie within `convergence`


class TRMParams(StrictParams):
    max_steps: int = Field(5, ge=1, le=10, description="Most refinement iterations.")
    confidence_threshold: float = Field(
        0.9, ge=0.0, le=1.0, description="Stop once an iteration's confidence reaches this."
    )
    convergence: float = Field(
        0.02, ge=0.0, le=0.5, description="Stop when the last three confidences lie within this of each other."
    )


def stop_reason(confidences, params):
    """Why the refinement stops after answers with these confidences (oldest first), or None to go on."""
    if not confidences:
        return None
    if confidences[-1] >= params.confidence_threshold:
        return "confidence"
    last = confidences[-CONVERGENCE_WINDOW:]
    if len(last) == CONVERGENCE_WINDOW and max(last) - min(last) < params.convergence:
        return "converged"
    if len(confidences) >= params.max_steps:
        return "steps"
    return None


def next_latent(previous, reasoning):
    """The latent state after an iteration: the trace grows, insights are carried, issues open or resolve."""
    raised = {_norm(i) for i in reasoning.issues}
    resolved = [i for i in previous.get("open_issues", []) if _norm(i) not in raised]
    line = f"confidence {reasoning.confidence:.2f}; {len(reasoning.insights)} insights"
    if reasoning.issues:
        line += "; issues: " + "; ".join(_clip(i) for i in reasoning.issues[:3])
    return {
        "trace": [*previous.get("trace", []), line][-10:],
        "insights": list(dict.fromkeys([*previous.get("insights", []), *reasoning.insights]))[-12:],
        "open_issues": reasoning.issues,
        "resolved_issues": list(dict.fromkeys([*previous.get("resolved_issues", []), *resolved]))[-12:],
    }


def format_latent(latent):
    parts = [
        ("Insights kept", latent.get("insights")),
        ("Issues still open", latent.get("open_issues")),
        ("Issues resolved", latent.get("resolved_issues")),
    ]
    lines = [f"{title}:\n" + "\n".join(f"- {item}" for item in items) for title, items in parts if items]
    return "\n".join(lines) or "(empty: this is the first iteration)"


def _norm(text):
    return " ".join(re.findall(r"\w+", text.lower()))


def _clip(text, limit=120):
    """At most `limit` characters, cut at a word boundary."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


NO_ANSWER = "(none yet: this is the first iteration)"


# ---- the strategy ---------------------------------------------------------------------------


class RecursiveRefinement(Strategy):
    name = "trm"
    label = LABELS["trm"]
    scale = "confidence"
    legend = ("unscored", "confidence")
    Params = TRMParams
    contracts = (REASON, IMPROVE)
    REFINES_ITS_ANSWER = True  # a refused answer is rewritten with its findings at each try (base.Strategy)

    async def search(self):
        store = self.ctx.store
        while True:
            (remaining,) = await self.step_boundary(self.ctx.gateway.remaining_usd())
            if self.promoted:
                return
            tip = self._tip()
            if tip is None or tip.parse_error or self.exhausted or tip.state.get("stopped"):
                if self.model_failure and (tip is None or tip.depth == 0):
                    raise self.model_failure  # not one answer was written: the session fails saying why
                return
            if not self.affords(2, remaining, "refinement and the synthesis"):
                self.exhausted = True
                return
            if tip.depth and (tip.eval_score is None or tip.stale):  # an answer not judged yet (or edited above)
                await self.rescore(tip)
                continue
            why = stop_reason([n.eval_score or 0.0 for n in store.path(tip)[1:]], self.ctx.params)
            if why == "confidence" and tip.state.get("verified") is None:
                await self.verify(tip)  # one lucky judgement does not end the refinement
                continue
            if why:
                await store.update(tip, state={**tip.state, "stopped": why})
                return
            await self._iterate(tip)

    def _tip(self):
        """Where the chain goes on: the deepest live iteration (best-scored, then latest, at that depth)."""
        store = self.ctx.store
        live = [(n.depth, n.eval_score or 0.0, i, n) for i, n in enumerate(store.nodes()) if not store.is_pruned(n)]
        return max(live, key=lambda row: row[:3])[-1] if live else None

    async def _iterate(self, tip):
        """The next answer from the tip: its stored analysis (the root's is asked for first), then the improvement."""
        stored = tip.state.get("assessment")
        if stored:
            reasoning = Reasoning.model_validate(stored)
        else:  # the root: an analysis of the question, before any answer exists
            answer = await self.ask_about(REASON, self._render(REASON, tip), tip, "reasoning")
            if answer is None:
                return
            reasoning = answer.parsed
            await self.ctx.store.update(tip, state={**tip.state, "assessment": reasoning.model_dump()}, spent=answer)
        # The improvement is written from the analysis, so the two calls of an iteration are sequential by nature.
        await self._refine(tip, reasoning)

    async def _refine(self, node, reasoning, paid=None, alternative=""):
        """Ask for the improved answer and store it as the next iteration (judged at the next step); `paid`: an
        analysis not stored yet, whose cost goes with the new answer."""
        store = self.ctx.store
        prompt = self._render(
            IMPROVE, node, points=_points(reasoning), rejected=self._rejected(node), alternative=alternative or "none"
        )
        answer = await self.ask_about(IMPROVE, prompt, node, "improvement")
        if answer is None:
            if paid is not None:
                await store.update(node, spent=paid)  # the analysis was paid for, even if nothing came of it
            return None
        state = {"iteration": node.depth + 1, "latent": next_latent(node.state.get("latent", {}), reasoning)}
        if alternative:
            state["alternative"] = alternative
        item = {"thought": answer.parsed.answer, "state": state, "figures": answer.parsed.figures}
        [child] = await store.add_children(node, [item], answer)
        if paid is not None:
            await store.update(child, spent=paid)
        return store.get(child.id)

    async def judge(self, node, samples):
        """This answer's own analysis (its confidence is the answer's score), `samples` times asked: fields to store."""
        answer, failure = await self.ask(REASON, self._render(REASON, node), node, "reasoning", samples=samples)
        if answer is None:
            return failure
        reasoning = answer.parsed
        confidence = round(sum(r.confidence for r in answer.samples) / len(answer.samples), 4)
        state = {
            **node.state,
            "assessment": reasoning.model_dump(),
            "insights": [f.model_dump() for f in reasoning.key_points()],
            "issues": reasoning.issues,
            "suggestions": reasoning.suggestions,
            "confidence": confidence,
            "confidence_from": reasoning.confidence_from,
        }
        reason = _reason(reasoning, confidence, len(answer.samples))
        fields = {"eval_score": confidence, "eval_reason": reason, "stale": False, "parse_error": "", "state": state}
        return fields | {"spent": answer}

    def _rejected(self, node):
        """Answers an overseer pruned right here: the next one should not repeat them."""
        pruned = [c.thought for c in self.ctx.store.children(node) if c.pruned]
        return "\n".join(f"- {_clip(t, 400)}" for t in pruned[-3:]) or "(none)"

    async def expand(self, node, k):
        made = await settle_all(*(self._alternative(node, number, k) for number in range(1, k + 1)))
        children = [child for child in made if child is not None]
        await settle_all(*(self.rescore(child) for child in children))  # each alternative judged on its own
        return children

    async def _alternative(self, node, number, k):
        focus = (
            f"Alternative {number} of {k}: judge the answer from a different angle than the obvious one, "
            "so that this refinement differs from the others."
        )
        answer = await self.ask_about(REASON, self._render(REASON, node, focus=focus), node, "reasoning")
        if answer is None:
            return None
        # The improvement is written from this analysis: sequential by nature, alternatives run side by side.
        return await self._refine(node, answer.parsed, paid=answer, alternative=focus)

    async def rescore(self, node):
        """Judge a node's own answer (again: it, or an answer above it, was edited); the root holds no answer."""
        if node.depth == 0:
            await self.ctx.store.update(node, stale=False)
            return
        fresh = self.ctx.store.get(node.id)
        fields = await self.judge(fresh, 1)
        if fresh.eval_score is not None and "eval_reason" in fields:
            fields["eval_reason"] = f"reassessed: {fields['eval_reason']}"
        if fields:
            await self.ctx.store.update(node, **fields)

    async def synthesize(self, path):
        """The best iteration's answer is the final answer as it stands: no model call, no cost. Written again after
        the checker refused it, the refused answer is improved once more with its findings as the points to fix."""
        node = path[-1]
        if not self.findings_note:
            return Answer(parsed=ImproveOut(answer=node.thought), model="", cost_usd=0.0, latency_ms=0)
        prompt = self._render(
            IMPROVE, node, points=self.findings_note, rejected=self._rejected(node), alternative="none",
            answer=self.refused_answer or node.thought,
        )
        return await self.ctx.gateway.ask(IMPROVE, prompt, node_id=node.id)

    def final_candidates(self):
        store = self.ctx.store
        return [n for n in store.nodes() if n.depth > 0 and n.eval_score is not None and not store.is_pruned(n)]

    @classmethod
    def best_node(cls, store):
        """The highest-confidence live iteration (on a tie, the later one); with none judged, the latest answer."""
        candidates = {n.id for n in answer_candidates(store)}  # in a fork, never an answer above its node
        live = [(i, n) for i, n in enumerate(store.nodes()) if n.id in candidates]
        scored = [(n.eval_score, n.depth, i, n) for i, n in live if n.eval_score is not None]
        if scored:
            return max(scored, key=lambda row: row[:3])[-1]
        return max(live, key=lambda row: (row[1].depth, row[0]))[1] if live else None

    @classmethod
    def expected_nodes(cls, params):
        return params.max_steps + 1  # at most: the loop may stop earlier

    def _render(self, contract, node, **fields):
        latent = node.state.get("latent", {})
        return render(
            contract,
            **self.case_fields(
                iteration=node.depth + 1,
                max_steps=max(self.ctx.params.max_steps, node.depth + 1),
                trace=format_path(latent.get("trace", [])),
                latent=format_latent(latent),
                answer=fields.pop("answer", node.thought if node.depth else NO_ANSWER),
                focus=fields.pop("focus", "none: the main line of refinement"),
                **fields,
            ),
        )


def _points(reasoning):
    lines = [f"- [{f.importance}] {f.kind}: {f.text}" for f in reasoning.key_points()]
    return "\n".join(lines) or "(no findings: improve the answer on its merits)"


def _reason(reasoning, confidence, samples=1):
    source = "stated by the model" if reasoning.confidence_from == "explicit" else "estimated from the findings"
    if samples > 1:
        source += f", the mean of {samples} analyses"
    found = (
        f"{len(reasoning.insights)} insights, {len(reasoning.issues)} issues, {len(reasoning.suggestions)} suggestions"
    )
    return f"confidence {confidence:.2f} ({source}); {found}"
