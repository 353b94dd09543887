/* The authoring page: write instruction/answer pairs, mark evidence by selecting document text.
   Offsets are code points in the shown text (as Python counts them); every text goes in through
   textContent; highlights are DOM ranges, never markup. */
(function () {
  "use strict";

  var panel = document.getElementById("doc-panel");
  var side = document.getElementById("author-panel");
  if (!panel || !side) return;
  var csrfToken = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  var form = document.getElementById("pair-form");
  var instructionEl = document.getElementById("pair-instruction");
  var answerEl = document.getElementById("pair-answer");
  var evidenceList = document.getElementById("evidence-list");
  var addEvidence = document.getElementById("add-evidence");
  var statusEl = document.getElementById("pair-status");
  var listEl = document.getElementById("pair-list");
  var noPairs = document.getElementById("no-pairs");
  var heading = document.getElementById("author-heading");
  var cancelEdit = document.getElementById("cancel-edit");
  var pairs = JSON.parse(document.getElementById("pairs-data").textContent);
  var draft = [];        // evidence of the pair being written: {start, end, quote}
  var editing = null;    // the pair being edited, or null for a new one
  var ready = false;
  var canHighlight = typeof CSS !== "undefined" && CSS.highlights && typeof Highlight === "function";

  function cpLength(text) { return panel.docPanel.cpLength(text); }

  function segs() { return panel.docPanel.segments(); }

  /* The shown text between two code-point offsets, rebuilt from segments and the gaps between them. */
  function shownSlice(start, end) {
    var out = "";
    var list = segs();
    for (var i = 0; i < list.length; i++) {
      var piece = list[i][0] + (list[i][3] || "");
      var from = list[i][2], to = from + cpLength(piece);
      if (to <= start || from >= end) continue;
      var chars = Array.from(piece).slice(Math.max(0, start - from), Math.min(to, end) - from);
      out += chars.join("");
    }
    return out;
  }

  function pointOffset(container, offset) {
    var element = container.nodeType === 3 ? container.parentNode : container;
    var p = element && element.closest ? element.closest("p.doc-seg") : null;
    var nodes = panel.docPanel.nodes();
    var index = nodes.indexOf(p);
    if (index < 0) return null;
    var range = document.createRange();
    range.setStart(p, 0);
    range.setEnd(container, offset);
    var text = segs()[index][0];
    return segs()[index][2] + cpLength(text.slice(0, range.toString().length));
  }

  function rangesFor(span) { return panel.docPanel.rangesFor(span); }

  function paint(focus) {
    if (!canHighlight || !ready) return;
    var all = new Highlight();
    pairs.forEach(function (pair) { pair.evidence.forEach(function (s) { rangesFor(s).forEach(function (x) { all.add(x[1]); }); }); });
    draft.forEach(function (s) { rangesFor(s).forEach(function (x) { all.add(x[1]); }); });
    CSS.highlights.set("evidence", all);
    if (focus) {
      var parts = rangesFor(focus);
      var h = new Highlight();
      parts.forEach(function (x) { h.add(x[1]); });
      CSS.highlights.set("evidence-focus", h);
      if (parts.length) panel.docPanel.scrollToRange(parts[0][1], panel.docPanel.nodes()[parts[0][0]]);
    }
  }

  function say(text, isError) {
    statusEl.textContent = text;
    statusEl.className = "save-status" + (isError ? " error" : " ok");
  }

  function quoteItem(span, removable) {
    var li = document.createElement("li");
    var q = document.createElement("span");
    q.className = "evidence-quote";
    q.textContent = "“" + span.quote + "”";
    li.appendChild(q);
    var show = document.createElement("button");
    show.type = "button"; show.className = "button small"; show.textContent = "Show";
    show.setAttribute("aria-label", "Show this evidence in the document");
    show.addEventListener("click", function () { paint(span); });
    li.appendChild(show);
    if (removable) {
      var remove = document.createElement("button");
      remove.type = "button"; remove.className = "button small"; remove.textContent = "Remove";
      remove.addEventListener("click", function () { draft = draft.filter(function (s) { return s !== span; }); renderDraft(); });
      li.appendChild(remove);
    }
    return li;
  }

  function renderDraft() {
    evidenceList.textContent = "";
    draft.forEach(function (span) { evidenceList.appendChild(quoteItem(span, true)); });
    paint();
  }

  function renderPairs() {
    listEl.textContent = "";
    noPairs.hidden = pairs.length > 0;
    pairs.forEach(function (pair) {
      var li = document.createElement("li");
      li.dataset.pairId = pair.id;
      var q = document.createElement("p"); q.className = "pair-instruction"; q.textContent = pair.instruction;
      var a = document.createElement("p"); a.className = "prose pair-answer"; a.textContent = pair.answer;
      var meta = document.createElement("p"); meta.className = "pair-meta";
      meta.textContent = "by " + pair.author + " · " + pair.created_at.replace("T", " ").slice(0, 16)
        + (pair.updated_by ? " · edited by " + pair.updated_by + " " + pair.updated_at.replace("T", " ").slice(0, 16) : "")
        + " · " + pair.evidence.length + " evidence span" + (pair.evidence.length === 1 ? "" : "s");
      var ul = document.createElement("ul"); ul.className = "evidence-list";
      pair.evidence.forEach(function (s) { ul.appendChild(quoteItem(s, false)); });
      var actions = document.createElement("div"); actions.className = "pair-actions";
      var edit = document.createElement("button");
      edit.type = "button"; edit.className = "button small"; edit.textContent = "Edit";
      edit.addEventListener("click", function () { startEdit(pair); });
      var del = document.createElement("button");
      del.type = "button"; del.className = "button small danger"; del.textContent = "Delete";
      del.addEventListener("click", function () { remove(pair); });
      actions.appendChild(edit); actions.appendChild(del);
      [q, a, meta, ul, actions].forEach(function (el) { li.appendChild(el); });
      listEl.appendChild(li);
    });
    paint();
  }

  function startEdit(pair) {
    editing = pair;
    instructionEl.value = pair.instruction;
    answerEl.value = pair.answer;
    draft = pair.evidence.map(function (s) { return { start: s.start, end: s.end, quote: s.quote }; });
    heading.textContent = "Edit pair";
    cancelEdit.hidden = false;
    renderDraft();
    instructionEl.focus();
  }

  function reset() {
    editing = null;
    instructionEl.value = ""; answerEl.value = "";
    draft = [];
    heading.textContent = "New pair";
    cancelEdit.hidden = true;
    renderDraft();
  }

  function send(method, url, body) {
    return fetch(url, {
      method: method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return { error: "the server answered " + response.status }; })
        .then(function (data) { return { status: response.status, data: data }; });
    });
  }

  function pairUrl(id) { return side.dataset.pairUrl.replace(/0$/, String(id)); }

  function replacePair(fresh) {
    pairs = pairs.map(function (p) { return p.id === fresh.id ? fresh : p; });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!instructionEl.value.trim()) { say("Write the instruction first.", true); instructionEl.focus(); return; }
    if (!answerEl.value.trim()) { say("Write the answer first.", true); answerEl.focus(); return; }
    var body = { instruction: instructionEl.value, answer: answerEl.value, evidence: draft };
    var request = editing
      ? send("POST", pairUrl(editing.id), Object.assign({ version: editing.version }, body))
      : send("POST", side.dataset.createUrl, body);
    say("Saving…");
    request.then(function (result) {
      if (result.status === 200 || result.status === 201) {
        if (editing) replacePair(result.data.pair); else pairs.push(result.data.pair);
        reset(); renderPairs();
        say("Saved.");
      } else if (result.status === 409) {
        if (result.data.pair) replacePair(result.data.pair);
        else pairs = pairs.filter(function (p) { return !editing || p.id !== editing.id; });
        renderPairs();
        say(result.data.error, true);
      } else {
        say(result.data.error || "Not saved.", true);
      }
    }).catch(function () { say("Not saved: the server could not be reached. Try again.", true); });
  });

  function remove(pair) {
    if (!window.confirm("Delete this pair? Its question goes too, unless a model has answered it.")) return;
    send("POST", pairUrl(pair.id) + "/delete", { version: pair.version }).then(function (result) {
      if (result.status === 200) {
        pairs = pairs.filter(function (p) { return p.id !== pair.id; });
        if (editing && editing.id === pair.id) reset();
        renderPairs(); say("Deleted.");
      } else {
        if (result.data.pair) replacePair(result.data.pair);
        renderPairs(); say(result.data.error || "Not deleted.", true);
      }
    });
  }

  addEvidence.addEventListener("click", function () {
    var selection = window.getSelection();
    if (!ready || !selection || selection.isCollapsed || !selection.rangeCount) {
      say("Select some text in the document first.", true); return;
    }
    var range = selection.getRangeAt(0);
    var start = pointOffset(range.startContainer, range.startOffset);
    var end = pointOffset(range.endContainer, range.endOffset);
    if (start === null || end === null || end <= start) { say("Select text inside the document.", true); return; }
    draft.push({ start: start, end: end, quote: shownSlice(start, end) });
    selection.removeAllRanges();
    renderDraft();
    say("Evidence added; save the pair to keep it.");
  });

  cancelEdit.addEventListener("click", reset);
  panel.addEventListener("document-ready", function () { ready = true; panel.docPanel.nodes(); renderPairs(); });
  renderPairs();
})();
