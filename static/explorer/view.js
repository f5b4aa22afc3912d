/* What of the tree is drawn: subtrees a person collapsed or opened, out-of-search children folded away at
 * scale, the best-path-only view, and the search's matches. It trims the full hierarchy before the layout,
 * so the drawing (tree.js) never sees hidden nodes.
 */
import { $, state } from "./util.js";
import { emit, model, on, showNode } from "./model.js";

export const FOLD_PRUNED_ABOVE = 500; // above this many nodes, children dropped from the search start folded away
// Decided once, on the first tree the page draws: a live tree that grows past the limit never re-folds under its reader.
let foldAtScale = null;

const view = {
  collapsed: new Set(), // ids whose children are all hidden
  opened: new Set(), // ids whose out-of-search children are shown although the tree is large
  bestOnly: false,
  query: "",
  matches: [], // ids whose thought contains the query, in layout order
  matchIndex: -1,
};
export { view };

// What is drawn of the whole hierarchy (model.js): each node's `children` are the kids it shows, and `hidden`
// how many descendants it folds away. Returns the root; the nodes under a folded one are not visited.
export function visibleTree(hierarchy, best) {
  if (foldAtScale === null) foldAtScale = model.nodes.size > FOLD_PRUNED_ABOVE;
  const atScale = foldAtScale;
  const order = hierarchy.order;
  for (let i = order.length - 1; i >= 0; i--) {
    const d = order[i];
    d.size = 1;
    if (d.kids) for (const c of d.kids) d.size += c.size;
  }
  for (const d of order) {
    d.hidden = 0;
    d.hasKids = !!(d.kids && d.kids.length);
    if (!d.hasKids) { d.children = undefined; continue; }
    let kept = null; // the kids array itself while every kid is kept
    for (let i = 0; i < d.kids.length; i++) {
      const c = d.kids[i];
      if (keep(d, c, atScale, best)) { if (kept) kept.push(c); } else {
        if (!kept) kept = d.kids.slice(0, i);
        d.hidden += c.size;
      }
    }
    d.children = kept ? (kept.length ? kept : undefined) : d.kids;
  }
  return hierarchy.root;
};

function keep(parent, child, atScale, best) {
  if (view.bestOnly) return best.has(child.id);
  if (view.collapsed.has(parent.id)) return false;
  if (atScale && child.pruneSource && !parent.pruneSource && !view.opened.has(parent.id)) return false;
  return true;
}

// Collapse a node that shows children; open one that hides some.
export function toggleFold(id, d) {
  if (!d || !d.hasKids) return;
  if (d.hidden > 0 && !view.bestOnly) {
    view.collapsed.delete(id);
    view.opened.add(id);
  } else {
    view.collapsed.add(id);
    view.opened.delete(id);
  }
  emit("tree");
};

export function expandAll() {
  view.collapsed.clear();
  for (const id of model.nodes.keys()) view.opened.add(id);
  emit("tree");
};

export function collapseToDefault() {
  view.collapsed.clear();
  view.opened.clear();
  emit("tree");
};

export function setBestOnly(on) {
  view.bestOnly = !!on;
  $("best-button").setAttribute("aria-pressed", String(view.bestOnly));
  state.userMoved = false; // a different tree: fit it
  emit("tree");
};

// Make a node drawable: open every fold on the way from the root to it, and leave best-path-only if it is off the path
// (drawn: whether the drawing has it now).
export function unfoldTo(id, drawn) {
  const nodes = model.nodes;
  let changed = false;
  for (let n = nodes.get(id), p = n && n.parent_id && nodes.get(n.parent_id); p; p = p.parent_id && nodes.get(p.parent_id)) {
    if (view.collapsed.delete(p.id)) changed = true;
    if (!view.opened.has(p.id)) { view.opened.add(p.id); changed = true; }
  }
  if (view.bestOnly && !drawn) { view.bestOnly = false; $("best-button").setAttribute("aria-pressed", "false"); changed = true; }
  if (changed) emit("tree");
  return changed;
};

// ---- search ---------------------------------------------------------------------------------

// Every node whose thought contains the query (case-insensitive), in creation order.
export function search(query) {
  view.query = String(query || "").trim().toLowerCase();
  view.matches = [];
  view.matchIndex = -1;
  if (view.query) {
    for (const n of model.nodes.values()) {
      if (String(n.thought || "").toLowerCase().includes(view.query)) view.matches.push(n.id);
    }
  }
  emit("tree");
  return view.matches.length;
};

// A row that arrived or changed while a search is on joins or leaves the matches (and the count says so).
export function searchRow(row) {
  if (!view.query) return;
  const hit = String(row.thought || "").toLowerCase().includes(view.query);
  const set = matchSet();
  if (hit === set.has(row.id)) return;
  if (hit) {
    view.matches.push(row.id);
    set.add(row.id);
  } else {
    const at = view.matches.indexOf(row.id);
    view.matches.splice(at, 1);
    set.delete(row.id);
    if (view.matchIndex >= at && view.matchIndex > -1) view.matchIndex -= 1;
  }
  emit("search-count");
};

// After a snapshot: the same search over the rows it brought.
export function searchAgain() {
  if (!view.query) return;
  search(view.query);
  emit("search-count");
};

export const isMatch = (id) => view.query !== "" && matchSet().has(id);

let cachedFor = null, cachedSet = new Set();
function matchSet() {
  if (cachedFor !== view.matches) { cachedFor = view.matches; cachedSet = new Set(view.matches); }
  return cachedSet;
}

// The next match after the current one (wrapping): unfolded, selected, centred and focused, so n and N go on from it.
export function nextMatch(step) {
  if (!view.matches.length) return null;
  const n = view.matches.length;
  view.matchIndex = (view.matchIndex + (step || 1) + n) % n;
  const id = view.matches[view.matchIndex];
  showNode(id, { focus: true, center: true });
  emit("search-count"); // "3 of 18", whichever key moved it
  return id;
}

on("snapshot", searchAgain);
on("row", searchRow);
