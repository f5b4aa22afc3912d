/* The recommendation: its whole text (collapsible when long), Copy, a link to the printable report, its steps (the
 * path from the root to the final node) as numbered buttons that select their node in the tree, and its figure
 * badge: what the checker found in it against the client's facts, the failed spans marked in its text.
 */
import d3 from "./d3-from-npm.js";
import { $, firstLine, setText, show, state, truncate } from "./util.js";
import { model, on, showNode } from "./model.js";
import { failedOf, renderCheckList, renderMarkedText, unverifiedOf } from "./checks.js";

const LONG_PX = 240; // taller than this, the answer offers Collapse
const STEP_CHARS = 110;
let collapsed = false;

export function renderAnswerExtras(s) {
  renderSteps(s);
  requestAnimationFrame(measure); // heights are known once the text is laid out
};

function measure() {
  const text = $("final-answer");
  const long = text.scrollHeight > LONG_PX + 20 || (collapsed && text.scrollHeight > text.clientHeight);
  show("answer-toggle", long);
  text.classList.toggle("collapsed", long && collapsed);
  setText("answer-toggle", collapsed ? "Expand" : "Collapse");
  $("answer-toggle").setAttribute("aria-expanded", String(!collapsed));
}

/* The badge ("5 figures checked, 1 unverified", or the failures) in green or red, the failures listed, the passed
 * ones folded; an answer that was not checked (a stopped session's best line, or checks off) says so and claims
 * nothing. A person's promote stands whatever the checker found: the findings are shown, under "needs review". */
export function renderAnswerChecks(s) {
  const unchecked = s.answer_state === "not_checked";
  const checks = s.final_answer && !unchecked && Array.isArray(s.answer_checks) ? s.answer_checks : [];
  renderMarkedText($("final-answer"), s.final_answer, checks, s.final_answer ? s.figures || [] : [], s.facts || []);
  const failed = failedOf(checks);
  const badge = !s.final_answer ? "" : unchecked ? "not checked" : s.answer_badge || badgeText(checks);
  show("answer-checks", !!badge);
  setText("answer-badge", badge);
  $("answer-badge").dataset.tone = unchecked ? "none" : failed.length ? "bad" : "ok";
  $("answer-checks").classList.toggle("failed", failed.length > 0);
  renderCheckList($("answer-checks"), checks, $("final-answer"));
  const stands = s.answer_chosen_by && failed.length;
  show("answer-checks-note", !!(stands || unchecked));
  setText("answer-checks-note", stands
    ? `${s.answer_chosen_by} chose this answer, and a person's choice stands: it needs review, the checker's `
      + "findings are shown, not acted on."
    : unchecked ? "Written as the session stopped, from its best line: not checked against the client's facts." : "");
  show("answer-review", s.answer_state === "needs_review");
}

// The server writes the badge (reasoning/facts/check.py badge()); its wording, for an answer sent without one.
// An unverified finding (verified false: the check could not decide) is never counted as checked.
function badgeText(checks) {
  if (!checks.length) return "";
  const failed = failedOf(checks), unverified = unverifiedOf(checks);
  const checked = checks.length - unverified.length;
  if (!checked) return `not checked: ${unverified.length} unverified`;
  const line = `${checked} figure${checked === 1 ? "" : "s"} checked`
    + (unverified.length ? `, ${unverified.length} unverified` : "");
  return failed.length ? `${line}; ${failed.length} failed` : line;
}

// Root -> final node, from the model's rows (a step whose parent has not arrived ends the walk).
export function answerPath(s) {
  const path = [];
  for (let n = s && model.nodes.get(s.final_node_id); n && path.length <= model.nodes.size;
    n = n.parent_id ? model.nodes.get(n.parent_id) : null) path.push(n);
  return path.reverse();
};

function renderSteps(s) {
  const steps = answerPath(s).filter((n) => n.depth > 0);
  show("answer-steps-block", steps.length > 0);
  const item = d3.select("#answer-steps").selectAll("li").data(steps, (n) => n.id)
    .join((enter) => {
      const li = enter.append("li");
      const button = li.append("button").attr("type", "button").attr("class", "answer-step");
      button.append("span").attr("class", "step-text");
      button.append("span").attr("class", "step-score");
      return li;
    });
  item.select("button")
    .attr("data-node-id", (n) => n.id)
    .attr("title", (n) => truncate(n.thought, 400))
    .attr("aria-current", (n) => String(n.id === state.selectedId))
    .on("click", (event, n) => selectStep(n.id));
  item.select(".step-text").text((n) => truncate(firstLine(n.thought), STEP_CHARS));
  item.select(".step-score").text((n) => (n.eval_score == null ? "" : `· ${n.eval_score.toFixed(2)}`));
}

function selectStep(id) {
  showNode(id, { reveal: true });
  d3.selectAll("#answer-steps button").attr("aria-current", (n) => String(n.id === id));
}

// The clipboard API needs a secure context or a permission; a hidden textarea and execCommand is the fallback.
async function copyAnswer() {
  const text = (model.session && model.session.final_answer) || "";
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch (e) {
    ok = copyWithTextarea(text);
  }
  setText("answer-copy", ok ? "Copied" : "Copy failed");
  $("answer-copy").dataset.result = ok ? "ok" : "failed";
  setTimeout(() => { setText("answer-copy", "Copy"); delete $("answer-copy").dataset.result; }, 2000);
}

function copyWithTextarea(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
  area.remove();
  return ok;
}

$("answer-copy").addEventListener("click", copyAnswer);
$("answer-toggle").addEventListener("click", () => { collapsed = !collapsed; measure(); });
on("session", () => {
  const s = model.session;
  if (!s) return;
  renderAnswerChecks(s);
  renderAnswerExtras(s);
});
