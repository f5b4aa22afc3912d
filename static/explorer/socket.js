/* The websocket: receive only. The first message is a snapshot (a large tree's in parts: "snapshot", then
 * "snapshot.part" until one says last), then deltas numbered by seq; a gap asks this socket for a fresh snapshot
 * (deltas wait for it), and a lost socket reconnects with backoff.
 */
import { $, SNAPSHOT_TIMEOUT_MS, wsPath } from "./util.js";
import { applyDelta, applySnapshot, emit, isFinished, model, on } from "./model.js";
import { setStatusLine } from "./status.js";

let socket = null;
let socketState = "connecting"; // connecting | open | reconnecting | refused
let refusedCode = null;
let retries = 0;
let reconnectTimer = null;
let awaitingSnapshot = false; // after a seq gap: deltas wait for the snapshot asked for
let snapshotTimer = null;
let parts = null; // the parts of a snapshot still arriving: applied once the last one is here

export function connect() {
  clearTimeout(reconnectTimer);
  stopAwaitingSnapshot();
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const ws = new WebSocket(scheme + location.host + wsPath);
  socket = ws;
  ws.onopen = () => { retries = 0; setSocketState("open"); };
  ws.onmessage = (event) => { if (ws === socket) receive(event.data); };
  ws.onclose = (event) => { if (ws === socket) closed(event); };
};

function closed(event) {
  socket = null;
  stopAwaitingSnapshot();
  if (event.code >= 4000 && event.code < 5000) {
    refusedCode = event.code;
    setSocketState("refused");
    if (model.nodes.size < model.nodeCount) { // a large tree comes only over the socket
      emit("loading", { total: 0 });
      setStatusLine("The server closed the live connection, so the tree could not be loaded; reload to try again.", "error");
    }
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

export function renderConnection() {
  const [text, tone] = connectionLabel();
  const el = $("conn-status");
  el.textContent = text;
  el.dataset.tone = tone;
};

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
  parts = null;
  clearTimeout(snapshotTimer);
  snapshotTimer = null;
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
  if (msg.type === "snapshot" || msg.type === "snapshot.part") { receivePart(msg); return; }
  if (msg.type === "error") { setStatusLine(msg.detail || "The server refused that request.", "error"); return; }
  if (awaitingSnapshot || parts) return;
  if (typeof msg.seq !== "number" || msg.seq <= model.lastSeq) return;
  if (msg.seq !== model.lastSeq + 1) { resync(); return; }
  model.lastSeq = msg.seq;
  applyDelta(msg);
}

// Parts are parsed as they arrive (while the server reads the next) and applied together, as one snapshot.
function receivePart(msg) {
  if (msg.type === "snapshot") {
    const waiting = awaitingSnapshot;
    stopAwaitingSnapshot();
    parts = [msg];
    if (waiting && msg.last === false) snapshotTimer = setTimeout(reconnectNow, SNAPSHOT_TIMEOUT_MS);
  } else if (parts && msg.seq === parts[0].seq) {
    parts.push(msg);
    if (snapshotTimer) { clearTimeout(snapshotTimer); snapshotTimer = setTimeout(reconnectNow, SNAPSHOT_TIMEOUT_MS); }
  } else {
    return; // a part of a snapshot this page no longer waits for
  }
  if (msg.last === false) { emit("loading", { total: parts[0].node_count, received: countNodes(parts) }); return; }
  const snapshot = merge(parts);
  stopAwaitingSnapshot();
  applySnapshot(snapshot, snapshot.seq);
}

function countNodes(list) {
  let n = 0;
  for (const p of list) n += (p.nodes || []).length;
  return n;
}

function merge(list) {
  const whole = { ...list[0] };
  for (const kind of ["nodes", "edges", "critiques", "actions"]) {
    whole[kind] = list.length === 1 ? list[0][kind] || [] : [].concat(...list.map((p) => p[kind] || []));
  }
  return whole;
}
on("session", renderConnection);
