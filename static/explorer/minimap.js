/* The minimap: the whole drawn tree in a corner, with the rectangle the main view shows; a click moves there.
 * Shown only for large trees. Nodes and links are one path each (a few elements, whatever the tree's size).
 */
(function (E) {
  "use strict";

  E.MINIMAP_ABOVE = 150; // drawn nodes: below this the tree fits the panel readably anyway

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

  E.renderMinimap = function (nodes, treeLinks) {
    latest = [nodes, treeLinks];
    if (timer) return;
    const wait = nodes.length > THROTTLE_ABOVE ? drawnAt + THROTTLE_MS - performance.now() : 0;
    if (wait <= 0) { drawLatest(); return; }
    timer = setTimeout(() => { timer = null; drawLatest(); }, wait);
  };

  function drawLatest() {
    drawnAt = performance.now();
    const [nodes, treeLinks] = latest;
    shown = nodes.length > E.MINIMAP_ABOVE;
    map.attr("hidden", shown ? null : "");
    if (!shown) return;
    const b = E.treeBounds();
    map.attr("viewBox", `${b.left} ${b.top} ${b.right - b.left} ${b.bottom - b.top}`);
    links.attr("d", treeLinks.map((l) => `M${l.source.y},${l.source.x}L${l.target.y},${l.target.x}`).join(""));
    const at = (d) => `M${d.y},${d.x}h0`;
    dots.attr("d", nodes.filter((d) => !d.pruneSource && !d.best).map(at).join(""));
    out.attr("d", nodes.filter((d) => d.pruneSource).map(at).join(""));
    best.attr("d", nodes.filter((d) => d.best).map(at).join(""));
    E.renderMinimapView(E.zoomTransform());
  }

  // The main view's rectangle, in layout coordinates.
  E.renderMinimapView = function (t) {
    if (!shown) return;
    const size = E.treeSize();
    view
      .attr("x", t.invertX(0)).attr("y", t.invertY(0))
      .attr("width", size.width / t.k).attr("height", size.height / t.k);
  };

  map.on("click", (event) => {
    const svg = map.node();
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
    E.panTo(point.y, point.x, false);
  });
})(window.Explorer);
