/* The question page: autosave of scores and comments, keyboard shortcuts, navigation guard.
   A save that fails is retried with backoff and the status says what failed; nothing is dropped.
   When the server answers `reload: true` (the page no longer matches the round or the answers, or its
   security token is stale), retrying cannot help: saving stops, the choices stay on screen, and the
   status offers a reload. */
(function () {
  "use strict";

  const bar = document.getElementById("workbar");
  if (!bar) return;
  const csrfToken = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
  const saveUrl = bar.dataset.saveUrl;
  const questionId = Number(bar.dataset.questionId);
  const studyId = Number(bar.dataset.study);
  const roundNumber = Number(bar.dataset.round);
  const statusEl = document.getElementById("save-status");
  const answers = Array.prototype.slice.call(document.querySelectorAll(".answer"));
  const COMMENT_DELAY = 700;
  const MAX_BACKOFF = 30;
  // Unsaved comments are kept in this browser until the server has them: a reload, a crash or a
  // sign-out loses nothing. Keyed by the exact answer text, so a draft never lands on other text.
  const DRAFT_PREFIX = "leval-draft:" + bar.dataset.user + ":" + studyId + ":" + questionId + ":";

  /* ---- State: what the annotator chose, and what the server has acknowledged ---- */
  const states = {};
  answers.forEach(function (el) {
    const checked = el.querySelector(".score-radio:checked");
    const comment = el.querySelector(".comment");
    const value = checked ? Number(checked.value) : null;
    const text = comment ? comment.value : "";
    states[el.dataset.label] = {
      el: el, label: el.dataset.label, answer: el.dataset.answer, value: value, comment: text,
      saved: { value: value, comment: text.trim() },
      inflight: false, timer: null, attempt: 0, error: null,
      seconds: null,  // active seconds on the question when the annotator last changed this answer
    };
  });
  let savedOnce = false;
  let reloadReason = null;       // the server's message once it asked for a reload; no save is sent after
  let leavingOnPurpose = false;  // the annotator chose to reload: no "leave the page?" prompt

  // Taken when the annotator changes something, not when the save is sent: a retry must not add the wait.
  function stamp(s) { if (window.levalActiveSeconds) s.seconds = window.levalActiveSeconds(); }  // activetime.js

  function each(fn) { Object.keys(states).forEach(function (k) { fn(states[k]); }); }
  // A score chosen or cleared (value null) that the server does not have yet; a comment rides with a score.
  function isDirty(s) {
    return s.value !== s.saved.value || (s.value !== null && s.comment.trim() !== s.saved.comment);
  }
  function commentWaiting(s) {
    return s.value === null && s.comment.trim() !== "" && s.comment.trim() !== s.saved.comment;
  }
  function hasUnsaved() {
    let pending = false;
    each(function (s) { if (s.inflight || isDirty(s) || commentWaiting(s)) pending = true; });
    return pending;
  }

  function draftKey(s) { return DRAFT_PREFIX + s.label + ":" + s.answer; }
  function keepDraft(s) {
    try {
      if (s.comment.trim() !== s.saved.comment) localStorage.setItem(draftKey(s), s.comment);
      else localStorage.removeItem(draftKey(s));
    } catch (e) { /* storage full or disabled: the server copy is still the one that counts */ }
  }
  function readDraft(s) {
    try { return localStorage.getItem(draftKey(s)); } catch (e) { return null; }
  }

  function setStatus(text, kind) {
    statusEl.textContent = text;
    statusEl.dataset.kind = kind || "";
  }

  function refreshStatus() {
    if (reloadReason) return;  // the reload message stays until the annotator reloads
    let failing = null, busy = false, waiting = null;
    each(function (s) {
      if (s.error && !failing) failing = s;
      if (s.inflight || (isDirty(s) && !s.error)) busy = true;
      if (commentWaiting(s) && !waiting) waiting = s;
    });
    if (failing) {
      setStatus("Could not save Answer " + failing.label + ": " + failing.error + ". Retrying in " + failing.retryIn + " s…", "error");
    } else if (busy) {
      setStatus("Saving…", "busy");
    } else if (waiting) {
      setStatus("Your comment on Answer " + waiting.label + " is saved once you give it a score.", "warn");
    } else if (savedOnce) {
      setStatus("Saved", "ok");
    } else {
      setStatus("", "");
    }
  }

  function showReload() {
    statusEl.textContent = reloadReason + " Your unsaved choices stay visible until then. ";
    statusEl.dataset.kind = "error";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button small";
    button.textContent = "Reload the page";
    button.addEventListener("click", function () {
      leavingOnPurpose = true;
      window.location.reload();
    });
    statusEl.appendChild(button);
  }

  function stopSaving(s, data) {
    if (reloadReason) return;
    const error = (data.error || "This page is out of date. Reload the page.").trim();
    reloadReason = "Answer " + s.label + " was not saved. " + error + (/[.!?]$/.test(error) ? "" : ".");
    each(function (other) {
      clearTimeout(other.timer);
      other.timer = null;
      if (isDirty(other)) markUnsaved(other);
    });
    showReload();
  }

  function describeFailure(response, data) {
    if (data && data.error) return data.error.replace(/\.$/, "");
    if (response.status === 401) return "you are signed out; sign in again in another tab";
    if (response.status === 403) return "you are not allowed to score here";
    return "the server answered " + response.status;
  }

  function schedule(s, delay) {
    clearTimeout(s.timer);
    s.timer = setTimeout(function () { s.timer = null; send(s); }, delay);
  }

  function send(s) {
    if (reloadReason) { if (isDirty(s)) markUnsaved(s); return; }  // the status already asks for a reload
    if (s.inflight) return;           // the running save resends when it ends
    if (!isDirty(s)) { refreshStatus(); return; }
    clearTimeout(s.timer);
    s.timer = null;
    s.inflight = true;
    refreshStatus();
    const sent = { study: studyId, question_id: questionId, round: roundNumber, label: s.label, answer: s.answer,
                   comment: s.comment };
    if (s.value === null) sent.clear = true;  // the same save, access rules and revision trail as a score
    else sent.value = s.value;
    if (s.seconds !== null) sent.seconds = s.seconds;
    let response = null;
    fetch(saveUrl, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrfToken },
      body: JSON.stringify(sent),
    })
      .then(function (r) { response = r; return r.json().catch(function () { return null; }); })
      .then(function (data) {
        if (!response.ok && data && data.reload === true) {
          s.inflight = false;
          stopSaving(s, data);
          return;
        }
        if (!response.ok || !data || !data.saved) throw new Error(describeFailure(response, data));
        s.inflight = false;
        s.saved = { value: data.value, comment: data.comment };
        keepDraft(s);
        s.attempt = 0;
        s.error = null;
        savedOnce = true;
        showProgress(data);
        markScored(s);
        if (isDirty(s)) { send(s); return; }   // changed again while this save ran
        refreshStatus();
      })
      .catch(function (error) {
        s.inflight = false;
        s.attempt += 1;
        s.retryIn = Math.min(MAX_BACKOFF, Math.pow(2, s.attempt));
        s.error = response ? error.message : "the server could not be reached";
        markUnsaved(s);
        refreshStatus();
        schedule(s, s.retryIn * 1000);
      });
  }

  function flushAll() { each(function (s) { if (isDirty(s) && !s.inflight) send(s); }); }

  /* ---- What the page shows after a save ---- */
  function showProgress(data) {
    const count = document.getElementById("progress-count");
    const fill = document.getElementById("progress-bar");
    if (count && data.progress) count.textContent = data.progress.done + " of " + data.progress.total;
    if (fill && data.progress && data.progress.total) fill.style.width = (100 * data.progress.done / data.progress.total).toFixed(1) + "%";
    const item = document.querySelector('.qlist-item[data-question="' + questionId + '"]');
    if (item && data.question) {
      const scored = data.question.scored;
      const done = scored >= data.question.total;
      item.classList.toggle("is-done", done);
      item.classList.toggle("is-partial", !done && scored > 0);
      // The same marks and words as templates/annotate/_question_list.html.
      item.querySelector(".qlist-mark").textContent = done ? "✓" : scored > 0 ? "◐" : "○";
      item.querySelector(".qlist-state").textContent = done ? "done" : scored > 0 ? scored + " of " + data.question.total : "not started";
      showDocumentCount(item);
    }
  }

  // The document's "n of m done" beside its title counts its questions marked done in the menu.
  function showDocumentCount(item) {
    const section = item.closest(".qlist-doc");
    const count = section && section.querySelector(".qlist-count");
    if (!count) return;
    const items = section.querySelectorAll(".qlist-item");
    const done = section.querySelectorAll(".qlist-item.is-done");
    count.textContent = done.length + " of " + items.length + " done";
  }

  function markScored(s) {
    const scored = s.saved.value !== null;
    s.el.classList.toggle("is-scored", scored);
    s.el.classList.remove("is-unsaved");
    const badge = s.el.querySelector("[data-state]");
    if (badge) badge.textContent = scored ? "Scored " + s.saved.value : "Not scored";
    const clearButton = s.el.querySelector("[data-clear]");
    if (clearButton) clearButton.disabled = s.value === null;
    const jump = document.querySelector('.jump[data-jump="' + s.label + '"]');
    if (jump && !scored) {
      jump.classList.remove("is-scored");
      jump.setAttribute("aria-label", "Answer " + s.label + ", not scored");
      const value = jump.querySelector(".jump-value");
      if (value) value.remove();
    } else if (jump) {
      jump.classList.add("is-scored");
      jump.setAttribute("aria-label", "Answer " + s.label + ", scored " + s.saved.value);
      let value = jump.querySelector(".jump-value");
      if (!value) {
        value = document.createElement("span");
        value.className = "jump-value";
        value.setAttribute("aria-hidden", "true");
        jump.appendChild(value);
      }
      value.textContent = String(s.saved.value);
    }
  }

  function markUnsaved(s) {
    s.el.classList.add("is-unsaved");
    const badge = s.el.querySelector("[data-state]");
    if (badge) badge.textContent = "Not saved yet";
  }

  /* ---- Inputs ---- */
  answers.forEach(function (el) {
    const s = states[el.dataset.label];
    el.addEventListener("change", function (event) {
      if (!event.target.classList.contains("score-radio")) return;
      remember(s);
      s.value = Number(event.target.value);
      stamp(s);
      send(s);
    });
    const clearButton = el.querySelector("[data-clear]");
    if (clearButton) clearButton.addEventListener("click", function () { clearScore(s); focusAnswer(el); });
    const comment = el.querySelector(".comment");
    if (!comment) return;
    comment.addEventListener("input", function () {
      s.comment = comment.value;
      stamp(s);
      keepDraft(s);
      if (s.value === null) { refreshStatus(); return; }
      if (!s.inflight) schedule(s, COMMENT_DELAY);
      refreshStatus();
    });
    comment.addEventListener("change", function () { s.comment = comment.value; send(s); });
  });

  /* ---- Drafts left from an earlier visit: put them back, and save them where the answer has a score ---- */
  const restored = [];
  each(function (s) {
    const draft = readDraft(s);
    const box = s.el.querySelector(".comment");
    if (draft === null || !box || draft.trim() === s.saved.comment) return;
    box.value = draft;
    s.comment = draft;
    const details = s.el.querySelector(".comment-box");
    if (details) details.open = true;
    restored.push(s.label);
  });
  if (restored.length) {
    setStatus("Restored your unsaved comment on Answer " + restored.join(", ") + ".", "warn");
    flushAll();
  }

  /* ---- Clearing and undo: a mis-keyed score can be taken back ---- */
  const undoStack = [];  // {label, value}: what an answer's score was before each change on this page

  function remember(s) { undoStack.push({ label: s.label, value: s.value }); }

  function setValue(s, value) {
    Array.prototype.forEach.call(s.el.querySelectorAll(".score-radio"), function (radio) {
      radio.checked = value !== null && Number(radio.value) === value;
    });
    s.value = value;
    const clearButton = s.el.querySelector("[data-clear]");
    if (clearButton) clearButton.disabled = value === null;
    stamp(s);
    send(s);
  }

  function clearScore(s) {
    if (s.value === null) return;
    remember(s);
    setValue(s, null);
  }

  function undo() {
    const last = undoStack.pop();
    if (!last) return false;
    const s = states[last.label];
    setValue(s, last.value);
    focusAnswer(s.el);
    return true;
  }

  function choose(answer, value) {
    const radio = answer.querySelector('.score-radio[value="' + value + '"]');
    if (!radio || radio.checked) return;
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
  }

  const reveal = window.levalReveal;  // workspace.js: scrolls the answers' pane, never the window

  /* The current answer: the one the keys score. It has the focus, or had it last while the focus has
     since dropped to the page itself (a click on plain text), so the mark a person sees is always the
     answer a digit scores. The answers' index at the top of the pane marks it too, in view on arrival. */
  let current = null;
  function markCurrent(answer) {
    current = answer;
    answers.forEach(function (a) { a.classList.toggle("is-current", a === answer); });
    Array.prototype.forEach.call(document.querySelectorAll(".jump[data-jump]"), function (link) {
      if (answer && link.dataset.jump === answer.dataset.label) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    });
  }

  function focusAnswer(answer) {
    markCurrent(answer);
    answer.focus({ preventScroll: true });
    reveal(answer, "start");
  }

  function focusComment(answer) {
    const box = answer.querySelector(".comment-box");
    if (!box) return false;
    box.open = true;
    const textarea = box.querySelector("textarea");
    textarea.focus({ preventScroll: true });
    reveal(textarea, "nearest");
    return true;
  }

  function move(from, step) {
    if (!answers.length) return;
    let index = answers.indexOf(from);
    if (index < 0) index = step > 0 ? -1 : answers.length;
    focusAnswer(answers[Math.max(0, Math.min(answers.length - 1, index + step))]);
  }

  Array.prototype.forEach.call(document.querySelectorAll(".jump[data-jump]"), function (link) {
    link.addEventListener("click", function (event) {
      const target = document.getElementById("answer-" + link.dataset.jump);
      if (!target) return;
      event.preventDefault();
      focusAnswer(target);
    });
  });

  document.addEventListener("focusin", function (event) {
    markCurrent(event.target.closest ? event.target.closest(".answer") : null);
  });

  /* On arrival (first load, n/p, a resume, a reload) the first answer takes the keys: a score typed
     straight away scores Answer A, and j moves on from there. Always the first in this annotator's own
     shuffled order, so nothing about the systems decides it. Focused without scrolling, so the question
     and the references stay in view; a text box or control the annotator reached while the page was
     still loading keeps the focus. */
  if (answers.length && (!document.activeElement || document.activeElement === document.body)) {
    markCurrent(answers[0]);
    answers[0].focus({ preventScroll: true });
  }

  /* ---- Keyboard ---- */
  const dialog = document.getElementById("shortcuts-dialog");
  function showShortcuts() { if (dialog && !dialog.open) dialog.showModal(); }
  document.getElementById("shortcuts-button").addEventListener("click", showShortcuts);

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || (dialog && dialog.open)) return;
    const target = event.target;
    const typing = target.matches("textarea, input[type=search], input[type=text], select, [contenteditable]");
    if ((event.ctrlKey || event.metaKey) && !event.shiftKey && !event.altKey && event.key.toLowerCase() === "z") {
      if (!typing && undo()) event.preventDefault();  // in a text box, Ctrl+Z stays the box's own undo
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    // Focus on the page itself (after a click on plain text): the keys go to the answer still marked current.
    const answer = (target.closest ? target.closest(".answer") : null) || (target === document.body ? current : null);
    if (typing) {
      if (event.key === "Escape" && answer) { event.preventDefault(); focusAnswer(answer); }
      return;
    }
    const inDocument = target.closest && target.closest(".doc-panel");
    const key = event.key;
    if (key === "?") { event.preventDefault(); showShortcuts(); return; }
    if (key === "/") {
      event.preventDefault();
      const find = document.getElementById("doc-find-input");
      find.focus({ preventScroll: true });
      find.select();  // typing replaces the last search instead of appending to it
      return;
    }
    // Single letters without modifiers: Ctrl/Alt/Meta chords stay the browser's, and a screen
    // reader in browse mode keeps its own letter keys (it does not pass them to the page).
    if (key === "n" || key === "p") {
      const link = document.getElementById(key === "n" ? "next-question" : "previous-question");
      if (link) { event.preventDefault(); link.click(); }  // the link's own handler saves first
      return;
    }
    if (answer && key.length === 1 && key >= "1" && key <= "5") { event.preventDefault(); choose(answer, key); return; }
    if (answer && (key === "0" || key === "Backspace" || key === "Delete")) {
      event.preventDefault();
      clearScore(states[answer.dataset.label]);
      return;
    }
    if (answer && key === "c") {
      if (focusComment(answer)) event.preventDefault();
      return;
    }
    if (key === "j" || key === "k") { event.preventDefault(); move(answer, key === "j" ? 1 : -1); return; }
    // Arrows move between answers, except where they scroll the document; Left/Right stay with the radios.
    if ((key === "ArrowDown" || key === "ArrowUp") && !inDocument && (answer || target === document.body)) {
      event.preventDefault();
      move(answer, key === "ArrowDown" ? 1 : -1);
    }
  });

  /* ---- References: an annotator who folds one away keeps it folded on the next question ---- */
  Array.prototype.forEach.call(document.querySelectorAll("details.reference"), function (details) {
    const key = "leval-reference-open:" + details.dataset.reference;
    try { if (localStorage.getItem(key) === "0") details.open = false; } catch (e) { /* storage disabled */ }
    details.addEventListener("toggle", function () {
      try { localStorage.setItem(key, details.open ? "1" : "0"); } catch (e) { /* storage disabled */ }
    });
  });

  /* ---- Question list popover: close on Escape or a click elsewhere ---- */
  const menu = document.getElementById("qlist-menu");
  if (menu) {
    document.addEventListener("click", function (event) { if (menu.open && !menu.contains(event.target)) menu.open = false; });
    menu.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && menu.open) { menu.open = false; menu.querySelector("summary").focus(); }
    });
  }

  /* ---- Never leave with unsaved work: save first, or warn ---- */
  function waitForSaves(timeoutMs) {
    return new Promise(function (resolve) {
      const started = Date.now();
      (function poll() {
        if (!hasUnsaved()) return resolve(true);
        if (Date.now() - started > timeoutMs) return resolve(false);
        setTimeout(poll, 60);
      })();
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("a[data-nav]"), function (link) {
    link.addEventListener("click", function (event) {
      if (reloadReason || !hasUnsaved()) return;  // nothing more can be saved: the browser asks before leaving
      event.preventDefault();
      flushAll();
      refreshStatus();
      waitForSaves(4000).then(function (ok) {
        if (ok) { window.location.href = link.href; return; }
        let waiting = null;
        each(function (s) { if (commentWaiting(s) && !waiting) waiting = s; });
        if (waiting) {
          setStatus("Answer " + waiting.label + " has a comment but no score: score it or clear the comment before leaving.", "warn");
        }
      });
    });
  });

  window.addEventListener("beforeunload", function (event) {
    if (leavingOnPurpose || !hasUnsaved()) return;
    flushAll();
    event.preventDefault();
    event.returnValue = "";
  });
})();
