/* The tree panel's toolbar and keyboard: search, best path only, collapse, expand all, and moving through the
 * tree with the arrows; a permalink to the selected node (#node=<id>) that the page opens on.
 */
import { $, setText, state } from "./util.js";
import { on } from "./model.js";
import { afterUpdate, drawnNode, drawnRoot, fit, focusNode, panTo, showBelowTools } from "./tree.js";
import { treeSize, zoomTransform } from "./viewport.js";
import { expandAll, nextMatch, search, setBestOnly, toggleFold, view } from "./view.js";

// ---- search -------------------------------------------------------------------------------

const searchBox = $("tree-search");

function runSearch() {
  search(searchBox.value);
  renderSearchCount();
  // The first match is shown, below the search box however far out the view is: its label is why one searched.
  // Unless Enter moved to a match before the frame came: its centring must not be cut short by this nudge.
  if (view.matches.length) afterUpdate(() => { if (view.matchIndex < 0) showBelowTools(view.matches[0]); });
}

// "12 found", or "3 of 12" once Enter moved through them; nodes arriving later count too (view.js).
export function renderSearchCount() {
  const { query, matches, matchIndex } = view;
  const count = matches.length;
  const text = !query ? "" : !count ? "none" : matchIndex >= 0 ? `${matchIndex + 1} of ${count}` : `${count} found`;
  setText("search-count", text);
  $("search-count").dataset.tone = query && !count ? "none" : "";
};

function searchKeys(event) {
  if (event.key === "Enter") {
    event.preventDefault();
    if (view.query !== searchBox.value.trim().toLowerCase()) runSearch();
    searchBox.blur(); // the keys are the tree's again at once: n and N move on; / comes back here
    nextMatch(event.shiftKey ? -1 : 1); // and the match takes the focus once it is drawn
  } else if (event.key === "Escape") {
    searchBox.value = "";
    runSearch();
    searchBox.blur();
  }
}

// ---- folds and views ----------------------------------------------------------------------------

function toggleSelectedFold() {
  const d = drawnNode(state.selectedId);
  if (d) toggleFold(d.id, d);
}

function toggleBestOnly() {
  setBestOnly(!view.bestOnly);
}

function fitAll() {
  state.userMoved = false;
  fit(true);
}

// ---- moving through the tree ------------------------------------------------------------------

// Left: the parent; right: the first child (opening a fold); up and down: the siblings in layout order.
function step(d, key) {
  if (key === "ArrowLeft") return d.parent;
  if (key === "ArrowRight") return d.children ? d.children[0] : null;
  const siblings = d.parent ? d.parent.children : [d];
  const i = siblings.indexOf(d) + (key === "ArrowUp" ? -1 : 1);
  return siblings[i] || null;
}

function move(key) {
  const root = drawnRoot();
  if (!root) return;
  const current = drawnNode(state.selectedId);
  if (!current) { focusNode(root.id); return; }
  if (key === "ArrowRight" && !current.children && current.hidden > 0) {
    toggleFold(current.id, current); // open it, then step in once it is drawn
    afterUpdate(() => move(key));
    return;
  }
  const next = step(current, key);
  if (!next) return;
  focusNode(next.id);
  keepInView(next);
}

// Pan just enough that a node the arrows reached is on screen.
function keepInView(d) {
  const t = zoomTransform();
  const size = treeSize();
  const sx = t.applyX(d.y), sy = t.applyY(d.x);
  const margin = 40;
  if (sx < margin || sy < margin || sx > size.width - margin || sy > size.height - margin) panTo(d.x, d.y, true);
}

// ---- keys ---------------------------------------------------------------------------------

const KEYS = { "/": () => { searchBox.focus(); searchBox.select(); }, c: toggleSelectedFold, b: toggleBestOnly, 0: fitAll, n: () => nextMatch(1), N: () => nextMatch(-1) };
const ARROWS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"]);

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
  if (ARROWS.has(event.key)) {
    if (!inTreeOrPage(event.target)) return; // the side panel keeps its own arrow keys (scrolling)
    event.preventDefault();
    move(event.key);
    return;
  }
  const action = KEYS[event.key];
  if (!action) return;
  event.preventDefault();
  action();
}

function isTyping(target) {
  return !!(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
}

function inTreeOrPage(target) {
  return target === document.body || !!(target && target.closest && target.closest(".tree-panel"));
}

// ---- permalink ------------------------------------------------------------------------------

export function writePermalink(id) {
  const hash = id ? "#node=" + encodeURIComponent(id) : "";
  if (location.hash === hash) return;
  history.replaceState(null, "", location.pathname + location.search + hash);
};

function linkedNode() {
  const match = /^#node=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

export function openPermalink() {
  const id = linkedNode();
  if (id && id !== state.selectedId) focusNode(id, { center: true });
}

// ---- wiring -------------------------------------------------------------------------------

searchBox.addEventListener("input", runSearch);
searchBox.addEventListener("keydown", searchKeys);
$("best-button").addEventListener("click", toggleBestOnly);
$("collapse-button").addEventListener("click", toggleSelectedFold);
$("expand-all-button").addEventListener("click", () => expandAll());
document.addEventListener("keydown", onKey);
window.addEventListener("hashchange", openPermalink);
on("selected", ({ id }) => writePermalink(id));
on("search-count", renderSearchCount);
