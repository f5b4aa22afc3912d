/* Compare two nodes side by side: "Compare with…" in the inspector arms it; the next node clicked opens a panel
 * with both (thought, score, evaluation, path as short thoughts). Escape or Close ends it.
 */
import d3 from "./d3-from-npm.js";
import { $, firstLine, shortId, show, state, truncate } from "./util.js";
import { model, selectedNode } from "./model.js";
import { currentStrategy } from "./strategies.js";

const PATH_CHARS = 90;
let baseId = null; // the node the comparison started from, while armed or shown
let armed = false;

function arm() {
  const n = selectedNode();
  if (!n) return;
  if (armed) { disarm(); return; }
  baseId = n.id;
  armed = true;
  $("compare-button").setAttribute("aria-pressed", "true");
  show("compare-hint", true);
}

function disarm() {
  armed = false;
  $("compare-button").setAttribute("aria-pressed", "false");
  show("compare-hint", false);
}

// The node clicked (or chosen with Enter) while armed is the other side; it is selected first by the tree.
function picked(event) {
  if (!armed) return;
  if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
  const g = event.target.closest && event.target.closest("g.node");
  pickForCompare(g && g.dataset.nodeId);
}

// Also what a click on the far view's canvas picks (farview.js).
export function pickForCompare(id) {
  if (!armed || !id || id === baseId) return;
  disarm();
  open(baseId, id);
};

function open(leftId, rightId) {
  const left = model.nodes.get(leftId), right = model.nodes.get(rightId);
  if (!left || !right) return;
  fill("compare-left", left);
  fill("compare-right", right);
  show("compare-panel", true);
  $("compare-close").focus();
}

function close() {
  show("compare-panel", false);
  disarm();
  baseId = null;
}

function fill(id, n) {
  const col = d3.select("#" + id);
  const look = state.look && state.look.strategy === currentStrategy() ? state.look : { strategy: currentStrategy(), ctx: {} };
  col.select(".cmp-title").text(`Depth ${n.depth} · ${shortId(n.id)}`);
  col.select(".cmp-score").text(look.strategy.scoreText(n, look.ctx) || "not scored");
  col.select(".cmp-thought").text(n.thought);
  col.select(".cmp-reason").text(n.eval_reason || "—");
  const path = [];
  for (let a = n; a; a = a.parent_id ? model.nodes.get(a.parent_id) : null) path.push(a);
  col.select(".cmp-path").selectAll("li").data(path.reverse(), (a) => a.id)
    .join("li").text((a) => truncate(firstLine(a.thought), PATH_CHARS));
}

$("compare-button").addEventListener("click", arm);
$("compare-close").addEventListener("click", close);
$("tree").addEventListener("click", picked);
$("tree").addEventListener("keydown", picked);
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (!$("compare-panel").hidden) close();
  else if (armed) disarm();
});
