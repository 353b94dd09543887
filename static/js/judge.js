// On a judge run page, reload once the job finishes so the aggregations show the final verdicts.
// jobs.js keeps the job row's data-status current; this only watches it.
(function () {
  "use strict";
  const row = document.querySelector("table[data-poll] tr[data-job-id]");
  if (!row) return;
  const ACTIVE = new Set(["queued", "running"]);
  if (!ACTIVE.has(row.dataset.status)) return;
  const observer = new MutationObserver(function () {
    if (!ACTIVE.has(row.dataset.status)) {
      observer.disconnect();
      window.location.reload();
    }
  });
  observer.observe(row, { attributes: true, attributeFilter: ["data-status"] });
})();
