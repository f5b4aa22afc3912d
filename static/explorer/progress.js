/* The header's "what is happening now": the status as a sentence with its reason, how far the search got (depth,
 * or iterations for LATS), nodes, calls in flight, elapsed time (ticking while it runs) and the spend rate.
 * Refreshed on each session event and twice a second, so the clock ticks and node counts follow the tree.
 */
import { $, clock, setText, show, usd } from "./util.js";
import { model } from "./model.js";

const TICK_MS = 500; // the clock, and node counts within half a second of the tree

// termination_reason -> the sentence after the status, for statuses that end or rest.
const REASONS = {
  budget: ["Stopped: the budget is spent", "warn"],
  monthly_cap: ["Stopped: the tenant's monthly cap is reached", "warn"],
  token_cap: ["Stopped: the session's token cap is reached", "warn"],
  no_thoughts: ["Failed: no step could be proposed and scored", "bad"],
  no_live_line: ["Failed: every line of reasoning is pruned", "bad"],
  error: ["Failed: an error stopped the run", "bad"],
  no_success: ["Failed: no line of the search succeeded", "bad"],
  fact_check_failed: ["Failed: no answer passed the checks of the client's facts", "bad"],
  server_stopped: ["Interrupted by a server restart: resuming…", "warn"],
  server_restarted: ["Interrupted by a server restart: resuming…", "warn"],
  run_lost: ["Interrupted: its run was lost; resuming…", "warn"],
};
const BY_STATUS = {
  queued: ["Queued: waiting for a worker", ""],
  running: ["Running", "ok"],
  paused: ["Paused", "warn"],
  solved: ["Solved", "ok"],
  failed: ["Failed", "bad"],
  exhausted: ["Stopped: the budget is spent", "warn"],
  cancelled: ["Cancelled", ""],
  interrupted: ["Interrupted: resumable", "warn"],
};

// [sentence, tone] for the session as it is now; a partial answer, or one that fails a check, is said so: a session
// is never shown plainly solved under an answer that fails (a person's promote stands, under review).
export function statusSentence(s) {
  let [text, tone] = BY_STATUS[s.status] || [s.status, ""];
  if (s.status === "cancelled") {
    const by = lastActor("cancel");
    text = by ? `Cancelled by ${by}` : "Cancelled";
  } else if (s.status !== "running" && s.status !== "queued" && s.status !== "paused" && REASONS[s.termination_reason]) {
    [text, tone] = REASONS[s.termination_reason];
  }
  if (s.final_answer && s.answer_partial) text += " — the answer is partial, the best so far";
  else if (s.final_answer && s.answer_state === "needs_review") {
    text += " — the answer needs review: it fails a check of the client's facts";
    if (tone === "ok") tone = "warn";
  }
  return [text, tone];
};

function lastActor(action) {
  let found = null;
  for (const a of model.actions.values()) if (a.action === action) found = a;
  return found ? found.actor : "";
}

export function renderProgress() {
  const s = model.session;
  if (!s) return;
  const [text, tone] = statusSentence(s);
  setText("progress-status", text);
  $("progress-status").dataset.tone = tone;
  const stats = treeStats(s);
  setText("progress-depth", stats.reach);
  setText("progress-nodes", `${stats.nodes} nodes`);
  const live = s.status === "running";
  show("progress-inflight", live);
  // Approximated: a node created but not yet scored is waiting on a model call.
  setText("progress-inflight", `${stats.unscored} awaiting a score`);
  const seconds = activeSeconds(s);
  setText("progress-elapsed", seconds == null ? "" : `active ${duration(seconds)}`);
  setText("progress-timeline", timeline(s));
  const used = Number(s.budget_used_usd || 0);
  const perMinute = seconds >= 2 ? used / (seconds / 60) : null;
  show("progress-rate", live && perMinute != null);
  setText("progress-rate", perMinute != null ? `${usd(perMinute)} a minute` : "");
};

function treeStats(s) {
  let nodes = 0, depth = 0, unscored = 0, root = null;
  for (const n of model.nodes.values()) {
    nodes += 1;
    if (n.depth > depth) depth = n.depth;
    if (n.depth > 0 && n.eval_score == null && !n.pruned && !n.parse_error) unscored += 1;
    if (n.id === s.root_node_id) root = n;
  }
  const reach = s.mode === "lats" && root ? `${root.visit_count} iterations` : `depth ${depth}`;
  // A large tree's rows still on their way: its size is known, its depth not yet.
  if (nodes < model.nodeCount) return { nodes: model.nodeCount.toLocaleString(), unscored, reach: "" };
  return { nodes, unscored, reach };
}

// The time spent running over all its runs (a pause, or the wait before a promote, does not count): the server's
// figure as it was sent, plus, while it runs, the time since it arrived. Never the server's clock against ours.
export function activeSeconds(s, now = Date.now()) {
  if (s.active_seconds == null) return null;
  const sent = Number(s.active_seconds);
  const running = s.status === "running" && typeof s.received_ms === "number";
  return sent + (running ? Math.max(0, (now - s.received_ms) / 1000) : 0);
}

// "started 14:02:11 CET · ended 14:02:46 CET · resumed 14:05:02 CET", in the order they happened: the first start
// (it never moves), when the search itself ended, and the latest resume (a resume, or a promote's run).
function timeline(s) {
  const marks = [["started", s.started_at], ["ended", s.ended_at]];
  if (s.resumed_at && s.resumed_at !== s.started_at) marks.push(["resumed", s.resumed_at]);
  return marks.filter(([, at]) => at).sort((a, b) => Date.parse(a[1]) - Date.parse(b[1]))
    .map(([what, at]) => `${what} ${clock(at)}`).join(" · ");
}

export function duration(seconds) {
  seconds = Math.round(seconds);
  if (seconds < 60) return `${seconds} s`;
  const m = Math.floor(seconds / 60), sec = seconds % 60;
  if (m < 60) return `${m} min ${String(sec).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
};

setInterval(renderProgress, TICK_MS);
