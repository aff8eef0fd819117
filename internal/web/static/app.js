// Quarry's pages work without this script; it adds copy buttons.
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest ? ev.target.closest("button.copy") : null;
  if (!b || !navigator.clipboard) return;
  navigator.clipboard.writeText(b.getAttribute("data-copy") || "").then(function () {
    var was = b.textContent;
    b.textContent = "Copied";
    setTimeout(function () { b.textContent = was; }, 1500);
  });
});
