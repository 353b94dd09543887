/* The question page's frame: the work bar stays put and only the two panels scroll.

   The workspace is a fixed frame whose panels scroll; the window itself must never scroll, or the
   work bar slides out of view with no scroll bar to bring it back. scrollIntoView() and a plain
   focus() scroll every ancestor, the window included, so elements are brought into view by
   scrolling their pane alone. */
(function () {
  "use strict";

  const pane = document.getElementById("score-panel");
  if (!pane) return;
  function paneScrolls() { return getComputedStyle(pane).overflowY !== "visible"; }

  /* Bring an element of the answers' pane into view: "start" puts it at the top, "nearest" moves least. */
  function reveal(element, block) {
    if (!paneScrolls()) { element.scrollIntoView({ block: block }); return; }  // narrow screens: the page scrolls
    const margin = parseFloat(getComputedStyle(pane).scrollPaddingTop) || 0;
    const box = element.getBoundingClientRect();
    const frame = pane.getBoundingClientRect();
    if (block === "start") {
      pane.scrollTop += box.top - frame.top - margin;
    } else if (box.top < frame.top + margin) {
      pane.scrollTop += box.top - frame.top - margin;
    } else if (box.bottom > frame.bottom) {
      pane.scrollTop += Math.min(box.bottom - frame.bottom + margin, box.top - frame.top - margin);
    }
  }

  function keepWindowStill() {
    if (!paneScrolls()) return;
    const root = document.scrollingElement || document.documentElement;
    if (root.scrollTop || root.scrollLeft) root.scrollTo(0, 0);
    if (document.body.scrollTop) document.body.scrollTop = 0;
  }
  // A last guard: anything else that scrolls the window (the browser revealing a focused control) is undone.
  window.addEventListener("scroll", keepWindowStill);

  window.levalReveal = reveal;
})();
