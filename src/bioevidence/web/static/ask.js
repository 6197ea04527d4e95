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
    let heard = false;
    source.addEventListener("message", () => { heard = true; });
    source.addEventListener("progress", () => { heard = true; });
    source.onerror = async () => {
      if (source.readyState === EventSource.OPEN) return;
      if (heard) { fail("the connection to the server was lost; ask again"); return; }
      source.close();  // refused before it started (429): say why
      let busy = false;
      try { busy = (await (await fetch("/ask/busy", { credentials: "same-origin" })).json()).in_flight; } catch (e) { busy = false; }
      fail(busy ? "You already have a question under way: one at a time for each account. Ask again once its answer is ready."
                : "The server did not take the question (the librarian is busy, or the connection failed); try again in a moment.");
    };
  });
});
