/* The data model: the rows the database sent (the last snapshot plus the deltas applied since), and what
 * follows from them alone: the hierarchy that reaches the root, pruned subtrees, the best path.
 *
 * The hierarchy is kept between updates: a new row whose parent is in it is inserted (no rebuild of 5,000 nodes
 * per event), an updated row replaces its node's data, and only what cannot be patched (a snapshot, a row that
 * arrived before its parent, a new root) rebuilds it. Each node's `kids` are all its children; `children` is
 * what the view draws (view.js trims it), so passes over the whole tree walk `kids` (hierarchy().order).
 */
import d3 from "./d3-from-npm.js";
import { clock, FINISHED, state } from "./util.js";

// The model imports no view: it says what changed, and each view listens for what it draws. Listeners run in the
// order they were added, synchronously, so a change is drawn before the next event is applied.
const bus = new EventTarget();
export function on(type, listener) {
  bus.addEventListener(type, (event) => listener(event.detail));
}
export function emit(type, detail) {
  bus.dispatchEvent(new CustomEvent(type, { detail }));
}
// Asking the drawing to show a node: select it, and move the view to it (reveal) or give it the keyboard focus
// (focus, centred, then a function once it is drawn).
export const showNode = (id, how) => emit("show-node", { id, ...how });

// The events: "snapshot" (a new snapshot was applied: search again, the loading bar, a lost selection), "row" (a node
// row arrived), "tree" (the drawing is stale), "session" (the header), "lineage" (a fork appeared), "facts",
// "actions" (the audit trail; an action's node for the inspector), "review" (a sign-off or its withdrawal) and
// "actions-wanted" (the snapshot had none); from the
// page's modules: "show-node" (above), "pan-to" (the minimap's click: {x, y, readable}), "selected" (the selection moved: {id, previous}), "drawn" (the tree was
// redrawn), "view-only" (a 403: this person may only watch from now on).

const model = {
  session: null,
  nodes: new Map(),
  edgesByTarget: new Map(),
  critiques: new Map(), // id -> row, in arrival order
  actions: new Map(),
  lastSeq: 0,
  nodeCount: 0, // the tree's size: the rows held, or more while a large snapshot is on its way
};
export { model };

export function applySnapshot(snapshot, seq) {
  model.session = received(snapshot.session);
  model.nodes = new Map((snapshot.nodes || []).map((n) => [n.id, n]));
  model.edgesByTarget = new Map((snapshot.edges || []).map((e) => [e.to_node_id, e]));
  model.critiques = new Map((snapshot.critiques || []).map((c) => [c.id, c]));
  const hasActions = Array.isArray(snapshot.actions);
  if (hasActions) model.actions = new Map(snapshot.actions.map((a) => [a.id, a]));
  model.lastSeq = typeof seq === "number" ? seq : (snapshot.session && snapshot.session.seq) || 0;
  model.nodeCount = Math.max(snapshot.node_count || 0, model.nodes.size); // the embedded page of a large tree has none
  indexCritiques();
  hier = null;
  if (!hasActions) emit("actions-wanted");
  emit("snapshot", { loading: model.nodes.size < model.nodeCount ? model.nodeCount : 0 });
  emit("session");
  emit("actions", null);
  emit("tree");
};

export function applyDelta(msg) {
  switch (msg.type) {
    case "node.created":
    case "node.updated": {
      const previous = model.nodes.get(msg.node.id);
      model.nodes.set(msg.node.id, msg.node);
      model.nodeCount = Math.max(model.nodeCount, model.nodes.size);
      noteRow(msg.node, previous);
      emit("row", msg.node);
      emit("tree"); // a prune or an edit changes the look of a whole subtree, and the inspector
      break;
    }
    case "edge.created":
      model.edgesByTarget.set(msg.edge.to_node_id, msg.edge);
      emit("tree"); // its action labels the link
      break;
    case "critique.created":
    case "critique.updated": // applied to the next attempt
      model.critiques.set(msg.critique.id, msg.critique);
      indexCritiques();
      emit("tree"); // the node's mark, and the inspector
      break;
    case "session.updated":
      model.session = received(keepDetail(msg.session, model.session));
      emit("session");
      emit("tree"); // the final node changes the best path
      break;
    case "review.updated": // four eyes: a decision, or its withdrawal when the answer changed
      model.session = { ...model.session, review: msg.review || null };
      emit("review");
      break;
    case "facts.updated": // an advisor changed the client's fact sheet; the nodes it touched follow as node.updated
      model.session = { ...model.session, facts: Array.isArray(msg.facts) ? msg.facts : [] };
      emit("facts");
      break;
    case "action.created":
    case "action.updated":
      model.actions.set(msg.action.id, msg.action);
      noteFork(msg.action);
      emit("actions", msg.action);
      break;
    default:
      break; // an event type this page does not show yet
  }
};

// Session events do not repeat what only the detail carries: the forks (fork actions add to them) and the client's
// facts (facts.updated replaces them).
function keepDetail(session, previous) {
  if (!session || !previous) return session;
  const kept = { ...session };
  for (const key of ["forks", "facts"]) if (!(key in session) && key in previous) kept[key] = previous[key];
  return kept;
}

// When the session's figures arrived: its active time counts on from here while it runs (the browser's clock alone).
function received(session) {
  return session ? { ...session, received_ms: Date.now() } : session;
}

function noteFork(action) {
  const id = action.action === "fork" && action.after && action.after.session_id;
  const forks = (model.session && model.session.forks) || [];
  if (!id || forks.includes(id)) return;
  model.session = { ...model.session, forks: [...forks, id] };
  emit("lineage", model.session);
}

export const isFinished = () => !!model.session && FINISHED.has(model.session.status);

export const sessionMode = () => (model.session && model.session.mode) || "tot";

export const selectedNode = () => (state.selectedId ? model.nodes.get(state.selectedId) || null : null);

// The critiques written about a node (attached to it), oldest first.
let critiquesByNode = new Map();
function indexCritiques() {
  critiquesByNode = new Map();
  for (const c of model.critiques.values()) {
    if (!critiquesByNode.has(c.node_id)) critiquesByNode.set(c.node_id, []);
    critiquesByNode.get(c.node_id).push(c);
  }
}
const NONE = Object.freeze([]);
export const critiquesOn = (nodeId) => critiquesByNode.get(nodeId) || NONE;

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

// {root, index: id -> node, order: every node parents first (pre-order over kids), unreached: rows left out}
let hier = null;

function build() {
  const { rows, rootId } = reachableRows();
  if (!rows.length) return { root: null, index: new Map(), order: [], unreached: model.nodes.size, rootId: null };
  const root = d3.stratify()
    .id((d) => d.id)
    .parentId((d) => (d.id === rootId ? null : d.parent_id))(rows);
  const index = new Map();
  root.each((d) => { d.kids = d.children || null; index.set(d.id, d); });
  return { root, index, order: null, unreached: model.nodes.size - rows.length, rootId };
}

// Patch the kept hierarchy for one row, or leave it to be rebuilt.
function noteRow(row, previous) {
  if (!hier) return;
  const known = hier.index.get(row.id);
  if (known) {
    if (previous && previous.parent_id === row.parent_id) known.data = row;
    else hier = null;
    return;
  }
  const parent = row.parent_id && hier.index.get(row.parent_id);
  if (!parent || hier.unreached > 0) { hier = null; return; } // a new root, or rows waiting for this one
  const node = d3.hierarchy(row, () => null);
  node.id = row.id;
  node.parent = parent;
  node.depth = parent.depth + 1;
  node.kids = null;
  const kids = parent.kids || (parent.kids = []);
  let at = kids.length; // rows arrive in creation order: almost always last
  while (at > 0 && byCreation(kids[at - 1].data, row) > 0) at -= 1;
  kids.splice(at, 0, node);
  hier.index.set(row.id, node);
  if (hier.order) insertInOrder(hier.order, node, at ? kids[at - 1] : null);
}

// Pre-order: a new leaf comes right after its parent, or after the whole subtree of the sibling before it.
function insertInOrder(order, node, before) {
  const after = before || node.parent;
  let i = order.lastIndexOf(after);
  if (i < 0) { hier.order = null; return; }
  if (before) while (i + 1 < order.length && order[i + 1].depth > before.depth) i += 1;
  order.splice(i + 1, 0, node);
}

// The kept hierarchy, rebuilt if need be; null while no row reaches a root.
export function hierarchy() {
  const wanted = model.session && model.session.root_node_id;
  if (hier && wanted && wanted !== hier.rootId && model.nodes.has(wanted)) hier = null;
  if (!hier) hier = build();
  if (!hier.root) return null;
  if (!hier.order) hier.order = preorder(hier.root);
  return hier;
};

function preorder(root) {
  const order = [];
  const stack = [root];
  while (stack.length) {
    const d = stack.pop();
    order.push(d);
    if (d.kids) for (let i = d.kids.length - 1; i >= 0; i--) stack.push(d.kids[i]);
  }
  return order;
}

// ---- pruning is a property of a subtree -------------------------------------------------

// The node whose own flag takes n out of the search: n itself or its nearest pruned ancestor; null if in.
export function pruneSource(n) {
  for (let a = n; a; a = a.parent_id ? model.nodes.get(a.parent_id) : null) {
    if (a.pruned) return a;
  }
  return null;
};

// The same answer for every node of the hierarchy in one pass (parents come first in `order`).
export function markOutOfSearch(order) {
  for (const d of order) d.pruneSource = d.data.pruned ? d.data : d.parent ? d.parent.pruneSource : null;
};

export const byOverseer = (source) => !!source && source.pruned_by === "overseer";

export function prunedText(n) {
  const source = pruneSource(n);
  if (!source) return "";
  const who = byOverseer(source) ? prunedBy(source) : null;
  if (source === n) return who ? `pruned by ${who}` : "dropped by the search's beam";
  return who ? `inside a branch pruned by ${who}` : "inside a branch dropped by the search's beam";
};

function prunedBy(source) {
  const when = source.pruned_at ? " at " + clock(source.pruned_at) : "";
  return (source.pruned_actor || "overseer") + when;
}

// Root -> the final node once there is one; before that, root -> the deepest, best-scored node in the search.
export function bestPath(hierarchy) {
  const finalId = model.session && model.session.final_node_id;
  let target = (finalId && hierarchy.index.get(finalId)) || null;
  if (!target) {
    for (const d of hierarchy.order) {
      if (d.pruneSource || d.data.eval_score == null) continue;
      if (!target || d.depth > target.depth ||
          (d.depth === target.depth && d.data.eval_score > target.data.eval_score)) target = d;
    }
  }
  const ids = new Set();
  for (let d = target; d; d = d.parent) ids.add(d.id);
  return ids;
};
