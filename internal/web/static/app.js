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

// A running job's log: poll trace.json from the page's offset, append
// what the log gained (each chunk inside the section open at its depth)
// and stop when the job is done.
(function () {
  var log = document.getElementById("job-log");
  if (!log || log.getAttribute("data-following") !== "true") return;
  var url = log.getAttribute("data-trace-url");
  var offset = log.getAttribute("data-offset") || "0";
  var state = log.getAttribute("data-state") || "";
  var note = document.querySelector(".job-following");
  function container(depth) {
    var el = log;
    for (var i = 0; i < depth; i++) {
      var last = el.lastElementChild;
      if (!last || !last.matches("details.log-section")) break;
      var body = last.querySelector(":scope > .section-body");
      if (!body) break;
      el = body;
    }
    return el;
  }
  function follow() {
    var atBottom = window.innerHeight + window.scrollY >= document.body.offsetHeight - 40;
    fetch(url + "?offset=" + encodeURIComponent(offset) + "&state=" + encodeURIComponent(state),
      { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (t) {
        if (t.reset) { window.location.reload(); return; }
        (t.chunks || []).forEach(function (c) { container(c.depth).insertAdjacentHTML("beforeend", c.html); });
        offset = String(t.offset);
        state = t.state;
        log.setAttribute("data-offset", offset);
        log.setAttribute("data-status", t.status);
        if (atBottom && t.chunks && t.chunks.length) window.scrollTo(0, document.body.scrollHeight);
        if (t.complete) {
          log.removeAttribute("data-following");
          log.setAttribute("data-complete", "true");
          if (note) note.textContent = "The job finished: " + t.status_label + ".";
          var badge = document.querySelector('[data-testid="job-heading"] [data-testid="ci-status"]');
          if (badge) {
            badge.className = "ci-status ci-" + t.status;
            badge.setAttribute("data-status", t.status);
            badge.title = t.status_label;
            badge.lastChild.textContent = t.status_label;
          }
          var cancel = document.querySelector('[data-testid="job-cancel"]');
          if (cancel) cancel.closest("form").remove();
          return;
        }
        setTimeout(follow, t.chunks && t.chunks.length && t.offset < t.size ? 0 : 500);
      })
      .catch(function () { setTimeout(follow, 3000); });
  }
  setTimeout(follow, 500);
})();
