/* The inspector: the selected node's thought, flags, actions, its fact checks (failed spans marked in the thought),
 * and what its strategy says about it (facts such as visits or confidence, critiques, the action and observation,
 * findings), all written as text.
 */
import d3 from "./d3-from-npm.js";
import { $, clock, setText, show, state, usd } from "./util.js";
import { byOverseer, model, on, prunedText, pruneSource, selectedNode } from "./model.js";
import { currentStrategy, fillOf, otherState } from "./strategies.js";
import { request } from "./http.js";
import { renderCheckList, renderMarkedText } from "./checks.js";

export function renderInspector() {
  const n = selectedNode();
  show("inspector-empty", !n);
  show("inspector-body", !!n);
  if (!n) return;
  const look = state.look && state.look.strategy === currentStrategy() ? state.look : { strategy: currentStrategy(), ctx: {} };
  const s = look.strategy;
  setText("insp-depth", `depth ${n.depth}`);
  const score = s.scoreText(n, look.ctx);
  show("insp-score", !!score);
  setText("insp-score", score);
  $("insp-score").style.setProperty("--score-color", fillOf(look, n));
  renderFlags(n);
  show("insp-terminal", !!n.is_terminal);
  show("insp-offline", !!n.offline);
  renderNodeActions(n);
  renderFacts("insp-mode-facts", s.facts(n, look.ctx));
  const checks = Array.isArray(n.checks) ? n.checks : [];
  // Findings carry the text they were found in: the thought's none, a state text's its key ("state.summary").
  const facts = (model.session && model.session.facts) || [];
  renderMarkedText($("inspector-thought"), n.thought, checks.filter((c) => !c.field), n.figures || [], facts);
  show("insp-checks", renderCheckList($("insp-checks"), checks, $("inspector-thought")) > 0);
  show("insp-original-block", n.original_thought != null);
  setText("insp-original", n.original_thought);
  setText("insp-edited-at", n.edited_at ? `· edited at ${clock(n.edited_at)}` : "");
  renderEdge(n);
  renderSections($("insp-sections"), s.sections(n, look.ctx));
  show("insp-reason-block", !!n.eval_reason);
  setText("insp-reason", n.eval_reason);
  show("insp-parse-block", !!n.parse_error);
  setText("insp-parse-error", n.parse_error);
  const other = otherState(s, n);
  show("insp-state-block", other.length > 0);
  // The state's texts are checked as the thought is: their failed spans are marked where they are shown.
  renderPairs(d3.select("#insp-state"), other,
    (dd, r) => renderMarkedText(dd, r[1], checks.filter((c) => c.field === `state.${r[0]}`)));
  renderActions(n);
  setText("insp-model", modelText(n));
  setText("insp-cost", usd(n.cost_usd));
  setText("insp-latency", `${n.latency_ms || 0} ms`);
  setText("insp-id", n.id);
  if ($("insp-calls").open) loadCalls(n);
};

// What people did to this node, oldest first, from the same audit rows as the trail below the tree.
function renderActions(n) {
  const mine = Array.from(model.actions.values()).filter((a) => a.node_id === n.id);
  show("insp-actions-block", mine.length > 0);
  d3.select("#insp-actions").selectAll("li").data(mine, (a) => a.id).join("li")
    .text((a) => `${clock(a.created_at)} · ${a.actor} · ${a.action}${a.state === "applied" ? "" : ` (${a.state})`}`
      + (a.detail ? `: ${a.detail}` : ""));
}

function modelText(n) {
  const s = model.session || {};
  if (!n.model_used) return n.depth === 0 ? "— (the problem)" : "—";
  if (n.model_used === s.model_primary) return n.model_used;
  return `${n.model_used} (${n.model_used === s.model_fallback ? "fallback" : "not the primary"})`;
}

/* The node's ledger rows, fetched when "Prompt and reply" is opened: each attempt with its prompt as sent and
 * the raw reply, written as text. Fetched again when the node's cost moves (a new call was recorded on it). */
let shownCalls = "";
async function loadCalls(n) {
  const key = `${n.id}:${n.cost_usd}:${n.parse_error || ""}`;
  if (key === shownCalls) return;
  shownCalls = key;
  setText("insp-calls-status", "Loading the ledger…");
  const sid = encodeURIComponent(model.session.id);
  const reply = await request("GET", `sessions/${sid}/calls?node_id=${encodeURIComponent(n.id)}&limit=100`);
  if (shownCalls !== key) return; // another node was selected meanwhile
  if (!reply.ok) {
    shownCalls = "";
    setText("insp-calls-status", reply.message);
    return;
  }
  const calls = reply.data.items;
  setText("insp-calls-status", calls.length ? callsSummary(calls, reply.data.count) : "No model call was made about this node.");
  renderCalls(calls);
}

function callsSummary(calls, count) {
  const tokensIn = calls.reduce((t, c) => t + c.tokens_in, 0), tokensOut = calls.reduce((t, c) => t + c.tokens_out, 0);
  const more = count > calls.length ? ` (the first ${calls.length} of ${count})` : "";
  return `${count} call${count === 1 ? "" : "s"}${more} · ${tokensIn} tokens in, ${tokensOut} out`;
}

function renderCalls(calls) {
  const call = d3.select("#insp-calls-list").selectAll(".insp-call").data(calls, (c) => c.id)
    .join((enter) => {
      const div = enter.append("div").attr("class", "insp-call");
      div.append("p").attr("class", "insp-call-head");
      div.append("p").attr("class", "insp-call-error parse-error-text");
      div.append("h4").text("Prompt");
      div.append("pre").attr("class", "insp-call-prompt");
      div.append("h4").text("Reply");
      div.append("pre").attr("class", "insp-call-reply");
      return div;
    });
  call.select(".insp-call-head").text(callHead);
  call.select(".insp-call-error").text((c) => c.error || "").attr("hidden", (c) => (c.error ? null : ""));
  call.select(".insp-call-prompt").text((c) => c.prompt);
  call.select(".insp-call-reply").text((c) => c.reply || "(no reply)");
}

function callHead(c) {
  const parsed = c.parse_ok === false ? "reply broke the contract" : c.parse_ok ? "parsed" : "";
  const used = c.model_used || c.model_requested;
  return [c.purpose, `attempt ${c.attempt}`, used, c.outcome, parsed, `${c.tokens_in}→${c.tokens_out} tokens`,
    usd(c.cost_usd), `${c.latency_ms} ms`].filter(Boolean).join(" · ");
}

document.addEventListener("toggle", (event) => {
  if (event.target.id === "insp-calls" && event.target.open && selectedNode()) loadCalls(selectedNode());
}, true);

function renderFlags(n) {
  const pruned = prunedText(n);
  show("insp-pruned", !!pruned);
  setText("insp-pruned", pruned);
  $("insp-pruned").classList.toggle("by-overseer", byOverseer(pruneSource(n)));
  show("insp-stale", !!n.stale);
  setText("insp-stale", n.stale ? `stale: ${n.stale_reason || "an earlier step was edited"}` : "");
}

export function renderNodeActions(n) {
  show("node-actions", state.canAct);
  const inner = n.depth > 0; // the root is the problem: it is expanded or forked, never pruned, edited or promoted
  show("prune-button", inner);
  setText("prune-button", n.pruned ? "Unprune branch" : "Prune branch");
  $("prune-button").title = n.pruned
    ? "Put this node and everything under it back into the search (p)"
    : "Take this node and everything under it out of the search (p)";
  show("edit-button", inner);
  show("promote-button", inner);
};

// The step that led here (ReAct): its action, and what the tool returned (JSON laid out to be read).
function renderEdge(n) {
  const edge = model.edgesByTarget.get(n.id);
  const answer = n.state && n.state.answer;
  const observation = edge && edge.observation && edge.observation !== answer ? readable(edge.observation) : "";
  show("insp-edge-block", !!(edge && (edge.action || edge.observation)));
  setText("insp-edge-action", edge ? edge.action : "");
  show("insp-observation-block", !!observation);
  setText("insp-edge-observation", observation);
}

function readable(text) {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object") return JSON.stringify(value, null, 2);
  } catch (e) { /* plain text */ }
  return String(text);
}

function renderFacts(id, rows) {
  show(id, rows.length > 0);
  renderPairs(d3.select("#" + id), rows);
}

// [[term, text]] as <div><dt/><dd/></div> rows of a <dl>, keyed by term; `fill(dd, row)` writes a row's text itself.
function renderPairs(dl, rows, fill = null) {
  const row = dl.selectAll(":scope > div").data(rows, (r) => r[0]);
  row.exit().remove();
  const enter = row.enter().append("div");
  enter.append("dt");
  enter.append("dd");
  const all = enter.merge(row).order();
  all.select("dt").text((r) => r[0]);
  if (fill) all.select("dd").each(function (r) { fill(this, r); });
  else all.select("dd").text((r) => r[1]);
}

/* The strategy's blocks, keyed so an open <details> stays open while events arrive. A section is {key, title,
 * className?, collapsed?, note?, and one of text | lines [{text, chip}] | kv [[k, v]] | groups [{title, lines}]}. */
function renderSections(container, sections) {
  const section = d3.select(container).selectAll(":scope > .insp-section").data(sections, (s) => s.key);
  section.exit().remove();
  const enter = section.enter().append((s) => document.createElement(s.collapsed ? "details" : "section"));
  enter.append((s) => document.createElement(s.collapsed ? "summary" : "h3")).attr("class", "insp-section-title");
  enter.append("div").attr("class", "insp-section-body");
  const all = enter.merge(section).order()
    .attr("class", (s) => `insp-section ${s.className || ""}`.trim())
    .attr("data-section", (s) => s.key);
  all.select(".insp-section-title").text((s) => s.title);
  all.select(".insp-section-body").each(function (s) { fillBody(d3.select(this), s); });
}

function fillBody(body, s) {
  body.selectAll("*").remove();
  if (s.note) body.append("p").attr("class", "insp-note").text(s.note);
  if (s.text != null) body.append("div").attr("class", "insp-text").text(s.text);
  if (s.lines) appendLines(body, s.lines);
  if (s.kv) renderPairs(body.append("dl").attr("class", "kv"), s.kv);
  for (const group of s.groups || []) {
    body.append("h4").text(group.title);
    appendLines(body, group.lines);
  }
}

function appendLines(body, lines) {
  const item = body.append("ul").attr("class", "findings").selectAll("li").data(lines).join("li");
  item.filter((l) => l.chip).append("span")
    .attr("class", (l) => `chip chip-${l.chip.replace(/[^a-z]/gi, "")}`)
    .text((l) => l.chip);
  item.append("span").attr("class", "finding-text").text((l) => l.text);
}

on("actions", (action) => {
  if (action && action.node_id && action.node_id === state.selectedId) renderInspector();
});
on("selected", renderInspector);
on("drawn", renderInspector);
on("view-only", renderInspector);
