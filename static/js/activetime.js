/* Active time on the question page, reported with every save as `seconds`.

   Time counts only while the page is visible and the window has focus, and only between two signs
   of activity (a key, the mouse, the wheel, a scroll, a touch) no more than IDLE_LIMIT_MS apart: a
   longer gap, such as a break with the page left open, is left out entirely. The total is kept per
   question in this tab's session storage, so a reload or coming back to the question adds to it. */
(function () {
  "use strict";

  const bar = document.getElementById("workbar");
  if (!bar) return;
  const IDLE_LIMIT_MS = 120 * 1000;  // README: "seconds_spent"
  const key = "leval-active:" + bar.dataset.user + ":" + bar.dataset.study + ":" + bar.dataset.round + ":" +
              bar.dataset.questionId;

  let total = 0;        // counted milliseconds
  let last = null;      // time of the last activity while the page was visible and focused; null when not counting
  try { total = Math.max(0, Number(sessionStorage.getItem(key)) || 0); } catch (e) { total = 0; }

  function now() { return performance.now(); }
  function attentive() { return document.visibilityState === "visible" && document.hasFocus(); }

  function count(at) {
    if (last !== null && at - last <= IDLE_LIMIT_MS) total += at - last;
  }

  function activity() {
    const at = now();
    if (!attentive()) { last = null; return; }
    count(at);
    last = at;
  }

  function pause() {
    count(now());
    last = null;
    keep();
  }

  function keep() {
    try { sessionStorage.setItem(key, String(Math.round(total))); } catch (e) { /* storage disabled: this visit still counts */ }
  }

  ["keydown", "pointerdown", "pointermove", "wheel", "touchstart", "input"].forEach(function (name) {
    document.addEventListener(name, activity, { capture: true, passive: true });
  });
  document.addEventListener("scroll", activity, { capture: true, passive: true });
  window.addEventListener("focus", activity);
  window.addEventListener("blur", pause);
  document.addEventListener("visibilitychange", function () { if (document.visibilityState === "visible") activity(); else pause(); });
  window.addEventListener("pagehide", pause);
  if (attentive()) last = now();

  /* Whole active seconds so far; the save that asks is itself activity (a key or a click). */
  window.levalActiveSeconds = function () {
    activity();
    keep();
    return Math.min(86400, Math.round(total / 1000));
  };
})();
