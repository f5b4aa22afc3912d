/* The D3 drawing: layers created once, one update() that joins the model to the DOM by node id (links and
 * their labels by their target's id), entering nodes growing from their parent's previous position.
 * How a node looks (size, colour, label, marks) comes from the session's strategy (strategies.js).
 */
(function (E) {
  "use strict";

  const MAX_ANIMATED = 1500; // above this many nodes, updates jump instead of animating
  const TAG_SPACE = 14; // above the top row, when nodes carry tags

  let lastRoot = null;
  let maxRadius = E.NODE_RADIUS;
  let hasTags = false;
  const positions = new Map(); // id -> {x, y} of the previous layout: where entering children start

  // Layers, created once: zoom moves the outer <g>; links under their labels, under the nodes.
  const svg = d3.select("#tree");
  const viewport = svg.append("g").attr("class", "viewport");
  const gLink = viewport.append("g").attr("class", "links");
  const gEdgeLabel = viewport.append("g").attr("class", "edge-labels");
  const gNode = viewport.append("g").attr("class", "nodes");
  const zoom = d3.zoom()
    .scaleExtent([0.08, 3])
    .on("zoom", (event) => {
      viewport.attr("transform", event.transform);
      if (event.sourceEvent) E.userMoved = true;
    });
  svg.call(zoom).on("dblclick.zoom", null);

  const diagonal = d3.linkHorizontal().x((d) => d.y).y((d) => d.x);
  // A small speech bubble (10 x 9.5): a critique or reflection is attached to the node.
  const BUBBLE = "M0,1.5 a1.5,1.5 0 0 1 1.5,-1.5 h7 a1.5,1.5 0 0 1 1.5,1.5 v4 a1.5,1.5 0 0 1 -1.5,1.5 " +
    "h-4.5 l-2.5,2.5 v-2.5 a1.5,1.5 0 0 1 -1.5,-1.5 z";

  let pending = false;
  E.scheduleUpdate = function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; update(); E.renderInspector(); });
  };

  function update() {
    const strategy = E.strategy();
    const root = E.buildHierarchy();
    const layout = d3.tree().nodeSize(strategy.nodeSize).separation((a, b) => (a.parent === b.parent ? 1 : 1.3));
    if (root) { layout(root); E.markOutOfSearch(root); }
    const nodes = root ? root.descendants() : [];
    const links = root ? root.links() : [];
    const best = root ? E.bestPath(root) : new Set();
    const look = { strategy, ctx: strategy.prepare(nodes.map((d) => d.data)) };
    E.look = look;
    for (const d of nodes) d.r = strategy.radius(d.data, look.ctx);
    maxRadius = d3.max(nodes, (d) => d.r) || E.NODE_RADIUS;
    hasTags = nodes.some((d) => strategy.tag(d.data));
    const byId = new Map(nodes.map((d) => [d.id, d]));
    const t = d3.transition("tree").duration(nodes.length > MAX_ANIMATED ? 0 : E.DURATION);

    // Where an entering node starts: its nearest ancestor's previous position (or the root's).
    const origin = (d) => {
      for (let a = d.parent; a; a = a.parent) {
        const p = positions.get(a.id);
        if (p) return p;
      }
      return root ? { x: root.x, y: root.y } : { x: 0, y: 0 };
    };
    // Where a leaving node goes: its parent's new position, if the parent stays.
    const destination = (d) => {
      const parent = d.data && d.data.parent_id && byId.get(d.data.parent_id);
      return parent ? { x: parent.x, y: parent.y } : positions.get(d.id) || { x: 0, y: 0 };
    };
    const at = (p) => `translate(${p.y},${p.x})`;

    // Links, keyed by their target's id.
    const link = gLink.selectAll("path.link").data(links, (d) => d.target.id);
    const linkEnter = link.enter().append("path")
      .attr("class", "link")
      .attr("data-target-id", (d) => d.target.id)
      .attr("d", (d) => { const o = origin(d.target); return diagonal({ source: o, target: o }); });
    const linkAll = link.merge(linkEnter)
      .classed("out", (d) => !!d.target.pruneSource)
      .classed("out-overseer", (d) => E.byOverseer(d.target.pruneSource))
      .classed("best", (d) => best.has(d.target.id));
    linkAll.filter(".best").raise();
    linkAll.transition(t).attr("d", diagonal);
    link.exit().transition(t).remove()
      .attr("d", (d) => { const p = destination(d.target); return diagonal({ source: p, target: p }); });

    drawEdgeLabels(links, look, t, origin, destination, at);

    // Nodes, keyed by id.
    const node = gNode.selectAll("g.node").data(nodes, (d) => d.id);
    const nodeEnter = node.enter().append("g")
      .attr("class", "node")
      .attr("data-node-id", (d) => d.id)
      .attr("data-parent-id", (d) => d.data.parent_id || "")
      .attr("data-depth", (d) => d.data.depth)
      .attr("tabindex", 0)
      .attr("role", "button")
      .attr("transform", (d) => at(origin(d)))
      .attr("fill-opacity", 0)
      .attr("stroke-opacity", 0)
      .on("click", (event, d) => E.select(d.id))
      .on("keydown", (event, d) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); E.select(d.id); }
      });
    nodeEnter.append("circle").attr("class", "halo").attr("r", (d) => d.r + 4);
    nodeEnter.append("circle").attr("class", "dot").attr("r", (d) => d.r);
    nodeEnter.append("text").attr("class", "mark").attr("text-anchor", "middle");
    nodeEnter.append("text").attr("class", "scissors").attr("text-anchor", "middle").attr("dy", "0.35em");
    nodeEnter.append("text").attr("class", "tag");
    nodeEnter.append("path").attr("class", "bubble").attr("d", BUBBLE);
    nodeEnter.append("text").attr("class", "label").attr("dy", "0.32em");
    nodeEnter.append("title");

    const nodeAll = styleNodes(node.merge(nodeEnter), best, look);
    nodeAll.transition(t)
      .attr("transform", (d) => at(d))
      .attr("fill-opacity", 1)
      .attr("stroke-opacity", 1);
    nodeAll.select("circle.dot").transition(t).attr("r", (d) => d.r);
    nodeAll.select("circle.halo").transition(t).attr("r", (d) => d.r + 4);
    node.exit().transition(t).remove()
      .attr("transform", (d) => at(destination(d)))
      .attr("fill-opacity", 0)
      .attr("stroke-opacity", 0);

    // The next update's entering nodes start from where these are now going.
    positions.clear();
    for (const d of nodes) positions.set(d.id, { x: d.x, y: d.y });
    lastRoot = root;
    document.body.dataset.nodeCount = String(nodes.length);
    document.body.dataset.mode = strategy.mode;
    E.renderLegend(strategy);
    if (!E.userMoved) fit(true);
  }

  // The action of each edge on its link (ReAct), keyed like the links; placed above the link's middle.
  function drawEdgeLabels(links, look, t, origin, destination, at) {
    const labelled = links
      .map((d) => ({ link: d, edge: E.model.edgesByTarget.get(d.target.id) }))
      .filter((l) => l.edge && look.strategy.edgeLabel(l.edge));
    const middle = (s, tg) => ({ x: (s.x + tg.x) / 2 - 7, y: (s.y + tg.y) / 2 });
    const label = gEdgeLabel.selectAll("text.edge-label").data(labelled, (l) => l.link.target.id);
    const enter = label.enter().append("text")
      .attr("class", "edge-label")
      .attr("text-anchor", "middle")
      .attr("data-target-id", (l) => l.link.target.id)
      .attr("transform", (l) => at(origin(l.link.target)));
    const all = label.merge(enter)
      .classed("out", (l) => !!l.link.target.pruneSource)
      .text((l) => look.strategy.edgeLabel(l.edge));
    all.append("title").text((l) => l.edge.action); // the whole action on hover (.text() above cleared the children)
    all.transition(t).attr("transform", (l) => at(middle(l.link.source, l.link.target)));
    label.exit().transition(t).remove().attr("transform", (l) => at(destination(l.link.target)));
  }

  // Classes and texts from the rows: "pruned" is the node's own flag, "out" the subtree's (self or an ancestor).
  function styleNodes(nodeAll, best, look) {
    const s = look.strategy;
    nodeAll
      .classed("pruned", (d) => !!d.data.pruned)
      .classed("out", (d) => !!d.pruneSource)
      .classed("out-overseer", (d) => E.byOverseer(d.pruneSource))
      .classed("cut", (d) => !!d.data.pruned && E.byOverseer(d.data))
      .classed("stale", (d) => !!d.data.stale)
      .classed("edited", (d) => d.data.original_thought != null)
      .classed("parse-error", (d) => !!d.data.parse_error)
      .classed("unscored", (d) => d.data.eval_score == null)
      .classed("terminal", (d) => !!d.data.is_terminal)
      .classed("hollow", (d) => s.hollow(d.data))
      .classed("noted", (d) => s.noted(d.data))
      .classed("best", (d) => best.has(d.id))
      .classed("selected", (d) => d.id === E.selectedId)
      .attr("data-radius", (d) => d.r.toFixed(1))
      .attr("aria-label", (d) => ariaLabel(d, look));
    nodeAll.select("circle.dot")
      .attr("fill", (d) => (s.hollow(d.data) ? "#fff" : E.fillOf(look, d.data)))
      .attr("stroke", (d) => {
        const c = d3.color(E.fillOf(look, d.data));
        return s.hollow(d.data) ? c.formatHex() : c.darker(1.2).formatHex();
      });
    nodeAll.select("text.mark")
      .attr("x", (d) => -d.r - 3).attr("y", (d) => -d.r - 2)
      .text((d) => (d.data.parse_error ? "!" : d.data.original_thought != null ? "✎" : ""));
    nodeAll.select("text.scissors")
      .attr("x", (d) => -d.r - 11)
      .text((d) => (d.data.pruned && E.byOverseer(d.data) ? "✂" : ""));
    nodeAll.select("text.tag")
      .attr("x", (d) => -d.r).attr("y", (d) => -d.r - 5)
      .text((d) => s.tag(d.data));
    // A label runs right along the link, or (chains) under the node; the critique mark goes where the label is not.
    const below = s.labelBelow;
    nodeAll.select("path.bubble")
      .attr("transform", (d) => (below ? `translate(${d.r + 3},-4.5)` : `translate(${d.r - 1},${d.r - 2})`));
    nodeAll.select("text.label")
      .attr("x", (d) => (below ? -d.r : d.r + 6))
      .attr("y", (d) => (below ? d.r + 11 : 0))
      .text((d) => s.label(d.data, look.ctx));
    nodeAll.select("title").text((d) => nodeTitle(d.data, look));
    return nodeAll;
  }

  function ariaLabel(d, look) {
    const score = look.strategy.scoreText(d.data, look.ctx);
    return `Depth ${d.data.depth}${score ? ", " + score : ""}${d.pruneSource ? ", out of the search" : ""}`;
  }

  function nodeTitle(n, look) {
    const tag = look.strategy.tag(n);
    const flags = [E.prunedText(n), n.stale ? "stale: an earlier step was edited" : ""].filter(Boolean);
    const lines = [tag, look.strategy.scoreText(n, look.ctx), ...flags, E.truncate(n.thought, 280)];
    return lines.filter(Boolean).join("\n");
  }

  // Only the legend entries that mean something for this strategy (data-modes), and what its colours measure.
  let legendMode = null;
  E.renderLegend = function (strategy) {
    if (legendMode === strategy.mode) return;
    legendMode = strategy.mode;
    document.querySelectorAll(".legend [data-modes]").forEach((item) => {
      item.hidden = !item.dataset.modes.split(" ").includes(strategy.mode);
    });
    E.show("legend-scale", !!strategy.scaleLabel);
    E.setText("legend-scale-label", strategy.scaleLabel || "");
  };

  // Fit the whole tree into the panel (called while the user has not moved the view, and by "Fit").
  function fit(animate) {
    const el = svg.node();
    const width = el.clientWidth, height = el.clientHeight;
    if (!lastRoot || !width || !height) return;
    const s = E.strategy();
    const dx = s.nodeSize[0];
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    lastRoot.each((d) => {
      x0 = Math.min(x0, d.x); x1 = Math.max(x1, d.x);
      y0 = Math.min(y0, d.y); y1 = Math.max(y1, d.y);
    });
    const pad = 28;
    const left = y0 - maxRadius - 4, right = y1 + s.labelWidth;
    const top = x0 - Math.max(dx / 2, maxRadius + (hasTags ? TAG_SPACE : 4));
    const bottom = x1 + Math.max(dx / 2, maxRadius + (s.labelBelow ? 18 : 4));
    const k = Math.max(0.08, Math.min(1.1, (width - 2 * pad) / (right - left), (height - 2 * pad) / (bottom - top)));
    // A tree narrower than the panel grows rightwards from the left edge; a wider one is centred.
    const spare = width - (right - left) * k;
    const tx = (spare > 2 * pad ? pad : spare / 2) - left * k;
    const ty = height / 2 - ((top + bottom) / 2) * k;
    const transform = d3.zoomIdentity.translate(tx, ty).scale(k);
    (animate ? svg.transition("fit").duration(E.DURATION) : svg).call(zoom.transform, transform);
  }
  E.fit = fit;

  // Bring a node into view, unless the whole tree is being fitted anyway.
  E.reveal = function (id) {
    const p = positions.get(id);
    if (p && E.userMoved) svg.transition("fit").duration(E.DURATION).call(zoom.translateTo, p.y, p.x);
  };

  E.select = function (id) {
    if (id !== E.selectedId) E.closeForms();
    E.selectedId = id;
    gNode.selectAll("g.node").classed("selected", (d) => d.id === E.selectedId);
    E.renderInspector();
  };

  E.$("fit-button").addEventListener("click", () => { E.userMoved = false; fit(true); });
  window.addEventListener("resize", () => { if (!E.userMoved) fit(false); });
})(window.Explorer);
