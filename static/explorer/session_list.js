/* The sessions list: while a listed session is queued or running, poll their statuses and update the rows. */
const table = document.getElementById("session-table");
const POLL_MS = 3000;
const rows = new Map(Array.from(table ? table.querySelectorAll("tr[data-session-id]") : []).map((r) => [r.dataset.sessionId, r]));

const anyLive = () => Array.from(rows.values()).some((r) => r.dataset.live === "true");

function field(row, name) {
  return row.querySelector(`[data-field="${name}"]`);
}

function update(s) {
  const row = rows.get(s.id);
  if (!row) return;
  const pill = field(row, "status");
  pill.textContent = s.status;
  pill.className = "pill status-" + s.status;
  field(row, "budget-fill").style.width = s.budget_pct.toFixed(1) + "%";
  field(row, "budget").textContent = s.budget_text; // written by the server, the one way money is written
  field(row, "nodes").textContent = String(s.node_count);
  field(row, "duration").textContent = s.duration;
  const preview = field(row, "preview");
  field(row, "preview-text").textContent = s.preview; // model text: as text, never HTML
  preview.hidden = !s.preview;
  field(row, "partial").hidden = !s.partial;
  row.dataset.live = s.is_live ? "true" : "false";
}

async function poll() {
  if (!anyLive()) return; // nothing moves: stop polling
  const ids = Array.from(rows.keys()).join(",");
  try {
    const response = await fetch(`${table.dataset.statusesUrl}?ids=${encodeURIComponent(ids)}`,
      { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (response.ok) (await response.json()).sessions.forEach(update);
  } catch (e) { /* offline for a moment: the next poll tries again */ }
  setTimeout(poll, POLL_MS);
}

if (table) setTimeout(poll, POLL_MS);
