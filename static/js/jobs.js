// Poll the jobs API while any listed job is queued or running, and update rows in place.
(function () {
  "use strict";
  const table = document.querySelector("table[data-poll]");
  if (!table) return;
  const ACTIVE = new Set(["queued", "running"]);
  const rows = () => Array.from(table.querySelectorAll("tr[data-job-id]"));

  function setField(row, name, value) {
    const el = row.querySelector('[data-field="' + name + '"]');
    if (el) el.textContent = value == null ? "" : String(value);
  }

  function update(row, job) {
    row.dataset.status = job.status;
    const badge = row.querySelector('[data-field="status"]');
    badge.className = "badge job-status status-" + job.status;
    setField(row, "status", job.status);
    setField(row, "done", job.done);
    setField(row, "total", job.total);
    setField(row, "message", job.message);
    setField(row, "duration", job.duration);
    if (job.started) setField(row, "started", job.started);
    const bar = row.querySelector('[data-field="bar"]');
    bar.style.width = (job.fraction * 100).toFixed(1) + "%";
    bar.parentElement.setAttribute("aria-valuenow", job.done);
    bar.parentElement.setAttribute("aria-valuemax", job.total);
    const error = row.querySelector('[data-field="error"]');
    error.hidden = !job.error;
    error.textContent = job.error || "";
    row.querySelectorAll("form[data-when]").forEach(function (form) {
      const show = form.dataset.when.split(" ").indexOf(job.status) !== -1;
      form.querySelector("button").hidden = !show;
    });
  }

  let delay = 1000;
  function poll() {
    const active = rows().filter((r) => ACTIVE.has(r.dataset.status));
    if (!active.length) return;
    const ids = active.map((r) => r.dataset.jobId).join(",");
    fetch(table.dataset.poll + "?ids=" + ids, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (data) {
        delay = 1000;
        data.jobs.forEach(function (job) {
          const row = table.querySelector('tr[data-job-id="' + job.id + '"]');
          if (row) update(row, job);
          // Other parts of the page (the predictions page's systems) follow the jobs they depend on.
          document.dispatchEvent(new CustomEvent("jobs:update", { detail: job }));
        });
      })
      .catch(function () { delay = Math.min(delay * 2, 15000); })
      .finally(function () { window.setTimeout(poll, delay); });
  }
  window.setTimeout(poll, delay);
})();
