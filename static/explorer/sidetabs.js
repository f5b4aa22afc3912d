/* The side panel's top: the final answer and the inspector share it as two tabs, so a node clicked anywhere shows
 * its inspector in view, whatever the answer's length. Before an answer there is only the inspector. */
import { $, show, state } from "./util.js";
import { model, on } from "./model.js";

const TABS = { answer: ["tab-answer", "final-answer-panel"], inspector: ["tab-inspector", "inspector"] };
let chosen = null; // the tab a person (or a selection) chose; null: the answer when there is one

export function showTab(name) {
  const changed = chosen !== name;
  chosen = name;
  renderTabs();
  if (changed) $("side-panel").scrollTop = 0;
}

export function renderTabs() {
  const hasAnswer = !!(model.session && model.session.final_answer);
  const tab = !hasAnswer ? "inspector" : chosen || (state.selectedId ? "inspector" : "answer");
  show("side-tabs", hasAnswer);
  for (const [name, [tabId, panelId]] of Object.entries(TABS)) {
    show(panelId, tab === name);
    $(tabId).setAttribute("aria-selected", String(tab === name));
    $(tabId).tabIndex = tab === name ? 0 : -1;
  }
}

$("tab-answer").addEventListener("click", () => showTab("answer"));
$("tab-inspector").addEventListener("click", () => showTab("inspector"));
$("side-tabs").addEventListener("keydown", (event) => {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const next = event.target.id === "tab-answer" ? "inspector" : "answer";
  showTab(next);
  $(TABS[next][0]).focus();
});
// A node selected anywhere shows the inspector, whatever the answer's length.
on("selecting", ({ id }) => {
  if (id) showTab("inspector");
});
