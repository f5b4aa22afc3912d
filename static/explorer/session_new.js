/* The new-session form: show only the chosen strategy's parameters (the one with an error, after a refused
 * post), and what auto would pick and why, asked of the server as the kind and text change (debounced).
 */
const form = document.querySelector("form.session-form");
const mode = document.getElementById("id_mode");
const kind = document.getElementById("id_problem_kind");
const text = document.getElementById("id_problem_text");
const DEBOUNCE_MS = 300;

// After a refused post, the strategy whose parameter failed is the one shown: its error must be seen.
if (form.dataset.errorMode) mode.value = form.dataset.errorMode;

function sync() {
  document.querySelectorAll("fieldset.params").forEach((set) => { set.hidden = set.dataset.mode !== mode.value; });
  document.getElementById("mode-hint").hidden = mode.value !== "auto";
  askAuto();
}

let timer = null;
let asked = 0; // replies to older questions are dropped
function askAuto() {
  clearTimeout(timer);
  const pick = document.getElementById("auto-pick");
  if (mode.value !== "auto") { pick.hidden = true; return; }
  timer = setTimeout(async () => {
    const n = ++asked;
    const query = new URLSearchParams({ kind: kind.value, text: text.value.slice(0, 4000) });
    try {
      const response = await fetch(`${form.dataset.autoUrl}?${query}`, { credentials: "same-origin" });
      if (!response.ok || n !== asked) return;
      const data = await response.json();
      document.getElementById("auto-pick-mode").textContent = data.mode;
      // "auto: tot for investment-thesis, because ..." reads "Auto will use tot for investment-thesis, because ..."
      const why = data.reason.replace(/^auto: /, "");
      const tail = why.startsWith(data.mode + " for ") ? why.slice(data.mode.length) : ": " + why;
      document.getElementById("auto-pick-reason").textContent = tail;
      pick.hidden = mode.value !== "auto";
    } catch (e) { /* the static hint above still says how auto picks */ }
  }, DEBOUNCE_MS);
}

mode.addEventListener("change", sync);
kind.addEventListener("change", askAuto);
text.addEventListener("input", askAuto);
sync();
