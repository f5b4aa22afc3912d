/* The D3 drawing: layers created once, one update() that joins the model to the DOM by node id (links and
 * their labels by their target's id), entering nodes growing from their parent's previous position.
 * How a node looks (size, colour, label, marks) comes from the session's strategy (strategies.js).
 */
(function (E) {
  "use strict";

  const MAX_ANIMATED = 300; // above this many drawn nodes, updates jump instead of animating
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
  // The panel's size, read when it changes: reading clientWidth after drawing would force a layout of the whole tree.
  const size = { width: svg.node().clientWidth, height: svg.node().clientHeight };
  new ResizeObserver(() => {
    size.width = svg.node().clientWidth;
    size.height = svg.node().clientHeight;
    if (!E.userMoved) fit(false);
  }).observe(svg.node());
  E.treeSize = () => size;
  let far = null; // zoomed out too far to read text: text is not drawn (painting it costs more than the tree)
  const zoom = d3.zoom()
    .scaleExtent([0.08, 3])
    .on("zoom", (event) => {
      viewport.attr("transform", event.transform);
      if (far !== event.transform.k < E.READABLE_ZOOM) { far = event.transform.k < E.READABLE_ZOOM; svg.classed("far", far); }
      if (event.sourceEvent) E.userMoved = true;
      if (E.renderMinimapView) E.renderMinimapView(event.transform);
    });
  svg.call(zoom).on("dblclick.zoom", null);

  const diagonal = d3.linkHorizontal().x((d) => d.y).y((d) => d.x);
  // A small speech bubble (10 x 9.5): a critique or reflection is attached to the node.
  const BUBBLE = "M0,1.5 a1.5,1.5 0 0 1 1.5,-1.5 h7 a1.5,1.5 0 0 1 1.5,1.5 v4 a1.5,1.5 0 0 1 -1.5,1.5 " +
    "h-4.5 l-2.5,2.5 v-2.5 a1.5,1.5 0 0 1 -1.5,-1.5 z";

  let pending = false;
  let lastAnimated = true;
  let drawn = new Map(); // id -> the laid-out hierarchy node of the last update (what is on screen)
  let tabStopId = null; // the one node reachable by Tab (roving tabindex): arrows move it
  const afterUpdate = []; // callbacks waiting for the next drawing (a node being unfolded before it is focused)

  // Events arriving in one frame cost one layout and one join.
  E.scheduleUpdate = function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      update();
      E.renderInspector();
      for (const done of afterUpdate.splice(0)) done();
    });
  };
  E.afterUpdate = (fn) => { afterUpdate.push(fn); E.scheduleUpdate(); };
  E.onNextUpdate = (fn) => { afterUpdate.push(fn); }; // at load: the page's first drawing (main.js) runs it

  function update() {
    const strategy = E.strategy();
    const full = E.buildHierarchy();
    if (full) E.markOutOfSearch(full);
    const best = full ? E.bestPath(full) : new Set();
    const look = { strategy, ctx: strategy.prepare(full ? full.descendants().map((d) => d.data) : []) };
    E.look = look;
    const root = full ? E.visibleTree(full, best) : null;
    const layout = d3.tree().nodeSize(strategy.nodeSize).separation((a, b) => (a.parent === b.parent ? 1 : 1.3));
    if (root) { layout(root); anchorTop(root); }
    const nodes = root ? root.descendants() : [];
    const links = root ? root.links() : [];
    for (const d of nodes) { d.r = strategy.radius(d.data, look.ctx); d.best = best.has(d.id); }
    maxRadius = d3.max(nodes, (d) => d.r) || E.NODE_RADIUS;
    hasTags = nodes.some((d) => strategy.tag(d.data));
    const byId = new Map(nodes.map((d) => [d.id, d]));
    // Transitions on thousands of elements cost more than a frame: large trees jump.
    const animate = nodes.length <= MAX_ANIMATED;
    const t = animate ? d3.transition("tree").duration(E.DURATION) : null;
    if (!animate && lastAnimated) { gLink.selectAll("path").interrupt("tree"); gNode.selectAll("g.node").interrupt("tree"); }

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

    drawEdgeLabels(links, look, t, origin, destination, at);

    // Nodes, keyed by id.
    const node = gNode.selectAll("g.node").data(nodes, (d) => d.id);
    const nodeEnter = enterNodes(node.enter(), animate ? (d) => at(origin(d)) : at, animate);
    const nodeAll = node.merge(nodeEnter);
    const dirty = [];
    const version = E.model.critiques.size; // a new critique may mark any node
    nodeAll.each(function (d) { if (changed(this, d, best, look, version)) dirty.push(this); });
    styleNodes(d3.selectAll(dirty), best, look);
    if (animate) {
      nodeAll.each(function () { this.__at = null; }).transition(t)
        .attr("transform", (d) => at(d))
        .attr("fill-opacity", 1)
        .attr("stroke-opacity", 1);
      nodeAll.select("circle.dot").transition(t).attr("r", (d) => d.r);
      nodeAll.select("circle.halo").transition(t).attr("r", (d) => d.r + 4);
      node.exit().transition(t).remove()
        .attr("transform", (d) => at(destination(d)))
        .attr("fill-opacity", 0)
        .attr("stroke-opacity", 0);
    } else {
      nodeAll.each(function (d) { moveNode(this, d); });
      node.exit().remove();
    }
    lastAnimated = animate;

    // The next update's entering nodes start from where these are now going.
    positions.clear();
    for (const d of nodes) positions.set(d.id, { x: d.x, y: d.y });
    lastRoot = root;
    drawn = byId;
    keepTabStop(root);
    document.body.dataset.nodeCount = String(nodes.length);
    document.body.dataset.treeSize = String(E.model.nodes.size);
    document.body.dataset.mode = strategy.mode;
    E.renderLegend(strategy);
    if (!E.userMoved) fit(true);
    if (E.renderMinimap) E.renderMinimap(nodes, links);
  }

  // The top row stays put (d3 centres the root instead): a node added low in the tree moves only the nodes below it.
  function anchorTop(root) {
    let top = Infinity;
    root.each((d) => { if (d.x < top) top = d.x; });
    root.each((d) => { d.x -= top; });
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
      .on("click", (event, d) => E.select(d.id))
      .on("keydown", (event, d) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); E.select(d.id); }
      });
    g.append("circle").attr("class", "halo").attr("r", (d) => d.r + 4);
    g.append("circle").attr("class", "dot").attr("r", (d) => d.r);
    g.append("text").attr("class", "mark").attr("text-anchor", "middle");
    g.append("text").attr("class", "scissors").attr("text-anchor", "middle").attr("dy", "0.35em");
    g.append("text").attr("class", "tag");
    g.append("path").attr("class", "bubble").attr("d", BUBBLE);
    g.append("text").attr("class", "label").attr("dy", "0.32em");
    g.append("text").attr("class", "hidden-count").attr("text-anchor", "end").attr("dy", "0.32em");
    const fold = g.append("g").attr("class", "fold").on("click", onFoldClick);
    fold.append("circle").attr("r", 5.5);
    fold.append("text").attr("text-anchor", "middle").attr("dy", "0.33em");
    fold.append("title");
    g.append("title");
    return g;
  }

  // The fold toggle: collapse or open this node's subtree without selecting it.
  function onFoldClick(event) {
    event.stopPropagation();
    const d = d3.select(this.parentNode).datum();
    E.toggleFold(d.id, d);
  }

  // A node is restyled only when something it shows changed: its row, or what the tree says about it.
  function changed(el, d, best, look, version) {
    const s = look.strategy;
    const src = d.pruneSource;
    const sig = [
      src ? src.id : "", best.has(d.id) ? 1 : 0, d.hidden, d.hasKids ? 1 : 0, E.isMatch(d.id) ? 1 : 0, d.r,
      E.fillOf(look, d.data), s.label(d.data, look.ctx), s.tag(d.data), version, E.view.bestOnly ? 1 : 0,
    ].join("|");
    if (el.__row === d.data && el.__sig === sig) return false;
    el.__row = d.data;
    el.__sig = sig;
    return true;
  }

  function styleLink(el, d, best) {
    const src = d.target.pruneSource;
    const sig = `${src ? src.id : ""}|${best.has(d.target.id) ? 1 : 0}|${E.byOverseer(src)}`;
    if (el.__sig === sig) return false;
    const wasBest = el.classList.contains("best");
    el.__sig = sig;
    el.classList.toggle("out", !!src);
    el.classList.toggle("out-overseer", E.byOverseer(src));
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
    el.setAttribute("fill-opacity", 1);
    el.setAttribute("stroke-opacity", 1);
    const r = String(d.r);
    if (el.__r !== r) {
      el.__r = r;
      el.querySelector("circle.dot").setAttribute("r", d.r);
      el.querySelector("circle.halo").setAttribute("r", d.r + 4);
    }
  }

  // One node takes Tab (the selected one, else the root); arrows move it (treetools.js).
  function keepTabStop(root) {
    const want = E.selectedId && drawn.has(E.selectedId) ? E.selectedId : root ? root.id : null;
    if (want === tabStopId && nodeElement(want)) return;
    const old = nodeElement(tabStopId);
    if (old) old.setAttribute("tabindex", -1);
    tabStopId = want;
    const el = nodeElement(want);
    if (el) el.setAttribute("tabindex", 0);
  }

  function nodeElement(id) {
    return id ? gNode.node().querySelector(`g.node[data-node-id="${CSS.escape(id)}"]`) : null;
  }
  E.nodeElement = nodeElement;
  E.drawnNode = (id) => drawn.get(id) || null;
  E.isDrawn = (id) => drawn.has(id);
  E.drawnRoot = () => lastRoot;

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
      .classed("folded", (d) => d.hidden > 0)
      .classed("match", (d) => E.isMatch(d.id))
      .attr("data-radius", (d) => d.r.toFixed(1))
      .attr("data-hidden", (d) => d.hidden)
      .attr("aria-expanded", (d) => (d.hasKids ? String(d.hidden === 0) : null))
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
    // Beside a fold toggle the scissors move above the node, clear of it.
    nodeAll.select("text.scissors")
      .attr("x", (d) => (d.hasKids ? -d.r - 4 : -d.r - 11))
      .attr("y", (d) => (d.hasKids ? -d.r - 6 : 0))
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
    styleFold(nodeAll);
    nodeAll.select("title").text((d) => nodeTitle(d.data, look));
    return nodeAll;
  }

  // The fold toggle left of a node with children: − collapses, + shows the hidden ones (their count beside it).
  function styleFold(nodeAll) {
    const shown = (d) => d.hasKids && !E.view.bestOnly;
    const fold = nodeAll.select("g.fold")
      .attr("display", (d) => (shown(d) ? null : "none"))
      .attr("transform", (d) => `translate(${-d.r - 9},0)`);
    fold.select("text").text((d) => (d.hidden > 0 ? "+" : "−"));
    fold.select("title").text((d) => (d.hidden > 0 ? `Show ${d.hidden} hidden below (c)` : "Collapse this subtree (c)"));
    nodeAll.select("text.hidden-count")
      .attr("x", (d) => -d.r - 17)
      .text((d) => (shown(d) && d.hidden > 0 ? `+${d.hidden}` : ""));
  }

  function ariaLabel(d, look) {
    const score = look.strategy.scoreText(d.data, look.ctx);
    const parts = [`Depth ${d.data.depth}`];
    if (score) parts.push(score);
    if (d.pruneSource) parts.push("out of the search");
    if (d.hidden > 0) parts.push(`${d.hidden} hidden below`);
    parts.push(E.truncate(E.firstLine(d.data.thought), 90));
    return parts.join(", ");
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

  // The drawn tree's extent in layout coordinates (x across, y down the page), with room for marks and labels.
  function bounds() {
    if (!lastRoot) return null;
    const s = E.strategy();
    const dx = s.nodeSize[0];
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    lastRoot.each((d) => {
      x0 = Math.min(x0, d.x); x1 = Math.max(x1, d.x);
      y0 = Math.min(y0, d.y); y1 = Math.max(y1, d.y);
    });
    const left = y0 - maxRadius - 40; // the fold toggle and hidden count sit left of a node
    const right = y1 + s.labelWidth;
    const top = x0 - Math.max(dx / 2, maxRadius + (hasTags ? TAG_SPACE : 4));
    const bottom = x1 + Math.max(dx / 2, maxRadius + (s.labelBelow ? 18 : 4));
    return { left, right, top, bottom };
  }
  E.treeBounds = bounds;

  // Fit the whole tree into the panel (called while the user has not moved the view, and by "Fit").
  function fit(animate) {
    const { width, height } = size;
    const b = bounds();
    if (!b || !width || !height) return;
    const pad = 28;
    const k = Math.max(0.08, Math.min(1.1, (width - 2 * pad) / (b.right - b.left), (height - 2 * pad) / (b.bottom - b.top)));
    // A tree narrower than the panel grows rightwards from the left edge; a wider one is centred.
    const spare = width - (b.right - b.left) * k;
    const tx = (spare > 2 * pad ? pad : spare / 2) - b.left * k;
    const ty = height / 2 - ((b.top + b.bottom) / 2) * k;
    const transform = d3.zoomIdentity.translate(tx, ty).scale(k);
    const now = d3.zoomTransform(svg.node());
    if (Math.abs(now.k - k) < 1e-4 && Math.abs(now.x - tx) < 0.5 && Math.abs(now.y - ty) < 0.5) return;
    // Animating the whole view repaints every node each frame: large trees jump.
    (animate && drawn.size <= MAX_ANIMATED ? svg.transition("fit").duration(E.DURATION) : svg).call(zoom.transform, transform);
  }
  E.fit = fit;

  // Bring a node into view, unless the whole tree is being fitted anyway.
  E.reveal = function (id) {
    const p = positions.get(id);
    if (p && E.userMoved) svg.transition("fit").duration(E.DURATION).call(zoom.translateTo, p.y, p.x);
  };

  // Centre the view on a point of the layout (a node, or where the minimap was clicked), zoomed in enough to read.
  E.panTo = function (x, y, readable) {
    E.userMoved = true;
    const k = d3.zoomTransform(svg.node()).k;
    const move = svg.transition("fit").duration(E.DURATION);
    if (readable && k < 0.8) move.call(zoom.transform, centred(x, y, 1));
    else move.call(zoom.translateTo, y, x);
  };

  function centred(x, y, k) {
    return d3.zoomIdentity.translate(size.width / 2 - y * k, size.height / 2 - x * k).scale(k);
  }

  E.centerOn = function (id) {
    const p = positions.get(id);
    if (p) E.panTo(p.x, p.y, true);
  };
  E.zoomTransform = () => d3.zoomTransform(svg.node());
  E.treeSvg = () => svg.node();

  E.select = function (id) {
    if (id !== E.selectedId) E.closeForms();
    const old = nodeElement(E.selectedId);
    if (old) old.classList.remove("selected");
    E.selectedId = id;
    const el = nodeElement(id);
    if (el) el.classList.add("selected");
    keepTabStop(lastRoot);
    E.renderInspector();
    if (E.writePermalink) E.writePermalink(id);
  };

  // Unfold the way to a node if need be, then select it, give it the keyboard focus, and (if asked) centre it.
  E.focusNode = function (id, options) {
    if (!id || !E.model.nodes.has(id)) return false;
    const go = () => {
      if (!drawn.has(id)) return;
      E.select(id);
      const el = nodeElement(id);
      if (el && !(options && options.keepFocus)) el.focus({ preventScroll: true });
      if (options && options.center) E.centerOn(id);
    };
    if (E.unfoldTo(id)) E.afterUpdate(go);
    else go();
    return true;
  };

  E.$("fit-button").addEventListener("click", () => { E.userMoved = false; fit(true); });
})(window.Explorer);
