/* The long-document panel: fetched on its own, rendered in batches, searchable.
   Text only ever goes in through textContent; highlights are DOM ranges, never markup. */
(function () {
  "use strict";

  const panel = document.getElementById("doc-panel");
  if (!panel) return;
  const body = document.getElementById("doc-body");
  const input = document.getElementById("doc-find-input");
  const countEl = document.getElementById("doc-find-count");
  const prevBtn = document.getElementById("doc-find-prev");
  const nextBtn = document.getElementById("doc-find-next");
  const storeKey = "leval-doc-scroll:" + panel.dataset.documentId;
  const FIRST_BATCH = 24;
  const BATCH = 60;

  let segments = [];   // [text, startsParagraph] from the server
  let nodes = [];      // the <p> element of each segment, once rendered
  let rendered = 0;
  let matches = [];    // [segmentIndex, start, end]
  let current = -1;
  const canHighlight = typeof CSS !== "undefined" && CSS.highlights && typeof Highlight === "function";
  let fallbackMark = null;

  function note(text, isError) {
    body.textContent = "";
    const p = document.createElement("p");
    p.className = "doc-note" + (isError ? " error" : "");
    p.textContent = text;
    body.appendChild(p);
    return p;
  }

  function renderUpTo(end) {
    end = Math.min(end, segments.length);
    if (rendered >= end) return;
    const fragment = document.createDocumentFragment();
    for (; rendered < end; rendered++) {
      const p = document.createElement("p");
      p.className = segments[rendered][1] ? "doc-seg" : "doc-seg cont";
      p.textContent = segments[rendered][0];
      nodes.push(p);
      fragment.appendChild(p);
    }
    body.appendChild(fragment);
    if (rendered === segments.length) body.setAttribute("aria-busy", "false");
  }

  function renderRest() {
    if (rendered >= segments.length) return;
    renderUpTo(rendered + BATCH);
    requestAnimationFrame(renderRest);
  }

  function renderAll() { renderUpTo(segments.length); }

  /* Remember the reading place per document, so moving between its questions keeps it. */
  function firstVisibleSegment() {
    const top = body.scrollTop;
    let lo = 0, hi = nodes.length - 1, found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (nodes[mid].offsetTop <= top) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found;
  }

  let saveQueued = false;
  function queueSavePlace() {
    if (saveQueued || !nodes.length) return;
    saveQueued = true;
    requestAnimationFrame(function () {
      saveQueued = false;
      const i = firstVisibleSegment();
      try {
        sessionStorage.setItem(storeKey, JSON.stringify({ i: i, off: body.scrollTop - nodes[i].offsetTop }));
      } catch (e) { /* storage full or disabled: the place is simply not kept */ }
    });
  }

  function restorePlace() {
    let saved = null;
    try { saved = JSON.parse(sessionStorage.getItem(storeKey) || "null"); } catch (e) { saved = null; }
    if (!saved || typeof saved.i !== "number" || saved.i <= 0) return;
    renderUpTo(saved.i + FIRST_BATCH);
    const node = nodes[Math.min(saved.i, nodes.length - 1)];
    body.scrollTop = node.offsetTop + (saved.off || 0);
  }

  function load() {
    note("Loading the document…");
    body.setAttribute("aria-busy", "true");
    fetch(panel.dataset.documentUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("the server answered " + response.status);
        return response.json();
      })
      .then(function (data) {
        segments = data.segments || [];
        body.textContent = "";
        nodes = [];
        rendered = 0;
        renderUpTo(FIRST_BATCH);
        restorePlace();
        requestAnimationFrame(renderRest);
        panel.dispatchEvent(new CustomEvent("document-ready", { bubbles: true }));
      })
      .catch(function (error) {
        const p = note("The document could not be loaded (" + error.message + "). ", true);
        const retry = document.createElement("button");
        retry.type = "button";
        retry.className = "button small";
        retry.textContent = "Try again";
        retry.addEventListener("click", load);
        p.appendChild(retry);
      });
  }

  /* ---- Find in document ---- */
  function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function rangeFor(match) {
    const node = nodes[match[0]].firstChild;
    const range = document.createRange();
    range.setStart(node, match[1]);
    range.setEnd(node, match[2]);
    return range;
  }

  function clearFallbackMark() {
    if (!fallbackMark) return;
    const parent = fallbackMark.parentNode;
    parent.replaceChild(document.createTextNode(fallbackMark.textContent), fallbackMark);
    parent.normalize();
    fallbackMark = null;
  }

  function clearHighlights() {
    if (canHighlight) { CSS.highlights.delete("doc-match"); CSS.highlights.delete("doc-current"); }
    clearFallbackMark();
  }

  function updateCount() {
    const query = input.value;
    if (!query) countEl.textContent = "";
    else if (!matches.length) countEl.textContent = "No matches";
    else countEl.textContent = (current + 1) + " of " + matches.length;
    prevBtn.disabled = nextBtn.disabled = matches.length === 0;
  }

  function scrollToRange(range, element) {
    let rect = range.getBoundingClientRect();
    if (!rect.height) {
      // Not laid out yet (content-visibility): bring its paragraph near first. Only this panel
      // scrolls; scrollIntoView would scroll the window too and push the page out of its frame.
      body.scrollTop = element.offsetTop - body.clientHeight / 3;
      rect = range.getBoundingClientRect();
    }
    const box = body.getBoundingClientRect();
    body.scrollTop += rect.top - box.top - box.height / 3;
  }

  function show(index) {
    if (!matches.length) { current = -1; updateCount(); return; }
    current = (index + matches.length) % matches.length;
    const match = matches[current];
    clearFallbackMark();
    let range = rangeFor(match);
    if (canHighlight) {
      CSS.highlights.set("doc-current", new Highlight(range));
    } else {
      fallbackMark = document.createElement("mark");
      fallbackMark.className = "doc-current";
      range.surroundContents(fallbackMark);
      range = document.createRange();
      range.selectNodeContents(fallbackMark);
    }
    scrollToRange(range, nodes[match[0]]);
    updateCount();
  }

  function search() {
    clearHighlights();
    matches = [];
    current = -1;
    const query = input.value;
    if (!query || !segments.length) { updateCount(); return; }
    renderAll();
    const pattern = new RegExp(escapeRegExp(query), "giu");
    for (let i = 0; i < nodes.length; i++) {
      const text = segments[i][0];
      pattern.lastIndex = 0;
      let m;
      while ((m = pattern.exec(text)) !== null) {
        matches.push([i, m.index, m.index + m[0].length]);
      }
    }
    if (canHighlight && matches.length) {
      const all = new Highlight();
      for (let j = 0; j < matches.length; j++) all.add(rangeFor(matches[j]));
      CSS.highlights.set("doc-match", all);
    }
    // Start from the reading place, not the top: the annotator is usually mid-document.
    const from = nodes.length ? firstVisibleSegment() : 0;
    const start = matches.findIndex(function (match) { return match[0] >= from; });
    show(start < 0 ? 0 : start);
  }

  let searchTimer = null;
  input.addEventListener("input", function () {
    clearTimeout(searchTimer);
    // Cleared when it fires: Enter after the search has run must move on, not search again.
    searchTimer = setTimeout(function () { searchTimer = null; search(); }, 160);
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      // Typed but not searched yet: search now, showing the first match from the reading place.
      if (searchTimer) { clearTimeout(searchTimer); searchTimer = null; search(); return; }
      show(current + (event.shiftKey ? -1 : 1));
    } else if (event.key === "Escape") {
      if (input.value) { input.value = ""; search(); event.stopPropagation(); }
      else { input.blur(); }
    }
  });
  document.getElementById("doc-find").addEventListener("submit", function (event) { event.preventDefault(); });
  prevBtn.addEventListener("click", function () { show(current - 1); });
  nextBtn.addEventListener("click", function () { show(current + 1); });
  body.addEventListener("scroll", queueSavePlace, { passive: true });

  /* A span of the shown text (code-point offsets, as Python counts them; the segments carry their
     start) as DOM ranges, one per paragraph it crosses: [index of the paragraph, range]. */
  function cpLength(text) { let n = 0; for (const ch of text) { n += ch ? 1 : 0; } return n; }
  function utf16Index(text, cps) {  // code points -> UTF-16 units
    let i = 0, n = 0;
    for (const ch of text) { if (n === cps) break; i += ch.length; n++; }
    return i;
  }

  function rangeAt(index, from, to) {
    const node = nodes[index];
    const text = segments[index][0];
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    const a = utf16Index(text, from), b = utf16Index(text, to), range = document.createRange();
    let seen = 0, started = false, t;
    while ((t = walker.nextNode())) {
      const len = t.data.length;
      if (!started && a <= seen + len) { range.setStart(t, a - seen); started = true; }
      if (started && b <= seen + len) { range.setEnd(t, b - seen); return range; }
      seen += len;
    }
    return null;
  }

  function rangesFor(span) {
    renderAll();
    const out = [];
    for (let i = 0; i < segments.length; i++) {
      const from = segments[i][2], to = from + cpLength(segments[i][0]);
      if (to <= span.start || from >= span.end) continue;
      const r = rangeAt(i, Math.max(span.start, from) - from, Math.min(span.end, to) - from);
      if (r) out.push([i, r]);
    }
    return out;
  }

  /* What other scripts on the page (the authoring page, a rater's quotes) may use: the segments as the
     server sent them (with any extra fields), their elements (all rendered), spans as ranges, and where
     the text scrolls. */
  panel.docPanel = {
    segments: function () { return segments; },
    nodes: function () { renderAll(); return nodes; },
    body: body,
    cpLength: cpLength,
    rangesFor: rangesFor,
    scrollToRange: function (range, element) { scrollToRange(range, element); }
  };

  updateCount();
  load();
})();
