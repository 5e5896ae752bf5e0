// toolvet console: the "select every tool on this page" box of a list with bulk actions.
// Without JavaScript each tool's box is ticked by hand; the bulk form works the same.
(function () {
  "use strict";
  var all = document.getElementById("select-all");
  if (!all) { return; }
  all.addEventListener("change", function () {
    document.querySelectorAll("input.select").forEach(function (box) { box.checked = all.checked; });
  });
})();
