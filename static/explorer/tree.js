/* The D3 drawing: layers created once, one update() that lays out what the view shows and joins it to the DOM
 * by node id (links and their labels by their target's id), entering nodes growing from their parent's previous
 * position. How a node looks (size, colour, label, marks) comes from the session's strategy (strategies.js).
 *
 * At scale the DOM holds only what is near the view: above CULL_ABOVE laid-out nodes, a node is drawn when it is
 * inside the view's window (the view plus WINDOW_MARGIN of a view on each side) or selected; panning past the window draws
 * the new one, with no new layout. Zoomed out too far to read, a canvas paints the whole tree instead and the
 * SVG keeps only the selected node and the keyboard's (farview.js). A node's rarely used parts (halo, marks,
 * tag, fold toggle, tooltip) are made when it first needs them. Everything the model wrote is set as text.
 */
import d3 from "./d3-from-npm.js";
import { $, DURATION, firstLine, NODE_RADIUS, READABLE_ZOOM, setText, show, state, truncate } from "./util.js";
import { bestPath, byOverseer, emit, hierarchy, markOutOfSearch, model, on, prunedText } from "./model.js";
import { currentStrategy, fillOf } from "./strategies.js";
import { isFar, paintFar, repaintFar } from "./farview.js";
import { isMatch, toggleFold, unfoldTo, view, visibleTree } from "./view.js";
import { renderMinimap, renderMinimapView } from "./minimap.js";
import { failedOf } from "./checks.js";
import { attachViewport, setTreeBounds } from "./viewport.js";

const MAX_ANIMATED = 300; // above this many drawn nodes, updates jump instead of animating
const CULL_ABOVE = 600; // above this many laid-out nodes, only those near the view are in the DOM
const WINDOW_MARGIN = 0.3; // ... within this many views of it on each side (panning inside redraws nothing)
const TAG_SPACE = 14; // above the top row, when nodes carry tags

let lastRoot = null;
let deepestColumn = 0; // the laid-out tree's last column: its labels have the room Fit keeps right of the tree
let maxRadius = NODE_RADIUS;
let hasTags = false;
let bounds = null; // of the last layout, with room for marks and labels
const positions = new Map(); // id -> {x, y} of the previous animated layout: where entering children start

// Layers, created once: zoom moves the outer <g>; links under their labels, under the nodes.
const svg = d3.select("#tree");
const viewport = svg.append("g").attr("class", "viewport");
const gLink = viewport.append("g").attr("class", "links");
const gEdgeLabel = viewport.append("g").attr("class", "edge-labels");
const gNode = viewport.append("g").attr("class", "nodes");
// The panel's size, read when it changes: reading it after drawing would force a layout of the whole tree.
const size = { width: svg.node().clientWidth, height: svg.node().clientHeight };
new ResizeObserver(() => {
  size.width = svg.node().clientWidth;
  size.height = svg.node().clientHeight;
  if (!state.userMoved) fit(false);
  if (laid.nodes.length) scheduleUpdate(); // the layout follows the panel's shape (fillPanel)
  viewMoved();
}).observe(svg.node());
attachViewport(svg.node(), size);
let far = null; // zoomed out too far to read text: text is not drawn (painting it costs more than the tree)
const zoom = d3.zoom()
  .scaleExtent([0.08, 3])
  .extent(() => [[0, 0], [size.width, size.height]]) // d3 would read the svg's size: a forced layout
  .on("zoom", (event) => {
    viewport.attr("transform", event.transform);
    if (far !== event.transform.k < READABLE_ZOOM) {
      far = event.transform.k < READABLE_ZOOM;
      svg.classed("far", far);
      refitLabels(); // kept labels take more room where the others are hidden
      raiseKept();
    }
    scaleLabels(event.transform.k);
    if (!tip.hidden) followTip();
    if (event.sourceEvent) state.userMoved = true;
    renderMinimapView(event.transform);
    viewMoved();
  });
svg.call(zoom).on("dblclick.zoom", null);

// Text is never smaller than LABEL_PX on screen: zoomed out, it grows in the layout as the view shrinks it; where rows
// are too close for text that size, only the labels kept at any zoom are drawn (level of detail: the best path, the
// selected node, search matches), never an unreadable one. Each label is cut after a word, with an ellipsis, to the
// room before the next column, and sits on a background the links pass under.
const LABEL_PX = 11;
const SCALE_STEP = 1.08; // the label scale moves in steps (text never under LABEL_PX), so zooming refits labels rarely
const TOOLBAR_PX = 52; // the tree tools' row over the stage's top (more where they wrap: toolsPx)
let toolsPx = TOOLBAR_PX; // how far down the stage the tree tools reach, read when they change size
const tools = document.querySelector(".tree-tools");
if (tools) new ResizeObserver(() => { toolsPx = Math.max(TOOLBAR_PX, tools.offsetTop + tools.offsetHeight + 8); }).observe(tools);
const defs = svg.append("defs");
const edgeClip = defs.append("clipPath").attr("id", "edge-clip").attr("clipPathUnits", "userSpaceOnUse")
  .append("rect").attr("y", -400).attr("height", 800); // an action on a link keeps to its link's width
let labelScale = null, rowGap = 26, columnGap = 200, tight = null;
function scaleLabels(k) {
  const scale = k >= 1 ? 1 : SCALE_STEP ** Math.ceil(Math.log(1 / k) / Math.log(SCALE_STEP) - 1e-9);
  if (scale !== labelScale) {
    labelScale = scale;
    viewport.style("--label-scale", scale);
    refitLabels();
  }
  const isTight = rowGap * k < LABEL_PX + 2;
  if (isTight !== tight) { tight = isTight; svg.classed("tight", tight); refitLabels(); raiseKept(); }
}

const diagonal = d3.linkHorizontal().x((d) => d.y).y((d) => d.x);
// A small speech bubble (10 x 9.5): a critique or reflection is attached to the node.
const BUBBLE = "M0,1.5 a1.5,1.5 0 0 1 1.5,-1.5 h7 a1.5,1.5 0 0 1 1.5,1.5 v4 a1.5,1.5 0 0 1 -1.5,1.5 " +
  "h-4.5 l-2.5,2.5 v-2.5 a1.5,1.5 0 0 1 -1.5,-1.5 z";

let pending = false;
let lastAnimated = true;
// The last layout: every laid-out node and link (what the view shows, folds applied), and how it looks.
// A node of the hierarchy is laid out when its `laid` is the layout's stamp (no map of 5,000 ids per update).
let laid = { nodes: [], index: new Map(), stamp: 0, best: new Set(), look: null, version: 0 };
let stamp = 0;
const laidOut = (id) => {
  const d = id ? laid.index.get(id) : null;
  return d && d.laid === laid.stamp ? d : null;
};
const elements = new Map(); // id -> its g.node, for the nodes in the DOM
let windowRect = null; // the layout rectangle whose nodes are in the DOM; null: every node is
let drawAll = false; // while an export needs every node in the DOM
let tabStopId = null; // the one node reachable by Tab (roving tabindex): arrows move it
const waiting = []; // callbacks waiting for the next drawing (a node being unfolded before it is focused)

// Events arriving in one frame cost one layout and one join.
export function scheduleUpdate() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    update();
    emit("drawn"); // the inspector reads the same numbers as the drawing
    for (const done of waiting.splice(0)) done();
  });
};
export const afterUpdate = (fn) => { waiting.push(fn); scheduleUpdate(); };
export const onNextUpdate = (fn) => { waiting.push(fn); }; // at load: the page's first drawing (main.js) runs it

function update() {
  const strategy = currentStrategy();
  const hier = hierarchy();
  let root = null, best = new Set(), ctx = {};
  if (hier) {
    markOutOfSearch(hier.order);
    best = bestPath(hier);
    ctx = strategy.prepare(hier.order.map((d) => d.data));
    root = visibleTree(hier, best);
  }
  const look = { strategy, ctx, key: strategy.mode + ":" + strategy.ctxKey(ctx) };
  state.look = look;
  const layout = d3.tree().nodeSize(strategy.nodeSize).separation((a, b) => (a.parent === b.parent ? 1 : 1.3));
  if (root) layout(root);
  const nodes = root ? root.descendants() : [];
  anchorTop(nodes);
  fillPanel(nodes, strategy);
  stamp += 1;
  let radius = NODE_RADIUS;
  hasTags = false;
  const wasDeepest = deepestColumn;
  deepestColumn = 0;
  for (const d of nodes) {
    d.laid = stamp;
    if (d.depth > deepestColumn) deepestColumn = d.depth;
    d.r = strategy.radius(d.data, ctx);
    d.best = best.has(d.id);
    if (d.r > radius) radius = d.r;
    if (!hasTags && strategy.tag(d.data)) hasTags = true;
  }
  maxRadius = radius;
  if (deepestColumn !== wasDeepest) refitLabels(); // the last column's labels have more room than the others
  // Transitions on thousands of elements cost more than a frame: large trees jump.
  const animate = nodes.length <= MAX_ANIMATED;
  laid = { nodes, index: hier ? hier.index : new Map(), stamp, best, look, version: model.critiques.size };
  lastRoot = root;
  bounds = root ? measure(nodes, strategy) : null;
  setTreeBounds(bounds);
  updating = true;
  if (!state.userMoved) fit(true); // before drawing: at scale, what is drawn depends on where the view is
  updating = false;
  draw(animate);
  lastAnimated = animate;

  // The next animated update's entering nodes start from where these are now going.
  positions.clear();
  if (animate) for (const d of nodes) positions.set(d.id, { x: d.x, y: d.y });
  keepTabStop();
  document.body.dataset.nodeCount = String(nodes.length);
  document.body.dataset.treeSize = String(model.nodes.size);
  document.body.dataset.mode = strategy.mode;
  renderLegend(strategy);
  renderMinimap(nodes);
}

// The top row stays put (d3 centres the root instead): a node added low in the tree moves only the nodes below it.
function anchorTop(nodes) {
  let top = Infinity;
  for (const d of nodes) if (d.x < top) top = d.x;
  for (const d of nodes) d.x -= top;
}

// The layout stretched (up to MAX_STRETCH) along the axis it is short of, to the panel's shape: Fit then uses the
// whole panel, and the rows or columns it gains are room for labels.
const MAX_STRETCH = 10;
function fillPanel(nodes, s) {
  rowGap = s.nodeSize[0];
  columnGap = s.nodeSize[1];
  // A tree too large to read whole is not stretched: its view is the far one, and moving every node on each event
  // would cost a large tree's updates more than a frame.
  if (nodes.length && nodes.length <= CULL_ABOVE && size.width && size.height) {
    let x1 = 0, y1 = 0;
    for (const d of nodes) { if (d.x > x1) x1 = d.x; if (d.y > y1) y1 = d.y; }
    const extraW = s.labelWidth + 80, extraH = s.nodeSize[0] + 60; // what measure() adds around the nodes
    const panel = size.width / size.height, tree = (y1 + extraW) / (x1 + extraH);
    if (tree < panel && y1 > 0) {
      const f = Math.min(MAX_STRETCH, ((x1 + extraH) * panel - extraW) / y1);
      if (f > 1) { for (const d of nodes) d.y *= f; columnGap *= f; }
    } else if (tree > panel && x1 > 0) {
      const f = Math.min(MAX_STRETCH, ((y1 + extraW) / panel - extraH) / x1);
      if (f > 1) { for (const d of nodes) d.x *= f; rowGap *= f; }
    }
  }
  const clip = `${Math.round(columnGap)}`;
  if (clip !== clipKey) { // the columns moved apart or closer: every label's room changed, and each link's width
    clipKey = clip;
    refitLabels();
    edgeClip.attr("x", -(columnGap / 2 - 8)).attr("width", columnGap - 16);
  }
  scaleLabels(d3.zoomTransform(svg.node()).k); // changes the page only when the rows' room for text changed
}
let clipKey = "";

// ---- what is in the DOM -------------------------------------------------------------------------

const culling = () => !drawAll && laid.nodes.length > CULL_ABOVE;

// The view in layout coordinates (x down the page, y across), grown by `grow` views on each side.
function viewRect(grow) {
  const t = d3.zoomTransform(svg.node());
  const x0 = t.invertY(0), x1 = t.invertY(size.height), y0 = t.invertX(0), y1 = t.invertX(size.width);
  const dx = (x1 - x0) * grow, dy = (y1 - y0) * grow;
  return { x0: x0 - dx, x1: x1 + dx, y0: y0 - dy, y1: y1 + dy };
}

// Zoomed out below the readable zoom at scale: the canvas paints the tree (farview.js), the SVG only a few nodes.
const farAway = () => culling() && d3.zoomTransform(svg.node()).k < READABLE_ZOOM;

// Panning or zooming: at scale, once the view leaves the drawn window, draw the new window (no new layout);
// in the far view, repaint the canvas.
let windowPending = false;
let updating = false;
function viewMoved() {
  if (isFar() && !updating) repaintFar(); // an update paints it anyway
  if (!culling() || windowPending || pending || updating) return;
  const far = farAway();
  if (far && isFar()) return;
  const v = viewRect(0);
  const w = windowRect;
  if (!far && !isFar() && w && v.x0 >= w.x0 && v.x1 <= w.x1 && v.y0 >= w.y0 && v.y1 <= w.y1) return;
  windowPending = true;
  requestAnimationFrame(() => {
    windowPending = false;
    if (!pending) draw(false);
  });
}

// A node near the window: its circle, marks and label (to its right, or under it) may reach into it.
function inWindow(d, w, s) {
  return d.x >= w.x0 - 40 && d.x <= w.x1 + 40 && d.y >= w.y0 - s.labelWidth - 40 && d.y <= w.y1 + 60;
}

function linkInWindow(a, b, w) {
  return Math.max(a.x, b.x) >= w.x0 && Math.min(a.x, b.x) <= w.x1 && b.y >= w.y0 && a.y <= w.y1;
}

// The links into these nodes ({source, target}, as d3's links()), only those in the window if there is one.
function linksInto(nodes, w) {
  const links = [];
  for (const d of nodes) if (d.parent && (!w || linkInWindow(d.parent, d, w))) links.push({ source: d.parent, target: d });
  return links;
}

// Join the laid-out nodes near the view (all of them below CULL_ABOVE) to the DOM.
function draw(animate) {
  const { nodes, best, look } = laid;
  let shownNodes = nodes, shownLinks;
  windowRect = null;
  const keep = new Set([state.selectedId, tabTarget()]);
  const far = farAway();
  if (far) for (const id of best) keep.add(id); // the best path keeps its labels however far out (level of detail)
  if (far) {
    shownNodes = nodes.filter((d) => keep.has(d.id));
    shownLinks = [];
  } else if (culling()) {
    const w = (windowRect = viewRect(WINDOW_MARGIN));
    const s = look.strategy;
    shownNodes = nodes.filter((d) => inWindow(d, w, s) || keep.has(d.id));
    shownLinks = linksInto(nodes, w);
  } else shownLinks = linksInto(nodes, null);
  paintFar(far ? nodes : null);
  const t = animate ? d3.transition("tree").duration(DURATION) : null;
  if (!animate && lastAnimated) { // stopped mid-way: the next move sets every position and opacity afresh
    gLink.selectAll("path").interrupt("tree").each(function () { this.__at = null; });
    gNode.selectAll("g.node").interrupt("tree").each(function () { this.__at = null; this.__faded = true; });
  }

  // Where an entering node starts: its nearest ancestor's previous position (or the root's).
  const origin = (d) => {
    for (let a = d.parent; a; a = a.parent) {
      const p = positions.get(a.id);
      if (p) return p;
    }
    return lastRoot ? { x: lastRoot.x, y: lastRoot.y } : { x: 0, y: 0 };
  };
  // Where a leaving node goes: its parent's new position, if the parent stays.
  const destination = (d) => {
    const parent = d.data && laidOut(d.data.parent_id);
    return parent ? { x: parent.x, y: parent.y } : positions.get(d.id) || { x: 0, y: 0 };
  };
  const at = (p) => `translate(${p.y},${p.x})`;

  // Links, keyed by their target's id.
  const link = gLink.selectAll("path.link").data(shownLinks, (d) => d.target.id);
  const linkEnter = link.enter().append("path")
    .attr("class", "link")
    .attr("data-target-id", (d) => d.target.id)
    .attr("d", (d) => { const o = animate ? origin(d.target) : d.target; return diagonal({ source: o, target: o }); });
  const linkAll = link.merge(linkEnter);
  let bestChanged = false;
  linkAll.each(function (d) { if (styleLink(this, d, best)) bestChanged = true; });
  if (bestChanged) linkAll.filter(".best").raise();
  if (animate) linkAll.each(function () { this.__at = null; }).transition(t).attr("d", diagonal);
  else linkAll.each(function (d) { moveLink(this, d); });
  if (animate) {
    link.exit().transition(t).remove()
      .attr("d", (d) => { const p = destination(d.target); return diagonal({ source: p, target: p }); });
  } else link.exit().remove();

  drawEdgeLabels(shownLinks, look, t, origin, destination, at);

  // Nodes, keyed by id.
  const node = gNode.selectAll("g.node").data(shownNodes, (d) => d.id);
  const nodeEnter = enterNodes(node.enter(), animate ? (d) => at(origin(d)) : at, animate);
  const nodeAll = node.merge(nodeEnter);
  nodeAll.each(function (d) {
    elements.set(d.id, this);
    if (changed(this, d, best, look, laid.version)) styleNode(this, d, best, look);
  });
  if (animate) {
    nodeAll.each(function (d) { this.__at = null; this.__r = String(d.r); }).transition(t)
      .attr("transform", (d) => at(d))
      .attr("fill-opacity", 1)
      .attr("stroke-opacity", 1);
    nodeAll.select("circle.dot").transition(t).attr("r", (d) => d.r);
    nodeAll.select("circle.halo").transition(t).attr("r", (d) => d.r + 4);
    node.exit().each(forget).transition(t).remove()
      .attr("transform", (d) => at(destination(d)))
      .attr("fill-opacity", 0)
      .attr("stroke-opacity", 0);
  } else {
    nodeAll.each(function (d) { moveNode(this, d); });
    node.exit().each(forget).remove();
  }
  raiseKept();
  document.body.dataset.domNodes = String(shownNodes.length);
}

function forget(d) {
  if (elements.get(d.id) === this) elements.delete(d.id);
}

// Draw every laid-out node while fn runs (an export copies the drawing), then only the window again.
export function withEveryNodeDrawn(fn) {
  if (!culling()) return fn();
  drawAll = true;
  draw(false);
  try {
    return fn();
  } finally {
    drawAll = false;
    draw(false);
  }
};

// ---- one node's elements ------------------------------------------------------------------

// Every node has a dot and a label; the other parts are made when first needed, in this order.
const PARTS = ["halo", "dot", "mark", "scissors", "tag", "bubble", "label-bg", "label", "hidden-count", "fold", "title"];
const SVG_NS = "http://www.w3.org/2000/svg";

function makePart(name) {
  const el = (tag, attrs) => {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };
  switch (name) {
    case "halo": return el("circle", { class: "halo" });
    case "dot": return el("circle", { class: "dot" });
    case "mark": return el("text", { class: "mark", "text-anchor": "middle" });
    case "scissors": return el("text", { class: "scissors", "text-anchor": "middle", dy: "0.35em" });
    case "tag": return el("text", { class: "tag" });
    case "bubble": return el("path", { class: "bubble", d: BUBBLE });
    case "label-bg": return el("rect", { class: "label-bg", rx: 3 });
    case "label": return el("text", { class: "label", dy: "0.32em" });
    case "hidden-count": return el("text", { class: "hidden-count", "text-anchor": "end", dy: "0.32em" });
    case "fold": {
      const g = el("g", { class: "fold" });
      g.append(el("circle", { r: 5.5 }), el("text", { "text-anchor": "middle", dy: "0.33em" }), el("title", {}));
      g.addEventListener("click", onFoldClick);
      return g;
    }
    default: return el("title", {});
  }
}

// The node's part, made (in its place among the others) if it is not there yet.
function part(g, name) {
  const parts = g.__parts || (g.__parts = {});
  if (parts[name]) return parts[name];
  const made = makePart(name);
  let next = null;
  for (let i = PARTS.indexOf(name) + 1; i < PARTS.length && !next; i++) next = parts[PARTS[i]] || null;
  g.insertBefore(made, next);
  parts[name] = made;
  return made;
}

// The ring around a node: drawn when it is selected, focused, a match, terminal or cut.
function halo(g) {
  const made = !(g.__parts && g.__parts.halo);
  const el = part(g, "halo");
  if (made) el.setAttribute("r", Number(g.__r) + 4);
  return el;
}

// A part's text: an existing part is updated, a missing one is made only for a text to show.
function partText(g, name, text) {
  const el = g.__parts && g.__parts[name];
  if (!el && !text) return null;
  const target = el || part(g, name);
  if (target.textContent !== text) target.textContent = text;
  return target;
}

function enterNodes(enter, start, animate) {
  const g = enter.append("g")
    .attr("class", "node")
    .attr("data-node-id", (d) => d.id)
    .attr("data-parent-id", (d) => d.data.parent_id || "")
    .attr("data-depth", (d) => d.data.depth)
    .attr("tabindex", -1)
    .attr("role", "button")
    .attr("transform", start)
    .attr("fill-opacity", animate ? 0 : 1)
    .attr("stroke-opacity", animate ? 0 : 1)
    .on("click", (event, d) => select(d.id))
    .on("keydown", (event, d) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(d.id); }
    })
    .on("pointerenter", (event, d) => { part(event.currentTarget, "title").textContent = nodeTitle(d.data, laid.look); })
    .on("focus", (event, d) => { halo(event.currentTarget); showTip(event.currentTarget, d); })
    .on("blur", hideTip);
  g.each(function (d) {
    part(this, "dot").setAttribute("r", d.r);
    part(this, "label");
    this.__r = String(d.r);
  });
  return g;
}

// The fold toggle: collapse or open this node's subtree without selecting it.
function onFoldClick(event) {
  event.stopPropagation();
  const d = d3.select(this.parentNode).datum();
  toggleFold(d.id, d);
}

// A node is restyled only when something it shows changed: its row, or what the tree says about it.
// What a node shows follows from its row, the strategy's numbers over the tree (look.key) and these facts.
function changed(el, d, best, look, version) {
  const src = d.pruneSource;
  const sig = `${src ? src.id : ""}|${best.has(d.id) ? 1 : 0}|${d.hidden}|${d.hasKids ? 1 : 0}|` +
    `${isMatch(d.id) ? 1 : 0}|${d.r}|${version}|${view.bestOnly ? 1 : 0}|${look.key}|${d.id === state.selectedId ? 1 : 0}`;
  if (el.__row === d.data && el.__sig === sig) return false;
  el.__row = d.data;
  el.__sig = sig;
  return true;
}

function styleLink(el, d, best) {
  const src = d.target.pruneSource;
  const sig = `${src ? src.id : ""}|${best.has(d.target.id) ? 1 : 0}|${byOverseer(src)}`;
  if (el.__sig === sig) return false;
  const wasBest = el.classList.contains("best");
  el.__sig = sig;
  el.classList.toggle("out", !!src);
  el.classList.toggle("out-overseer", byOverseer(src));
  el.classList.toggle("best", best.has(d.target.id));
  return wasBest !== best.has(d.target.id);
}

function moveLink(el, d) {
  const key = `${d.source.x},${d.source.y},${d.target.x},${d.target.y}`;
  if (el.__at === key) return;
  el.__at = key;
  el.setAttribute("d", diagonal(d));
}

function moveNode(el, d) {
  const key = `translate(${d.y},${d.x})`;
  if (el.__at === key) return;
  el.__at = key;
  el.setAttribute("transform", key);
  if (el.__faded !== false) { // entered (or stopped) mid-animation: show it whole
    el.__faded = false;
    el.setAttribute("fill-opacity", 1);
    el.setAttribute("stroke-opacity", 1);
  }
  const r = String(d.r);
  if (el.__r !== r) {
    el.__r = r;
    part(el, "dot").setAttribute("r", d.r);
    if (el.__parts.halo) el.__parts.halo.setAttribute("r", d.r + 4);
  }
}

// One node's classes, colours and texts from its row: "pruned" is the node's own flag, "out" the subtree's
// (self or an ancestor).
function styleNode(g, d, best, look) {
  const s = look.strategy;
  const n = d.data;
  const cls = g.classList;
  cls.toggle("pruned", !!n.pruned);
  cls.toggle("out", !!d.pruneSource);
  cls.toggle("out-overseer", byOverseer(d.pruneSource));
  cls.toggle("cut", !!n.pruned && byOverseer(n));
  cls.toggle("stale", !!n.stale);
  cls.toggle("edited", n.original_thought != null);
  cls.toggle("parse-error", !!n.parse_error);
  const failed = failedOf(n.checks).length;
  cls.toggle("check-failed", failed > 0);
  cls.toggle("unscored", n.eval_score == null);
  cls.toggle("terminal", !!n.is_terminal);
  cls.toggle("hollow", !!s.hollow(n));
  cls.toggle("noted", !!s.noted(n));
  cls.toggle("best", best.has(d.id));
  cls.toggle("selected", d.id === state.selectedId);
  cls.toggle("folded", d.hidden > 0);
  cls.toggle("match", isMatch(d.id));
  cls.toggle("lod", best.has(d.id) || d.id === state.selectedId || isMatch(d.id));
  if (n.is_terminal || (n.pruned && byOverseer(n)) || d.id === state.selectedId || isMatch(d.id)) halo(g);
  g.setAttribute("data-radius", d.r.toFixed(1));
  g.setAttribute("data-hidden", d.hidden);
  if (d.hasKids) g.setAttribute("aria-expanded", String(d.hidden === 0));
  else g.removeAttribute("aria-expanded");
  g.setAttribute("aria-label", ariaLabel(d, look));
  const fill = fillOf(look, n);
  const c = d3.color(fill);
  const dot = part(g, "dot");
  dot.setAttribute("fill", s.hollow(n) ? "#fff" : fill);
  dot.setAttribute("stroke", s.hollow(n) ? c.formatHex() : c.darker(1.2).formatHex());
  const mark = partText(g, "mark", n.parse_error ? "!" : n.original_thought != null ? "✎" : failed ? "✗" : "");
  if (mark) { mark.setAttribute("x", -d.r - 3); mark.setAttribute("y", -d.r - 2); }
  // Beside a fold toggle the scissors move above the node, clear of it.
  const scissors = partText(g, "scissors", n.pruned && byOverseer(n) ? "✂" : "");
  if (scissors) {
    scissors.setAttribute("x", d.hasKids ? -d.r - 4 : -d.r - 11);
    scissors.setAttribute("y", d.hasKids ? -d.r - 6 : 0);
  }
  const tag = partText(g, "tag", s.tag(n));
  if (tag) { tag.setAttribute("x", -d.r); tag.setAttribute("y", -d.r - 5); }
  // A label runs right along the link, or (chains) under the node; the critique mark goes where the label is not.
  const below = s.labelBelow;
  if (s.noted(n) || (g.__parts && g.__parts.bubble)) {
    part(g, "bubble").setAttribute("transform", below ? `translate(${d.r + 3},-4.5)` : `translate(${d.r - 1},${d.r - 2})`);
  }
  const label = part(g, "label");
  label.setAttribute("x", below ? -d.r : d.r + 6);
  label.setAttribute("y", below ? d.r + 2 : 0);
  label.setAttribute("dy", below ? "0.85em" : "0.32em"); // under the node by its own (scaled) height
  g.__label = s.label(n, look.ctx);
  placeLabel(g, d, s);
  styleFold(g, d);
  if (g.__parts.title) g.__parts.title.textContent = nodeTitle(n, look);
}

// The fold toggle left of a node with children: − collapses, + shows the hidden ones (their count beside it).
function styleFold(g, d) {
  const shown = d.hasKids && !view.bestOnly;
  const existing = g.__parts.fold;
  if (!shown && !existing) { partText(g, "hidden-count", ""); return; }
  const fold = existing || part(g, "fold");
  if (!shown) fold.setAttribute("display", "none");
  else fold.removeAttribute("display");
  fold.setAttribute("transform", `translate(${-d.r - 9},0)`);
  fold.children[1].textContent = d.hidden > 0 ? "+" : "−";
  fold.children[2].textContent = d.hidden > 0 ? `Show ${d.hidden} hidden below (c)` : "Collapse this subtree (c)";
  const count = partText(g, "hidden-count", shown && d.hidden > 0 ? `+${d.hidden}` : "");
  if (count) count.setAttribute("x", -d.r - 17);
}

// ---- labels: cut after a word to their room, on a background, some kept at any zoom --------------------------

const LOD_PX = 200; // a label kept at any zoom has at least this much room on screen, over the next column if need be
const measurer = document.createElement("canvas").getContext("2d");
const widths = new Map(); // "weight|text" -> its width in px at LABEL_PX
let labelFamily = null;

function textWidth(text, weight) {
  const key = weight + "|" + text;
  let w = widths.get(key);
  if (w === undefined) {
    if (!labelFamily) labelFamily = getComputedStyle(svg.node()).fontFamily || "sans-serif";
    measurer.font = `${weight} ${LABEL_PX}px ${labelFamily}`;
    w = measurer.measureText(text).width;
    if (widths.size > 20000) widths.clear();
    widths.set(key, w);
  }
  return w;
}

// The longest start of the text that fits `room` px (at LABEL_PX), cut after a whole word with an ellipsis; a first
// word too long for the room is cut within, still with its ellipsis; "" when not even that fits.
export function fitText(text, room, weight = 400) {
  if (textWidth(text, weight) <= room) return text;
  const words = text.replace(/\s*…$/, "").split(/(?<=\s)/);
  let fitted = "";
  for (const word of words) {
    const next = fitted + word;
    if (textWidth(next.trimEnd() + "…", weight) > room) break;
    fitted = next;
  }
  if (fitted.trim()) return fitted.trimEnd() + "…";
  for (let n = Math.min(text.length, 40); n > 1; n--) {
    const cut = text.slice(0, n).trimEnd() + "…";
    if (textWidth(cut, weight) <= room) return cut;
  }
  return "";
}

// A node whose label shows at any zoom: on the best path, selected, or a search match.
function keptAtAnyZoom(g) {
  const d = d3.select(g).datum();
  const kept = g.classList.contains("best") || d.id === state.selectedId || isMatch(d.id);
  if (g.classList.contains("lod") === kept) return;
  g.classList.toggle("lod", kept);
  if (laid.look) placeLabel(g, d, laid.look.strategy);
  raiseKept();
}

// The label's text for its room (up to the next column; a leaf's, labelWidth on screen) and its background.
function placeLabel(g, d, s) {
  const full = g.__label || "";
  const label = part(g, "label");
  const scale = labelScale || 1;
  const kept = g.classList.contains("lod");
  const weight = g.classList.contains("match") ? 700 : g.classList.contains("best") ? 600 : 400;
  // In the layout's units: up to the next column, or for the last column's nodes, what Fit keeps for their labels.
  const last = d.depth >= deepestColumn;
  let room = last ? s.labelWidth * scale : columnGap - (s.labelBelow ? 12 : d.r + 24);
  // Where the other labels are hidden (rows too close, or far out), a kept label may run over the next column, unless
  // a kept node there sits on its line.
  if (kept && !last && (tight || far) && !keptOnLine(d, scale)) room = Math.max(room, LOD_PX * scale);
  const text = fitText(full, room / scale, weight);
  if (label.textContent !== text) label.textContent = text;
  const bg = part(g, "label-bg");
  if (!text) { bg.setAttribute("width", 0); return; }
  const font = LABEL_PX * scale;
  bg.setAttribute("x", (s.labelBelow ? -d.r : d.r + 6) - 2 * scale);
  bg.setAttribute("y", s.labelBelow ? d.r + 2 - 0.1 * font : -0.62 * font);
  bg.setAttribute("width", textWidth(text, weight) * scale + 4 * scale);
  bg.setAttribute("height", 1.24 * font);
}

function keptOnLine(d, scale) {
  const line = LABEL_PX * scale * 1.3;
  return (d.children || []).some((c) => Math.abs(c.x - d.x) < line && (c.best || c.id === state.selectedId || isMatch(c.id)));
}

// The label scale changed (a zoom step): every drawn label refits its room, in the next frame.
let refitPending = false;
function refitLabels() {
  if (refitPending) return;
  refitPending = true;
  requestAnimationFrame(() => {
    refitPending = false;
    if (!laid.look) return;
    for (const g of elements.values()) if (g.__label !== undefined) placeLabel(g, d3.select(g).datum(), laid.look.strategy);
  });
}

// Where only they have labels (rows too close, or far out), the nodes whose labels show at any zoom are drawn last,
// so no other node covers them (the focused one stays put: moving it would take its focus away). Nearer in, every
// label keeps to its own room and the DOM order is left alone: a live tree's nodes are not moved at each update.
function raiseKept() {
  if (!tight && !far) return;
  const layer = gNode.node();
  const kept = Array.from(layer.querySelectorAll(":scope > g.node.lod"));
  let el = layer.lastElementChild, i = kept.length - 1;
  while (i >= 0 && el === kept[i]) { el = el.previousElementSibling; i -= 1; }
  if (i < 0) return; // already the last ones drawn
  for (const g of kept) if (g !== document.activeElement) layer.appendChild(g);
}

// The whole label of the node with the keyboard's focus, over the tree (a pointer gets the node's tooltip).
const tip = document.createElement("div");
tip.className = "node-tip";
tip.setAttribute("role", "tooltip");
tip.dataset.testid = "node-tip";
tip.hidden = true;
svg.node().parentNode.appendChild(tip);

function showTip(g, d) {
  if (!laid.look) return;
  tip.textContent = nodeTitle(d.data, laid.look); // model text, as text
  const panel = svg.node().parentNode.getBoundingClientRect(), box = g.getBoundingClientRect();
  tip.hidden = false;
  const left = Math.min(box.right - panel.left + 8, panel.width - tip.offsetWidth - 8);
  tip.style.left = `${Math.max(8, left)}px`;
  tip.style.top = `${Math.max(8, box.bottom - panel.top + 6)}px`;
}

function hideTip() {
  tip.hidden = true;
}

// The view moved under the tip: it follows its node in the next frame.
let tipFrame = null;
function followTip() {
  if (tipFrame !== null) return;
  tipFrame = requestAnimationFrame(() => {
    tipFrame = null;
    const g = document.activeElement;
    if (g && g.classList && g.classList.contains("node") && !tip.hidden) showTip(g, d3.select(g).datum());
  });
}

// One node takes Tab (the selected one, else the root); arrows move it (treetools.js).
function tabTarget() {
  return laidOut(state.selectedId) ? state.selectedId : lastRoot ? lastRoot.id : null;
}

function keepTabStop() {
  const want = tabTarget();
  if (want === tabStopId && nodeElement(want)) return;
  const old = nodeElement(tabStopId);
  if (old) old.setAttribute("tabindex", -1);
  tabStopId = want;
  const el = nodeElement(want);
  if (el) el.setAttribute("tabindex", 0);
}

function nodeElement(id) {
  return (id && elements.get(id)) || null;
}
export { nodeElement };
export { laidOut as drawnNode };
export const isDrawn = (id) => !!laidOut(id);
export const drawnRoot = () => lastRoot;

// The action of each edge on its link (ReAct), keyed like the links; placed above the link's middle.
function drawEdgeLabels(links, look, t, origin, destination, at) {
  const labelled = [];
  for (const d of links) {
    const edge = model.edgesByTarget.get(d.target.id);
    if (edge && look.strategy.edgeLabel(edge)) labelled.push({ link: d, edge });
  }
  const middle = (s, tg) => ({ x: (s.x + tg.x) / 2 - 7, y: (s.y + tg.y) / 2 });
  const label = gEdgeLabel.selectAll("text.edge-label").data(labelled, (l) => l.link.target.id);
  const enter = label.enter().append("text")
    .attr("class", "edge-label")
    .attr("text-anchor", "middle")
    .attr("data-target-id", (l) => l.link.target.id)
    .attr("transform", (l) => at(t ? origin(l.link.target) : middle(l.link.source, l.link.target)));
  const all = label.merge(enter)
    .classed("out", (l) => !!l.link.target.pruneSource)
    .text((l) => look.strategy.edgeLabel(l.edge));
  all.append("title").text((l) => l.edge.action); // the whole action on hover (.text() above cleared the children)
  if (t) {
    all.transition(t).attr("transform", (l) => at(middle(l.link.source, l.link.target)));
    label.exit().transition(t).remove().attr("transform", (l) => at(destination(l.link.target)));
  } else {
    all.attr("transform", (l) => at(middle(l.link.source, l.link.target)));
    label.exit().remove();
  }
}

function ariaLabel(d, look) {
  const score = look.strategy.scoreText(d.data, look.ctx);
  const parts = [`Depth ${d.data.depth}`];
  if (score) parts.push(score);
  if (d.pruneSource) parts.push("out of the search");
  const failed = failedOf(d.data.checks).length;
  if (failed) parts.push(`${failed} failed fact check${failed === 1 ? "" : "s"}`);
  if (d.hidden > 0) parts.push(`${d.hidden} hidden below`);
  parts.push(truncate(firstLine(d.data.thought), 90));
  return parts.join(", ");
}

function nodeTitle(n, look) {
  const tag = look.strategy.tag(n);
  const flags = [prunedText(n), n.stale ? `stale: ${n.stale_reason || "an earlier step was edited"}` : "",
    ...failedOf(n.checks).map((c) => `✗ ${c.kind}: ${c.detail}`)].filter(Boolean);
  const lines = [tag, look.strategy.scoreText(n, look.ctx), ...flags, truncate(n.thought, 280)];
  return lines.filter(Boolean).join("\n");
}

// Only the legend entries that mean something for this strategy (its registry `legend`, as data-mark), and what its
// colours measure.
let legendMode = null;
export function renderLegend(strategy) {
  if (legendMode === strategy.mode) return;
  legendMode = strategy.mode;
  document.querySelectorAll(".legend [data-mark]").forEach((item) => {
    item.hidden = !strategy.legend.includes(item.dataset.mark);
  });
  show("legend-scale", !!strategy.scaleLabel);
  setText("legend-scale-label", strategy.scaleLabel || "");
};

// The laid-out tree's extent in layout coordinates (x across, y down the page), with room for marks and labels.
function measure(nodes, s) {
  const dx = s.nodeSize[0];
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const d of nodes) {
    if (d.x < x0) x0 = d.x;
    if (d.x > x1) x1 = d.x;
    if (d.y < y0) y0 = d.y;
    if (d.y > y1) y1 = d.y;
  }
  const left = y0 - maxRadius - 40; // the fold toggle and hidden count sit left of a node
  const right = y1 + s.labelWidth;
  const top = x0 - Math.max(dx / 2, maxRadius + (hasTags ? TAG_SPACE : 4));
  const bottom = x1 + Math.max(dx / 2, maxRadius + (s.labelBelow ? 18 : 4));
  return { left, right, top, bottom, labelWidth: s.labelWidth };
}

// Fit the whole tree into the panel (called while the user has not moved the view, and by "Fit").
function fit(animate) {
  const { width, height } = size;
  const b = bounds;
  if (!b || !width || !height) return;
  const pad = 28;
  const top = toolsPx; // the toolbar sits over the stage's top: the tree fits below it
  // The last column's labels keep their width on screen however far out (their text never shrinks under 11 px):
  // the room for them is kept in screen pixels, so no label is clipped at the panel's edge.
  const label = b.labelWidth * SCALE_STEP; // the widest a leaf's label gets on screen (its scale moves in steps)
  const span = b.right - b.labelWidth - b.left, room = width - 2 * pad;
  const across = room - label >= span ? room / (span + label) : (room - label) / span;
  const k = Math.max(0.08, Math.min(1.1, across, (height - top - pad) / (b.bottom - b.top)));
  // A tree narrower than the panel grows rightwards from the left edge; a wider one is centred.
  const spare = width - span * k - label * Math.max(1, k);
  const tx = (spare > 2 * pad ? pad : spare / 2) - b.left * k;
  const ty = top + (height - top - pad) / 2 - ((b.top + b.bottom) / 2) * k;
  const transform = d3.zoomIdentity.translate(tx, ty).scale(k);
  const now = d3.zoomTransform(svg.node());
  if (Math.abs(now.k - k) < 1e-4 && Math.abs(now.x - tx) < 0.5 && Math.abs(now.y - ty) < 0.5) return;
  // Animating the whole view repaints every node each frame: large trees jump.
  (animate && laid.nodes.length <= MAX_ANIMATED ? svg.transition("fit").duration(DURATION) : svg).call(zoom.transform, transform);
}
export { fit };

// Bring a node into view, unless the whole tree is being fitted anyway.
export function reveal(id) {
  const d = laidOut(id);
  if (d && state.userMoved) svg.transition("fit").duration(DURATION).call(zoom.translateTo, d.y, d.x);
};

// Move the view (never its zoom) just enough that a node and the start of its label show below the tree tools: a
// search's first match, which a far zoom had slid under the search box.
export function showBelowTools(id) {
  const d = laidOut(id);
  if (!d || !size.width || !size.height) return;
  const t = d3.zoomTransform(svg.node());
  const sx = t.applyX(d.y), sy = t.applyY(d.x);
  const top = toolsPx + LABEL_PX, bottom = size.height - 2 * LABEL_PX;
  const left = 24, right = Math.max(left, size.width - 180); // room for the label's first words
  const dy = sy < top ? top - sy : sy > bottom ? bottom - sy : 0;
  const dx = sx < left ? left - sx : sx > right ? right - sx : 0;
  if (!dx && !dy) return;
  state.userMoved = true;
  svg.transition("fit").duration(DURATION).call(zoom.translateBy, dx / t.k, dy / t.k);
}

// Centre the view on a point of the layout (a node, or where the minimap was clicked), zoomed in enough to read.
export function panTo(x, y, readable) {
  state.userMoved = true;
  const k = d3.zoomTransform(svg.node()).k;
  const move = svg.transition("fit").duration(DURATION);
  if (readable && k < 0.8) move.call(zoom.transform, centred(x, y, 1));
  else move.call(zoom.translateTo, y, x);
};

function centred(x, y, k) {
  return d3.zoomIdentity.translate(size.width / 2 - y * k, size.height / 2 - x * k).scale(k);
}

on("pan-to", ({ x, y, readable }) => panTo(x, y, readable)); // the minimap's click

export function centerOn(id) {
  const d = laidOut(id);
  if (d) panTo(d.x, d.y, true);
};

export function select(id) {
  const previous = state.selectedId;
  emit("selecting", { id, previous }); // forms open on the old node close; the inspector's tab comes into view
  const old = nodeElement(state.selectedId);
  if (old) { old.classList.remove("selected"); keptAtAnyZoom(old); }
  state.selectedId = id;
  if (id && !elements.has(id) && laidOut(id) && culling()) draw(false); // away from the view
  const el = nodeElement(id);
  if (el) { el.classList.add("selected"); halo(el); keptAtAnyZoom(el); }
  if (isFar()) repaintFar(); // the selection's ring
  keepTabStop();
  emit("selected", { id, previous }); // the inspector, the #node= permalink
};

// Unfold the way to a node if need be, then select it, give it the keyboard focus, and (if asked) centre it.
export function focusNode(id, options) {
  if (!id || !model.nodes.has(id)) return false;
  const go = () => {
    if (!laidOut(id)) return;
    select(id);
    const el = nodeElement(id);
    if (el && !(options && options.keepFocus)) el.focus({ preventScroll: true });
    if (options && options.center) centerOn(id);
  };
  if (unfoldTo(id, isDrawn(id))) afterUpdate(go);
  else go();
  return true;
};

// While a large snapshot is on its way: how much of it is here (total 0: nothing is loading).
export function showLoading(total, received) {
  const el = $("tree-loading");
  if (!el) return;
  el.hidden = !total;
  if (total) el.textContent = `Loading the tree: ${(received || 0).toLocaleString()} of ${total.toLocaleString()} nodes…`;
};

$("fit-button").addEventListener("click", () => { state.userMoved = false; fit(true); });

on("tree", scheduleUpdate);
on("show-node", ({ id, reveal: move, focus, center, then }) => {
  if (focus) {
    focusNode(id, { center });
    if (then) afterUpdate(then);
    return;
  }
  select(id);
  if (move) reveal(id);
});
on("loading", ({ total, received }) => showLoading(total, received));
on("snapshot", ({ loading }) => {
  showLoading(loading, 0);
  if (state.selectedId && !model.nodes.has(state.selectedId)) select(null);
});
