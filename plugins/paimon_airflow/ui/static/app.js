// The "Paimon tables" page: vanilla JS, SVG charts, no build step. Read-only: only GETs.
// Data comes from this plugin's JSON API (same origin; the Airflow session cookie authenticates).
"use strict";

(function () {
  const BASE = document.body.dataset.base || "";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const KIND_COLORS = { APPEND: "#3b82f6", COMPACT: "#f59e0b", OVERWRITE: "#ef4444", ANALYZE: "#8b5cf6" };

  // --- DOM helpers (text only: no data ever goes through innerHTML) -----------------------
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, String(v));
    }
    for (const c of [].concat(children === undefined ? [] : children)) {
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function svg(tag, attrs, children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    for (const c of [].concat(children === undefined ? [] : children)) {
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function time(ms) {
    return ms === null || ms === undefined ? "–" : new Date(ms).toISOString().replace("T", " ").slice(0, 19);
  }
  function bytes(n) {
    if (n === null || n === undefined) return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return "–";
    const s = Math.round(ms / 1000);
    if (s < 120) return s + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    if (s < 172800) return Math.round(s / 3600) + " h";
    return Math.round(s / 86400) + " d";
  }
  function grid(headers, rows) {
    return el("table", { class: "grid" }, [
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) =>
        c instanceof Node ? el("td", {}, c) : el("td", typeof c === "number" ? { class: "num" } : {}, c ?? "–"))))),
    ]);
  }
  function card(label, value, id) {
    return el("div", { class: "card", id: id }, [el("div", { class: "v" }, value), el("div", { class: "k" }, label)]);
  }
  // Links to pages of the Airflow UI. Inside the UI's frame (sandboxed: neither top navigation nor
  // popups are allowed) the UI's own router is sent there: same origin, so this page may push the
  // URL onto the UI's history and tell its router (popstate), as the browser's Back button does.
  // On its own (not framed) it is a plain link.
  function navigateUi(href) {
    try {
      if (window.top === window) return false;
      const top = window.top;
      const state = top.history.state || {};
      const idx = typeof state.idx === "number" ? state.idx + 1 : 0;
      top.history.pushState({ usr: null, key: Math.random().toString(36).slice(2, 10), idx: idx }, "", href);
      top.dispatchEvent(new PopStateEvent("popstate", { state: top.history.state }));
      return true;
    } catch (e) {
      return false; // not the same origin: the link opens in this frame
    }
  }
  function uiLink(href, text, attrs) {
    const a = el("a", Object.assign({ href: href }, attrs || {}), text);
    a.addEventListener("click", (e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      if (navigateUi(href)) e.preventDefault();
    });
    return a;
  }

  // A task's result as readable fields: scalars as "name value", lists and objects folded.
  function resultFields(result) {
    if (!result) return el("span", { class: "muted" }, "no result (the task failed before reporting)");
    const dl = el("dl", { class: "fields" });
    for (const [k, v] of Object.entries(result)) {
      if (k === "table") continue;
      let value;
      if (v === null || v === undefined) value = el("span", { class: "muted" }, "–");
      else if (typeof v === "object") {
        const n = Array.isArray(v) ? v.length : Object.keys(v).length;
        value = n === 0 ? el("span", { class: "muted" }, Array.isArray(v) ? "[]" : "{}")
          : el("details", {}, [el("summary", {}, Array.isArray(v) ? `${n} item${n === 1 ? "" : "s"}` : `${n} fields`),
            el("pre", {}, JSON.stringify(v, null, 2))]);
      } else value = String(v);
      dl.append(el("div", { "data-field": k }, [el("dt", {}, k), el("dd", {}, value)]));
    }
    return dl;
  }

  function maintenanceTable(rows) {
    return el("table", { class: "grid", id: "maintenance" }, [
      el("thead", {}, el("tr", {}, ["when (UTC)", "DAG", "task", "status", "result", "log"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((m) => el("tr", { "data-status": m.status, "data-task": m.task }, [
        el("td", {}, (m.timestamp || "").replace("T", " ").slice(0, 19)),
        el("td", {}, m.dag_id),
        el("td", {}, [m.task, el("small", { class: "muted block" }, m.run_id)]),
        el("td", {}, [el("span", { class: `badge status-${m.status}` }, m.status.replace("_", " ")),
          m.try_number > 1 ? el("small", { class: "muted block" }, `try ${m.try_number}`) : ""]),
        el("td", {}, [m.error ? el("div", { class: "error" }, m.error) : "", resultFields(m.result)]),
        el("td", {}, uiLink(m.log_url, "log", { class: "log-link" })),
      ]))),
    ]);
  }

  async function getJSON(path) {
    const resp = await fetch(BASE + path, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!resp.ok) {
      const err = new Error(resp.status === 401 || resp.status === 403
        ? "Not logged in to Airflow (HTTP " + resp.status + ")" : "HTTP " + resp.status);
      err.status = resp.status;
      throw err;
    }
    return resp.json();
  }

  // --- charts ----------------------------------------------------------------------------
  // Snapshots over time: x = commit time, y = snapshot id, one dot per snapshot, colour = kind.
  function snapshotsChart(snapshots) {
    const W = 560, H = 250, L = 52, R = 16, T = 14, B = 40;
    const root = svg("svg", { id: "snapshots-chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
      "aria-label": "Snapshots over time by commit kind" });
    if (!snapshots.length) {
      root.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "no snapshots"));
      return root;
    }
    let t0 = Math.min(...snapshots.map((s) => s.time_millis)), t1 = Math.max(...snapshots.map((s) => s.time_millis));
    if (t1 === t0) { t0 -= 1000; t1 += 1000; }
    let i0 = snapshots[0].snapshot_id, i1 = snapshots[snapshots.length - 1].snapshot_id;
    if (i1 === i0) { i0 -= 1; i1 += 1; }
    const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const y = (i) => H - B - ((i - i0) / (i1 - i0)) * (H - T - B);
    root.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#c5ccd3" }));
    root.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#c5ccd3" }));
    root.append(svg("text", { x: L, y: H - B + 16 }, time(t0)));
    root.append(svg("text", { x: W - R, y: H - B + 16, "text-anchor": "end" }, time(t1)));
    root.append(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "commit time (UTC)"));
    root.append(svg("text", { x: L - 6, y: y(i1) + 4, "text-anchor": "end" }, String(i1)));
    root.append(svg("text", { x: L - 6, y: y(i0) + 4, "text-anchor": "end" }, String(i0)));
    root.append(svg("text", { x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`,
      "text-anchor": "middle" }, "snapshot id"));
    root.append(svg("polyline", { fill: "none", stroke: "#c5ccd3", "stroke-width": 1,
      points: snapshots.map((s) => `${x(s.time_millis)},${y(s.snapshot_id)}`).join(" ") }));
    for (const s of snapshots) {
      root.append(svg("circle", {
        class: "snapshot-point", "data-kind": s.commit_kind, "data-snapshot-id": s.snapshot_id,
        cx: x(s.time_millis), cy: y(s.snapshot_id), r: 4.5, fill: KIND_COLORS[s.commit_kind] || "#6b7785",
      }, svg("title", {}, `#${s.snapshot_id} ${s.commit_kind} ${time(s.time_millis)} (+${s.delta_record_count} rows)`)));
    }
    return root;
  }

  // Sorted runs per bucket (primary-key tables) against the stop trigger; files per bucket otherwise.
  function runsChart(report) {
    const pk = report.primary_key;
    const stop = pk ? report.compaction.stop_trigger : null;
    const trig = pk ? report.compaction.compaction_trigger : null;
    let buckets = report.buckets.slice();
    const shown = 40;
    if (buckets.length > shown) {
      buckets.sort((a, b) => (pk ? b.sorted_runs - a.sorted_runs : b.file_count - a.file_count));
      buckets = buckets.slice(0, shown);
    }
    const value = (b) => (pk ? b.sorted_runs : b.file_count);
    const W = Math.max(320, Math.min(900, 150 + buckets.length * 48)), H = 270, L = 70, R = 80, T = 14, B = 74;
    const root = svg("svg", { id: "runs-chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
      "aria-label": pk ? "Sorted runs per bucket against the stop trigger" : "Files per bucket" });
    if (!buckets.length) {
      root.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "no data files"));
      return root;
    }
    const top = Math.max(1, ...buckets.map(value), stop || 0) + 1;
    const y = (v) => H - B - (v / top) * (H - T - B);
    const slot = (W - L - R) / buckets.length, bw = Math.min(30, slot * 0.7);
    root.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#c5ccd3" }));
    root.append(svg("text", { x: L - 6, y: y(0) + 4, "text-anchor": "end" }, "0"));
    root.append(svg("text", { x: L - 6, y: y(top) + 8, "text-anchor": "end" }, String(top)));
    buckets.forEach((b, i) => {
      const v = value(b), cx = L + slot * i + slot / 2;
      const colour = !pk ? "#3b82f6" : v >= stop ? "#dc2626" : v >= trig ? "#d97706" : "#16a34a";
      root.append(svg("rect", {
        class: "run-bar", "data-bucket": b.bucket, "data-partition": b.partition, "data-value": v,
        x: cx - bw / 2, y: y(v), width: bw, height: Math.max(0, H - B - y(v)), fill: colour, rx: 2,
      }, svg("title", {}, `${b.partition || "(unpartitioned)"} bucket ${b.bucket}: ${v} ${pk ? "sorted runs" : "files"}`)));
      root.append(svg("text", { x: cx, y: y(v) - 3, "text-anchor": "middle" }, String(v)));
      const label = (b.partition ? b.partition + " " : "") + "b" + b.bucket;
      root.append(svg("text", { x: cx, y: H - B + 12, "text-anchor": "end",
        transform: `rotate(-35 ${cx} ${H - B + 12})` }, label.length > 18 ? "…" + label.slice(-17) : label));
    });
    if (pk) {
      root.append(svg("line", { id: "stop-trigger-line", x1: L, x2: W - R, y1: y(stop), y2: y(stop),
        stroke: "#dc2626", "stroke-dasharray": "5 4", "stroke-width": 1.5 }));
      root.append(svg("text", { x: W - R + 4, y: y(stop) + 4 }, `stop ${stop}`));
      root.append(svg("line", { x1: L, x2: W - R, y1: y(trig), y2: y(trig),
        stroke: "#d97706", "stroke-dasharray": "2 3" }));
      root.append(svg("text", { x: W - R + 4, y: y(trig) + 4 }, `compact ${trig}`));
    }
    return root;
  }

  function legend() {
    return el("div", { class: "legend" }, Object.entries(KIND_COLORS).map(([k, c]) =>
      el("span", {}, [el("i", { style: `background:${c}` }), k])));
  }

  // --- page --------------------------------------------------------------------------------
  function selectedName() { return new URLSearchParams(location.search).get("table"); }

  function renderList(data, selected) {
    const nav = document.getElementById("table-list");
    nav.replaceChildren();
    document.getElementById("connection").textContent = "connection " + data.paimon_conn_id;
    if (!data.tables.length) nav.append(el("p", { class: "muted" }, "No tables in the registry's warehouse."));
    for (const t of data.tables) {
      const sub = t.snapshot_id === null ? "empty" : `snapshot ${t.snapshot_id} · ${t.commit_kind}`;
      nav.append(el("a", { href: `?table=${encodeURIComponent(t.table)}`, "data-table": t.table,
        class: t.table === selected ? "selected" : null }, [t.table, el("small", {}, sub)]));
    }
    for (const e of data.errors) nav.append(el("p", { class: "error" }, `${e.table}: ${e.error}`));
  }

  function renderTable(r) {
    const main = document.getElementById("table-detail");
    const pk = r.primary_key;
    const kinds = Object.entries(r.snapshot_kinds).map(([k, n]) => `${n} ${k}`).join(", ") || "none";
    main.replaceChildren(
      el("h2", { id: "table-name" }, r.table),
      el("div", { class: "muted" }, [
        pk ? `primary key (${r.primary_keys.join(", ")})` : "append table",
        r.partition_keys.length ? ` · partitioned by ${r.partition_keys.join(", ")}` : "",
        " · ", el("code", {}, r.path),
      ]),
      el("div", { class: "cards" }, [
        card("health score", r.health_score, "card-score"),
        card(`snapshots (${kinds})`, r.snapshot_count, "card-snapshots"),
        card("latest snapshot", r.snapshot_id === null ? "–" : `#${r.snapshot_id} ${r.snapshot_commit_kind}`),
        card("data files", `${r.data_file_count} · ${bytes(r.total_bytes)}`, "card-files"),
        card(`small files (< ${bytes(r.small_file_threshold_bytes)})`,
          `${r.small_file_count} · ${(100 * r.small_file_ratio).toFixed(0)}%`, "card-small"),
        pk ? card("max sorted runs / stop trigger", `${r.max_sorted_runs} / ${r.compaction.stop_trigger}`, "card-runs")
          : card("buckets with files", r.bucket_count),
        card("consumers", r.consumers.length),
        card("tags", r.tags.length),
      ]),
      el("div", { class: "charts" }, [
        el("div", { class: "chart" }, [el("h3", {}, "Snapshots over time"), legend(), snapshotsChart(r.snapshots)]),
        el("div", { class: "chart" }, [
          el("h3", {}, pk ? "Sorted runs per bucket vs num-sorted-run.stop-trigger" : "Files per bucket (append table)"),
          runsChart(r),
        ]),
      ]),
      el("h3", {}, "Airflow DAGs"),
      el("div", { id: "dag-links" }, r.dags.map((d) =>
        uiLink(d.runs_url, `${d.dag_id} runs`, { style: "margin-right:1rem" }))),
      el("h3", {}, "Maintenance results and failures (newest first)"),
      r.maintenance_error ? el("p", { class: "error" }, r.maintenance_error)
        : r.maintenance.length ? maintenanceTable(r.maintenance)
          : el("p", { class: "muted" }, "No maintenance task has reported on this table yet."),
      el("h3", {}, "Consumers (lag vs snapshot retention)"),
      el("p", { class: "muted" }, `retention: min ${r.retention.snapshot_num_retained_min}, max ` +
        `${r.retention.snapshot_num_retained_max >= 2147483647 ? "unlimited" : r.retention.snapshot_num_retained_max}, time ${duration(r.retention.snapshot_time_retained_ms)}; ` +
        `earliest snapshot #${r.earliest_snapshot_id ?? "–"}`),
      r.consumers.length ? grid(["consumer", "next snapshot", "lag (snapshots)", "waiting since", "status"],
        r.consumers.map((c) => [c.consumer_id, c.next_snapshot, c.lag_snapshots, time(c.waiting_since_millis),
          el("span", { class: `status-${c.status}` }, c.status)]))
        : el("p", { class: "muted" }, "No consumers."),
      el("h3", {}, "Tags"),
      r.tags.length ? grid(["tag", "snapshot", "snapshot time"], r.tags.map((t) => [t.name, t.snapshot_id, time(t.time_millis)]))
        : el("p", { class: "muted" }, "No tags."),
      el("h3", {}, "Buckets"),
      r.buckets.length ? grid(["partition", "bucket", "files", "bytes", "small", "level-0", "sorted runs"],
        r.buckets.map((b) => [b.partition || "–", b.bucket, b.file_count, bytes(b.total_bytes), b.small_file_count,
          b.level0_file_count, b.sorted_runs ?? "–"])) : el("p", { class: "muted" }, "No data files."),
      el("h3", {}, "Latest snapshots"),
      grid(["id", "kind", "time", "delta rows", "total rows", "commit user"], r.snapshots.slice(-10).reverse().map((s) =>
        [s.snapshot_id, el("span", { class: `kind-${s.commit_kind}` }, s.commit_kind), time(s.time_millis),
          s.delta_record_count, s.total_record_count, s.commit_user])),
    );
    document.body.dataset.loaded = r.table;
  }

  async function main() {
    const detail = document.getElementById("table-detail");
    try {
      const list = await getJSON("/api/tables");
      let selected = selectedName();
      const q = new URLSearchParams(location.search);
      if (!selected && q.get("dag_id") && q.get("task_id")) {
        // opened as a task instance's tab: show the table that task works on
        const args = new URLSearchParams({ dag_id: q.get("dag_id"), run_id: q.get("run_id") || "",
          task_id: q.get("task_id"), map_index: q.get("map_index") || "-1" });
        try {
          selected = (await getJSON("/api/task-table?" + args)).table;
        } catch (e) {
          if (e.status !== 404) throw e;
          renderList(list, null);
          detail.replaceChildren(el("p", { class: "muted", id: "no-task-table" },
            `Task ${q.get("task_id")} names no Paimon table of the registry.`));
          document.body.dataset.loaded = "none";
          return;
        }
      }
      selected = selected || (list.tables[0] && list.tables[0].table);
      renderList(list, selected);
      if (selected) renderTable(await getJSON("/api/tables/" + encodeURIComponent(selected)));
      else document.body.dataset.loaded = "";
    } catch (e) {
      detail.replaceChildren(el("p", { class: "error", id: "load-error" }, String(e.message || e)));
      document.body.dataset.loaded = "error";
    }
  }
  main();
})();
