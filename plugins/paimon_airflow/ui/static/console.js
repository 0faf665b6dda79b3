// The Paimon maintenance console: the warehouse overview (sortable), lag alerts, maintenance per
// day, and per table its ledger history as charts, the next pass's plan, settings and health.
"use strict";
const BASE = document.body.dataset.base;
const AIRFLOW = document.body.dataset.airflow || "/";
const HOUR = 3600e3, DAY = 24 * HOUR;
let rows = [], sortKey = "health_score", sortAsc = true, selected = null, only = null, showAll = false;
// Rows rendered at once (?rows=N): a warehouse of many thousand tables stays quick to sort and
// filter; the rest is one click away.
const ROW_LIMIT = Number(new URLSearchParams(location.search).get("rows")) || 2000;
// Quick filters: the tables that need a look, by what needs it.
const ONLY = {
  alerts: ["with lag alerts", (r) => r.alert_count > 0],
  failed: ["failed in 7 days", (r) => r.failures_7d > 0],
  deferred: ["with deferred work", (r) => r.deferred_count > 0],
  changed: ["changed since measured", (r) => !!r.changed_after_assessed],
  leased: ["being compacted", (r) => !!r.lease],
};

const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
const ago = (ms) => ms == null ? "never" : ms < HOUR ? `${Math.round(ms / 60e3)} min` : ms < 2 * DAY ? `${(ms / HOUR).toFixed(1)} h` : `${(ms / DAY).toFixed(1)} d`;
const bytes = (n) => n == null ? "" : n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : n < 1 << 30 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / (1 << 30)).toFixed(2)} GiB`;
const when = (ms) => ms == null ? "" : new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";

async function getJSON(path) {
  const r = await fetch(BASE + path, {credentials: "same-origin"});
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

// Links into the Airflow UI. The UI shows this page in a sandboxed iframe (no top navigation), so a
// link drives the UI's own router from here (same origin); outside the UI it is a plain link.
function airflowHref(path) { return AIRFLOW.replace(/\/$/, "") + path; }
function navigate(ev) {
  const href = ev.currentTarget.getAttribute("href");
  try {
    if (window.parent !== window && window.parent.history) {
      ev.preventDefault();
      window.parent.history.pushState({}, "", href);
      window.parent.dispatchEvent(new PopStateEvent("popstate", {state: {}}));
    }
  } catch (e) { /* not the same origin: let the link work as a link */ }
}
function taskLogHref(f) {
  if (!f.dag_id || !f.run_id || !f.task_id) return null;
  const base = `/dags/${encodeURIComponent(f.dag_id)}/runs/${encodeURIComponent(f.run_id)}/tasks/${encodeURIComponent(f.task_id)}`;
  return airflowHref(f.map_index != null && f.map_index >= 0 ? `${base}/mapped/${f.map_index}` : base);
}
function link(href, text) { return href ? `<a class="af" href="${esc(href)}">${esc(text)}</a>` : esc(text); }
function wireLinks(root) { root.querySelectorAll("a.af").forEach((a) => a.addEventListener("click", navigate)); }

function derive(t, now) {
  const last = t.last_success || {};
  const since = (...actions) => {
    const times = actions.map((a) => last[a]).filter((v) => v != null);
    return times.length ? now - Math.max(...times) : null;
  };
  return {...t,
    since_compact: since("compact", "sort_compact", "compact_database"),
    since_expire: since("expire_snapshots"),
    since_orphan: since("remove_orphan_files"),
    since_measured: t.measured_at_millis == null ? null : now - t.measured_at_millis,
    alert_count: (t.alerts || []).length,
    deferred_count: (t.deferred || []).length,
    lease: t.lease ? t.lease.holder : ""};
}

function healthClass(h) { return h == null ? "muted" : h < 50 ? "bad" : h < 80 ? "warn" : "good"; }
// A table changed by an action after the pass measured it: its figures are older than the table.
function staleNote(r) {
  const c = r.changed_after_assessed;
  return c ? `measured ${when(r.measured_at_millis)}, before ${c.action} at ${when(c.end_millis)}; the next pass measures it again (open the table for its health now)` : "";
}

function renderTable() {
  const re = (() => { try { return new RegExp(document.getElementById("filter").value || ".*"); } catch { return /.*/; } })();
  const keep = only ? ONLY[only][1] : () => true;
  const list = rows.filter((r) => re.test(r.table) && keep(r));
  list.sort((a, b) => {
    const x = a[sortKey], y = b[sortKey];
    const nx = x == null, ny = y == null;
    if (nx || ny) return nx === ny ? 0 : nx ? 1 : -1;  // unknown last
    return (x < y ? -1 : x > y ? 1 : 0) * (sortAsc ? 1 : -1);
  });
  document.querySelectorAll("#overview th").forEach((th) => {
    th.classList.toggle("sorted", th.dataset.key === sortKey);
    th.classList.toggle("asc", th.dataset.key === sortKey && sortAsc);
  });
  const shownRows = showAll ? list : list.slice(0, ROW_LIMIT);
  const html = shownRows.map((r) => `<tr class="row${r.table === selected ? " selected" : ""}" data-table="${esc(r.table)}">
    <td>${esc(r.table)}</td>
    <td class="num ${healthClass(r.health_score)}${r.changed_after_assessed ? " stale" : ""}" title="${esc(staleNote(r))}">${r.health_score ?? "–"}</td>
    <td class="num ${r.compaction_debt >= 0.8 ? "bad" : ""}">${r.compaction_debt == null ? "–" : r.compaction_debt.toFixed(2)}</td>
    <td class="num">${r.small_files ?? ""}</td>
    <td class="num">${r.snapshot_count ?? ""}</td>
    <td class="num">${ago(r.since_compact)}</td>
    <td class="num">${ago(r.since_expire)}</td>
    <td class="num">${ago(r.since_orphan)}</td>
    <td class="num${r.changed_after_assessed ? " stale" : ""}" title="${esc(staleNote(r))}">${r.since_measured == null ? "never" : ago(r.since_measured)}${r.changed_after_assessed ? ` <span class="changed">changed</span>` : ""}</td>
    <td class="num ${r.failures_7d ? "bad" : ""}">${r.failures_7d || 0}</td>
    <td class="lease" title="${esc(r.lease)}">${esc(r.lease)}</td>
    <td class="${r.deferred_count ? "warn" : ""}" title="${esc((r.deferred || []).map((d) => `${d.action}: ${d.why}`).join("\n"))}">${esc((r.deferred || []).map((d) => d.action).join(", "))}</td>
    <td class="num ${r.alert_count ? "bad" : ""}">${r.alert_count || ""}</td></tr>`).join("");
  const body = document.querySelector("#overview tbody");
  body.innerHTML = html;
  const more = document.getElementById("more");
  more.innerHTML = shownRows.length < list.length
    ? `showing the first ${shownRows.length} of ${list.length} tables (sort or filter to see others) <button type="button" id="show-all">show all ${list.length}</button>`
    : "";
  const all = document.getElementById("show-all");
  if (all) all.addEventListener("click", () => { showAll = true; renderTable(); });
}
document.querySelector("#overview tbody").addEventListener("click", (ev) => {
  const tr = ev.target.closest("tr.row");
  if (tr) showTable(tr.dataset.table);
});

// --- charts (SVG, no library) -----------------------------------------------------------------
function lineChart(points, {width = 420, height = 120, label = "", yMax = null, fmt = (v) => v} = {}) {
  if (!points.length) return `<p class="muted">${esc(label)}: no data yet</p>`;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1), y1 = yMax ?? Math.max(...ys, 1);
  const px = (x) => 30 + (x - x0) / (x1 - x0) * (width - 40), py = (y) => height - 18 - y / y1 * (height - 30);
  const path = points.map((p, i) => `${i ? "L" : "M"}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join("");
  const dots = points.map((p) => `<circle cx="${px(p[0]).toFixed(1)}" cy="${py(p[1]).toFixed(1)}" r="2.5"><title>${esc(when(p[0]))}: ${esc(fmt(p[1]))}</title></circle>`).join("");
  return `<svg role="img" aria-label="${esc(label)}" width="${width}" height="${height}">
    <text x="30" y="10">${esc(label)} (max ${esc(fmt(y1))})</text>
    <line x1="30" y1="${height - 18}" x2="${width - 10}" y2="${height - 18}" stroke="#d0d5dd"/>
    <path d="${path}" fill="none" stroke="#1570ef" stroke-width="1.5"/>${dots}
    <text x="30" y="${height - 4}">${esc(when(x0).slice(0, 10))}</text><text x="${width - 80}" y="${height - 4}">${esc(when(x1).slice(0, 10))}</text></svg>`;
}
function barChart(bars, {width = 420, height = 120, label = "", fmt = (v) => v} = {}) {
  if (!bars.length) return `<p class="muted">${esc(label)}: no data yet</p>`;
  const max = Math.max(...bars.map((b) => b[1]), 1), w = (width - 40) / bars.length;
  const rects = bars.map((b, i) => {
    const h = b[1] / max * (height - 30);
    return `<rect x="${(30 + i * w + 1).toFixed(1)}" y="${(height - 18 - h).toFixed(1)}" width="${Math.max(1, w - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="#53b1fd"><title>${esc(b[0])}: ${esc(fmt(b[1]))}</title></rect>`;
  }).join("");
  return `<svg role="img" aria-label="${esc(label)}" width="${width}" height="${height}"><text x="30" y="10">${esc(label)} (max ${esc(fmt(max))})</text>${rects}
    <text x="30" y="${height - 4}">${esc(bars[0][0])}</text><text x="${width - 70}" y="${height - 4}">${esc(bars[bars.length - 1][0])}</text></svg>`;
}

function perDay(history, value) {
  const days = {};
  for (const r of history) {
    const d = when(r.end_millis).slice(0, 10);
    days[d] = (days[d] || 0) + value(r);
  }
  return Object.keys(days).sort().map((d) => [d, days[d]]);
}

async function showTable(name) {
  selected = name;
  renderTable();
  const el = document.getElementById("detail");
  el.innerHTML = `<h2>${esc(name)}</h2><p class="muted">Loading…</p>`;
  const row = document.querySelector(`#overview tr[data-table="${CSS.escape(name)}"]`);
  if (row) row.scrollIntoView({block: "nearest"});
  let d;
  try { d = await getJSON(`/api/console/tables/${encodeURIComponent(name)}`); }
  catch (e) { el.innerHTML = `<h2>${esc(name)}</h2><p class="bad">${esc(e.message)}</p>`; return; }
  const h = d.history;
  const assess = h.filter((r) => r.action === "assess");
  const failures = h.filter((r) => r.status === "failed").reverse();
  const compactions = h.filter((r) => ["compact", "sort_compact", "compact_database"].includes(r.action) && r.status === "success");
  const penalties = (d.health && d.health.penalties) || {};
  const plan = d.next_plan;
  const row0 = rows.find((r) => r.table === name);
  el.innerHTML = `<h2>${esc(name)}</h2>
    <div class="cards">
      <div class="card"><h3>Health over time</h3>${lineChart(assess.filter((r) => r.health_score != null).map((r) => [r.end_millis, r.health_score]), {label: "health score", yMax: 100})}
        ${lineChart(assess.filter((r) => r.table_files != null).map((r) => [r.end_millis, r.table_files]), {label: "data files"})}
        ${lineChart(assess.filter((r) => r.table_bytes != null).map((r) => [r.end_millis, r.table_bytes]), {label: "bytes", fmt: bytes})}</div>
      <div class="card"><h3>Maintenance per day</h3>
        ${barChart(perDay(compactions, (r) => r.bytes_read || 0), {label: "bytes rewritten by compaction", fmt: bytes})}
        ${barChart(perDay(h, (r) => r.files_deleted || 0), {label: "files deleted"})}
        ${barChart(compactions.map((r) => [when(r.end_millis).slice(5, 16), r.files_read || 0]), {label: "files before each compaction"})}</div>
      <div class="card"><h3>Health score ${d.health_score ?? "–"} explained</h3>
        <p class="muted" id="measured-now">measured now${d.overview_measured_millis != null ? `; the overview's figures are from ${esc(when(d.overview_measured_millis))}` : ""}</p>
        ${Object.keys(penalties).length ? `<table>${Object.entries(penalties).map(([k, v]) => `<tr><td>${esc(k.replace("_", " "))}</td><td class="num">−${Number(v).toFixed(1)} points</td></tr>`).join("")}</table>` : `<p class="muted">no maintenance pass has assessed this table yet</p>`}
        ${(row0 && row0.deferred && row0.deferred.length) ? `<h3>Deferred by the last pass</h3><ul id="deferred">${row0.deferred.map((x) => `<li><b>${esc(x.action)}</b>: ${esc(x.why)}</li>`).join("")}</ul>` : ""}
        <h3>Next pass would</h3>
        ${plan ? (plan.actions.length ? `<ul>${plan.actions.map((a) => `<li><b>${esc(a.action)}</b>: ${esc(a.reason)}</li>`).join("")}</ul>` : `<p>nothing</p>`) +
          `<details><summary class="muted">why not the others</summary><ul>${Object.entries(plan.skipped).map(([a, why]) => `<li>${esc(a)}: ${esc(why)}</li>`).join("")}</ul></details>`
          : `<p class="muted">no state yet: after the first maintenance pass</p>`}</div>
    </div>
    <h3>Failures</h3>
    ${failures.length ? `<table><tr><th>when</th><th>action</th><th>error</th><th>task</th></tr>${failures.slice(0, 50).map((f) => `<tr><td>${esc(when(f.end_millis))}</td><td>${esc(f.action)}</td><td class="bad"><pre>${esc(f.error)}</pre></td><td>${link(taskLogHref(f), f.task_id ? `${f.dag_id} / ${f.task_id}` : "(not from Airflow)")}</td></tr>`).join("")}</table>` : `<p class="muted">none in the last 30 days</p>`}
    <h3>History (ledger)</h3>
    <table><tr><th>start</th><th>action</th><th>status</th><th>snapshot</th><th>files read / written / deleted</th><th>bytes read / written</th><th>CPU s</th><th>task</th></tr>
    ${h.filter((r) => r.action !== "assess").slice(-200).reverse().map((r) => `<tr><td>${esc(when(r.start_millis))}</td><td>${esc(r.action)}</td><td class="${r.status === "failed" ? "bad" : ""}">${esc(r.status)}</td>
      <td>${r.snapshot_before ?? ""} → ${r.snapshot_after ?? ""}</td><td class="num">${r.files_read ?? ""} / ${r.files_written ?? ""} / ${r.files_deleted ?? ""}</td>
      <td class="num">${bytes(r.bytes_read)} / ${bytes(r.bytes_written)}</td><td class="num">${r.cpu_seconds == null ? "" : r.cpu_seconds.toFixed(2)}</td>
      <td>${link(taskLogHref(r), r.task_id ? `${r.task_id}${r.map_index >= 0 ? `[${r.map_index}]` : ""}` : r.entry_point || "")}</td></tr>`).join("")}</table>
    <h3>Effective maintenance settings</h3>
    <table><tr><th>setting</th><th>effective</th><th>registry default</th><th>override</th></tr>
    ${Object.entries(d.settings.effective).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(JSON.stringify(v))}</td><td class="muted">${esc(JSON.stringify(d.settings.registry_defaults[k]))}</td><td>${k in d.settings.overrides ? esc(JSON.stringify(d.settings.overrides[k])) : ""}</td></tr>`).join("")}</table>
    <h3>Table options</h3><pre>${esc(Object.entries(d.settings.table_options).map(([k, v]) => `${k} = ${v}`).join("\n"))}</pre>`;
  wireLinks(el);
  document.body.dataset.detail = name;
}

async function load() {
  const t0 = performance.now();
  let o;
  try { o = await getJSON("/api/overview"); }
  catch (e) { document.getElementById("summary").innerHTML = `<span class="bad">${esc(e.message)}</span>`; return; }
  const now = o.computed_at_millis;
  rows = o.tables.map((t) => derive(t, now));
  const pass = o.last_pass || {};
  document.getElementById("summary").textContent =
    `${rows.length} tables · last pass ${pass.now_millis ? when(pass.now_millis) : "never"}` +
    (pass.actions != null ? ` (${pass.actions} actions, backlog ${pass.backlog})` : "") +
    ` · ${o.failures.length} failures in 7 days · connection ${o.paimon_conn_id}`;
  const deferredTables = rows.filter(ONLY.deferred[1]).length;
  if (deferredTables) document.getElementById("summary").textContent += ` · ${deferredTables} table${deferredTables === 1 ? "" : "s"} with deferred work`;
  const stale = rows.filter(ONLY.changed[1]).length;
  if (stale) document.getElementById("summary").textContent += ` · ${stale} changed since last measured`;
  const alerts = rows.flatMap((r) => r.alerts || []);
  document.getElementById("alerts").innerHTML = alerts.length
    ? `<h2>Lag alerts (${alerts.length})</h2>` + alerts.slice(0, 50).map((a) => `<div class="alert">${esc(a.message)}</div>`).join("") : "";
  const daily = o.daily || [];
  document.getElementById("daily").innerHTML = daily.length ? `<div class="cards"><div class="card">${barChart(daily.map((d) => [d.day, d.bytes_rewritten]), {label: "bytes rewritten per day", fmt: bytes})}</div>
    <div class="card">${barChart(daily.map((d) => [d.day, d.files_deleted]), {label: "files deleted per day"})}</div>
    <div class="card">${barChart(daily.map((d) => [d.day, d.failures]), {label: "failed actions per day"})}</div></div>` : "";
  renderOnly();
  renderTable();
  document.body.dataset.renderedMs = String(Math.round(performance.now() - t0));
  document.body.dataset.ready = "1";
  const want = new URLSearchParams(location.search).get("table");
  if (want) showTable(want);
}

document.querySelectorAll("#overview th").forEach((th) => th.addEventListener("click", () => {
  if (sortKey === th.dataset.key) sortAsc = !sortAsc; else { sortKey = th.dataset.key; sortAsc = th.dataset.key === "health_score" || !("num" in th.dataset); }
  renderTable();
}));
document.getElementById("filter").addEventListener("input", renderTable);

function renderOnly() {
  const el = document.getElementById("only");
  el.innerHTML = "show only: " + Object.entries(ONLY).map(([key, [label, test]]) => {
    const n = rows.filter(test).length;
    return `<button type="button" data-only="${key}" class="${only === key ? "on" : ""}" ${n ? "" : "disabled"}>${esc(label)} (${n})</button>`;
  }).join(" ");
  el.querySelectorAll("button").forEach((b) => b.addEventListener("click", () => {
    only = only === b.dataset.only ? null : b.dataset.only;
    renderOnly();
    renderTable();
  }));
}
load();
