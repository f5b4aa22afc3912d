/* Export the session's tree: JSON in the API's tree format (from the page's model), the drawn tree as a
 * standalone SVG (its styles inlined, text kept as text), and that SVG rendered to a PNG.
 */
import { $ } from "./util.js";
import { model } from "./model.js";
import { withEveryNodeDrawn } from "./tree.js";
import { treeBounds, treeSvg } from "./viewport.js";
import { setStatusLine } from "./status.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const TREE_RULE = /(^|[\s,>])\.(link|node|edge-label)\b/; // the stylesheet rules the drawing needs
const COLOURS = ["--best", "--parse", "--cut", "--out", "--warn", "--accent"];
const PNG_MAX_PIXELS = 40e6; // a canvas larger than this fails in some browsers
const PNG_MAX_SIDE = 16000;

// {session, nodes, edges, critiques, actions}: what GET /api/sessions/<id>/tree returns.
export function treeJson() {
  const m = model;
  return {
    session: m.session,
    nodes: Array.from(m.nodes.values()),
    edges: Array.from(m.edgesByTarget.values()),
    critiques: Array.from(m.critiques.values()),
    actions: Array.from(m.actions.values()),
  };
};

// The drawn tree as an SVG document that needs nothing else: the whole tree in view, styles inside.
export function standaloneSvg() {
  const b = treeBounds();
  if (!b) return null;
  const width = Math.ceil(b.right - b.left), height = Math.ceil(b.bottom - b.top);
  const copy = withEveryNodeDrawn(() => treeSvg().cloneNode(true)); // at scale the page draws only the view
  for (const name of ["id", "data-testid", "role", "aria-label", "class", "style"]) copy.removeAttribute(name);
  copy.setAttribute("xmlns", SVG_NS);
  copy.setAttribute("viewBox", `${b.left} ${b.top} ${width} ${height}`);
  copy.setAttribute("width", width);
  copy.setAttribute("height", height);
  copy.querySelector("g.viewport").removeAttribute("transform");
  copy.querySelectorAll("[tabindex]").forEach((el) => el.removeAttribute("tabindex"));
  const background = document.createElementNS(SVG_NS, "rect");
  for (const [k, v] of Object.entries({ x: b.left, y: b.top, width, height, fill: "#ffffff" })) background.setAttribute(k, v);
  const style = document.createElementNS(SVG_NS, "style");
  style.textContent = inlineStyles();
  copy.prepend(background);
  copy.prepend(style);
  return { text: new XMLSerializer().serializeToString(copy), width, height };
};

function inlineStyles() {
  const root = getComputedStyle(document.documentElement);
  const vars = COLOURS.map((name) => `${name}: ${root.getPropertyValue(name).trim()};`).join(" ");
  const rules = [`svg { ${vars} font-family: ${root.fontFamily}; font-size: 14px; }`];
  for (const sheet of document.styleSheets) {
    let list;
    try { list = sheet.cssRules; } catch (e) { continue; } // another origin's sheet: not ours
    for (const rule of list) if (rule.selectorText && TREE_RULE.test(rule.selectorText)) rules.push(rule.cssText);
  }
  return rules.join("\n");
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

const baseName = () => (model.session && model.session.id) || "tree";

function exportJson() {
  download(new Blob([JSON.stringify(treeJson(), null, 2)], { type: "application/json" }), baseName() + ".json");
}

function exportSvg() {
  const svg = standaloneSvg();
  if (svg) download(new Blob([svg.text], { type: "image/svg+xml" }), baseName() + ".svg");
}

async function exportPng() {
  const svg = standaloneSvg();
  if (!svg) return;
  const url = URL.createObjectURL(new Blob([svg.text], { type: "image/svg+xml" }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const scale = Math.min(2, Math.sqrt(PNG_MAX_PIXELS / (svg.width * svg.height)), PNG_MAX_SIDE / Math.max(svg.width, svg.height));
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.floor(svg.width * scale));
    canvas.height = Math.max(1, Math.floor(svg.height * scale));
    canvas.getContext("2d").drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    if (blob) download(blob, baseName() + ".png");
    else setStatusLine("The tree is too large to render as a PNG; export SVG instead.", "error");
  } catch (e) {
    setStatusLine("The PNG could not be rendered; export SVG instead.", "error");
  } finally {
    URL.revokeObjectURL(url);
  }
}

// The menu closes once a format is chosen.
function chosen(action) {
  return () => { $("export-menu").open = false; action(); };
}

$("export-json").addEventListener("click", chosen(exportJson));
$("export-svg").addEventListener("click", chosen(exportSvg));
$("export-png").addEventListener("click", chosen(exportPng));
