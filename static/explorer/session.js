/* The session header (status, mode, budget, offline), the final answer, lineage (forks), the status line. */
import d3 from "./d3-from-npm.js";
import { $, sessionUrl, setText, shortId, show, state, usd } from "./util.js";
import { isFinished, model, on } from "./model.js";
import { renderProgress } from "./progress.js";
import { renderTabs } from "./sidetabs.js";
import { modeLabel } from "./strategies.js";

export function renderSession() {
  const s = model.session;
  if (!s) return;
  const pill = $("session-status");
  pill.textContent = s.status;
  pill.className = "pill status-" + s.status;
  setText("session-mode", modeLabel(s.mode));
  setText("session-mode-reason", s.mode_reason);
  $("session-mode-reason").title = s.mode_reason || "";
  const used = Number(s.budget_used_usd || 0), budget = Number(s.budget_usd || 0);
  const pct = budget > 0 ? Math.max(0, Math.min(100, (100 * used) / budget)) : 0;
  $("budget-fill").style.width = pct.toFixed(1) + "%";
  $("budget-bar").setAttribute("aria-valuenow", pct.toFixed(0));
  $("budget-bar").classList.toggle("high", pct >= 85);
  setText("budget-text", `${usd(used)} of ${usd(budget)}`);
  show("session-offline", !!(s.offline || s.partly_offline));
  setText("session-offline", s.fallback_wrote_all ? "offline (the fallback wrote every node)" : s.partly_offline ? "partly offline" : "offline");
  show("session-unmetered", !!s.unmetered);
  renderModels(s);
  renderAnswer(s);
  renderLineage(s);
  show("session-error", !!s.error);
  setText("session-error", s.error);
  renderSessionActions(s);
  renderProgress();
  // The answer's checks and steps, the connection, the fact sheet and the review listen for "session" themselves.
};

/* Which models wrote the nodes, from the nodes themselves (a session on a real model whose fallback is the
 * simulator says how many came from each), and a model counted at the default price because nobody priced it. */
function renderModels(s) {
  const counts = new Map();
  let written = 0;
  for (const n of model.nodes.values()) {
    if (!n.model_used) continue;
    counts.set(n.model_used, (counts.get(n.model_used) || 0) + 1);
    written += 1;
  }
  const role = (m) => (m === s.model_primary ? "" : m === s.model_fallback ? " (fallback)" : "");
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([m, c]) => `${m}${role(m)}: ${c} of ${written} nodes`);
  setText("session-models", parts.length ? parts.join(" · ") : s.model_primary);
  $("session-models").title = `Primary ${s.model_primary}` + (s.model_fallback ? `, fallback ${s.model_fallback}` : "");
  const prices = s.prices || {};
  const unpriced = Object.keys(prices).filter((m) => prices[m] && prices[m].source === "default");
  show("session-unpriced", unpriced.length > 0);
  setText("session-unpriced", unpriced.length ? `${unpriced.join(", ")} counted at the default price` : "");
}

function renderAnswer(s) {
  renderTabs();
  show("answer-offline", !!(s.offline || s.partly_offline));
  const offlineNote = $("answer-offline").dataset;
  setText("answer-offline", s.partly_offline && !s.fallback_wrote_all ? offlineNote.partly : offlineNote.offline);
  show("answer-model", !!s.answer_model);
  setText("answer-model", s.answer_model ? `Written by ${s.answer_model}` : "");
  $("final-answer-panel").classList.toggle("partial", !!s.answer_partial);
  show("answer-partial", !!s.answer_partial);
  const why = s.answer_partial ? partialWhy(s) : "";
  show("answer-partial-why", !!why);
  setText("answer-partial-why", why);
  show("answer-chosen", !!s.answer_chosen_by);
  const note = s.answer_note ? ": " + s.answer_note : "";
  setText("answer-chosen", s.answer_chosen_by ? `Chosen by ${s.answer_chosen_by}${note}` : "");
}

// Why the answer is only the best so far, in the words the session ended with.
function partialWhy(s) {
  if (s.status === "cancelled") return "Why partial: the session was cancelled before it wrote an answer.";
  if (s.status === "exhausted") return "Why partial: the budget ran out before the answer was finished.";
  return s.error ? `Why partial: ${s.error}` : "";
}

export function renderLineage(s) {
  const from = s.forked_from_session_id;
  const forks = Array.isArray(s.forks) ? s.forks : [];
  show("lineage", !!from || forks.length > 0);
  show("forked-from", !!from);
  if (from) {
    $("forked-from-link").href = sessionUrl(from);
    setText("forked-from-link", shortId(from));
    setText("forked-from-node", s.forked_from_node_id ? ` at node ${shortId(s.forked_from_node_id)}` : "");
  }
  show("forks", forks.length > 0);
  d3.select("#fork-links").selectAll("a").data(forks, (id) => id)
    .join("a").attr("href", sessionUrl).attr("title", (id) => id).text(shortId);
};

export function renderSessionActions(s) {
  show("session-actions", state.canAct);
  show("view-only-note", !state.canAct);
  show("cancelled-note", state.canAct && s.status === "cancelled");
  if (isFinished()) show("cancel-confirm", false);
  show("pause-button", s.status === "running" || s.status === "queued");
  show("resume-button", s.status === "paused" || s.status === "interrupted");
  show("cancel-button", !isFinished());
};

on("session", renderSession);
on("lineage", renderLineage);
on("view-only", () => {
  if (model.session) renderSessionActions(model.session);
});
