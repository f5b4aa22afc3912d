/* The client's fact sheet, above the tree: each fact as people read it, the words the client wrote on hover or
 * focus, and (advisors and admins) a form to correct, add or remove one. A change is an HTTP request, audited; the
 * sheet on the page changes when the socket's facts.updated arrives, as every other effect does.
 */
import d3 from "./d3-from-npm.js";
import { $, setText, show, state } from "./util.js";
import { model, on } from "./model.js";
import { refused, request } from "./http.js";
import { setStatusLine } from "./status.js";
import { NUMERIC, ROLES, editableValue, exactValue, shortValue, valueToSend } from "./factvalues.js";

const FIELDS = ["label", "kind", "value", "unit", "base", "role", "text"];
const COLLAPSED_KEY = "explorer.factsCollapsed";
const PLACEHOLDER = {
  amount: "450,000 or $450k", percent: "70", age: "58", year: "2031", place: "US-CA",
  account: "Roth IRA", instrument: "exchange fund", goal: "retire at 62", constraint: "no sale before 2027",
  person: "1 (or 3 for three children)", limit: "18 months or CHF 200k", horizon: "4 years or 2031",
};
const UNIT_NAME = { amount: "Currency", limit: "Unit", horizon: "Unit" };

let editing = null; // the fact's id the form edits, "new" for an addition, null when closed
let collapsed = readCollapsed();

const facts = () => (model.session && Array.isArray(model.session.facts) ? model.session.facts : []);

export function renderFacts() {
  const list = facts();
  const panel = $("fact-sheet");
  panel.classList.toggle("collapsed", collapsed);
  panel.classList.toggle("can-act", state.canAct);
  $("fact-sheet-toggle").setAttribute("aria-expanded", String(!collapsed));
  show("fact-sheet-body", !collapsed);
  const advisors = list.filter((f) => f.source === "advisor").length;
  setText("fact-count", list.length
    ? `${list.length} fact${list.length === 1 ? "" : "s"}${advisors ? ` · ${advisors} by an advisor` : ""}`
    : "none read from the problem");
  show("fact-sheet", list.length > 0 || state.canAct); // a puzzle has no facts: a viewer is shown no empty sheet
  show("fact-add", state.canAct && !collapsed);
  show("fact-list", list.length > 0);
  const off = model.session && model.session.params && model.session.params.check_facts === false;
  setText("fact-sheet-hint", off ? "not checked: this session's fact checks are off"
    : "every step and the answer are checked against them");
  renderList(list);
  if (!state.canAct && editing) closeFactForm();
  if (editing && editing !== "new" && !list.some((f) => String(f.id) === editing)) {
    closeFactForm(); // removed meanwhile (here or by someone else)
  }
}

function renderList(list) {
  const item = d3.select("#fact-list").selectAll("li.fact").data(list, (f) => f.id)
    .join((enter) => {
      const li = enter.append("li").attr("class", "fact");
      const chip = li.append("button").attr("type", "button").attr("class", "fact-chip");
      chip.append("span").attr("class", "fact-label");
      const value = chip.append("span").attr("class", "fact-value");
      value.append("span").attr("class", "fact-value-text");
      value.append("span").attr("class", "fact-aside");
      chip.append("span").attr("class", "fact-kind");
      chip.append("span").attr("class", "fact-advisor").attr("title", "Added or corrected by an advisor")
        .text("advisor");
      return li;
    })
    .order();
  item.attr("data-kind", (f) => f.kind).attr("data-source", (f) => f.source).attr("data-fact-id", (f) => f.id);
  const chip = item.select(".fact-chip")
    .attr("aria-disabled", state.canAct ? null : "true")
    .attr("aria-label", (f) => `${f.label}: ${exactValue(f)} (${f.kind}`
      + `${f.source === "advisor" ? ", by an advisor" : ""})${state.canAct ? ". Press to edit." : ""}`)
    .classed("editing", (f) => String(f.id) === editing);
  // An instrument named as its own label ("collar: collar") shows its name once.
  chip.select(".fact-label").text((f) => (sameWords(f.label, shortValue(f).text) ? "" : f.label));
  chip.select(".fact-value-text").text((f) => shortValue(f).text);
  chip.select(".fact-aside").text((f) => shortValue(f).aside);
  chip.select(".fact-kind").text((f) => f.kind);
  chip.select(".fact-advisor").attr("hidden", (f) => (f.source === "advisor" ? null : ""));
}

const sameWords = (a, b) => String(a || "").trim().toLowerCase() === String(b || "").trim().toLowerCase();

// ---- the client's words, on hover and on focus -----------------------------------------------------------------

function tipLines(f) {
  const lines = [exactValue(f)];
  if (f.text) lines.push(`The client wrote: “${f.text}”`);
  if (f.source === "advisor") {
    lines.push(f.text ? "Corrected or added by an advisor." : "Added by an advisor; not in the problem's words.");
  }
  else if (!f.text) lines.push("Read from the problem.");
  return lines;
}

function showTip(chip) {
  const f = d3.select(chip.parentNode).datum();
  if (!f) return;
  const tip = $("fact-tip");
  tip.replaceChildren(...tipLines(f).map((line, i) => {
    const p = document.createElement("p");
    p.className = i === 0 ? "fact-tip-value" : "fact-tip-words";
    p.textContent = line;
    return p;
  }));
  tip.hidden = false;
  chip.setAttribute("aria-describedby", "fact-tip");
  const box = chip.getBoundingClientRect();
  const width = Math.min(360, window.innerWidth - 16);
  tip.style.maxWidth = width + "px";
  const left = Math.max(8, Math.min(box.left, window.innerWidth - tip.offsetWidth - 8));
  const below = box.bottom + 6 + tip.offsetHeight < window.innerHeight;
  tip.style.left = left + "px";
  tip.style.top = (below ? box.bottom + 6 : box.top - 6 - tip.offsetHeight) + "px";
}

function hideTip() {
  $("fact-tip").hidden = true;
  document.querySelectorAll(".fact-chip[aria-describedby]").forEach((c) => c.removeAttribute("aria-describedby"));
}

// ---- collapse ----------------------------------------------------------------------------------------------------

function readCollapsed() {
  try { return localStorage.getItem(COLLAPSED_KEY) === "1"; } catch (e) { return false; }
}

function toggleCollapsed() {
  collapsed = !collapsed;
  try { localStorage.setItem(COLLAPSED_KEY, collapsed ? "1" : "0"); } catch (e) { /* private mode */ }
  hideTip();
  if (collapsed) closeFactForm();
  renderFacts();
}

// ---- the form: correct, add, remove --------------------------------------------------------------------------

function openFactForm(f) {
  if (!state.canAct) return;
  hideTip();
  clearErrors();
  editing = f ? String(f.id) : "new";
  $("fact-label").value = f ? f.label : "";
  $("fact-kind").value = f ? f.kind : "amount";
  $("fact-value").value = f ? editableValue(f) : "";
  // A new fact's unit starts empty: the currency typed in the value ("EUR 1.8M") is the one kept.
  $("fact-unit").value = f ? f.unit || "" : "";
  $("fact-base").value = f ? f.base || "" : "";
  $("fact-text").value = f ? f.text || "" : "";
  setText("fact-form-title", f ? `Correct “${f.label}”` : "Add a fact");
  setText("fact-submit", f ? "Save" : "Add fact");
  show("fact-remove", !!f);
  show("fact-remove-confirm", false);
  show("fact-form", true);
  renderKindFields();
  $("fact-role").value = f ? f.role || "" : $("fact-role").value;
  renderList(facts());
  (f ? $("fact-value") : $("fact-label")).focus();
}

export function closeFactForm() {
  const hadFocus = !$("fact-form").hidden && $("fact-form").contains(document.activeElement);
  const was = editing;
  editing = null;
  show("fact-form", false);
  clearErrors();
  renderList(facts());
  if (hadFocus) {
    const chip = was && was !== "new"
      && document.querySelector(`li.fact[data-fact-id="${CSS.escape(was)}"] .fact-chip`);
    (chip || $("fact-add")).focus();
  }
}

// The unit is an amount's currency, a limit's or horizon's unit; the base, a percent's or a limit's object; the
// role's choices are the kind's.
function renderKindFields() {
  const kind = $("fact-kind").value;
  show("fact-unit-field", kind in UNIT_NAME);
  setText("fact-unit-name", UNIT_NAME[kind] || "Unit");
  show("fact-base-field", kind === "percent" || kind === "limit");
  const roles = ROLES[kind] || [];
  const role = $("fact-role");
  const was = role.value;
  role.replaceChildren(...roles.map((r) => {
    const option = document.createElement("option");
    option.value = r;
    option.textContent = r || "—";
    return option;
  }));
  role.value = roles.includes(was) ? was : roles[0] || "";
  show("fact-role-field", roles.length > 0);
  $("fact-value").placeholder = PLACEHOLDER[kind] || "";
  $("fact-value").inputMode = NUMERIC.has(kind) && kind !== "amount" ? "decimal" : "text";
}

function formFields() {
  const kind = $("fact-kind").value;
  const fields = {
    label: $("fact-label").value.trim(),
    kind,
    value: valueToSend(kind, $("fact-value").value),
    text: $("fact-text").value.trim(),
  };
  if (kind === "amount") fields.unit = $("fact-unit").value.trim().toUpperCase();
  if (kind === "limit" || kind === "horizon") fields.unit = $("fact-unit").value.trim();
  if (kind === "percent" || kind === "limit") fields.base = $("fact-base").value.trim();
  if (ROLES[kind]) fields.role = $("fact-role").value;
  return fields;
}

// What an edit changes: only those fields are sent (the audit then says what changed).
function changes(fields, f) {
  const now = { ...f, base: f.base || "", unit: f.unit || "", role: f.role || "", text: f.text || "" };
  const out = {};
  for (const name of FIELDS) {
    if (!(name in fields)) continue;
    if (name === "value" ? !sameValue(fields.value, f.value) : fields[name] !== now[name]) out[name] = fields[name];
  }
  if ("kind" in out && !("value" in out)) out.value = fields.value; // a value is read by its kind
  return out;
}

const sameValue = (a, b) =>
  (typeof a === "number" && typeof b === "number" ? Math.abs(a - b) < 1e-9 : String(a) === String(b));

async function submitFact(event) {
  event.preventDefault();
  if (!editing || !state.canAct) return;
  clearErrors();
  const fields = formFields();
  const local = localErrors(fields);
  if (local.length) { showErrors(local); return; }
  const sid = encodeURIComponent(model.session.id);
  let reply;
  const button = $("fact-submit");
  button.disabled = true;
  if (editing === "new") {
    const body = Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== "" || k === "value"));
    setStatusLine("Adding the fact…", "info");
    reply = await request("POST", `sessions/${sid}/facts`, body);
  } else {
    const f = facts().find((x) => String(x.id) === editing);
    const body = f ? changes(fields, f) : fields;
    if (!Object.keys(body).length) {
      button.disabled = false;
      setStatusLine("Nothing changed.", "info");
      closeFactForm();
      return;
    }
    setStatusLine("Saving the fact…", "info");
    reply = await request("PATCH", `sessions/${sid}/facts/${encodeURIComponent(editing)}`, body);
  }
  button.disabled = false;
  if (reply.ok) {
    setStatusLine(`Fact ${editing === "new" ? "added" : "saved"}: the steps and the answer are checked again; those it ` +
      "touches are marked stale.", "ok");
    closeFactForm();
  } else {
    failed(reply);
  }
}

async function removeFact() {
  if (!editing || editing === "new" || !state.canAct) return;
  const f = facts().find((x) => String(x.id) === editing);
  const sid = encodeURIComponent(model.session.id);
  $("fact-remove-yes").disabled = true;
  setStatusLine("Removing the fact…", "info");
  const reply = await request("DELETE", `sessions/${sid}/facts/${encodeURIComponent(editing)}`);
  $("fact-remove-yes").disabled = false;
  if (reply.ok) {
    setStatusLine(`Removed “${f ? f.label : "the fact"}” from the client's facts.`, "ok");
    closeFactForm();
  } else {
    failed(reply);
  }
}

function failed(reply) {
  if (reply.status === 422 && Array.isArray(reply.data && reply.data.detail)) {
    showErrors(reply.data.detail);
    setStatusLine("The fact was not saved: " + reply.message, "error");
    return;
  }
  if (reply.status === 403) closeFactForm();
  refused(reply); // the status line; a 403 turns the page view-only
  if (reply.status === 403) renderFacts();
  else showErrors([{ field: "", message: reply.message }]);
}

function localErrors(fields) {
  const errors = [];
  if (!fields.label) errors.push({ field: "label", message: "a fact needs a label, such as 'salary'" });
  if (fields.value === "") errors.push({ field: "value", message: "a value is needed" });
  return errors;
}

// [{field, message}] next to their fields ("value.float" is the value's); the rest above the buttons.
function showErrors(errors) {
  const general = [];
  let first = null;
  for (const e of errors) {
    const name = String((e && e.field) || "").split(".")[0];
    const slot = FIELDS.includes(name) && !$(`fact-${name}-field`).hidden ? $(`fact-${name}-error`) : null;
    const message = String((e && e.message) || e || "invalid");
    if (slot) {
      slot.textContent = slot.textContent ? `${slot.textContent}; ${message}` : message;
      $(`fact-${name}`).setAttribute("aria-invalid", "true");
      first = first || $(`fact-${name}`);
    } else {
      general.push(name && name !== "body" ? `${name}: ${message}` : message);
    }
  }
  setText("fact-form-error", general.join("; "));
  show("fact-form-error", general.length > 0);
  if (first) first.focus();
}

function clearErrors() {
  for (const name of FIELDS) {
    setText(`fact-${name}-error`, "");
    $(`fact-${name}`).removeAttribute("aria-invalid");
  }
  setText("fact-form-error", "");
  show("fact-form-error", false);
}

// ---- wiring ------------------------------------------------------------------------------------------------------

const list = $("fact-list");
list.addEventListener("click", (event) => {
  const chip = event.target.closest(".fact-chip");
  if (!chip || !state.canAct) return;
  openFactForm(d3.select(chip.parentNode).datum());
});
list.addEventListener("mouseover", (event) => { const c = event.target.closest(".fact-chip"); if (c) showTip(c); });
list.addEventListener("mouseout", (event) => {
  const c = event.target.closest(".fact-chip");
  if (c && !c.contains(event.relatedTarget)) hideTip();
});
list.addEventListener("focusin", (event) => { const c = event.target.closest(".fact-chip"); if (c) showTip(c); });
list.addEventListener("focusout", hideTip);
list.addEventListener("scroll", hideTip);
$("fact-sheet-toggle").addEventListener("click", toggleCollapsed);
$("fact-add").addEventListener("click", () => openFactForm(null));
$("fact-kind").addEventListener("change", renderKindFields);
$("fact-form").addEventListener("submit", submitFact);
$("fact-cancel").addEventListener("click", closeFactForm);
$("fact-remove").addEventListener("click", () => { show("fact-remove-confirm", true); $("fact-remove-no").focus(); });
$("fact-remove-no").addEventListener("click", () => { show("fact-remove-confirm", false); $("fact-remove").focus(); });
$("fact-remove-yes").addEventListener("click", removeFact);
$("fact-form").addEventListener("keydown", (event) => {
  if (event.key === "Escape") { event.stopPropagation(); closeFactForm(); }
});
document.addEventListener("keydown", (event) => { if (event.key === "Escape") hideTip(); });

on("facts", renderFacts);
on("view-only", renderFacts);
on("session", renderFacts);
