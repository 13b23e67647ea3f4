// Draws the figures the page embeds as JSON (#figures) into their .plot boxes, with plotly.js served from
// our own static files. Without JavaScript the tables under each plot hold the same data.
(function () {
  "use strict";
  function draw() {
    var source = document.getElementById("figures");
    if (!source || typeof Plotly === "undefined") return;
    var figures = JSON.parse(source.textContent);
    document.querySelectorAll(".plot[data-figure]").forEach(function (box) {
      var figure = figures[box.dataset.figure];
      if (!figure) return;
      Plotly.newPlot(box, figure.data, figure.layout, {responsive: true, displaylogo: false}).then(function () {
        box.dataset.drawn = "true";
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw); else draw();
})();
