/* Start, once every module is evaluated: the page's snapshot first, so the tree shows before the socket opens; then
 * the socket. The #node= permalink opens after the first drawing. */
import { applySnapshot } from "./model.js";
import { connect } from "./socket.js";
import { onNextUpdate } from "./tree.js";
import { openPermalink } from "./treetools.js";
import "./export.js";
import "./answer.js";
import "./compare.js";
import "./progress.js";
import "./facts.js";

onNextUpdate(openPermalink);
const initial = JSON.parse(document.getElementById("tree-data").textContent);
applySnapshot(initial, initial.session && initial.session.seq);
connect();
