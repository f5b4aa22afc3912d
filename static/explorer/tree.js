/* The live tree explorer: render the page's snapshot at once, then apply websocket deltas; steer over HTTP.
 *
 * One data model (the rows the database sent), one update() that joins it to the DOM by node id,
 * layers created once. The socket only receives: every overseer action is a fetch() to the JSON API,
 * and its effect comes back as an ordinary event, so nothing is lost while the socket reconnects.
 * Everything the model or a person wrote (thoughts, reasons, notes, actors, details) goes into the page
 * through textContent or d3's .text(), never as HTML: it is untrusted.
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
  const SNAPSHOT_TIMEOUT_MS = 5000; // a re-sync request unanswered this long falls back to a reconnect
  const OK_MESSAGE_MS = 6000;       // a success note in the status line fades after this long

  const container = document.getElementById("explorer");
  const wsPath = container.dataset.wsPath;
  let canAct = container.dataset.canAct === "true";

  // The data: the last snapshot plus the deltas applied since.
  const model = {
    session: null, nodes: new Map(), edgesByTarget: new Map(), critiques: [], actions: new Map(), lastSeq: 0,
  };
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
    if (Array.isArray(snapshot.actions)) model.actions = new Map(snapshot.actions.map((a) => [a.id, a]));
    else loadActionsOnce();
    model.lastSeq = typeof seq === "number" ? seq : (snapshot.session && snapshot.session.seq) || 0;
    if (selectedId && !model.nodes.has(selectedId)) select(null);
    renderSession();
    renderAudit();
    scheduleUpdate();
  }

  function applyDelta(msg) {
    switch (msg.type) {
      case "node.created":
      case "node.updated":
        model.nodes.set(msg.node.id, msg.node);
        scheduleUpdate(); // a prune or an edit changes the look of a whole subtree, and the inspector
        break;
      case "edge.created":
        model.edgesByTarget.set(msg.edge.to_node_id, msg.edge);
        if (msg.edge.to_node_id === selectedId) renderInspector();
        break;
      case "critique.created":
        model.critiques.push(msg.critique);
        break;
      case "session.updated":
        model.session = keepForks(msg.session, model.session);
        renderSession();
        scheduleUpdate(); // the final node changes the best path
        break;
      case "action.created":
      case "action.updated":
        model.actions.set(msg.action.id, msg.action);
        noteFork(msg.action);
        renderAudit();
        break;
      default:
        break; // an event type this page does not show yet
    }
  }

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
    renderLineage(model.session);
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

  // ---- pruning is a property of a subtree -------------------------------------------

  // The node whose own flag takes n out of the search: n itself or its nearest pruned ancestor; null if in.
  function pruneSource(n) {
    for (let a = n; a; a = a.parent_id ? model.nodes.get(a.parent_id) : null) {
      if (a.pruned) return a;
    }
    return null;
  }

  // The same answer for every node of a laid-out hierarchy in one pass (each() visits parents first).
  function markOutOfSearch(root) {
    root.each((d) => { d.pruneSource = d.data.pruned ? d.data : d.parent ? d.parent.pruneSource : null; });
  }

  function byOverseer(source) {
    return !!source && source.pruned_by === "overseer";
  }

  function prunedText(n) {
    const source = pruneSource(n);
    if (!source) return "";
    const who = byOverseer(source) ? prunedBy(source) : null;
    if (source === n) return who ? `pruned by ${who}` : "dropped by the search's beam";
    return who ? `inside a branch pruned by ${who}` : "inside a branch dropped by the search's beam";
  }

  function prunedBy(source) {
    const when = source.pruned_at ? " at " + clock(source.pruned_at) : "";
    return (source.pruned_actor || "overseer") + when;
  }

  // Root -> the final node once there is one; before that, root -> the deepest, best-scored node in the search.
  function bestPath(root) {
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
  }

  // ---- drawing ---------------------------------------------------------------------------

  let pending = false;
  function scheduleUpdate() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; update(); renderInspector(); });
  }

  function update() {
    const root = buildHierarchy();
    if (root) { layout(root); markOutOfSearch(root); }
    const nodes = root ? root.descendants() : [];
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
      .attr("data-target-id", (d) => d.target.id)
      .attr("d", (d) => { const o = origin(d.target); return diagonal({ source: o, target: o }); });
    const linkAll = link.merge(linkEnter)
      .classed("out", (d) => !!d.target.pruneSource)
      .classed("out-overseer", (d) => byOverseer(d.target.pruneSource))
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
      .attr("data-parent-id", (d) => d.data.parent_id || "")
      .attr("data-depth", (d) => d.data.depth)
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
    nodeEnter.append("text").attr("class", "scissors").attr("text-anchor", "middle")
      .attr("x", -R - 11).attr("dy", "0.35em");
    nodeEnter.append("text").attr("class", "label").attr("x", R + 6).attr("dy", "0.32em");
    nodeEnter.append("title");

    const nodeAll = styleNodes(node.merge(nodeEnter), best);
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

  // Classes and texts from the rows: "pruned" is the node's own flag, "out" the subtree's (self or an ancestor).
  function styleNodes(nodeAll, best) {
    nodeAll
      .classed("pruned", (d) => !!d.data.pruned)
      .classed("out", (d) => !!d.pruneSource)
      .classed("out-overseer", (d) => byOverseer(d.pruneSource))
      .classed("cut", (d) => !!d.data.pruned && byOverseer(d.data))
      .classed("stale", (d) => !!d.data.stale)
      .classed("edited", (d) => d.data.original_thought != null)
      .classed("parse-error", (d) => !!d.data.parse_error)
      .classed("unscored", (d) => d.data.eval_score == null)
      .classed("terminal", (d) => !!d.data.is_terminal)
      .classed("best", (d) => best.has(d.id))
      .classed("selected", (d) => d.id === selectedId)
      .attr("aria-label", ariaLabel);
    nodeAll.select("circle.dot")
      .attr("fill", (d) => fill(d.data))
      .attr("stroke", (d) => d3.color(fill(d.data)).darker(1.2).formatHex());
    nodeAll.select("text.mark").text((d) => (d.data.parse_error ? "!" : d.data.original_thought != null ? "✎" : ""));
    nodeAll.select("text.scissors").text((d) => (d.data.pruned && byOverseer(d.data) ? "✂" : ""));
    nodeAll.select("text.label").text((d) => label(d.data));
    nodeAll.select("title").text((d) => nodeTitle(d.data));
    return nodeAll;
  }

  function ariaLabel(d) {
    return `Depth ${d.data.depth}, ${scoreText(d.data)}${d.pruneSource ? ", out of the search" : ""}`;
  }

  function fill(n) {
    if (n.eval_score == null) return UNSCORED;
    return color(Math.max(0, Math.min(1, n.eval_score)));
  }

  function label(n) {
    const score = n.eval_score == null ? "" : n.eval_score.toFixed(2) + "  ";
    return score + truncate(firstLine(n.thought), LABEL_CHARS);
  }

  function nodeTitle(n) {
    const flags = [prunedText(n), n.stale ? "stale: an earlier step was edited" : ""].filter(Boolean);
    return [scoreText(n), ...flags, truncate(n.thought, 280)].join("\n");
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

  function clock(iso) {
    const date = new Date(iso);
    if (isNaN(date)) return "";
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  }

  function shortId(id) {
    return String(id || "").slice(0, 8);
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

  // Bring a node into view, unless the whole tree is being fitted anyway.
  function reveal(id) {
    const p = positions.get(id);
    if (p && userMoved) svg.transition("fit").duration(DURATION).call(zoom.translateTo, p.y, p.x);
  }

  // ---- the inspector and the session header ------------------------------------------

  function select(id) {
    if (id !== selectedId) closeForms();
    selectedId = id;
    gNode.selectAll("g.node").classed("selected", (d) => d.id === selectedId);
    renderInspector();
  }

  function selectedNode() {
    return selectedId ? model.nodes.get(selectedId) || null : null;
  }

  function $(id) { return document.getElementById(id); }
  function setText(id, text) { $(id).textContent = text == null ? "" : String(text); }
  function show(id, visible) { $(id).hidden = !visible; }

  function renderInspector() {
    const n = selectedNode();
    show("inspector-empty", !n);
    show("inspector-body", !!n);
    if (!n) return;
    setText("insp-depth", `depth ${n.depth}`);
    setText("insp-score", scoreText(n));
    $("insp-score").style.setProperty("--score-color", n.eval_score == null ? UNSCORED : fill(n));
    renderFlags(n);
    show("insp-terminal", !!n.is_terminal);
    show("insp-offline", !!n.offline);
    renderNodeActions(n);
    setText("inspector-thought", n.thought);
    show("insp-original-block", n.original_thought != null);
    setText("insp-original", n.original_thought);
    setText("insp-edited-at", n.edited_at ? `· edited at ${clock(n.edited_at)}` : "");
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

  function renderFlags(n) {
    const pruned = prunedText(n);
    show("insp-pruned", !!pruned);
    setText("insp-pruned", pruned);
    $("insp-pruned").classList.toggle("by-overseer", byOverseer(pruneSource(n)));
    show("insp-stale", !!n.stale);
  }

  function renderNodeActions(n) {
    show("node-actions", canAct);
    const inner = n.depth > 0; // the root is the problem: it is expanded or forked, never pruned, edited or promoted
    show("prune-button", inner);
    setText("prune-button", n.pruned ? "Unprune branch" : "Prune branch");
    $("prune-button").title = n.pruned
      ? "Put this node and everything under it back into the search (p)"
      : "Take this node and everything under it out of the search (p)";
    show("edit-button", inner);
    show("promote-button", inner);
  }

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
    renderAnswer(s);
    renderLineage(s);
    show("session-error", !!s.error);
    setText("session-error", s.error);
    renderSessionActions(s);
    renderConnection();
  }

  function renderAnswer(s) {
    show("final-answer-panel", !!s.final_answer);
    $("final-answer-panel").classList.toggle("partial", !!s.answer_partial);
    setText("final-answer", s.final_answer);
    show("answer-partial", !!s.answer_partial);
    show("answer-chosen", !!s.answer_chosen_by);
    const note = s.answer_note ? ": " + s.answer_note : "";
    setText("answer-chosen", s.answer_chosen_by ? `Chosen by ${s.answer_chosen_by}${note}` : "");
  }

  function sessionUrl(id) {
    return `/sessions/${encodeURIComponent(id)}/`;
  }

  function renderLineage(s) {
    const from = s.forked_from_session_id;
    const forks = Array.isArray(s.forks) ? s.forks : [];
    show("lineage", !!from || forks.length > 0);
    show("forked-from", !!from);
    if (from) {
      $("forked-from-link").href = sessionUrl(from);
      setText("forked-from-link", shortId(from));
      setText("forked-from-node", s.forked_from_node_id ? ` at node ${shortId(s.forked_from_node_id)}` : "");
    }
    show("forks", forks.length > 0);
    d3.select("#fork-links").selectAll("a").data(forks, (id) => id)
      .join("a").attr("href", sessionUrl).attr("title", (id) => id).text(shortId);
  }

  function renderSessionActions(s) {
    show("session-actions", canAct);
    show("pause-button", s.status === "running" || s.status === "queued");
    show("resume-button", s.status === "paused" || s.status === "interrupted");
    show("cancel-button", !isFinished());
  }

  let statusTimer = null;
  function setStatusLine(text, tone) {
    clearTimeout(statusTimer);
    setText("status-line", text);
    $("status-line").dataset.tone = tone || "";
    if (text && tone === "ok") statusTimer = setTimeout(() => setStatusLine(""), OK_MESSAGE_MS);
  }

  // ---- the audit trail ---------------------------------------------------------------

  function renderAudit() {
    const rows = Array.from(model.actions.values()).sort(newestFirst);
    show("audit-empty", !rows.length);
    const item = d3.select("#audit-list").selectAll("li.audit-item").data(rows, (a) => a.id);
    const enter = item.enter().append("li").attr("class", "audit-item");
    const head = enter.append("div").attr("class", "audit-head");
    head.append("time").attr("class", "audit-time num");
    head.append("span").attr("class", "audit-action");
    head.append("span").attr("class", "audit-state");
    const meta = enter.append("div").attr("class", "audit-meta");
    meta.append("span").attr("class", "audit-actor");
    meta.append("span").attr("class", "audit-node");
    enter.append("div").attr("class", "audit-detail");
    enter.on("click", (event, a) => openAuditNode(a))
      .on("keydown", (event, a) => { if (event.key === "Enter") openAuditNode(a); });
    item.exit().remove();
    fillAuditItems(item.merge(enter)).order();
  }

  function fillAuditItems(items) {
    items
      .attr("data-action", (a) => a.action)
      .attr("data-state", (a) => a.state)
      .classed("has-node", namesANode)
      .attr("tabindex", (a) => (namesANode(a) ? 0 : null))
      .attr("role", (a) => (namesANode(a) ? "button" : null))
      .attr("title", (a) => (namesANode(a) ? "Select this node" : null));
    items.select(".audit-time").attr("datetime", (a) => a.created_at).text((a) => clock(a.created_at));
    items.select(".audit-action").text((a) => actionSummary(a));
    items.select(".audit-state").attr("class", (a) => `audit-state state-${a.state}`).text((a) => a.state);
    items.select(".audit-actor").text((a) => a.actor || "");
    items.select(".audit-node").text((a) => (a.node_id ? nodeRef(a.node_id) : ""));
    items.select(".audit-detail").text(auditDetail);
    return items;
  }

  function newestFirst(a, b) {
    if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
    return String(b.id).localeCompare(String(a.id), undefined, { numeric: true });
  }

  function actionSummary(a) {
    const payload = a.payload || {};
    return payload.k != null && a.action === "expand" ? `${a.action} ×${payload.k}` : a.action;
  }

  function auditDetail(a) {
    const forked = a.action === "fork" && a.after && a.after.session_id;
    return [a.detail, forked ? `new session ${shortId(a.after.session_id)}` : ""].filter(Boolean).join(" · ");
  }

  function nodeRef(id) {
    const n = model.nodes.get(id);
    return n ? `“${truncate(firstLine(n.thought), 34)}”` : `node ${shortId(id)}`;
  }

  function namesANode(a) {
    return !!a.node_id && model.nodes.has(a.node_id);
  }

  function openAuditNode(a) {
    if (!namesANode(a)) return;
    select(a.node_id);
    reveal(a.node_id);
  }

  // ---- steering: every action is an HTTP request; its effect arrives as an event -----------------

  function csrfToken() {
    const cookie = document.cookie.split(";").map((c) => c.trim()).find((c) => c.startsWith("csrftoken="));
    if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
    const input = container.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // {ok, status, data, message}: a refusal is a message for the status line, never an exception.
  async function request(method, path, body) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-CSRFToken"] = csrfToken();
      init.body = JSON.stringify(body || {});
    }
    let response;
    try {
      response = await fetch("/api/" + path, init);
    } catch (error) {
      return { ok: false, status: 0, data: null, message: "Could not reach the server; try again." };
    }
    const data = await response.json().catch(() => null);
    const message = response.ok ? "" : errorText(response.status, data);
    return { ok: response.ok, status: response.status, data, message };
  }

  function errorText(status, data) {
    const detail = data && data.detail;
    if (typeof detail === "string" && detail) return detail;
    if (Array.isArray(detail) && detail.length) {
      return detail.map((e) => (e && e.field ? `${e.field}: ${e.message}` : String((e && e.message) || e))).join("; ");
    }
    if (status === 403) return "You may only watch this session.";
    return `The server refused that (HTTP ${status}).`;
  }

  // One action: the button stays disabled while its request is in flight; the outcome goes to the status line.
  async function perform(button, path, body, pendingText, doneText) {
    if (!canAct || (button && button.disabled)) return null;
    if (button) button.disabled = true;
    setStatusLine(pendingText, "info");
    const result = await request("POST", path, body);
    if (button) button.disabled = false;
    if (result.ok) setStatusLine(doneText, "ok");
    else refused(result);
    return result.ok ? result : null;
  }

  function refused(result) {
    setStatusLine(result.message, "error");
    if (result.status === 403) { canAct = false; closeForms(); renderControls(); }
  }

  function renderControls() {
    if (model.session) renderSessionActions(model.session);
    renderInspector();
  }

  function nodePath(n, verb) {
    return `nodes/${encodeURIComponent(n.id)}/${verb}`;
  }

  function sessionPath(verb) {
    return `sessions/${encodeURIComponent(model.session.id)}/${verb}`;
  }

  function togglePrune() {
    const n = selectedNode();
    if (!n || n.depth === 0) return;
    const verb = n.pruned ? "unprune" : "prune";
    perform($("prune-button"), nodePath(n, verb), {},
      verb === "prune" ? "Pruning the branch…" : "Restoring the branch…",
      verb === "prune" ? "Branch pruned: nothing under it enters the search." : "Branch restored.");
  }

  function expandSelected() {
    const n = selectedNode();
    if (!n) return;
    const k = Number($("expand-k").value);
    if (!Number.isInteger(k) || k < 1 || k > 8) {
      setStatusLine("k must be a whole number from 1 to 8.", "error");
      return;
    }
    perform($("expand-button"), nodePath(n, "expand"), { k }, `Asking for ${k} more children…`,
      `Expansion queued: ${k} new children arrive as the search runs.`);
  }

  function togglePause() {
    const s = model.session;
    if (!s || !canAct) return;
    if (s.status === "running" || s.status === "queued") {
      perform($("pause-button"), sessionPath("pause"), {}, "Pausing…",
        "Pause requested: the search stops at its next step.");
    } else if (s.status === "paused" || s.status === "interrupted") {
      perform($("resume-button"), sessionPath("resume"), {}, "Resuming…", "Resumed.");
    }
  }

  function cancelSession() {
    if (!model.session || isFinished()) return;
    perform($("cancel-button"), sessionPath("cancel"), {}, "Cancelling…",
      "Session cancelled: the best answer so far is kept.");
  }

  // ---- the inspector's forms: edit, promote, fork (one open at a time; Escape closes) ----------

  const FORMS = ["edit-form", "promote-form", "fork-form"];
  let formNodeId = null; // the node the open form acts on, fixed when it opened

  function openForm(id, prepare) {
    const n = selectedNode();
    if (!canAct || !n) return;
    closeForms();
    formNodeId = n.id;
    prepare(n);
    show(id, true);
    const field = $(id).querySelector("textarea, input, select");
    if (field) field.focus();
  }

  function closeForms() {
    const focused = document.activeElement;
    const hadFocus = FORMS.some((id) => !$(id).hidden && $(id).contains(focused));
    FORMS.forEach((id) => show(id, false));
    formNodeId = null;
    if (hadFocus) focused.blur(); // so the shortcuts work again at once
  }

  function openEditForm() {
    const n = selectedNode();
    if (!n || n.depth === 0) return;
    openForm("edit-form", () => { $("edit-thought").value = n.thought || ""; });
  }

  function openPromoteForm() {
    const n = selectedNode();
    if (!n || n.depth === 0) return;
    openForm("promote-form", () => { $("promote-note").value = ""; });
  }

  function openForkForm() {
    openForm("fork-form", () => {
      const mode = model.session && model.session.mode;
      $("fork-mode").value = Array.from($("fork-mode").options).some((o) => o.value === mode) ? mode : "auto";
      $("fork-budget").value = "";
    });
  }

  function submitter(form) {
    return form.querySelector("button[type=submit]");
  }

  async function saveEdit(event) {
    event.preventDefault();
    const thought = $("edit-thought").value;
    if (!thought.trim() || thought.length > 4000) {
      setStatusLine("A thought needs 1 to 4000 characters.", "error");
      return;
    }
    const n = model.nodes.get(formNodeId);
    if (!n) return;
    const done = await perform(submitter(event.target), nodePath(n, "edit"), { thought }, "Saving the edit…",
      "Edit saved: the node is rescored and the steps under it are marked stale.");
    if (done) closeForms();
  }

  async function promote(event) {
    event.preventDefault();
    const note = $("promote-note").value;
    const n = model.nodes.get(formNodeId);
    if (!n) return;
    const done = await perform(submitter(event.target), nodePath(n, "promote"), { note: note.slice(0, 2000) },
      "Promoting…", "Promoted: this node becomes the final answer.");
    if (done) closeForms();
  }

  async function fork(event) {
    event.preventDefault();
    if (!formNodeId || !model.session) return;
    const body = { node_id: formNodeId, mode: $("fork-mode").value };
    const budget = $("fork-budget").value;
    if (budget !== "") body.budget_usd = Number(budget);
    const done = await perform(submitter(event.target), sessionPath("fork"), body, "Forking…",
      "Forked: opening the new session…");
    if (done && done.data && done.data.id) location.assign(sessionUrl(done.data.id));
  }

  // ---- keyboard shortcuts (outside text fields): p, e, i, f, Shift+P; Escape closes the forms -------

  const SHORTCUTS = { p: togglePrune, e: expandSelected, i: openEditForm, f: openForkForm, "Shift+P": togglePause };

  function onShortcut(event) {
    if (event.key === "Escape") { closeForms(); return; }
    if (!canAct || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    const action = SHORTCUTS[event.shiftKey ? "Shift+" + event.key.toUpperCase() : event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }

  function isTyping(target) {
    return !!(target && target.closest && target.closest("input, textarea, select, [contenteditable]"));
  }

  // ---- the websocket: receive only ---------------------------------------------------------------

  let socket = null;
  let socketState = "connecting"; // connecting | open | reconnecting | refused
  let refusedCode = null;
  let retries = 0;
  let reconnectTimer = null;
  let awaitingSnapshot = false;   // after a seq gap: deltas wait for the snapshot asked for
  let snapshotTimer = null;

  function connect() {
    clearTimeout(reconnectTimer);
    stopAwaitingSnapshot();
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(scheme + location.host + wsPath);
    socket = ws;
    ws.onopen = () => { retries = 0; setSocketState("open"); };
    ws.onmessage = (event) => { if (ws === socket) receive(event.data); };
    ws.onclose = (event) => { if (ws === socket) closed(event); };
  }

  function closed(event) {
    socket = null;
    stopAwaitingSnapshot();
    if (event.code >= 4000 && event.code < 5000) {
      refusedCode = event.code;
      setSocketState("refused");
      return;
    }
    const delay = Math.min(15000, 500 * 2 ** retries) * (0.75 + Math.random() * 0.5);
    retries += 1;
    setSocketState("reconnecting");
    reconnectTimer = setTimeout(connect, delay);
  }

  function setSocketState(state) {
    socketState = state;
    renderConnection();
  }

  function renderConnection() {
    const [text, tone] = connectionLabel();
    const el = $("conn-status");
    el.textContent = text;
    el.dataset.tone = tone;
  }

  function connectionLabel() {
    if (socketState === "refused") return [`closed by the server (${refusedCode})`, "bad"];
    if (socketState === "connecting") return ["connecting…", "warn"];
    if (isFinished()) return ["finished", ""];
    return socketState === "open" ? ["live", "ok"] : ["reconnecting…", "warn"];
  }

  // A gap in seq means a missed event: ask this socket for a fresh snapshot and hold deltas until it comes.
  function resync() {
    if (awaitingSnapshot || !socket || socket.readyState !== WebSocket.OPEN) return;
    awaitingSnapshot = true;
    socket.send(JSON.stringify({ action: "snapshot" }));
    snapshotTimer = setTimeout(reconnectNow, SNAPSHOT_TIMEOUT_MS);
  }

  function stopAwaitingSnapshot() {
    awaitingSnapshot = false;
    clearTimeout(snapshotTimer);
  }

  // The snapshot asked for never came: start over on a new socket (its first message is a snapshot).
  function reconnectNow() {
    const old = socket;
    socket = null;
    if (old) old.close();
    connect();
  }

  function receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "snapshot") { stopAwaitingSnapshot(); applySnapshot(msg, msg.seq); return; }
    if (msg.type === "error") { setStatusLine(msg.detail || "The server refused that request.", "error"); return; }
    if (awaitingSnapshot) return;
    if (typeof msg.seq !== "number" || msg.seq <= model.lastSeq) return;
    if (msg.seq !== model.lastSeq + 1) { resync(); return; }
    model.lastSeq = msg.seq;
    applyDelta(msg);
  }

  // The audit trail of a snapshot that does not carry one (read once over HTTP).
  let actionsRequested = false;
  async function loadActionsOnce() {
    if (actionsRequested || !model.session) return;
    actionsRequested = true;
    const result = await request("GET", sessionPath("actions"));
    const rows = result.ok && (Array.isArray(result.data) ? result.data : result.data && result.data.items);
    if (!Array.isArray(rows)) return;
    for (const a of rows) if (!model.actions.has(a.id)) model.actions.set(a.id, a);
    renderAudit();
  }

  // ---- wiring ------------------------------------------------------------------------------

  $("prune-button").addEventListener("click", togglePrune);
  $("expand-button").addEventListener("click", expandSelected);
  $("expand-k").addEventListener("keydown", (event) => { if (event.key === "Enter") expandSelected(); });
  $("edit-button").addEventListener("click", openEditForm);
  $("promote-button").addEventListener("click", openPromoteForm);
  $("fork-button").addEventListener("click", openForkForm);
  $("edit-form").addEventListener("submit", saveEdit);
  $("promote-form").addEventListener("submit", promote);
  $("fork-form").addEventListener("submit", fork);
  document.querySelectorAll("[data-close-form]").forEach((b) => b.addEventListener("click", closeForms));
  $("pause-button").addEventListener("click", togglePause);
  $("resume-button").addEventListener("click", togglePause);
  $("cancel-button").addEventListener("click", cancelSession);
  document.addEventListener("keydown", onShortcut);

  $("fit-button").addEventListener("click", () => { userMoved = false; fit(true); });
  window.addEventListener("resize", () => { if (!userMoved) fit(false); });

  // The page's snapshot first, so the tree shows before the socket opens.
  const initial = JSON.parse(document.getElementById("tree-data").textContent);
  applySnapshot(initial, initial.session && initial.session.seq);
  connect();
})();
