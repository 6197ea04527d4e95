// The ask page: show the librarian's progress (server-sent events), then open the result page.
// Without this script the form still works: /ask/run answers and redirects to the result.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("ask-form");
  if (!form || !window.EventSource) return;
  const list = document.getElementById("progress");
  const problem = document.getElementById("ask-error");
  const button = document.getElementById("ask");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = document.getElementById("question").value.trim();
    if (!question) return;
    list.replaceChildren();
    problem.hidden = true;
    button.disabled = true;
    const source = new EventSource("/ask/stream?q=" + encodeURIComponent(question));
    const line = (text) => { const li = document.createElement("li"); li.textContent = text; list.append(li); };
    source.addEventListener("progress", (e) => line(e.data));
    source.addEventListener("result", (e) => {
      source.close();
      if (e.data.startsWith("/ask/results/")) window.location.assign(e.data);
    });
    const fail = (text) => { source.close(); button.disabled = false; problem.textContent = text; problem.hidden = false; };
    source.addEventListener("failed", (e) => fail(e.data));
    source.onerror = () => { if (source.readyState !== EventSource.OPEN) fail("the connection to the server was lost; ask again"); };
  });
});
