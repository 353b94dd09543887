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
