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

  E.renderMinimap = function (nodes, treeLinks) {
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
  };

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
