/* What of the tree is drawn: subtrees a person collapsed or opened, out-of-search children folded away at
 * scale, the best-path-only view, and the search's matches. It trims the full hierarchy before the layout,
 * so the drawing (tree.js) never sees hidden nodes.
 */
(function (E) {
  "use strict";

  E.FOLD_PRUNED_ABOVE = 500; // above this many nodes, children dropped from the search start folded away

  const view = {
    collapsed: new Set(), // ids whose children are all hidden
    opened: new Set(), // ids whose out-of-search children are shown although the tree is large
    bestOnly: false,
    query: "",
    matches: [], // ids whose thought contains the query, in layout order
    matchIndex: -1,
  };
  E.view = view;

  // Trim the full hierarchy (pre-order, parents first): each node keeps `hidden`, how many descendants it folds.
  E.visibleTree = function (root, best) {
    const atScale = E.model.nodes.size > E.FOLD_PRUNED_ABOVE;
    root.eachAfter((d) => {
      d.size = 1;
      if (d.children) for (const c of d.children) d.size += c.size;
    });
    root.each((d) => {
      d.hidden = 0;
      d.hasKids = !!d.children;
      if (!d.children) return;
      const kept = [];
      for (const c of d.children) {
        if (keep(d, c, atScale, best)) kept.push(c);
        else d.hidden += c.size;
      }
      d.children = kept.length ? kept : undefined;
    });
    return root;
  };

  function keep(parent, child, atScale, best) {
    if (view.bestOnly) return best.has(child.id);
    if (view.collapsed.has(parent.id)) return false;
    if (atScale && child.pruneSource && !parent.pruneSource && !view.opened.has(parent.id)) return false;
    return true;
  }

  // Collapse a node that shows children; open one that hides some.
  E.toggleFold = function (id, d) {
    if (!d || !d.hasKids) return;
    if (d.hidden > 0 && !view.bestOnly) {
      view.collapsed.delete(id);
      view.opened.add(id);
    } else {
      view.collapsed.add(id);
      view.opened.delete(id);
    }
    E.scheduleUpdate();
  };

  E.expandAll = function () {
    view.collapsed.clear();
    for (const id of E.model.nodes.keys()) view.opened.add(id);
    E.scheduleUpdate();
  };

  E.collapseToDefault = function () {
    view.collapsed.clear();
    view.opened.clear();
    E.scheduleUpdate();
  };

  E.setBestOnly = function (on) {
    view.bestOnly = !!on;
    E.$("best-button").setAttribute("aria-pressed", String(view.bestOnly));
    E.userMoved = false; // a different tree: fit it
    E.scheduleUpdate();
  };

  // Make a node drawable: open every fold on the way from the root to it, and leave best-path-only if it is off the path.
  E.unfoldTo = function (id) {
    const nodes = E.model.nodes;
    let changed = false;
    for (let n = nodes.get(id), p = n && n.parent_id && nodes.get(n.parent_id); p; p = p.parent_id && nodes.get(p.parent_id)) {
      if (view.collapsed.delete(p.id)) changed = true;
      if (!view.opened.has(p.id)) { view.opened.add(p.id); changed = true; }
    }
    if (view.bestOnly && !E.isDrawn(id)) { view.bestOnly = false; E.$("best-button").setAttribute("aria-pressed", "false"); changed = true; }
    if (changed) E.scheduleUpdate();
    return changed;
  };

  // ---- search ---------------------------------------------------------------------------------

  // Every node whose thought contains the query (case-insensitive), in creation order.
  E.search = function (query) {
    view.query = String(query || "").trim().toLowerCase();
    view.matches = [];
    view.matchIndex = -1;
    if (view.query) {
      for (const n of E.model.nodes.values()) {
        if (String(n.thought || "").toLowerCase().includes(view.query)) view.matches.push(n.id);
      }
    }
    E.scheduleUpdate();
    return view.matches.length;
  };

  E.isMatch = (id) => view.query !== "" && matchSet().has(id);

  let cachedFor = null, cachedSet = new Set();
  function matchSet() {
    if (cachedFor !== view.matches) { cachedFor = view.matches; cachedSet = new Set(view.matches); }
    return cachedSet;
  }

  // The next match after the current one (wrapping): unfolded, selected and centred (the search box keeps the focus).
  E.nextMatch = function (step, fromSearchBox) {
    if (!view.matches.length) return null;
    const n = view.matches.length;
    view.matchIndex = (view.matchIndex + (step || 1) + n) % n;
    const id = view.matches[view.matchIndex];
    E.focusNode(id, { center: true, keepFocus: !!fromSearchBox });
    return id;
  };
})(window.Explorer);
