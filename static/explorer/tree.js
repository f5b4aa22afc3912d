/* The live tree explorer: render the page's snapshot at once, then apply websocket deltas.
 *
 * One data model (the rows the database sent), one update() that joins it to the DOM by node id,
 * layers created once. Everything the model wrote (thoughts, reasons, errors) goes into the page
 * through textContent or d3's .text(), never as HTML: LLM output is untrusted.
 */
(function () {
  "use strict";

  const FINISHED = new Set(["solved", "failed", "exhausted", "cancelled"]);
  const DX = 26;              // vertical distance between sibling rows
  const DY = 200;             // horizontal distance between depths
  const R = 7;                // node radius
  const LABEL_CHARS = 24;  // of the thought, after the score
  const LABEL_WIDTH = 180;    // room kept for labels right of the deepest nodes when fitting
  const UNSCORED = "#9aabc2"; // neutral grey-blue for a thought not scored (yet)
  const MAX_ANIMATED = 1500;  // above this many nodes, updates jump instead of animating
  const DURATION = 350;

  const container = document.getElementById("explorer");
  const wsPath = container.dataset.wsPath;

  // The data: the last snapshot plus the deltas applied since.
  const model = { session: null, nodes: new Map(), edgesByTarget: new Map(), critiques: [], lastSeq: 0 };
  let selectedId = null;
  let lastRoot = null;
  let userMoved = false;        // once the user pans or zooms, stop fitting the tree automatically
  const positions = new Map();  // id -> {x, y} of the previous layout: where entering children start

  // Layers, created once: zoom moves the outer <g>, links stay under nodes.
  const svg = d3.select("#tree");
  const viewport = svg.append("g").attr("class", "viewport");
  const gLink = viewport.append("g").attr("class", "links");
  const gNode = viewport.append("g").attr("class", "nodes");
  const zoom = d3.zoom()
    .scaleExtent([0.08, 3])
    .on("zoom", (event) => {
      viewport.attr("transform", event.transform);
      if (event.sourceEvent) userMoved = true;
    });
  svg.call(zoom).on("dblclick.zoom", null);

  const color = d3.scaleSequential(d3.interpolateRdYlGn).domain([0, 1]);
  const layout = d3.tree().nodeSize([DX, DY]).separation((a, b) => (a.parent === b.parent ? 1 : 1.3));
  const diagonal = d3.linkHorizontal().x((d) => d.y).y((d) => d.x);

  // ---- the data model -------------------------------------------------------------------

  function applySnapshot(snapshot, seq) {
    model.session = snapshot.session;
    model.nodes = new Map((snapshot.nodes || []).map((n) => [n.id, n]));
    model.edgesByTarget = new Map((snapshot.edges || []).map((e) => [e.to_node_id, e]));
    model.critiques = snapshot.critiques || [];
    model.lastSeq = typeof seq === "number" ? seq : (snapshot.session && snapshot.session.seq) || 0;
    if (selectedId && !model.nodes.has(selectedId)) selectedId = null;
    renderSession();
    renderInspector();
    scheduleUpdate();
  }

  function applyDelta(msg) {
    switch (msg.type) {
      case "node.created":
      case "node.updated":
        model.nodes.set(msg.node.id, msg.node);
        if (msg.node.id === selectedId) renderInspector();
        scheduleUpdate();
        break;
      case "edge.created":
        model.edgesByTarget.set(msg.edge.to_node_id, msg.edge);
        if (msg.edge.to_node_id === selectedId) renderInspector();
        break;
      case "critique.created":
        model.critiques.push(msg.critique);
        break;
      case "session.updated":
        model.session = msg.session;
        renderSession();
        scheduleUpdate(); // the final node changes the best path
        break;
      default:
        break; // an event type this page does not show yet
    }
  }

  function isFinished() {
    return !!model.session && FINISHED.has(model.session.status);
  }

  // The rows that reach the root, in creation order: a row whose parent has not arrived waits for it.
  function reachableRows() {
    const rows = Array.from(model.nodes.values()).sort(byCreation);
    if (!rows.length) return { rows: [], rootId: null };
    const wanted = model.session && model.session.root_node_id;
    const root = model.nodes.get(wanted) || rows.find((r) => !r.parent_id || !model.nodes.has(r.parent_id));
    if (!root) return { rows: [], rootId: null };
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

  function byCreation(a, b) {
    if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
    if (a.depth !== b.depth) return a.depth - b.depth;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  function buildHierarchy() {
    const { rows, rootId } = reachableRows();
    if (!rows.length) return null;
    return d3.stratify()
      .id((d) => d.id)
      .parentId((d) => (d.id === rootId ? null : d.parent_id))(rows);
  }

  // Root -> the final node once there is one; before that, root -> the deepest, best-scored live node.
  function bestPath(root) {
    let target = null;
    const finalId = model.session && model.session.final_node_id;
    root.each((d) => { if (d.id === finalId) target = d; });
    if (!target) {
      root.each((d) => {
        if (d.data.pruned || d.data.eval_score == null) return;
        if (!target || d.depth > target.depth ||
            (d.depth === target.depth && d.data.eval_score > target.data.eval_score)) target = d;
      });
    }
    const ids = new Set();
    for (let d = target; d; d = d.parent) ids.add(d.id);
    return ids;
  }

  // ---- drawing ---------------------------------------------------------------------------

  let pending = false;
  function scheduleUpdate() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; update(); });
  }

  function update() {
    const root = buildHierarchy();
    const nodes = root ? (layout(root), root.descendants()) : [];
    const links = root ? root.links() : [];
    const best = root ? bestPath(root) : new Set();
    const byId = new Map(nodes.map((d) => [d.id, d]));
    const t = d3.transition("tree").duration(nodes.length > MAX_ANIMATED ? 0 : DURATION);

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
      .attr("d", (d) => { const o = origin(d.target); return diagonal({ source: o, target: o }); });
    const linkAll = link.merge(linkEnter)
      .classed("pruned", (d) => !!d.target.data.pruned)
      .classed("best", (d) => best.has(d.target.id));
    linkAll.filter(".best").raise();
    linkAll.transition(t).attr("d", diagonal);
    link.exit().transition(t).remove()
      .attr("d", (d) => { const p = destination(d.target); return diagonal({ source: p, target: p }); });

    // Nodes, keyed by id.
    const node = gNode.selectAll("g.node").data(nodes, (d) => d.id);
    const nodeEnter = node.enter().append("g")
      .attr("class", "node")
      .attr("data-node-id", (d) => d.id)
      .attr("tabindex", 0)
      .attr("role", "button")
      .attr("transform", (d) => at(origin(d)))
      .attr("fill-opacity", 0)
      .attr("stroke-opacity", 0)
      .on("click", (event, d) => select(d.id))
      .on("keydown", (event, d) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(d.id); }
      });
    nodeEnter.append("circle").attr("class", "halo").attr("r", R + 4);
    nodeEnter.append("circle").attr("class", "dot").attr("r", R);
    nodeEnter.append("text").attr("class", "mark").attr("text-anchor", "middle").attr("x", -R - 3).attr("y", -R - 2);
    nodeEnter.append("text").attr("class", "label").attr("x", R + 6).attr("dy", "0.32em");
    nodeEnter.append("title");

    const nodeAll = node.merge(nodeEnter)
      .classed("pruned", (d) => !!d.data.pruned)
      .classed("parse-error", (d) => !!d.data.parse_error)
      .classed("unscored", (d) => d.data.eval_score == null)
      .classed("terminal", (d) => !!d.data.is_terminal)
      .classed("best", (d) => best.has(d.id))
      .classed("selected", (d) => d.id === selectedId)
      .attr("aria-label", (d) => `Depth ${d.data.depth}, ${scoreText(d.data)}`);
    nodeAll.select("circle.dot")
      .attr("fill", (d) => fill(d.data))
      .attr("stroke", (d) => d3.color(fill(d.data)).darker(1.2).formatHex());
    nodeAll.select("text.mark").text((d) => (d.data.parse_error ? "!" : ""));
    nodeAll.select("text.label").text((d) => label(d.data));
    nodeAll.select("title").text((d) => `${scoreText(d.data)}\n${truncate(d.data.thought, 280)}`);
    nodeAll.transition(t)
      .attr("transform", (d) => at(d))
      .attr("fill-opacity", 1)
      .attr("stroke-opacity", 1);
    node.exit().transition(t).remove()
      .attr("transform", (d) => at(destination(d)))
      .attr("fill-opacity", 0)
      .attr("stroke-opacity", 0);

    // The next update's entering nodes start from where these are now going.
    positions.clear();
    for (const d of nodes) positions.set(d.id, { x: d.x, y: d.y });
    lastRoot = root;
    document.body.dataset.nodeCount = String(nodes.length);
    if (!userMoved) fit(true);
  }

  function fill(n) {
    if (n.eval_score == null) return UNSCORED;
    return color(Math.max(0, Math.min(1, n.eval_score)));
  }

  function label(n) {
    const score = n.eval_score == null ? "" : n.eval_score.toFixed(2) + "  ";
    return score + truncate(firstLine(n.thought), LABEL_CHARS);
  }

  function scoreText(n) {
    if (n.parse_error) return "parse error";
    return n.eval_score == null ? "not scored" : `score ${n.eval_score.toFixed(2)}`;
  }

  function firstLine(text) {
    return String(text || "").trim().split(/\r?\n/, 1)[0];
  }

  function truncate(text, n) {
    text = String(text || "");
    return text.length > n ? text.slice(0, n - 1) + "…" : text;
  }

  // Fit the whole tree into the panel (called while the user has not moved the view, and by "Fit").
  function fit(animate) {
    const el = svg.node();
    const width = el.clientWidth, height = el.clientHeight;
    if (!lastRoot || !width || !height) return;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    lastRoot.each((d) => {
      x0 = Math.min(x0, d.x); x1 = Math.max(x1, d.x);
      y0 = Math.min(y0, d.y); y1 = Math.max(y1, d.y);
    });
    const pad = 28;
    const left = y0 - R - 4, right = y1 + LABEL_WIDTH, top = x0 - DX / 2, bottom = x1 + DX / 2;
    const k = Math.max(0.08, Math.min(1.1, (width - 2 * pad) / (right - left), (height - 2 * pad) / (bottom - top)));
    // A tree narrower than the panel grows rightwards from the left edge; a wider one is centred.
    const spare = width - (right - left) * k;
    const tx = (spare > 2 * pad ? pad : spare / 2) - left * k;
    const ty = height / 2 - ((top + bottom) / 2) * k;
    const transform = d3.zoomIdentity.translate(tx, ty).scale(k);
    (animate ? svg.transition("fit").duration(DURATION) : svg).call(zoom.transform, transform);
  }

  // ---- the inspector and the session header ------------------------------------------

  function select(id) {
    selectedId = id;
    gNode.selectAll("g.node").classed("selected", (d) => d.id === selectedId);
    renderInspector();
  }

  function $(id) { return document.getElementById(id); }
  function setText(id, text) { $(id).textContent = text == null ? "" : String(text); }
  function show(id, visible) { $(id).hidden = !visible; }

  function renderInspector() {
    const n = selectedId ? model.nodes.get(selectedId) : null;
    show("inspector-empty", !n);
    show("inspector-body", !!n);
    if (!n) return;
    setText("insp-depth", `depth ${n.depth}`);
    setText("insp-score", scoreText(n));
    $("insp-score").style.setProperty("--score-color", n.eval_score == null ? UNSCORED : fill(n));
    show("insp-pruned", !!n.pruned);
    setText("insp-pruned", n.pruned ? `pruned${n.pruned_by ? " by " + n.pruned_by : ""}` : "");
    show("insp-terminal", !!n.is_terminal);
    show("insp-offline", !!n.offline);
    show("prune-button", n.depth > 0);
    setText("prune-button", n.pruned ? "Unprune branch" : "Prune branch");
    setText("inspector-thought", n.thought);
    show("insp-reason-block", !!n.eval_reason);
    setText("insp-reason", n.eval_reason);
    show("insp-parse-block", !!n.parse_error);
    setText("insp-parse-error", n.parse_error);
    const edge = model.edgesByTarget.get(n.id);
    show("insp-edge-block", !!(edge && (edge.action || edge.observation)));
    setText("insp-edge-action", edge ? edge.action : "");
    setText("insp-edge-observation", edge && edge.observation ? "Observation: " + edge.observation : "");
    setText("insp-model", n.model_used || "—");
    setText("insp-cost", `$${Number(n.cost_usd || 0).toFixed(6)}`);
    setText("insp-latency", `${n.latency_ms || 0} ms`);
    setText("insp-visits", `${n.visit_count || 0} / ${Number(n.total_reward || 0).toFixed(3)}`);
    setText("insp-id", n.id);
  }

  let cancelRequested = false;

  function renderSession() {
    const s = model.session;
    if (!s) return;
    const pill = $("session-status");
    pill.textContent = s.status;
    pill.className = "pill status-" + s.status;
    setText("session-mode", s.mode);
    setText("session-mode-reason", s.mode_reason);
    $("session-mode-reason").title = s.mode_reason || "";
    const used = Number(s.budget_used_usd || 0), budget = Number(s.budget_usd || 0);
    const pct = budget > 0 ? Math.max(0, Math.min(100, (100 * used) / budget)) : 0;
    $("budget-fill").style.width = pct.toFixed(1) + "%";
    $("budget-bar").setAttribute("aria-valuenow", pct.toFixed(0));
    $("budget-bar").classList.toggle("high", pct >= 85);
    setText("budget-text", `$${used.toFixed(4)} / $${budget.toFixed(2)}`);
    show("session-offline", !!s.offline);
    show("final-answer-panel", !!s.final_answer);
    setText("final-answer", s.final_answer);
    show("session-error", !!s.error);
    setText("session-error", s.error);
    show("cancel-button", !isFinished());
    if (isFinished() && cancelRequested) { cancelRequested = false; setStatusLine(""); }
  }

  function setStatusLine(text) { setText("status-line", text); }

  function setConnection(text, tone) {
    const el = $("conn-status");
    el.textContent = text;
    el.dataset.tone = tone || "";
  }

  // ---- the websocket -------------------------------------------------------------------

  let socket = null;
  let retries = 0;
  let reconnectTimer = null;

  function connect() {
    clearTimeout(reconnectTimer);
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(scheme + location.host + wsPath);
    socket = ws;
    setConnection("connecting…", "warn");
    ws.onopen = () => { retries = 0; setConnection("live", "ok"); };
    ws.onmessage = (event) => { if (ws === socket) receive(event.data); };
    ws.onclose = (event) => {
      if (ws !== socket) return; // replaced on purpose (a re-sync)
      socket = null;
      if (isFinished()) { setConnection("finished", ""); return; }
      if (event.code >= 4000 && event.code < 5000) {
        setConnection(`closed by the server (${event.code})`, "bad");
        return;
      }
      const delay = Math.min(15000, 500 * 2 ** retries) * (0.75 + Math.random() * 0.5);
      retries += 1;
      setConnection("reconnecting…", "warn");
      reconnectTimer = setTimeout(connect, delay);
    };
  }

  // A gap in seq means a missed event: reconnect, and the server's snapshot puts us right.
  function resync() {
    const old = socket;
    socket = null;
    if (old) old.close();
    connect();
  }

  function receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "snapshot") { applySnapshot(msg, msg.seq); return; }
    if (msg.type === "error") { setStatusLine(msg.detail || "The server refused that request."); return; }
    if (typeof msg.seq !== "number" || msg.seq <= model.lastSeq) return;
    if (msg.seq !== model.lastSeq + 1) { resync(); return; }
    model.lastSeq = msg.seq;
    applyDelta(msg);
  }

  // Overseer actions go over the socket; the change comes back as an ordinary event.
  function sendAction(message, note) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      setStatusLine("Not connected; try again in a moment.");
      return false;
    }
    socket.send(JSON.stringify(message));
    setStatusLine(note);
    return true;
  }

  $("cancel-button").addEventListener("click", () => {
    cancelRequested = sendAction({ action: "cancel" }, "Cancel requested…") || cancelRequested;
  });

  $("prune-button").addEventListener("click", () => {
    const n = selectedId ? model.nodes.get(selectedId) : null;
    if (!n) return;
    const action = n.pruned ? "unprune" : "prune";
    sendAction({ action, node_id: n.id }, action === "prune" ? "Branch pruned." : "Branch restored.");
  });

  $("fit-button").addEventListener("click", () => { userMoved = false; fit(true); });
  window.addEventListener("resize", () => { if (!userMoved) fit(false); });

  // The page's snapshot first, so the tree shows before the socket opens.
  const initial = JSON.parse(document.getElementById("tree-data").textContent);
  applySnapshot(initial, initial.session && initial.session.seq);
  connect();
})();
