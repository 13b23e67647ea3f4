// Follow a submission live: poll its API until its status is final, then reload once for the full tables.
(function () {
  const root = document.getElementById("submission");
  if (!root || root.dataset.final === "true") return;
  const statusEl = document.getElementById("status");
  const reasonEl = document.getElementById("status-reason");
  const bar = document.getElementById("progress");
  const progressText = document.getElementById("progress-text");
  const finals = ["in_review", "published", "rejected", "changes_requested", "failed"];
  function poll() {
    fetch(root.dataset.api, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (data) {
        statusEl.textContent = data.status;
        reasonEl.textContent = data.status_reason || "";
        bar.max = Math.max(data.progress.total, 1);
        bar.value = data.progress.done;
        progressText.textContent = data.progress.done + " of " + data.progress.total + " runs graded";
        if (finals.indexOf(data.status) >= 0) { window.location.reload(); return; }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  poll();
})();
