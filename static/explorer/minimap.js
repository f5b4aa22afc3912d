/* The minimap: the whole drawn tree in a corner, with the rectangle the main view shows; a click moves there.
 * Shown only for large trees. Nodes and links are one path each (a few elements, whatever the tree's size).
 */
import d3 from "./d3-from-npm.js";
import { emit } from "./model.js";
import { treeBounds, treeSize, zoomTransform } from "./viewport.js";

export const MINIMAP_ABOVE = 150; // drawn nodes: below this the tree fits the panel readably anyway

const map = d3.select("#minimap");
const links = map.append("path").attr("class", "mm-links");
const dots = map.append("path").attr("class", "mm-dots");
const out = map.append("path").attr("class", "mm-dots mm-out");
const best = map.append("path").attr("class", "mm-dots mm-best");
const view = map.append("rect").attr("class", "mm-view");
let shown = false;

// A large tree's minimap is redrawn at most every THROTTLE_MS (a burst of events changes it every frame).
const THROTTLE_MS = 400;
const THROTTLE_ABOVE = 1000;
let latest = null, timer = null, drawnAt = -Infinity;
let pixels = null; // the minimap's size on screen (fixed by the stylesheet)

export function renderMinimap(nodes) {
  latest = nodes;
  if (timer) return;
  const wait = nodes.length > THROTTLE_ABOVE ? drawnAt + THROTTLE_MS - performance.now() : 0;
  if (wait <= 0) { drawLatest(); return; }
  timer = setTimeout(() => { timer = null; drawLatest(); }, wait);
};

function drawLatest() {
  drawnAt = performance.now();
  const nodes = latest;
  shown = nodes.length > MINIMAP_ABOVE;
  map.attr("hidden", shown ? null : "");
  if (!shown) return;
  const b = treeBounds();
  map.attr("viewBox", `${b.left} ${b.top} ${b.right - b.left} ${b.bottom - b.top}`);
  // One dot per pixel of the minimap and one line per pair of pixels: thousands of nodes share a few hundred.
  if (!pixels) pixels = { width: map.node().clientWidth || 200, height: map.node().clientHeight || 130 }; // read once
  const scale = Math.min(pixels.width / (b.right - b.left), pixels.height / (b.bottom - b.top)) || 1;
  const cell = (d) => Math.round((d.y - b.left) * scale) * 1024 + Math.round((d.x - b.top) * scale);
  const paths = { links: "", dots: "", out: "", best: "" };
  const seen = { links: new Set(), dots: new Set(), out: new Set(), best: new Set() };
  for (const d of nodes) {
    const here = cell(d);
    const kind = d.best ? "best" : d.pruneSource ? "out" : "dots";
    if (!seen[kind].has(here)) { seen[kind].add(here); paths[kind] += `M${d.y},${d.x}h0`; }
    if (!d.parent) continue;
    const line = cell(d.parent) * 1048576 + here;
    if (!seen.links.has(line)) { seen.links.add(line); paths.links += `M${d.parent.y},${d.parent.x}L${d.y},${d.x}`; }
  }
  links.attr("d", paths.links);
  dots.attr("d", paths.dots);
  out.attr("d", paths.out);
  best.attr("d", paths.best);
  renderMinimapView(zoomTransform());
}

// The main view's rectangle, in layout coordinates.
export function renderMinimapView(t) {
  if (!shown) return;
  const size = treeSize();
  view
    .attr("x", t.invertX(0)).attr("y", t.invertY(0))
    .attr("width", size.width / t.k).attr("height", size.height / t.k);
};

map.on("click", (event) => {
  const svg = map.node();
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
  emit("pan-to", { x: point.y, y: point.x, readable: false });
});
