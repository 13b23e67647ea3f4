// Upload a bundle with a progress bar, then go to the submission's page, which follows it live.
(function () {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const status = document.getElementById("upload-status");
  const bar = document.getElementById("upload-progress");
  const text = document.getElementById("upload-text");
  const error = document.getElementById("upload-error");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const file = document.getElementById("bundle").files[0];
    if (!file) return;
    const body = new FormData();
    body.append("bundle", file);
    const replaces = document.getElementById("replaces");
    if (replaces && replaces.value) body.append("replaces", replaces.value);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.dataset.api + "?team=" + encodeURIComponent(document.getElementById("team").value));
    xhr.setRequestHeader("X-CSRFToken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    xhr.upload.addEventListener("progress", function (e) {
      if (!e.lengthComputable) return;
      const percent = Math.round((e.loaded / e.total) * 100);
      bar.value = percent;
      text.textContent = percent + "% of " + (e.total / 1048576).toFixed(1) + " MB";
    });
    xhr.addEventListener("load", function () {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch (e) { /* not JSON: shown below */ }
      if (xhr.status === 202) {
        text.textContent = "Uploaded. Validating …";
        window.location.href = "/submissions/" + data.id + "/";
      } else {
        error.textContent = data.error ? data.error.message : "Upload failed (HTTP " + xhr.status + ").";
        form.querySelector("button").disabled = false;
      }
    });
    xhr.addEventListener("error", function () {
      error.textContent = "The upload was interrupted; check the connection and try again.";
      form.querySelector("button").disabled = false;
    });
    error.textContent = "";
    status.hidden = false;
    form.querySelector("button").disabled = true;
    xhr.send(body);
  });
})();
