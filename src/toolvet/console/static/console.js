// toolvet console: keep the pending-calls list current without a reload.
// Without JavaScript the page still works: reload it to see new calls.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource) { return; }
  var busy = false, again = false;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("calls"), count = doc.getElementById("calls-count");
        if (fresh) { document.getElementById("calls").replaceWith(fresh); }
        if (count) { document.getElementById("calls-count").textContent = count.textContent; }
      })
      .catch(function () { live.textContent = "Live updates paused; reload to see new calls."; })
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  var source = new EventSource(live.getAttribute("data-events"));
  source.addEventListener("open", function () { live.textContent = "Live: new calls appear here."; live.classList.add("on"); });
  source.addEventListener("error", function () { live.textContent = "Reconnecting…"; live.classList.remove("on"); });
  ["tool-call-pending", "tool-call-decided"].forEach(function (kind) { source.addEventListener(kind, refresh); });
})();
