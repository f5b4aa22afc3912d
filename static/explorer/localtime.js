/* Times in the browser's own zone, each labelled with it ("2026-12-01 14:02 CET"): every <time data-local> the
 * server wrote (in the tenant's zone, labelled too, for a page without scripts) is rewritten here. */

// en-US names the zone as people read it ("PST", "EST"), or by its offset ("GMT+1") where it has no short name.
const parts = (date, options) =>
  Object.fromEntries(new Intl.DateTimeFormat("en-US", { hourCycle: "h23", ...options }).formatToParts(date)
    .map((p) => [p.type, p.value]));

// "14:02:11 CET": a time of day with its zone.
export function localClock(iso) {
  const date = new Date(iso);
  if (isNaN(date)) return "";
  const p = parts(date, { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  return `${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
}

// "2026-12-01 14:02 CET" (with seconds if asked).
export function localDateTime(iso, seconds) {
  const date = new Date(iso);
  if (isNaN(date)) return "";
  const p = parts(date, { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: seconds ? "2-digit" : undefined, timeZoneName: "short" });
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}${seconds ? ":" + p.second : ""} ${p.timeZoneName}`;
}

export function localizeTimes(root) {
  for (const el of (root || document).querySelectorAll("time[data-local]")) {
    const text = localDateTime(el.getAttribute("datetime"), el.dataset.local === "seconds");
    if (text) {
      el.textContent = text;
      el.title = `Your browser's time zone (${Intl.DateTimeFormat().resolvedOptions().timeZone})`;
    }
  }
}

localizeTimes();
