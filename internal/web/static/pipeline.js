// A running pipeline's page: poll its JSON view every few seconds, set
// the badges of the pipeline, its stages and its jobs to what it says,
// and stop when the pipeline is done. A job the page does not show yet
// (a retry, a new child) reloads the page. The page works without this
// script: it shows the statuses of when it was loaded.
"use strict";
(function () {
  var graph = document.getElementById("pipeline-graph");
  if (!graph || graph.getAttribute("data-following") !== "true") return;
  var url = graph.getAttribute("data-json-url");
  var note = document.querySelector('[data-testid="pipeline-following"]');
  var interval = 3000;
  function setBadge(badge, status, label) {
    if (!badge) return;
    badge.className = "ci-status ci-" + status;
    badge.setAttribute("data-status", status);
    badge.title = label;
    badge.lastChild.textContent = label;
  }
  function update(p) {
    setBadge(document.querySelector('[data-testid="pipeline-heading"] [data-testid="ci-status"]'), p.status, p.status_label);
    var took = document.querySelector('[data-testid="pipeline-took"]');
    if (took && p.duration) {
      took.hidden = false;
      took.querySelector('[data-testid="pipeline-duration"]').textContent = p.duration;
    }
    (p.stages || []).forEach(function (s) {
      graph.querySelectorAll("section.ci-stage").forEach(function (el) {
        if (el.getAttribute("data-stage") !== s.name) return;
        el.setAttribute("data-status", s.status);
        setBadge(el.querySelector("h3 [data-testid='ci-status']"), s.status, s.status_label);
      });
    });
    var missing = false;
    (p.jobs || []).forEach(function (j) {
      var li = graph.querySelector('li[data-job-id="' + j.id + '"]');
      if (!li) { missing = true; return; }
      li.setAttribute("data-status", j.status);
      setBadge(li.querySelector("[data-testid='ci-status']"), j.status, j.status_label);
      var d = li.querySelector("[data-testid='job-duration']");
      if (d && j.duration) d.textContent = j.duration;
    });
    return missing;
  }
  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (p) {
        if (update(p)) { window.location.reload(); return; }
        if (p.complete) {
          graph.removeAttribute("data-following");
          graph.setAttribute("data-complete", "true");
          if (note) note.textContent = "The pipeline finished: " + p.status_label + ".";
          var cancel = document.querySelector('[data-testid="pipeline-cancel"]');
          if (cancel) cancel.closest("form").remove();
          return;
        }
        setTimeout(poll, interval);
      })
      .catch(function () { setTimeout(poll, 2 * interval); });
  }
  setTimeout(poll, interval);
})();
