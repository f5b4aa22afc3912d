/* Four eyes: the answer's sign-off. Everyone sees its state (awaiting review; approved by whom and when; changes
 * requested and why; why it awaits review again after the answer changed); a reviewer or an admin approves it or
 * requests changes here, through the API (POST /api/sessions/{id}/review). The outcome also comes back to every
 * watcher as a review.updated event (model.js). */
import { $, clock, container, setText, show } from "./util.js";
import { model, on } from "./model.js";
import { request } from "./http.js";

const page = container.dataset;
const canReview = page.canReview === "true";
const required = page.reviewRequired === "true";
const STATES = {
  awaiting: "Awaiting review",
  approved: "Approved",
  changes_requested: "Changes requested",
};
const RESTING = new Set(["solved", "failed", "exhausted", "cancelled", "paused", "interrupted"]);

export function renderReview() {
  const s = model.session;
  const review = (s && s.review) || null;
  const answered = !!(s && s.final_answer);
  show("review-panel", !!review || (answered && (required || canReview)));
  if (!s) return;
  $("review-panel").dataset.state = review ? review.state : "none";
  setText("review-state", review ? STATES[review.state] || review.state : "Not reviewed");
  setText("review-line", lineOf(review));
  const comment = review && review.comment;
  show("review-comment", !!comment);
  setText("review-comment", comment || "");
  show("review-reason", !!(review && review.reason));
  setText("review-reason", review && review.reason ? `Why it awaits review again: ${review.reason}` : "");
  const mayDecide = canReview && answered && RESTING.has(s.status);
  show("review-actions", mayDecide);
  const own = mayDecide && page.selfApproval !== "true" && isAuthor(s);
  show("review-approve", !(review && review.state === "approved")); // approved stands until a change withdraws it
  $("review-approve").disabled = own;
  show("review-own", own);
  if (!mayDecide) closeForm();
}

function lineOf(review) {
  if (!review) {
    return required ? "This tenant requires a second person's sign-off on every answer."
      : "No review is required; a reviewer may still sign this answer off.";
  }
  const at = review.at ? clock(review.at) : "";
  if (review.state === "awaiting") return `Waiting${at ? ` since ${at}` : ""} for a reviewer or an admin to sign it off.`;
  return `by ${review.by}${at ? ` at ${at}` : ""}`;
}

// Who ran the session or chose its answer: the server refuses them an approval unless the tenant allows it.
function isAuthor(s) {
  const who = [s.triggered_by, s.answer_chosen_by].filter(Boolean).map((a) => String(a).split("/key:")[0]);
  return who.includes(page.person);
}

async function decide(decision, comment) {
  const buttons = ["review-approve", "review-changes", "review-submit"].map($);
  buttons.forEach((b) => { b.disabled = true; });
  showError("");
  const result = await request("POST", `sessions/${encodeURIComponent(model.session.id)}/review`, { decision, comment });
  buttons.forEach((b) => { b.disabled = false; });
  if (!result.ok) {
    showError(result.message);
    renderReview();
    return;
  }
  model.session = { ...model.session, review: result.data.review };
  closeForm();
  renderReview();
}

function showError(text) {
  show("review-error", !!text);
  setText("review-error", text);
}

function openForm() {
  show("review-form", true);
  showError("");
  $("review-text").focus();
}

function closeForm() {
  show("review-form", false);
  $("review-text").value = "";
}

$("review-approve").addEventListener("click", () => decide("approve", ""));
$("review-changes").addEventListener("click", openForm);
$("review-cancel").addEventListener("click", closeForm);
$("review-form").addEventListener("keydown", (event) => { if (event.key === "Escape") closeForm(); });
$("review-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const comment = $("review-text").value.trim();
  if (!comment) {
    showError("Say what should change: a request for changes needs a comment.");
    $("review-text").focus();
    return;
  }
  decide("request_changes", comment);
});

on("session", renderReview);
on("review", renderReview);
