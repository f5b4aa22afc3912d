/* Steering: every overseer action is an HTTP request to the JSON API, and its effect comes back as an ordinary
 * event, so nothing is lost while the socket reconnects. Also the inspector's forms, keyboard shortcuts and
 * the audit trail (who did what, newest first).
 */
import d3 from "./d3-from-npm.js";
import { $, clock, firstLine, sessionUrl, setText, shortId, show, state, truncate } from "./util.js";
import { bestPath, hierarchy, isFinished, model, on, selectedNode, showNode } from "./model.js";
import { perform, request } from "./http.js";
import { setStatusLine } from "./status.js";
import { exactValue } from "./factvalues.js";

// ---- the audit trail ---------------------------------------------------------------------

export function renderAudit() {
  const rows = Array.from(model.actions.values()).sort(newestFirst);
  show("audit-empty", !rows.length);
  const item = d3.select("#audit-list").selectAll("li.audit-item").data(rows, (a) => a.id);
  const enter = item.enter().append("li").attr("class", "audit-item");
  const head = enter.append("div").attr("class", "audit-head");
  head.append("time").attr("class", "audit-time num");
  head.append("span").attr("class", "audit-action");
  head.append("span").attr("class", "audit-state");
  const meta = enter.append("div").attr("class", "audit-meta");
  meta.append("span").attr("class", "audit-actor");
  meta.append("span").attr("class", "audit-node");
  enter.append("div").attr("class", "audit-detail");
  enter.on("click", (event, a) => openAuditNode(a))
    .on("keydown", (event, a) => { if (event.key === "Enter") openAuditNode(a); });
  item.exit().remove();
  fillAuditItems(item.merge(enter)).order();
};

function fillAuditItems(items) {
  items
    .attr("data-action", (a) => a.action)
    .attr("data-state", (a) => a.state)
    .classed("has-node", namesANode)
    .attr("tabindex", (a) => (namesANode(a) ? 0 : null))
    .attr("role", (a) => (namesANode(a) ? "button" : null))
    .attr("title", (a) => (namesANode(a) ? "Select this node" : null));
  items.select(".audit-time").attr("datetime", (a) => a.created_at).text((a) => clock(a.created_at));
  items.select(".audit-action").text((a) => actionSummary(a));
  items.select(".audit-state").attr("class", (a) => `audit-state state-${a.state}`).text((a) => a.state);
  items.select(".audit-actor").text((a) => a.actor || "");
  items.select(".audit-node").text((a) => (a.node_id ? nodeRef(a.node_id) : ""));
  items.select(".audit-detail").text(auditDetail);
  return items;
}

function newestFirst(a, b) {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return String(b.id).localeCompare(String(a.id), undefined, { numeric: true });
}

function actionSummary(a) {
  const payload = a.payload || {};
  return payload.k != null && a.action === "expand" ? `${a.action} ×${payload.k}` : a.action;
}

function auditDetail(a) {
  const forked = a.action === "fork" && a.after && a.after.session_id;
  const parts = [a.detail, forked ? `new session ${shortId(a.after.session_id)}` : "", factChange(a)];
  return parts.filter(Boolean).join(" · ");
}

// A change to the client's facts, in a line: "salary: USD 450,000 → USD 475,000".
function factChange(a) {
  if (!String(a.action).startsWith("fact.")) return "";
  const payload = a.payload || {};
  const known = (f) => f && typeof f === "object" && "label" in f;
  const before = known(a.before) ? a.before : null;
  // A command (the session was running) carries the new fact in its payload; an audit row, in `after`.
  const after = a.action === "fact.remove" ? null : [a.after, payload.fact, payload].find(known) || null;
  if (a.action === "fact.edit" && before && after) {
    const label = before.label === after.label ? before.label : `${before.label} → ${after.label}`;
    return `${label}: ${exactValue(before)} → ${exactValue(after)}`;
  }
  const f = after || before;
  return f ? `${f.label}: ${exactValue(f)}` : "";
}

function nodeRef(id) {
  const n = model.nodes.get(id);
  return n ? `“${truncate(firstLine(n.thought), 34)}”` : `node ${shortId(id)}`;
}

function namesANode(a) {
  return !!a.node_id && model.nodes.has(a.node_id);
}

function openAuditNode(a) {
  if (!namesANode(a)) return;
  showNode(a.node_id, { reveal: true });
}

// The audit trail of a snapshot that does not carry one (read once over HTTP).
let actionsRequested = false;
export async function loadActionsOnce() {
  if (actionsRequested || !model.session) return;
  actionsRequested = true;
  const result = await request("GET", sessionPath("actions"));
  const rows = result.ok && (Array.isArray(result.data) ? result.data : result.data && result.data.items);
  if (!Array.isArray(rows)) return;
  for (const a of rows) if (!model.actions.has(a.id)) model.actions.set(a.id, a);
  renderAudit();
};


function nodePath(n, verb) {
  return `nodes/${encodeURIComponent(n.id)}/${verb}`;
}

function sessionPath(verb) {
  return `sessions/${encodeURIComponent(model.session.id)}/${verb}`;
}

// ---- the actions -----------------------------------------------------------------------

function togglePrune() {
  const n = selectedNode();
  if (!n || n.depth === 0) return;
  const verb = n.pruned ? "unprune" : "prune";
  const replaces = verb === "prune" && holdsChosenAnswer(n);
  if (replaces && !window.confirm(`This branch holds the answer ${replaces} chose. Pruning it replaces that answer ` +
    "with one written from the best live line. Prune it?")) return;
  perform($("prune-button"), nodePath(n, verb), {},
    verb === "prune" ? "Pruning the branch…" : "Restoring the branch…",
    verb === "prune" ? "Branch pruned: nothing under it enters the search." : "Branch restored.");
}

// A person's chosen answer stands until a person changes it: who chose it, if pruning this node's branch replaces it.
function holdsChosenAnswer(n) {
  const s = model.session;
  if (!s || !s.answer_chosen_by || !s.final_node_id) return "";
  for (let at = model.nodes.get(s.final_node_id); at; at = model.nodes.get(at.parent_id)) {
    if (at.id === n.id) return s.answer_chosen_by;
  }
  return "";
}

function expandSelected() {
  const n = selectedNode();
  if (!n) return;
  const k = Number($("expand-k").value);
  if (!Number.isInteger(k) || k < 1 || k > 8) {
    setStatusLine("k must be a whole number from 1 to 8.", "error");
    return;
  }
  perform($("expand-button"), nodePath(n, "expand"), { k }, `Asking for ${k} more children…`,
    `Expansion queued: ${k} new children arrive as the search runs.`);
}

function togglePause() {
  const s = model.session;
  if (!s || !state.canAct) return;
  if (s.status === "running" || s.status === "queued") {
    perform($("pause-button"), sessionPath("pause"), {}, "Pausing…",
      "Pause requested: the search stops at its next step.");
  } else if (s.status === "paused" || s.status === "interrupted") {
    perform($("resume-button"), sessionPath("resume"), {}, "Resuming…", "Resumed.");
  }
}

// Cancel asks first, saying what it means; the session rests cancelled for good, and a fork continues it.
function askToCancel() {
  if (!model.session || isFinished() || !state.canAct) return;
  show("cancel-confirm", true);
  $("cancel-confirm-no").focus();
}

function closeCancelConfirm() {
  show("cancel-confirm", false);
}

async function cancelSession() {
  closeCancelConfirm();
  if (!model.session || isFinished()) return;
  await perform($("cancel-button"), sessionPath("cancel"), {}, "Cancelling…",
    "Session cancelled: the best answer so far is kept; continue it in a fork from any node.");
}

// "Continue in a fork…": the fork form on the answer's node (else the best line's end), ready to submit.
function continueInFork() {
  const s = model.session;
  if (!s || !state.canAct) return;
  const id = s.final_node_id && model.nodes.has(s.final_node_id) ? s.final_node_id : bestLineEnd();
  if (!id) return;
  showNode(id, { focus: true, center: true, then: openForkForm });
}

function bestLineEnd() {
  const h = hierarchy();
  if (!h) return null;
  const ids = bestPath(h);
  let end = null;
  for (const d of h.order) if (ids.has(d.id) && (!end || d.depth > end.depth)) end = d;
  return end ? end.id : null;
}

// ---- the inspector's forms: edit, promote, fork (one open at a time; Escape closes) ----------

const FORMS = ["edit-form", "promote-form", "fork-form"];
let formNodeId = null; // the node the open form acts on, fixed when it opened

function openForm(id, prepare) {
  const n = selectedNode();
  if (!state.canAct || !n) return;
  closeForms();
  formNodeId = n.id;
  prepare(n);
  show(id, true);
  const field = $(id).querySelector("textarea, input, select");
  if (field) field.focus();
}

export function closeForms() {
  const focused = document.activeElement;
  const hadFocus = FORMS.some((id) => !$(id).hidden && $(id).contains(focused));
  FORMS.forEach((id) => show(id, false));
  formNodeId = null;
  if (hadFocus) focused.blur(); // so the shortcuts work again at once
};

function openEditForm() {
  const n = selectedNode();
  if (!n || n.depth === 0) return;
  openForm("edit-form", () => { $("edit-thought").value = n.thought || ""; });
}

function openPromoteForm() {
  const n = selectedNode();
  if (!n || n.depth === 0) return;
  openForm("promote-form", () => {
    $("promote-note").value = "";
    const warning = promoteWarning(n);
    setText("promote-warning", warning);
    show("promote-warning", !!warning);
    show("promote-confirm-label", !!warning);
    $("promote-confirm").checked = false;
    renderPromoteSubmit();
  });
}

// A stale or edited node is promoted only once the person says so: its score may not say what its text does.
function promoteWarning(n) {
  const why = [];
  if (n.original_thought != null) why.push("its thought was rewritten by a person");
  if (n.stale) why.push("an earlier step was edited since it was scored, so its score may be out of date");
  const s = model.session;
  if (s && s.answer_chosen_by && s.final_node_id !== n.id) why.push(`it replaces the answer ${s.answer_chosen_by} chose`);
  return why.length ? `Check before promoting: ${why.join("; ")}.` : "";
}

function renderPromoteSubmit() {
  const needs = !$("promote-confirm-label").hidden;
  submitter($("promote-form")).disabled = needs && !$("promote-confirm").checked;
}

function openForkForm() {
  openForm("fork-form", () => {
    const mode = model.session && model.session.mode;
    $("fork-mode").value = Array.from($("fork-mode").options).some((o) => o.value === mode) ? mode : "auto";
    $("fork-budget").value = "";
  });
}

function submitter(form) {
  return form.querySelector("button[type=submit]");
}

async function saveEdit(event) {
  event.preventDefault();
  const thought = $("edit-thought").value;
  if (!thought.trim() || thought.length > 4000) {
    setStatusLine("A thought needs 1 to 4000 characters.", "error");
    return;
  }
  const n = model.nodes.get(formNodeId);
  if (!n) return;
  const done = await perform(submitter(event.target), nodePath(n, "edit"), { thought }, "Saving the edit…",
    "Edit saved: the node is rescored and the steps under it are marked stale.");
  if (done) closeForms();
}

async function promote(event) {
  event.preventDefault();
  if (!$("promote-confirm-label").hidden && !$("promote-confirm").checked) return;
  const note = $("promote-note").value;
  const n = model.nodes.get(formNodeId);
  if (!n) return;
  const done = await perform(submitter(event.target), nodePath(n, "promote"), { note: note.slice(0, 2000) },
    "Promoting…", "Promoted: this node becomes the final answer.");
  if (done) closeForms();
}

async function fork(event) {
  event.preventDefault();
  if (!formNodeId || !model.session) return;
  const body = { node_id: formNodeId, mode: $("fork-mode").value };
  const budget = $("fork-budget").value;
  if (budget !== "") body.budget_usd = Number(budget);
  const done = await perform(submitter(event.target), sessionPath("fork"), body, "Forking…",
    "Forked: opening the new session…");
  if (done && done.data && done.data.id) location.assign(sessionUrl(done.data.id));
}

// ---- keyboard shortcuts (outside text fields): p, e, i, f, Shift+P; Escape closes the forms -------

const SHORTCUTS = { p: togglePrune, e: expandSelected, i: openEditForm, f: openForkForm, "Shift+P": togglePause };

function onShortcut(event) {
  if (event.key === "Escape") { closeForms(); closeCancelConfirm(); return; }
  if (!state.canAct || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  const action = SHORTCUTS[event.shiftKey ? "Shift+" + event.key.toUpperCase() : event.key];
  if (!action) return;
  event.preventDefault();
  action();
}

function isTyping(target) {
  return !!(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
}

// ---- wiring ------------------------------------------------------------------------------

$("prune-button").addEventListener("click", togglePrune);
$("expand-button").addEventListener("click", expandSelected);
$("expand-k").addEventListener("keydown", (event) => { if (event.key === "Enter") expandSelected(); });
$("edit-button").addEventListener("click", openEditForm);
$("promote-button").addEventListener("click", openPromoteForm);
$("fork-button").addEventListener("click", openForkForm);
$("edit-form").addEventListener("submit", saveEdit);
$("promote-form").addEventListener("submit", promote);
$("fork-form").addEventListener("submit", fork);
document.querySelectorAll("[data-close-form]").forEach((b) => b.addEventListener("click", closeForms));
$("pause-button").addEventListener("click", togglePause);
$("resume-button").addEventListener("click", togglePause);
$("cancel-button").addEventListener("click", askToCancel);
$("cancel-confirm-yes").addEventListener("click", cancelSession);
$("cancel-confirm-no").addEventListener("click", closeCancelConfirm);
$("continue-fork").addEventListener("click", continueInFork);
$("promote-confirm").addEventListener("change", renderPromoteSubmit);
document.addEventListener("keydown", onShortcut);

on("actions-wanted", loadActionsOnce);
on("actions", renderAudit);
on("view-only", closeForms);
on("selecting", ({ id, previous }) => {
  if (id !== previous) closeForms();
});
