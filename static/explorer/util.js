/* The live tree explorer, ES modules loaded by session_detail.html from main.js (no bundler, no globals):
 *
 *   util.js        the page's constants, its shared state (selection, view moved, may act), text and DOM helpers
 *   d3.js          d3 from npm (node_modules/d3), as a module
 *   model.js       the data: the last snapshot plus the deltas since; hierarchy, pruned subtrees, best path; and
 *                  the page's events (on, emit): the model says what changed, views ask each other through it
 *   strategies.js  how each strategy's nodes look and what its inspector shows (a registry by mode)
 *   tree.js        the D3 drawing: layers created once, one update() joined by node id; at scale only the view
 *   farview.js     a large tree zoomed out too far to read, painted on a canvas under the SVG
 *   view.js        what is drawn: collapsed and folded subtrees, best path only, search matches
 *   minimap.js     the whole tree in a corner with the view's rectangle (large trees)
 *   treetools.js   the tree's toolbar and keys: search, best path, collapse, arrows; the #node= permalink
 *   export.js      the tree as JSON (the API's format), SVG and PNG
 *   inspector.js   the selected node's side panel
 *   facts.js       the client's fact sheet above the tree, and the advisor's form to correct, add or remove a fact
 *   factvalues.js  a fact's value as people read it ("USD 3.2M", "70% of portfolio", "California (US-CA)")
 *   checks.js      fact-check findings: listed failed first, their spans marked in a thought or the answer
 *   figures.js     declared figures: each marked where it is written, its chain back to the client's facts on hover
 *   session.js     the session header, the final answer, lineage
 *   status.js      the status line: what an action is doing, did, or why it was refused
 *   progress.js    the header's status sentence and progress (depth, nodes, elapsed, spend rate), ticking
 *   answer.js      the recommendation: collapse, copy, its steps linked to their nodes, its figure badge
 *   compare.js     two nodes side by side ("Compare with…" in the inspector)
 *   review.js      four eyes: the answer's sign-off, its state for all, approve or request changes for reviewers
 *   steering.js    every overseer action, the inspector's forms, shortcuts, the audit trail
 *   http.js        requests to the JSON API (CSRF, refusals as results; a 403 makes the page view-only)
 *   socket.js      the websocket: receive only, seq-checked, re-synced by snapshot
 *   main.js        wiring: the page's snapshot first, then the socket
 *
 * Imports run one way: model.js, util.js, status.js, http.js and viewport.js are leaves; a module that must make
 * another act (select a node, redraw, pan the view, show the inspector) emits an event through model.js and the other
 * listens (model.js lists the events). Listeners run synchronously in the order the modules were evaluated. The
 * drawing's painters (farview.js, minimap.js) read its zoom and size from viewport.js, so no two modules import each
 * other in a circle. No module calls
 * another while it loads (main.js starts the page once every module is evaluated). Everything the model or a person wrote goes into the
 * page through textContent or d3's .text(), never as HTML: it is untrusted.
 */

export const container = document.getElementById("explorer");
export const wsPath = container.dataset.wsPath;

// What several modules read and change: the selection, whether the user moved the view, whether they may act.
export const state = {
  selectedId: null,
  userMoved: false, // once the user pans or zooms, stop fitting the tree automatically
  canAct: container.dataset.canAct === "true", // a 403 turns it off for the rest of the page's life
  look: null, // {strategy, ctx} of the last tree update: the inspector reads the same numbers
};

export const FINISHED = new Set(["solved", "failed", "exhausted", "cancelled"]);
export const UNSCORED = "#9aabc2"; // neutral grey-blue for a thought not scored (yet)
export const NODE_RADIUS = 7; // the base node radius
export const DURATION = 350;
export const READABLE_ZOOM = 0.4; // below this zoom the tree's text is too small to read, so it is not drawn
export const SNAPSHOT_TIMEOUT_MS = 5000; // a re-sync request unanswered this long falls back to a reconnect
export const OK_MESSAGE_MS = 6000; // a success note in the status line fades after this long

export const $ = (id) => document.getElementById(id);
export const setText = (id, text) => { $(id).textContent = text == null ? "" : String(text); };
export const show = (id, visible) => { $(id).hidden = !visible; };

export const firstLine = (text) => String(text || "").trim().split(/\r?\n/, 1)[0];

// At most n characters, cut after a whole word where one ends in the last third, with an ellipsis.
export const truncate = (text, n) => {
  text = String(text || "");
  if (text.length <= n) return text;
  const cut = text.slice(0, n - 1);
  const space = cut.lastIndexOf(" ");
  return (space > (n - 1) * 0.66 ? cut.slice(0, space) : cut).trimEnd() + "…";
};

// A time of day in the browser's zone, labelled: "14:02:11 CET".
export { localClock as clock } from "./localtime.js";

export const shortId = (id) => String(id || "").slice(0, 8);

// Money as reasoning/money.py writes it, one way everywhere: four decimals ("0.0062 USD"), "< 0.0001 USD" below them.
export const usd = (value) => {
  const amount = Number(value || 0);
  if (!isFinite(amount)) return "0.0000 USD";
  const rounded = Math.round(Math.abs(amount) * 1e4) / 1e4;
  if (rounded === 0 && amount !== 0) return `${amount < 0 ? "-" : ""}< 0.0001 USD`;
  const text = rounded.toLocaleString("en-US", { minimumFractionDigits: 4, maximumFractionDigits: 4 });
  return `${amount < 0 && rounded !== 0 ? "-" : ""}${text} USD`;
};

export const fixed = (value, digits) => (typeof value === "number" && isFinite(value) ? value.toFixed(digits) : "—");

// A state value as one line of text: strings as they are, anything else as compact JSON.
export const plain = (value) => {
  if (value == null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  try { return JSON.stringify(value); } catch (e) { return String(value); }
};

export const sessionUrl = (id) => `/sessions/${encodeURIComponent(id)}/`;
