/* A fact's value as people read it: "USD 3.2M", "70% of portfolio", "California (US-CA)", "58 years", and the
 * exact value for the tooltip and the report ("USD 3,200,000"). Values are the API's: an amount in base units with
 * its ISO 4217 code, a percent as a number of percent, a place as an ISO 3166 code or subdivision, else a name.
 */

export const KINDS = ["amount", "percent", "age", "year", "place", "account", "instrument", "goal", "constraint",
  "person", "limit", "horizon"];
export const NUMERIC = new Set(["amount", "percent", "age", "year", "person", "limit", "horizon"]);
// What a fact is for, by kind (reasoning/facts/sheet.py ROLES): the form's role choices.
export const ROLES = {
  amount: ["", "holding", "commitment", "liability", "income", "expense", "goal"],
  percent: ["", "share", "target", "spending", "tax", "growth", "return", "fee"],
  person: ["", "client", "spouse", "partner", "child", "grandchild", "heir", "parent", "sibling", "beneficiary"],
  age: ["", "client", "spouse", "partner", "child", "grandchild", "heir", "parent", "sibling", "beneficiary"],
  limit: ["floor", "cap", "minimum", "maximum"],
  horizon: ["over", "within", "by", "before", "after"],
  place: ["", "residence", "citizenship", "domicile", "seat", "property", "assets", "situs"],
};

// A limit's or horizon's figure with its unit: "18 months", "CHF 200k", "10%", "2031", "age 61".
function measure(v, unit) {
  if (unit === "%") return `${trimmed(v, 2)}%`;
  if (unit === "year") return String(Math.round(v));
  if (unit === "age") return `age ${trimmed(v, 1)}`;
  if (/^[A-Z]{3}$/.test(unit || "")) return `${unit} ${compact(v)}`;
  return `${trimmed(v, 2)} ${unit || ""}`.trim();
}

const isNumber = (v) => typeof v === "number" && isFinite(v);

// 12 -> "12", 3.25 -> "3.25", 3.2000 -> "3.2" (at most `digits` decimals)
const trimmed = (v, digits) => {
  const text = v.toFixed(digits);
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
};

export const grouped = (v) => v.toLocaleString("en-US", { maximumFractionDigits: 4 });

// [divisor, suffix, from]: a thousand is written "k" from 10,000 on ("9,500" reads better than "9.5k").
const STEPS = [[1e12, "T", 1e12], [1e9, "B", 1e9], [1e6, "M", 1e6], [1e3, "k", 1e4]];

// 3,200,000 -> "3.2M", 450,000 -> "450k", 9,500 -> "9,500": three significant digits at most.
export function compact(v) {
  const abs = Math.abs(v);
  for (let i = 0; i < STEPS.length; i++) {
    const [size, suffix, from] = STEPS[i];
    if (abs < from) continue;
    const scaled = abs / size;
    let text = trimmed(scaled, scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2);
    let unit = suffix;
    if (Number(text) >= 1000 && i > 0) { // 999,999 -> "1M", not "1000k"
      text = trimmed(abs / STEPS[i - 1][0], 2);
      unit = STEPS[i - 1][1];
    }
    return (v < 0 ? "-" : "") + text + unit;
  }
  return grouped(v);
}

// ---- places ----------------------------------------------------------------------------------------------------

// Subdivisions the browser cannot name (Intl names countries only): the US states and the Swiss cantons.
const SUBDIVISIONS = Object.fromEntries(
  ("US-AL Alabama|US-AK Alaska|US-AZ Arizona|US-AR Arkansas|US-CA California|US-CO Colorado|US-CT Connecticut|" +
    "US-DE Delaware|US-DC District of Columbia|US-FL Florida|US-GA Georgia|US-HI Hawaii|US-ID Idaho|US-IL Illinois|" +
    "US-IN Indiana|US-IA Iowa|US-KS Kansas|US-KY Kentucky|US-LA Louisiana|US-ME Maine|US-MD Maryland|" +
    "US-MA Massachusetts|US-MI Michigan|US-MN Minnesota|US-MS Mississippi|US-MO Missouri|US-MT Montana|" +
    "US-NE Nebraska|US-NV Nevada|US-NH New Hampshire|US-NJ New Jersey|US-NM New Mexico|US-NY New York|" +
    "US-NC North Carolina|US-ND North Dakota|US-OH Ohio|US-OK Oklahoma|US-OR Oregon|US-PA Pennsylvania|" +
    "US-PR Puerto Rico|US-RI Rhode Island|US-SC South Carolina|US-SD South Dakota|US-TN Tennessee|US-TX Texas|" +
    "US-UT Utah|US-VT Vermont|US-VA Virginia|US-WA Washington|US-WV West Virginia|US-WI Wisconsin|US-WY Wyoming|" +
    "CH-AG Aargau|CH-AI Appenzell Innerrhoden|CH-AR Appenzell Ausserrhoden|CH-BE Bern|CH-BL Basel-Landschaft|" +
    "CH-BS Basel-Stadt|CH-FR Fribourg|CH-GE Geneva|CH-GL Glarus|CH-GR Graubünden|CH-JU Jura|CH-LU Lucerne|" +
    "CH-NE Neuchâtel|CH-NW Nidwalden|CH-OW Obwalden|CH-SG St. Gallen|CH-SH Schaffhausen|CH-SO Solothurn|" +
    "CH-SZ Schwyz|CH-TG Thurgau|CH-TI Ticino|CH-UR Uri|CH-VD Vaud|CH-VS Valais|CH-ZG Zug|CH-ZH Zürich")
    .split("|").map((pair) => [pair.slice(0, 5), pair.slice(6)]),
);

let regions = null;
function countryName(code) {
  try {
    regions = regions || new Intl.DisplayNames(["en"], { type: "region" });
    const name = regions.of(code);
    return name && name !== code ? name : "";
  } catch (e) {
    return ""; // not a region code Intl knows
  }
}

// "US-CA" -> "California", "CH" -> "Switzerland", "FR-75" -> "France"; "" when the code is not one.
export function placeName(code) {
  const upper = String(code || "").trim().toUpperCase();
  if (SUBDIVISIONS[upper]) return SUBDIVISIONS[upper];
  const country = upper.split("-")[0];
  return /^[A-Z]{2}$/.test(country) ? countryName(country) : "";
}

// ---- values ------------------------------------------------------------------------------------------------------

/* {text, aside}: the value to read at a glance, and what qualifies it (a percent's base, a place's code). */
export function shortValue(fact) {
  const v = fact.value;
  switch (isNumber(v) ? fact.kind : "") {
    case "amount": return { text: `${fact.unit || ""} ${compact(v)}`.trim(), aside: "" };
    case "percent": return {
      text: `${trimmed(v, 2)}%`,
      aside: [fact.role && fact.role !== "share" ? fact.role : "", fact.base ? `of ${fact.base}` : ""].filter(Boolean).join(" "),
    };
    case "age": return { text: `${trimmed(v, 1)} years`, aside: "" };
    case "year": return { text: String(Math.round(v)), aside: "" };
    case "person": return { text: v === 1 ? "1 person" : `${trimmed(v, 0)} people`, aside: fact.role || "" };
    case "limit": case "horizon":
      return { text: `${fact.role ? fact.role + " " : ""}${measure(v, fact.unit)}`, aside: fact.base ? `of ${fact.base}` : "" };
    default: break;
  }
  if (fact.kind === "place") {
    const name = placeName(v);
    return name ? { text: name, aside: String(v) } : { text: String(v || ""), aside: "" };
  }
  return { text: v == null || v === "" ? fact.text || "" : String(v), aside: "" };
}

// The value in full: "USD 3,200,000", "70% of portfolio", "California (US-CA)".
export function exactValue(fact) {
  const v = fact.value;
  if (isNumber(v) && fact.kind === "amount") return `${fact.unit || ""} ${grouped(v)}`.trim();
  const { text, aside } = shortValue(fact);
  if (fact.kind === "place" && aside) return `${text} (${aside})`;
  return aside ? `${text} ${aside}` : text;
}

// What the value field of the form starts with: the figure grouped, a name as it is.
export function editableValue(fact) {
  const v = fact.value;
  if (isNumber(v)) return fact.kind === "year" ? String(v) : grouped(v);
  return v == null ? "" : String(v);
}

/* The form's value as the API takes it: a plain figure ("450,000", "1'800'000") as a number for a numeric kind;
 * anything else as written ("$450k" is read by the server; a place's code; a name). */
export function valueToSend(kind, raw) {
  const text = String(raw || "").trim();
  if (!NUMERIC.has(kind)) return text;
  const figure = text.replace(/[\s,_'’]/g, "");
  return /^-?\d*\.?\d+$/.test(figure) ? Number(figure) : text;
}
