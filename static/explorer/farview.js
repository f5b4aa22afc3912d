/* The far view of a large tree: zoomed out below the readable zoom, with more than CULL_ABOVE nodes laid out, the
 * links and dots are painted on a canvas under the SVG instead of being thousands of SVG elements (no text is
 * readable there anyway). The SVG keeps the selected node and the keyboard's node, so focus, the inspector and the
 * keys work as before; a click on the canvas selects the nearest node. Search matches and the selected node are
 * ringed at a size that stays visible however far out.
 */
import d3 from "./d3-from-npm.js";
import { $, state, UNSCORED } from "./util.js";
import { byOverseer, showNode } from "./model.js";
import { scoreColor } from "./strategies.js";
import { treeSize, zoomTransform } from "./viewport.js";
import { isMatch } from "./view.js";
import { pickForCompare } from "./compare.js";

const MIN_RING_PX = 4; // matches and the selection stay this visible, whatever the zoom
const PICK_PX = 8; // a click this close to a dot picks it

const panel = $("tree").parentNode;
const canvas = document.createElement("canvas");
canvas.className = "far-canvas";
canvas.setAttribute("aria-hidden", "true");
panel.insertBefore(canvas, $("tree"));
let shown = null; // {nodes, links} painted, or null when the SVG draws the tree
let frame = null;
let colours = null;

function css() {
  if (colours) return colours;
  const root = getComputedStyle(document.documentElement);
  const v = (name) => root.getPropertyValue(name).trim();
  colours = { best: v("--best"), out: v("--out"), cut: v("--cut"), link: "#b7c1cf", linkOut: "#d5dae2",
    linkCut: "#f0b9a0", outStroke: "#a9b1bc" };
  return colours;
}

// Paint these laid-out nodes (and the links into them) now; null: clear the canvas, the SVG draws the tree.
export function paintFar(nodes) {
  const was = shown;
  shown = nodes ? { nodes } : null;
  canvas.hidden = !shown;
  if (shown || was) paint();
};
export const isFar = () => !!shown;

// Repaint in the next frame (the view moved).
export function repaintFar() {
  if (frame !== null) return;
  frame = requestAnimationFrame(() => { frame = null; paint(); });
};

function paint() {
  const size = treeSize();
  const ratio = window.devicePixelRatio || 1;
  const width = Math.round(size.width * ratio), height = Math.round(size.height * ratio);
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  const g = canvas.getContext("2d", { desynchronized: true });
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.clearRect(0, 0, width, height);
  if (!shown) return;
  const t = zoomTransform();
  g.setTransform(ratio * t.k, 0, 0, ratio * t.k, ratio * t.x, ratio * t.y);
  // The view in layout coordinates (x down the page, y across), with a margin for the widest dot.
  const m = 20 / t.k;
  const x0 = t.invertY(0) - m, x1 = t.invertY(size.height) + m, y0 = t.invertX(0) - m, y1 = t.invertX(size.width) + m;
  const seen = (d) => d.x >= x0 && d.x <= x1 && d.y >= y0 && d.y <= y1;
  const c = css();
  const look = state.look;

  // Links, one path per kind, as d3.linkHorizontal draws them.
  const kinds = { plain: [], out: [], cut: [], best: [] };
  for (const b of shown.nodes) {
    const a = b.parent;
    if (!a || Math.max(a.x, b.x) < x0 || Math.min(a.x, b.x) > x1 || b.y < y0 || a.y > y1) continue;
    const src = b.pruneSource;
    kinds[b.best ? "best" : src ? (byOverseer(src) ? "cut" : "out") : "plain"].push(b);
  }
  const stroke = (list, colour, w) => {
    if (!list.length) return;
    g.beginPath();
    for (const b of list) {
      const a = b.parent;
      const mid = (a.y + b.y) / 2;
      g.moveTo(a.y, a.x);
      g.bezierCurveTo(mid, a.x, mid, b.x, b.y, b.x);
    }
    g.strokeStyle = colour;
    g.lineWidth = w;
    g.stroke();
  };
  // The SVG dashes links out of the search; this far out a dash is under a pixel, so they are drawn solid and paler.
  g.globalAlpha = 0.7;
  stroke(kinds.out, c.linkOut, 1.4);
  stroke(kinds.cut, c.linkCut, 1.4);
  g.globalAlpha = 1;
  stroke(kinds.plain, c.link, 1.4);
  stroke(kinds.best, c.best, 2.6);

  // Dots, one path per look (colours in steps of 1/50 of the scale: the same to the eye, far fewer paths): out of
  // the search first (paler), then the search's own, then the best path on top.
  const rings = [];
  const groups = new Map();
  for (const d of shown.nodes) {
    if (!seen(d)) continue;
    if (d.id === state.selectedId || isMatch(d.id)) rings.push(d);
    const key = dotKey(d, look, c);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { style: dotStyle(key), dots: [] }));
    group.dots.push(d);
  }
  const ordered = Array.from(groups.values()).sort((a, b) => a.style.layer - b.style.layer);
  for (const { style, dots } of ordered) {
    g.globalAlpha = style.alpha;
    g.beginPath();
    for (const d of dots) {
      g.moveTo(d.y + d.r, d.x);
      g.arc(d.y, d.x, d.r, 0, 2 * Math.PI);
    }
    g.fillStyle = style.fill;
    g.fill();
    g.lineWidth = style.width;
    g.strokeStyle = style.stroke;
    g.stroke();
  }
  g.globalAlpha = 1;
  // Rings that stay visible however far out: search matches (yellow) and the selected node (amber).
  for (const d of rings) {
    const r = Math.max(d.r + 4, MIN_RING_PX / t.k);
    g.beginPath();
    g.arc(d.y, d.x, r, 0, 2 * Math.PI);
    const selected = d.id === state.selectedId;
    if (!selected) { g.fillStyle = "rgba(250, 204, 21, 0.45)"; g.fill(); }
    g.lineWidth = (selected ? 2.5 : 1.5) / t.k;
    g.strokeStyle = selected ? "#f59e0b" : "#ca8a04";
    g.stroke();
  }
}

const darker = new Map(); // fill -> its stroke, as the SVG's dots have it
function strokeOf(fill) {
  if (!darker.has(fill)) darker.set(fill, d3.color(fill).darker(1.2).formatHex());
  return darker.get(fill);
}

// How a dot looks from far away, as the SVG draws it (explorer.css's .node rules), as a key among the paths:
// "layer|fill|stroke|width|alpha" (the layer: out of the search 0, in it 1, the best path 2).
const fills = new Map(); // a score in 1/50 steps -> its colour
function dotKey(d, look, c) {
  const n = d.data;
  const out = !!d.pruneSource;
  const cut = !!n.pruned && byOverseer(n);
  let fill;
  if (out) fill = c.out;
  else if (!look) fill = UNSCORED;
  else if (look.strategy.fill) fill = look.strategy.fill(n);
  else {
    const v = look.strategy.value(n, look.ctx);
    const step = v == null ? -1 : Math.round(Math.max(0, Math.min(1, v)) * 50);
    fill = fills.get(step);
    if (!fill) fills.set(step, (fill = scoreColor(step < 0 ? null : step / 50)));
  }
  const hollow = !out && look && look.strategy.hollow(n);
  const stroke = d.best ? c.best : out ? (cut ? c.cut : c.outStroke) : strokeOf(fill);
  const layer = d.best ? 2 : out ? 0 : 1;
  return `${layer}|${hollow ? "#fff" : fill}|${stroke}|${d.best ? 2.5 : 1.5}|${out && !cut ? 0.75 : 1}`;
}

function dotStyle(key) {
  const [layer, fill, stroke, width, alpha] = key.split("|");
  return { layer: Number(layer), fill, stroke, width: Number(width), alpha: Number(alpha) };
}

// The nearest painted node to a point of the panel, within PICK_PX of its dot.
function pick(event) {
  const t = zoomTransform();
  const rect = $("tree").getBoundingClientRect();
  const y = t.invertX(event.clientX - rect.left), x = t.invertY(event.clientY - rect.top);
  let best = null, bestDistance = Infinity;
  for (const d of shown.nodes) {
    const distance = Math.hypot(d.x - x, d.y - y);
    if (distance < bestDistance) { best = d; bestDistance = distance; }
  }
  return best && bestDistance <= best.r + PICK_PX / t.k ? best : null;
}

$("tree").addEventListener("click", (event) => {
  if (!shown || (event.target.closest && event.target.closest("g.node"))) return;
  const d = pick(event);
  if (!d) return;
  showNode(d.id);
  pickForCompare(d.id);
});
