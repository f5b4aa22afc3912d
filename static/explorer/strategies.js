/* How each strategy's tree looks and what its inspector shows, by mode (the session's `mode`).
 *
 * The modes themselves, their labels, what their colours measure and their legend's entries come from the server's
 * registry (reasoning/strategies, embedded as #strategies-data): a strategy added there is drawn here at once.
 * Every strategy writes the same rows (nodes, edges, critiques); what differs is which numbers matter and
 * what the node's state holds. A look here is a set of small functions over one node row; what it does
 * not define comes from `base` (Tree of Thoughts, and any mode without a look of its own, looks like the base):
 *   nodeSize [dx, dy]     layout spacing          prepare(rows) -> ctx, computed once per tree update
 *   ctxKey(ctx)           what of ctx a node's look depends on, as a string (nodes are restyled when it changes)
 *   labelBelow            chains: the label under the node, clear of the link (labelWidth: room kept right of it)
 *   radius(n, ctx)        node size               value(n, ctx)  the number that colours it (null: unscored)
 *   hollow(n)             drawn as a ring         label(n, ctx), tag(n)  text beside / above the node
 *   noted(n)              a critique is on it     edgeLabel(edge)  text on the link into a node
 *   scoreText(n, ctx)     the score badge ("" hides it)          fill(n)  optional: a colour of its own
 *   facts(n, ctx)         [[term, value]]         sections(n, ctx)  the inspector's blocks (see inspector.js)
 *   known                 state keys it renders itself; the rest show as a small key/value list
 * and from the registry: title (the mode's label), scaleLabel (what the colour legend measures; null hides it) and
 * legend (its entries).
 */
import d3 from "./d3-from-npm.js";
import { firstLine, fixed, NODE_RADIUS, plain, truncate, UNSCORED } from "./util.js";
import { critiquesOn, model, sessionMode } from "./model.js";

const R = NODE_RADIUS;
const LABEL_CHARS = 64; // of the thought, after the score; the tree cuts it again to the room it has (tree.js)
const color = d3.scaleSequential(d3.interpolateRdYlGn).domain([0, 1]);
const clamp01 = (v) => Math.max(0, Math.min(1, v));
const num = (v) => (typeof v === "number" && isFinite(v) ? v : null);
const state = (n) => (n && n.state && typeof n.state === "object" && !Array.isArray(n.state) ? n.state : {});
const withScore = (score, text, chars = LABEL_CHARS) =>
  (score == null ? "" : score.toFixed(2) + "  ") + truncate(firstLine(text), chars);
const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

export const scoreColor = (v) => (v == null ? UNSCORED : color(clamp01(v)));

const base = {
  nodeSize: [26, 200],
  labelBelow: false,
  labelWidth: 180,
  scaleLabel: "score",
  known: [],
  prepare: () => ({}),
  ctxKey: () => "", // what of prepare()'s result a node's look depends on, as a string: nodes restyle when it changes
  radius: () => R,
  value: (n) => num(n.eval_score),
  hollow: () => false,
  label(n, ctx) { return withScore(this.value(n, ctx), n.thought); },
  tag: () => "",
  noted: (n) => critiquesOn(n.id).length > 0,
  edgeLabel: () => "",
  scoreText(n) {
    if (n.parse_error) return "parse error";
    return n.eval_score == null ? "not scored" : `score ${n.eval_score.toFixed(2)}` + reusedNote(n);
  },
  facts: (n) => searchFacts(n),
  sections(n) { return critiquesOn(n.id).map((c) => critiqueSection(c, "Critique", "")); },
};

// What the search itself says of a node whatever the strategy: merged duplicates, a verification, and the state its
// judgement was of (a judgement of an equal state reused: no model call, nothing in the ledger; `remembered`: one an
// earlier session of the firm made, reasoning/memory.py).
const SEARCH_KEYS = ["proposed", "verified", "judged", "consistency", "state_key", "reused", "remembered", "revalued"];

const reusedNote = (n) => (state(n).reused ? " · reused" : "");

function searchFacts(n) {
  const s = state(n);
  const rows = [];
  const earlier = s.remembered && typeof s.remembered === "object" ? String(s.remembered.session || "") : "";
  if (s.state_key && earlier) {
    rows.push(["Judgement", `taken from session ${earlier.slice(0, 8)}, which judged the same state ` +
      `(${s.state_key}) on the same models and rubric: no model call, nothing in the ledger`]);
  } else if (s.state_key && s.reused) {
    rows.push(["Judgement", `reused from node ${String(s.reused).slice(0, 8)}, which reached the same state ` +
      `(${s.state_key}): no model call, nothing in the ledger`]);
  } else if (s.state_key) {
    rows.push(["Judged on", `its state alone (${s.state_key}); a node reaching it again takes this judgement`]);
  }
  if (s.proposed > 1) rows.push(["Proposed", `${s.proposed} times in one reply (merged into this node)`]);
  if (s.verified === 0) rows.push(["Verified", "no: the verification itself failed"]);
  else if (s.verified > 0) rows.push(["Verified", `judged ${plural(s.verified, "time")} before it counted`]);
  return rows;
}

function critiqueSection(c, title, note) {
  return { key: "critique-" + c.id, className: "critique", title, text: c.critique, note };
}

function list(key, title, items, note) {
  const lines = (Array.isArray(items) ? items : []).map(finding).filter((l) => l.text);
  return lines.length ? { key, title, lines, note } : null;
}

// A finding is a string or {text, importance, kind}.
function finding(item) {
  const full = item && typeof item === "object";
  return { text: plain(full ? item.text : item), chip: full && item.importance ? String(item.importance) : "" };
}

// ---- LATS: Monte Carlo tree search -----------------------------------------------------------

const MADE_BY = { expand: "expansion", rollout: "rollout (simulated: outside the tree, never selected)",
  hand: "expansion by hand" };
const DECIDED_BY = { checker: "the task's checker", judgement: "the model's own judgement of it" };
const meanReward = (n) => (n.visit_count > 0 ? n.total_reward / n.visit_count : null);
const signed = (v) => (v < 0 ? "−" + (-v).toFixed(2) : v.toFixed(2));

// A node's score is its value estimate (the evaluator's, mixed with self-consistency): what selection ranks an
// unvisited node by. The rewards backpropagated through it and its visits are shown beside it, never in its place.
const lats = {
  nodeSize: [34, 200],
  known: ["kind", "iteration", "rollout", "success", "decided_by"],
  prepare(rows) {
    let most = 1;
    for (const n of rows) if (n.visit_count > most) most = n.visit_count;
    return { most, size: d3.scaleSqrt().domain([0, most]).range([4, 13]).clamp(true) };
  },
  ctxKey: (ctx) => String(ctx.most),
  radius(n, ctx) {
    const r = ctx.size ? ctx.size(n.visit_count || 0) : R;
    return state(n).rollout ? Math.max(3.5, r * 0.75) : r;
  },
  value: (n) => num(n.eval_score),
  hollow: (n) => !!state(n).rollout,
  label(n) {
    const v = this.value(n), mean = meanReward(n);
    const visits = mean == null ? "" : ` r${signed(mean)} ×${n.visit_count}`;
    return (v == null ? "" : v.toFixed(2) + visits + "  ") + truncate(firstLine(n.thought), LABEL_CHARS);
  },
  tag(n) {
    const s = state(n);
    if (!n.is_terminal || s.success == null) return "";
    return s.success ? "success" : "failed";
  },
  scoreText(n) {
    if (n.parse_error) return "parse error";
    const v = num(n.eval_score), mean = meanReward(n);
    if (v == null) return "not valued";
    const visited = mean == null ? "not visited" : `reward ${signed(mean)} over ${plural(n.visit_count, "visit")}`;
    return `value ${v.toFixed(2)} · ${visited}` + reusedNote(n);
  },
  facts(n) {
    const s = state(n);
    const mean = meanReward(n);
    const rows = [];
    if (n.eval_score != null) rows.push(["Value", `${n.eval_score.toFixed(3)} (the estimate selection ranks it by)`]);
    if (num(s.judged) != null && num(s.consistency) != null) {
      rows.push(["Of which", `judged ${fixed(s.judged, 3)}, self-consistency ${fixed(s.consistency, 3)}`]);
    }
    rows.push(["Reward", mean == null ? "— (not visited)"
      : `${signed(mean)} a visit (${fixed(n.total_reward, 3)} over ${plural(n.visit_count, "visit")})`]);
    rows.push(["Visits", String(n.visit_count || 0)]);
    if (n.is_terminal && s.success != null) {
      rows.push(["Success", `${s.success ? "yes" : "no"}, decided by ${DECIDED_BY[s.decided_by] || "its judgement"}`]);
    }
    if (s.iteration != null) rows.push(["Iteration", String(s.iteration)]);
    if (s.kind) rows.push(["Made by", MADE_BY[s.kind] || String(s.kind)]);
    return rows.concat(searchFacts(n));
  },
  sections(n) {
    return critiquesOn(n.id).map((c) => critiqueSection(c,
      `Reflection · iteration ${c.attempt_num}, valued ${fixed(c.outcome_score, 2)}`,
      c.applied_to_next ? "read by the expansions after it" : "not read by an expansion yet"));
  },
};

// ---- Reflexion: whole attempts, a critique of each that falls short -------------------------

const inChain = (n) => state(n).attempt != null && !state(n).alternative;

const reflexion = {
  nodeSize: [50, 210],
  labelBelow: true,
  known: ["attempt", "step", "of", "alternative", "failed"],
  // Each attempt is scored as a whole, on its last step: its other steps take that colour.
  prepare(rows) {
    const scores = new Map();
    for (const n of rows) if (inChain(n) && n.eval_score != null) scores.set(state(n).attempt, n.eval_score);
    return { scores };
  },
  ctxKey: (ctx) => Array.from(ctx.scores || [], ([attempt, score]) => `${attempt}=${score}`).join(","), // no tree yet: {}
  value(n, ctx) {
    if (n.eval_score != null) return n.eval_score;
    return inChain(n) && ctx && ctx.scores ? num(ctx.scores.get(state(n).attempt)) : null;
  },
  label: (n) => withScore(num(n.eval_score), n.thought, 30),
  tag(n) {
    const s = state(n);
    if (s.alternative) return "alternative";
    if (s.attempt == null && s.copied && n.depth === 1) return "attempt 1 (forked)"; // a path forked from another mode
    if (s.attempt == null || s.step !== 1) return "";
    return `attempt ${s.attempt}` + (s.failed ? " (failed)" : "");
  },
  scoreText(n, ctx) {
    if (n.parse_error) return "parse error";
    if (n.eval_score != null) return `${inChain(n) ? "attempt" : "line"} score ${n.eval_score.toFixed(2)}`;
    const whole = this.value(n, ctx);
    if (whole != null) return `attempt scored ${whole.toFixed(2)} as a whole`;
    return n.depth ? "not scored yet" : "the problem";
  },
  facts(n, ctx) {
    const s = state(n);
    if (s.attempt == null) return searchFacts(n);
    const rows = [["Attempt", String(s.attempt) + (s.alternative ? " (an alternative step)" : "")]];
    if (s.step != null) rows.push(["Step", s.of ? `${s.step} of ${s.of}` : String(s.step)]);
    const whole = this.value(n, ctx);
    if (inChain(n) && whole != null) rows.push(["Attempt score", whole.toFixed(3)]);
    return rows.concat(searchFacts(n));
  },
  // The critique of the attempt this node belongs to (written on its last step).
  sections(n) {
    const s = state(n);
    const mine = (c) => c.node_id === n.id || (inChain(n) && c.attempt_num === s.attempt);
    return Array.from(model.critiques.values()).filter(mine).map((c) => critiqueSection(c,
      `Critique of attempt ${c.attempt_num} · scored ${fixed(c.outcome_score, 2)}`,
      c.applied_to_next ? `applied to attempt ${c.attempt_num + 1}` : "not applied yet: no attempt after it"));
  },
};

// ---- ReAct: thought, action, observation --------------------------------------------------

const STEP_COLOR = "#6f8fbf";
const ANSWER_COLOR = "#1a7f4b";

const react = {
  nodeSize: [50, 250],
  labelBelow: true,
  labelWidth: 200,
  known: ["step", "tool", "args", "answer"],
  value: () => null,
  label: (n) => truncate(firstLine(n.thought), 34),
  tag: (n) => (state(n).answer ? "answer" : ""),
  edgeLabel: (edge) => actionLabel(edge.action),
  scoreText: (n) => (n.parse_error ? "parse error" : ""),
  facts(n) {
    const s = state(n);
    const rows = [];
    if (s.step != null) rows.push(["Step", String(s.step)]);
    if (s.tool) rows.push(["Tool", String(s.tool)]);
    return rows;
  },
  sections(n) {
    const s = state(n);
    const out = [];
    if (s.answer) out.push({ key: "answer", className: "answer", title: "Final answer", text: plain(s.answer) });
    const args = s.args && typeof s.args === "object" ? Object.entries(s.args) : [];
    const shown = args.filter(([k]) => !(s.answer && k === "answer")); // the answer is above
    if (shown.length) out.push({ key: "args", title: "Arguments", kv: shown.map(([k, v]) => [k, plain(v)]) });
    return out.concat(base.sections(n));
  },
};
react.fill = (n) => (state(n).answer || n.is_terminal ? ANSWER_COLOR : n.depth ? STEP_COLOR : UNSCORED);

// `tool({"arg":"value"})` as `tool(value…)`: short enough for a link, still naming the tool.
function actionLabel(action) {
  const text = String(action || "");
  const match = /^([\w.-]+)\((.*)\)$/s.exec(text);
  if (!match) return truncate(text, 34);
  let args = match[2];
  try {
    const parsed = JSON.parse(args);
    if (parsed && typeof parsed === "object") args = Object.values(parsed).map(plain).join(", ");
  } catch (e) { /* not JSON: as written */ }
  return truncate(`${match[1]}(${args.replace(/\s+/g, " ")}`, 33) + ")";
}

// ---- TRM: recursive refinement --------------------------------------------------------------

const STOPPED = {
  confidence: "confidence reached the threshold",
  converged: "converged: the last three confidences lie within the convergence margin",
  steps: "the step limit",
};

const trm = {
  nodeSize: [50, 230],
  labelBelow: true,
  labelWidth: 200,
  known: ["iteration", "insights", "issues", "suggestions", "confidence", "confidence_from", "stopped", "latent",
    "assessment", "alternative"],
  value: (n) => num(state(n).confidence) ?? num(n.eval_score),
  label(n) {
    const c = this.value(n);
    return (c == null ? "" : `conf ${c.toFixed(2)}  `) + truncate(firstLine(n.thought), 26);
  },
  tag(n) {
    const s = state(n);
    if (s.iteration == null) return "";
    return `iteration ${s.iteration}` + (s.alternative ? " (alternative)" : "") + (s.stopped ? " · stopped" : "");
  },
  scoreText(n) {
    if (n.parse_error) return "parse error";
    const c = this.value(n);
    return c == null ? (n.depth ? "not assessed" : "the problem") : `confidence ${c.toFixed(2)}`;
  },
  facts(n) {
    const s = state(n);
    const rows = [];
    if (s.iteration != null) rows.push(["Iteration", String(s.iteration)]);
    const c = this.value(n);
    if (c != null) {
      const from = { explicit: "stated by the model", heuristic: "estimated from the findings" }[s.confidence_from];
      rows.push(["Confidence", c.toFixed(2) + (from ? ` (${from})` : "")]);
    }
    if (s.stopped) rows.push(["Stopped", STOPPED[s.stopped] || plain(s.stopped)]);
    return rows.concat(searchFacts(n));
  },
  sections(n) {
    const s = state(n);
    const out = [];
    if (s.alternative) out.push({ key: "alternative", title: "Alternative focus", text: plain(s.alternative) });
    // The findings of this answer's own analysis (its confidence is this answer's score); the next answer fixes them.
    // `insights` holds every key point with its kind; issues and suggestions have lists of their own.
    const insights = (Array.isArray(s.insights) ? s.insights : []).filter((i) => !i || !i.kind || i.kind === "insight");
    const lists = [list("insights", "Insights", insights), list("issues", "Issues", s.issues),
      list("suggestions", "Suggestions", s.suggestions)].filter(Boolean);
    if (lists.length) lists[0].note = "From the analysis of this answer; the next iteration addresses them.";
    out.push(...lists);
    const a = s.assessment;
    if (a && typeof a === "object") {
      const found = Array.isArray(a.findings) ? a.findings : [];
      const count = (kind) => found.filter((f) => f && f.kind === kind).length;
      out.push({
        key: "assessment", title: n.depth ? "Analysis of this answer" : "First analysis (before any answer)",
        text: [`confidence ${fixed(a.confidence, 2)}`, plural(count("insight"), "insight"),
          plural(count("issue"), "issue"), plural(count("missing") + count("suggestion"), "suggestion")].join(" · ") +
          "; the next iteration is written from it.",
      });
    }
    const latent = s.latent && typeof s.latent === "object" ? s.latent : null;
    if (latent) {
      const kept = [["Trace", latent.trace], ["Insights kept", latent.insights],
        ["Issues still open", latent.open_issues], ["Issues resolved", latent.resolved_issues]]
        .filter(([, items]) => Array.isArray(items) && items.length);
      if (kept.length) {
        out.push({ key: "latent", title: "Carried forward (latent state)", collapsed: true,
          groups: kept.map(([title, items]) => ({ title, lines: items.map(finding) })) });
      }
    }
    return out.concat(base.sections(n));
  },
};

// ---- the registry ------------------------------------------------------------------------------

const LOOKS = { lats, reflexion, react, trm }; // the modes drawn their own way

function registry() {
  const data = document.getElementById("strategies-data");
  return data ? JSON.parse(data.textContent) : [];
}

const make = (entry) => Object.assign(Object.create(base), { known: [] }, LOOKS[entry.mode] || {},
  { mode: entry.mode, title: entry.label, scaleLabel: entry.scale, legend: entry.legend || [] });
const STRATEGIES = Object.fromEntries(registry().map((entry) => [entry.mode, make(entry)]));

// The session's strategy. A mode the registry does not hold (a session of a strategy since removed) is drawn as the
// base under its own name, said once in the console: never passed off as another strategy.
export function currentStrategy() {
  const mode = sessionMode();
  if (!STRATEGIES[mode]) {
    console.warn(`strategies: mode "${mode}" is not in the registry; drawn with the base look`);
    STRATEGIES[mode] = make({ mode, label: mode, scale: "score", legend: ["unscored"] });
  }
  return STRATEGIES[mode];
}

export const modeLabel = (mode) => (STRATEGIES[mode] ? STRATEGIES[mode].title : mode);

export const fillOf = (look, n) =>
  (look.strategy.fill ? look.strategy.fill(n) : scoreColor(look.strategy.value(n, look.ctx)));

// The state keys a strategy does not render itself, as [key, text] (the root's problem kind is in the header).
export function otherState(strategy, n) {
  const known = new Set(["problem_kind", ...SEARCH_KEYS, ...strategy.known]);
  return Object.entries(state(n))
    .filter(([k, v]) => !known.has(k) && v != null && v !== "")
    .map(([k, v]) => [k, plain(v)]);
};

