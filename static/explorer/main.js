/* Start, once every module is evaluated: the page's snapshot first, so the tree shows before the socket opens; then
 * the socket. The #node= permalink opens after the first drawing.
 *
 * Every view is imported here: views listen for model.js's events rather than being called, so a view nobody imports
 * would draw nothing. Their order is the order their listeners run: the header before what it holds. */
import { applySnapshot } from "./model.js";
import "./session.js";
import "./sidetabs.js";
import "./inspector.js";
import "./steering.js";
import "./review.js";
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
