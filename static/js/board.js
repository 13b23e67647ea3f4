// The board's column chooser: ticking a column off hides it (a class on the table), remembered in this
// browser's localStorage. Without JavaScript every column shows.
(function () {
  "use strict";
  var KEY = "mleportal.board.hiddenColumns";
  function start() {
    var table = document.getElementById("board");
    var chooser = document.getElementById("column-chooser");
    if (!table || !chooser) return;
    var hidden = [];
    try {
      var stored = JSON.parse(window.localStorage.getItem(KEY) || "[]");
      if (Array.isArray(stored)) hidden = stored.filter(function (c) { return typeof c === "string"; });
    } catch (e) { hidden = []; }
    var boxes = chooser.querySelectorAll("input[data-col]");
    function apply() {
      boxes.forEach(function (box) {
        var off = hidden.indexOf(box.dataset.col) >= 0;
        box.checked = !off;
        table.classList.toggle("hide-" + box.dataset.col, off);
      });
      var summary = chooser.querySelector("summary");
      if (summary) summary.textContent = hidden.length ? "Columns (" + hidden.length + " hidden)" : "Columns";
    }
    function save() {
      try { window.localStorage.setItem(KEY, JSON.stringify(hidden)); } catch (e) { /* private mode: not kept */ }
    }
    chooser.addEventListener("change", function (event) {
      var col = event.target.dataset && event.target.dataset.col;
      if (!col) return;
      hidden = hidden.filter(function (c) { return c !== col; });
      if (!event.target.checked) hidden.push(col);
      save();
      apply();
    });
    var reset = document.getElementById("columns-reset");
    if (reset) reset.addEventListener("click", function () { hidden = []; save(); apply(); });
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
