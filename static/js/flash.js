// A form that redirects to a section (#systems) scrolls the page past the messages at the top:
// move them under that section's heading, so the confirmation is read where the form was.
(function () {
  "use strict";
  var flashes = document.querySelector(".flashes");
  var id = decodeURIComponent(window.location.hash.slice(1));
  var target = id && document.getElementById(id);
  if (!flashes || !target) return;
  var heading = target.querySelector("h1, h2, h3");
  if (heading && heading.parentNode) {
    heading.insertAdjacentElement("afterend", flashes);
  } else {
    target.insertBefore(flashes, target.firstChild);
  }
  flashes.classList.add("flashes-in-section");
  // Stop the section just below the sticky top bar, so the bar covers neither its heading nor the message;
  // as scroll padding it also holds for the browser's own scroll to the #fragment, whenever that comes.
  var bar = document.querySelector(".topbar");
  var covered = bar && getComputedStyle(bar).position !== "static" ? bar.getBoundingClientRect().height : 0;
  document.documentElement.style.scrollPaddingTop = (covered + 8) + "px";
  target.scrollIntoView({block: "start"});
})();
