/* The data model: the rows the database sent (the last snapshot plus the deltas applied since), and what
 * follows from them alone: the hierarchy that reaches the root, pruned subtrees, the best path.
 */
(function (E) {
  "use strict";

  const model = {
    session: null,
    nodes: new Map(),
    edgesByTarget: new Map(),
    critiques: new Map(), // id -> row, in arrival order
    actions: new Map(),
    lastSeq: 0,
  };
  E.model = model;

  E.applySnapshot = function (snapshot, seq) {
    model.session = snapshot.session;
    model.nodes = new Map((snapshot.nodes || []).map((n) => [n.id, n]));
    model.edgesByTarget = new Map((snapshot.edges || []).map((e) => [e.to_node_id, e]));
    model.critiques = new Map((snapshot.critiques || []).map((c) => [c.id, c]));
    if (Array.isArray(snapshot.actions)) model.actions = new Map(snapshot.actions.map((a) => [a.id, a]));
    else E.loadActionsOnce();
    model.lastSeq = typeof seq === "number" ? seq : (snapshot.session && snapshot.session.seq) || 0;
    if (E.selectedId && !model.nodes.has(E.selectedId)) E.select(null);
    E.renderSession();
    E.renderAudit();
    E.scheduleUpdate();
  };

  E.applyDelta = function (msg) {
    switch (msg.type) {
      case "node.created":
      case "node.updated":
        model.nodes.set(msg.node.id, msg.node);
        E.scheduleUpdate(); // a prune or an edit changes the look of a whole subtree, and the inspector
        break;
      case "edge.created":
        model.edgesByTarget.set(msg.edge.to_node_id, msg.edge);
        E.scheduleUpdate(); // its action labels the link
        break;
      case "critique.created":
      case "critique.updated": // applied to the next attempt
        model.critiques.set(msg.critique.id, msg.critique);
        E.scheduleUpdate(); // the node's mark, and the inspector
        break;
      case "session.updated":
        model.session = keepForks(msg.session, model.session);
        E.renderSession();
        E.scheduleUpdate(); // the final node changes the best path
        break;
      case "action.created":
      case "action.updated":
        model.actions.set(msg.action.id, msg.action);
        noteFork(msg.action);
        E.renderAudit();
        break;
      default:
        break; // an event type this page does not show yet
    }
  };

  // Session events do not repeat the list of forks the snapshot carried; fork actions add to it.
  function keepForks(session, previous) {
    if (session && !("forks" in session) && previous && previous.forks) return { ...session, forks: previous.forks };
    return session;
  }

  function noteFork(action) {
    const id = action.action === "fork" && action.after && action.after.session_id;
    const forks = (model.session && model.session.forks) || [];
    if (!id || forks.includes(id)) return;
    model.session = { ...model.session, forks: [...forks, id] };
    E.renderLineage(model.session);
  }

  E.isFinished = () => !!model.session && E.FINISHED.has(model.session.status);

  E.mode = () => (model.session && model.session.mode) || "tot";

  E.selectedNode = () => (E.selectedId ? model.nodes.get(E.selectedId) || null : null);

  // The critiques written about a node (attached to it), oldest first.
  E.critiquesOn = (nodeId) => Array.from(model.critiques.values()).filter((c) => c.node_id === nodeId);

  // ---- the hierarchy ------------------------------------------------------------------------

  // The rows that reach the root, in creation order: a row whose parent has not arrived waits for it.
  function reachableRows() {
    const rows = Array.from(model.nodes.values());
    if (!inOrder(rows)) rows.sort(byCreation); // rows arrive in creation order: sorting 5,000 each frame is waste
    if (!rows.length) return { rows: [], rootId: null };
    const wanted = model.session && model.session.root_node_id;
    const root = model.nodes.get(wanted) || rows.find((r) => !r.parent_id || !model.nodes.has(r.parent_id));
    if (!root) return { rows: [], rootId: null };
    if (onlyRoot(rows, root)) return { rows, rootId: root.id }; // the usual case: every parent has arrived
    const children = new Map();
    for (const r of rows) {
      if (!r.parent_id) continue;
      if (!children.has(r.parent_id)) children.set(r.parent_id, []);
      children.get(r.parent_id).push(r);
    }
    const seen = new Set([root.id]);
    const queue = [root];
    for (let i = 0; i < queue.length; i++) {
      for (const child of children.get(queue[i].id) || []) {
        if (!seen.has(child.id)) { seen.add(child.id); queue.push(child); }
      }
    }
    return { rows: rows.filter((r) => seen.has(r.id)), rootId: root.id };
  }

  function onlyRoot(rows, root) {
    for (const r of rows) if (r !== root && (!r.parent_id || !model.nodes.has(r.parent_id))) return false;
    return true;
  }

  function inOrder(rows) {
    for (let i = 1; i < rows.length; i++) if (byCreation(rows[i - 1], rows[i]) > 0) return false;
    return true;
  }

  function byCreation(a, b) {
    if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
    if (a.depth !== b.depth) return a.depth - b.depth;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  E.buildHierarchy = function () {
    const { rows, rootId } = reachableRows();
    if (!rows.length) return null;
    return d3.stratify()
      .id((d) => d.id)
      .parentId((d) => (d.id === rootId ? null : d.parent_id))(rows);
  };

  // ---- pruning is a property of a subtree -------------------------------------------------

  // The node whose own flag takes n out of the search: n itself or its nearest pruned ancestor; null if in.
  E.pruneSource = function (n) {
    for (let a = n; a; a = a.parent_id ? model.nodes.get(a.parent_id) : null) {
      if (a.pruned) return a;
    }
    return null;
  };

  // The same answer for every node of a laid-out hierarchy in one pass (each() visits parents first).
  E.markOutOfSearch = function (root) {
    root.each((d) => { d.pruneSource = d.data.pruned ? d.data : d.parent ? d.parent.pruneSource : null; });
  };

  E.byOverseer = (source) => !!source && source.pruned_by === "overseer";

  E.prunedText = function (n) {
    const source = E.pruneSource(n);
    if (!source) return "";
    const who = E.byOverseer(source) ? prunedBy(source) : null;
    if (source === n) return who ? `pruned by ${who}` : "dropped by the search's beam";
    return who ? `inside a branch pruned by ${who}` : "inside a branch dropped by the search's beam";
  };

  function prunedBy(source) {
    const when = source.pruned_at ? " at " + E.clock(source.pruned_at) : "";
    return (source.pruned_actor || "overseer") + when;
  }

  // Root -> the final node once there is one; before that, root -> the deepest, best-scored node in the search.
  E.bestPath = function (root) {
    let target = null;
    const finalId = model.session && model.session.final_node_id;
    root.each((d) => { if (d.id === finalId) target = d; });
    if (!target) {
      root.each((d) => {
        if (d.pruneSource || d.data.eval_score == null) return;
        if (!target || d.depth > target.depth ||
            (d.depth === target.depth && d.data.eval_score > target.data.eval_score)) target = d;
      });
    }
    const ids = new Set();
    for (let d = target; d; d = d.parent) ids.add(d.id);
    return ids;
  };
})(window.Explorer);
