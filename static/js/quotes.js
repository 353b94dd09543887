/* A rater's quotes in the document pane: every located quote highlighted as the authoring page
   highlights evidence (CSS highlights over DOM ranges, never markup); "Show" focuses one. */
(function () {
  "use strict";

  var panel = document.getElementById("doc-panel");
  var list = document.getElementById("quote-list");
  var data = document.getElementById("quote-spans");
  if (!panel || !list || !data) return;
  var spans = JSON.parse(data.textContent);
  var canHighlight = typeof CSS !== "undefined" && CSS.highlights && typeof Highlight === "function";
  var ready = false;

  function paint(focus) {
    if (!canHighlight || !ready) return;
    var all = new Highlight();
    spans.forEach(function (s) { panel.docPanel.rangesFor(s).forEach(function (x) { all.add(x[1]); }); });
    CSS.highlights.set("evidence", all);
    if (focus) {
      var parts = panel.docPanel.rangesFor(focus);
      var h = new Highlight();
      parts.forEach(function (x) { h.add(x[1]); });
      CSS.highlights.set("evidence-focus", h);
      if (parts.length) panel.docPanel.scrollToRange(parts[0][1], panel.docPanel.nodes()[parts[0][0]]);
    }
  }

  /* The located quotes, in the list's order: the n-th "Show" button is the n-th span. */
  list.querySelectorAll(".show-quote").forEach(function (button, n) {
    button.addEventListener("click", function () { paint(spans[n]); });
  });
  panel.addEventListener("document-ready", function () { ready = true; paint(spans[0]); });
})();
