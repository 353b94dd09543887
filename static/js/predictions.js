// Warn before sending an upload the server would refuse for its size (the server checks again).
(function () {
  "use strict";
  const form = document.querySelector("form.upload-form[data-max-bytes]");
  if (!form) return;
  const input = form.querySelector('input[type="file"]');
  const message = form.querySelector('[data-field="size-error"]');
  const limit = Number(form.dataset.maxBytes) || 0;

  function totalBytes() {
    return Array.from(input.files || []).reduce(function (sum, file) { return sum + file.size; }, 0);
  }

  function check() {
    const size = totalBytes();
    const tooBig = limit > 0 && size > limit;
    message.hidden = !tooBig;
    message.textContent = tooBig
      ? "These files add up to " + (size / 1048576).toFixed(1) + " MB; the limit is " + (limit / 1048576).toFixed(0) + " MB per upload."
      : "";
    return !tooBig;
  }

  input.addEventListener("change", check);
  form.addEventListener("submit", function (event) {
    if (!check()) event.preventDefault();
  });
})();

// Keep the systems' metric status current while metric jobs run: "scoring…" while a system's job is
// queued or running; when it ends, ask the server which systems now have metrics (no reload needed).
(function () {
  "use strict";
  const table = document.querySelector("table.systems[data-status-url]");
  if (!table) return;
  const ENDED = new Set(["done", "failed", "cancelled"]);

  function rowOf(name) {
    return Array.from(table.querySelectorAll("tr[data-system]")).find(function (row) {
      return row.dataset.system === name;
    });
  }

  function badge(row, text, kind) {
    const cell = row.querySelector('[data-field="metrics-status"]');
    const span = document.createElement("span");
    span.className = "badge " + kind;
    span.textContent = text;
    cell.replaceChildren(span);
  }

  function refresh() {
    fetch(table.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (data) {
        data.systems.forEach(function (system) {
          const row = table.querySelector('tr[data-system-id="' + system.id + '"]');
          if (!row || !row.querySelector('[data-field="score-button"]')) return;
          badge(row, system.scored ? "scored" : "not scored", system.scored ? "ok" : "warn");
          row.querySelector('[data-field="score-button"]').textContent = system.scored ? "Rescore" : "Compute metrics";
        });
      })
      .catch(function () { /* the next job update asks again */ });
  }

  document.addEventListener("jobs:update", function (event) {
    const job = event.detail;
    if (job.kind !== "metrics") return;
    const row = rowOf(job.system);
    if (row && !ENDED.has(job.status)) {
      badge(row, "scoring…", "");
    } else if (ENDED.has(job.status)) {
      refresh();
    }
  });
})();
