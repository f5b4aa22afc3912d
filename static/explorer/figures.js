/* Declared figures: the numbers of a thought or the answer that the model declared with their derivation, each
 * marked in the text (<span class="figure-ref">); hovering or focusing one shows its chain back to the client's facts:
 * the figure and whether its derivation checks out, the derivation, the earlier figures it names (with theirs), and
 * each fact it rests on with the words the client wrote. All of it is the model's or the client's text: written with
 * textContent, never as HTML.
 *
 * A figure is {label, value, unit, derivation, facts, ok, detail, span?}: span is [start, end] in code points of the
 * text it was declared with. Callers hand in the facts (the session's sheet), so this module imports no model.
 */
import { exactValue, grouped } from "./factvalues.js";

const owners = new WeakMap(); // a marked text element -> {figures, facts}
let tip = null;

// The figures' spans in `text` as UTF-16 ranges [{start, end, index}], given a code-point indexer.
export function figureSpans(text, figures, at) {
  const spans = [];
  (Array.isArray(figures) ? figures : []).forEach((f, index) => {
    if (!f || !Array.isArray(f.span)) return;
    const start = at(f.span[0]), end = at(f.span[1]);
    if (start >= 0 && end > start && end <= text.length) spans.push({ start, end, index });
  });
  return spans.sort((a, b) => a.start - b.start);
}

// Remember what `el`'s marked figures mean, and listen (once per page) for a hover or focus on one.
export function ownFigures(el, figures, facts) {
  owners.set(el, { figures: Array.isArray(figures) ? figures : [], facts: Array.isArray(facts) ? facts : [] });
  if (tip) return;
  tip = document.createElement("div");
  tip.id = "figure-chain";
  tip.className = "figure-chain";
  tip.setAttribute("role", "tooltip");
  tip.dataset.testid = "figure-chain";
  tip.hidden = true;
  document.body.append(tip);
  for (const type of ["mouseover", "focusin"]) document.addEventListener(type, (e) => showFor(e.target));
  for (const type of ["mouseout", "focusout"]) {
    document.addEventListener(type, (e) => { if (e.target.closest && e.target.closest(".figure-ref")) tip.hidden = true; });
  }
}

function showFor(target) {
  const ref = target && target.closest ? target.closest(".figure-ref") : null;
  if (!ref) return;
  const holder = ref.closest("[data-figures]");
  const owned = holder && owners.get(holder);
  const figure = owned && owned.figures[Number(ref.dataset.figure)];
  if (!figure) return;
  tip.replaceChildren(...chain(figure, owned.figures, owned.facts));
  tip.dataset.ok = String(figure.ok !== false);
  const box = ref.getBoundingClientRect();
  tip.style.left = `${Math.max(4, Math.min(box.left + window.scrollX, window.scrollX + window.innerWidth - 360))}px`;
  tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  tip.hidden = false;
}

const line = (cls, text) => {
  const p = document.createElement("p");
  p.className = cls;
  p.textContent = text;
  return p;
};

export const figureValue = (f) => {
  const v = typeof f.value === "number" ? grouped(f.value) : String(f.value);
  return f.unit === "%" ? `${v}%` : f.unit ? `${f.unit} ${v}` : v;
};

// The chain as elements: the figure, its derivation, the earlier figures it names, the facts it rests on.
export function chain(figure, figures, facts) {
  const nodes = [line("figure-head", `${figure.label} = ${figureValue(figure)} ${figure.ok === false ? "✗" : "✓"}`)];
  const isFact = (facts || []).some((x) => x.label === figure.derivation);
  nodes.push(line("figure-derivation", !figure.derivation ? "the model's own figure: no derivation declared"
    : isFact ? `the client's fact "${figure.derivation}"` : `= ${figure.derivation}`));
  if (figure.ok === false && figure.detail) nodes.push(line("figure-detail", figure.detail));
  // The earlier figures its derivation names: read in what is left once the facts' labels are taken out of it.
  let rest = ` ${figure.derivation || ""} `;
  for (const x of [...(facts || [])].sort((a, b) => b.label.length - a.label.length)) rest = rest.split(x.label).join(" ");
  const named = (figures || []).filter((g) => g !== figure && g.label && g.derivation && rest.includes(g.label));
  for (const g of named) nodes.push(line("figure-step", `${g.label} = ${figureValue(g)} = ${g.derivation}`));
  const ids = new Set((figure.facts || []).map(String));
  const used = (facts || []).filter((x) => ids.has(String(x.id)) || ids.has(x.label));
  if (used.length) nodes.push(line("figure-facts-head", "rests on the client's facts:"));
  for (const x of used) {
    const said = x.text ? ` (the client wrote "${x.text}")` : x.source === "advisor" ? " (an advisor's fact)" : "";
    nodes.push(line("figure-fact", `${x.label}: ${exactValue(x)}${said}`));
  }
  return nodes;
}
