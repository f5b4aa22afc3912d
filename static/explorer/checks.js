/* Fact checks: what the checker found in a node's thought or in the final answer, against the client's sheet.
 * Failed findings are listed first (kind and detail) and their spans marked in the text; passed ones fold into
 * "n figures checked". The text is the model's: it is written as text nodes and <mark> elements, never as HTML.
 *
 * A finding is {kind, ok, text, detail, start, end, verified, field?}: start and end are offsets in the checked text,
 * counted in Unicode code points as Python counts them (-1: no span); verified false means the check could not decide
 * (ok is then true): such a finding is listed as unverified, never counted as passed; `field` names the text it was
 * found in when that is not the thought or the answer ("state.summary": a node's other texts the inspector shows).
 */
import d3 from "./d3-from-npm.js";
import { figureSpans, ownFigures } from "./figures.js";

const FIGURE_KINDS = new Set(["figure", "arithmetic", "currency"]);
const NAMES = { jurisdiction: ["place", "places"], coverage: ["listed item addressed", "listed items addressed"] };

export const failedOf = (checks) => (Array.isArray(checks) ? checks.filter((c) => c && c.ok === false) : []);
export const passedOf = (checks) =>
  (Array.isArray(checks) ? checks.filter((c) => c && c.ok === true && c.verified !== false) : []);
export const unverifiedOf = (checks) =>
  (Array.isArray(checks) ? checks.filter((c) => c && c.ok === true && c.verified === false) : []);

// "5 figures checked" when every passed finding is about a figure; else "6 checks passed (5 figures, 1 place)".
// Findings on the same span count once, as in the server's badge.
export function passedSummary(passed) {
  const unique = new Map();
  for (const c of passed) unique.set(c.start >= 0 ? `${c.start}:${c.end}` : `${c.kind}:${c.detail}`, c);
  const n = unique.size;
  const all = [...unique.values()];
  if (all.every((c) => FIGURE_KINDS.has(c.kind))) return `${n} figure${n === 1 ? "" : "s"} checked`;
  const counts = new Map();
  for (const c of all) {
    const what = FIGURE_KINDS.has(c.kind) ? "figure" : c.kind;
    counts.set(what, (counts.get(what) || 0) + 1);
  }
  const parts = [...counts].map(([what, k]) => `${k} ${(NAMES[what] || [what, what + "s"])[k === 1 ? 0 : 1]}`);
  return `${n} check${n === 1 ? "" : "s"} passed (${parts.join(", ")})`;
}

// ---- spans ---------------------------------------------------------------------------------------------------

// Code-point offsets -> UTF-16 indexes (they differ only after an astral character, such as an emoji).
function indexer(text) {
  if (!/[\uD800-\uDFFF]/.test(text)) return (i) => i;
  const units = [];
  let at = 0;
  for (const ch of text) { units.push(at); at += ch.length; }
  units.push(at);
  return (i) => (i >= 0 && i < units.length ? units[i] : -1);
}

/* The failed findings' spans in `text`, sorted, overlaps merged: [{start, end, findings}]. A span whose offsets
 * do not hold its words (the text changed since the check) is looked for by its words; not found, it is not marked. */
export function failedSpans(text, checks) {
  const at = indexer(text);
  const spans = [];
  for (const c of failedOf(checks)) {
    let start = at(Number.isInteger(c.start) ? c.start : -1);
    let end = at(Number.isInteger(c.end) ? c.end : -1);
    const held = start >= 0 && end > start && end <= text.length;
    if (c.text && (!held || text.slice(start, end) !== c.text)) {
      start = text.indexOf(c.text);
      end = start < 0 ? -1 : start + c.text.length;
    } else if (!held) {
      continue;
    }
    if (start >= 0 && end > start) spans.push({ start, end, findings: [c] });
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start < last.end) {
      last.end = Math.max(last.end, s.end);
      last.findings.push(...s.findings);
    } else {
      merged.push(s);
    }
  }
  return merged;
}

const shown = new WeakMap(); // element -> the key of what it shows, so a redraw per event does not rebuild it

/* Write `text` into `el`, the failed findings' spans as <mark class="check-fail"> (its title says what failed), and
 * the declared `figures` (figures.js) as <span class="figure-ref"> that show their chain to the `facts` on hover. */
export function renderMarkedText(el, text, checks, figures = [], facts = []) {
  text = text == null ? "" : String(text);
  const spans = failedSpans(text, checks);
  const refs = figureSpans(text, figures, indexer(text));
  const key = text + "\u0000" + spans.map((s) => `${s.start}:${s.end}:${s.findings.map((f) => f.detail)}`).join("|")
    + "\u0000" + JSON.stringify(figures || []) + JSON.stringify((facts || []).map((f) => [f.id, f.label, f.value]));
  ownFigures(el, figures, facts);
  if (figures && figures.length) el.dataset.figures = String(figures.length);
  else delete el.dataset.figures;
  if (shown.get(el) === key) return;
  shown.set(el, key);
  el.replaceChildren();
  // A figure inside a failed span marks that span; the others are marked on their own.
  const pieces = spans.map((s, i) => ({ ...s, fail: i, figure: refs.find((r) => r.start < s.end && s.start < r.end) }));
  for (const r of refs) {
    if (!spans.some((s) => r.start < s.end && s.start < r.end)) pieces.push({ start: r.start, end: r.end, figure: r });
  }
  pieces.sort((a, b) => a.start - b.start);
  let at = 0;
  for (const p of pieces) {
    if (p.start < at) continue;
    if (p.start > at) el.append(document.createTextNode(text.slice(at, p.start)));
    const piece = document.createElement(p.findings ? "mark" : "span");
    if (p.findings) {
      piece.className = "check-fail";
      piece.dataset.span = String(p.fail);
      piece.dataset.kind = p.findings[0].kind || "";
      piece.title = p.findings.map((f) => `${f.kind}: ${f.detail}`).join("\n");
    }
    if (p.figure) {
      piece.classList.add("figure-ref");
      piece.dataset.figure = String(p.figure.index);
      piece.tabIndex = 0;
      if (figures[p.figure.index].ok === false) piece.classList.add("figure-bad");
    }
    piece.textContent = text.slice(p.start, p.end);
    el.append(piece);
    at = p.end;
  }
  if (at < text.length) el.append(document.createTextNode(text.slice(at)));
}

// ---- the list ------------------------------------------------------------------------------------------------

/* The findings under `block` (an element holding ul.checks-failed, details.checks-passed > summary + ul): failed
 * ones in full, each a button that shows its span in `textEl`; passed ones folded. Returns how many there are. */
export function renderCheckList(block, checks, textEl) {
  const failed = failedOf(checks), passed = passedOf(checks);
  const root = d3.select(block);
  const item = root.select("ul.checks-failed").selectAll("li").data(failed)
    .join((enter) => {
      const li = enter.append("li").attr("class", "check fail");
      const button = li.append("button").attr("type", "button").attr("class", "check-show");
      button.append("span").attr("class", "check-kind");
      button.append("span").attr("class", "check-detail");
      button.append("q").attr("class", "check-span");
      return li;
    });
  item.attr("data-kind", (c) => c.kind);
  item.select(".check-kind").text((c) => (c.field ? `${c.kind} · in its ${c.field.replace(/^state\./, "")}` : c.kind));
  item.select(".check-detail").text((c) => c.detail);
  item.select(".check-span").text((c) => c.text || "").attr("hidden", (c) => (c.text ? null : ""));
  item.select("button")
    .attr("title", (c) => (c.text ? "Show it in the text" : null))
    .on("click", (event, c) => showSpan(textEl, c));
  const unverified = unverifiedOf(checks), folded = [...passed, ...unverified];
  const fold = root.select("details.checks-passed").attr("hidden", folded.length ? null : "");
  const summary = [passed.length ? passedSummary(passed) : "", unverified.length ? `${unverified.length} unverified` : ""];
  fold.select("summary").text(summary.filter(Boolean).join(", "));
  fold.select("ul").selectAll("li").data(folded).join("li")
    .attr("class", (c) => (c.verified === false ? "check unverified" : "check pass"))
    .text((c) => `${c.kind}${c.verified === false ? " (unverified)" : ""}: ${c.detail}`
      + (c.field ? ` (in its ${c.field.replace(/^state\./, "")})` : ""));
  return failed.length + folded.length;
}

function showSpan(textEl, finding) {
  if (!textEl || !finding.text) return;
  const mark = Array.from(textEl.querySelectorAll("mark.check-fail")).find((m) => m.textContent.includes(finding.text));
  if (!mark) return;
  mark.scrollIntoView({ block: "nearest" });
  mark.classList.remove("flash");
  void mark.offsetWidth; // restart the animation
  mark.classList.add("flash");
}
