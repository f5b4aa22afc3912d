/* The usage page's chart: cost by day, stacked by model, drawn with d3 (from npm, as the explorer's). The data is the
 * page's JSON (usage-data): [{day, model, cost_usd}] and the days asked for; every day of them gets a slot, spent or not. */
import d3 from "../../explorer/d3-from-npm.js";

const data = JSON.parse(document.getElementById("usage-data").textContent);
const figure = document.getElementById("usage-chart");
const margin = { top: 12, right: 16, bottom: 36, left: 72 };
const width = Math.max(figure.clientWidth || 800, 480);
const height = 280;

function everyDay(from, to) {
  const days = [];
  for (let day = new Date(from + "T00:00:00Z"); day <= new Date(to + "T00:00:00Z"); day.setUTCDate(day.getUTCDate() + 1)) {
    days.push(day.toISOString().slice(0, 10));
  }
  return days;
}

function table(stacks, days, models) {
  const byDay = new Map(days.map((day) => [day, Object.fromEntries(models.map((m) => [m, 0]))]));
  for (const { day, model, cost_usd } of stacks) byDay.get(day)[model] += cost_usd;
  return days.map((day) => ({ day, ...byDay.get(day) }));
}

function draw() {
  const days = everyDay(data.from, data.to);
  const models = [...new Set(data.stacks.map((s) => s.model))].sort();
  const rows = table(data.stacks, days, models);
  const series = d3.stack().keys(models)(rows);
  const x = d3.scaleBand().domain(days).range([margin.left, width - margin.right]).padding(0.15);
  const top = d3.max(series.flat(), (d) => d[1]) || 0.0001;
  const y = d3.scaleLinear().domain([0, top]).nice().range([height - margin.bottom, margin.top]);
  const color = d3.scaleOrdinal(models, d3.schemeTableau10);
  const svg = d3.select(figure).append("svg").attr("viewBox", [0, 0, width, height]).attr("width", width)
    .attr("height", height).attr("role", "img").attr("aria-label", "Cost by day in USD, stacked by model");
  svg.append("g").selectAll("g").data(series).join("g").attr("fill", (s) => color(s.key)).attr("data-model", (s) => s.key)
    .selectAll("rect").data((s) => s.map((d) => ({ ...d, model: s.key }))).join("rect")
    .attr("x", (d) => x(d.data.day)).attr("y", (d) => y(d[1])).attr("height", (d) => y(d[0]) - y(d[1]))
    .attr("width", x.bandwidth())
    .append("title").text((d) => `${d.data.day} · ${d.model}: ${(d[1] - d[0]).toFixed(4)} USD`);
  const every = Math.ceil(days.length / 12);
  svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`)
    .call(d3.axisBottom(x).tickValues(days.filter((_, i) => i % every === 0)).tickFormat((d) => d.slice(5)));
  svg.append("g").attr("transform", `translate(${margin.left},0)`)
    .call(d3.axisLeft(y).ticks(5).tickFormat((v) => v.toFixed(4) + " $"));
  legend(models, color);
  if (!data.stacks.length) figure.insertAdjacentHTML("beforeend", '<p class="usage-empty">No spend in these days.</p>');
}

function legend(models, color) {
  const list = d3.select(figure).append("ul").attr("class", "usage-legend").attr("data-testid", "usage-legend");
  const item = list.selectAll("li").data(models).join("li");
  item.append("span").attr("class", "swatch").style("background", (m) => color(m));
  item.append("span").text((m) => m);
}

draw();
