// The review pages' keys and the closest passage on demand. Without this script every page still
// works: the form is a plain form, the links are links, and "open it" shows the closest passage.
//   a / r / d   choose accept / reject / defer and put the cursor in the reason
//   Ctrl+Enter  (in the reason) record the decision; the server opens the next entry of the filter
//   n           the next entry of the filter (on the queue page: its first entry)
//   q           back to the queue, same filter
//   Escape      leave the reason
"use strict";
(() => {
  const CHOICES = { a: "accept", r: "reject", d: "defer" };
  const typing = (el) => el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
  const follow = (id) => {
    const link = document.getElementById(id);
    if (link) { window.location.assign(link.href); return true; }
    return false;
  };

  document.addEventListener("keydown", (event) => {
    const reason = document.getElementById("rationale");
    if (event.target === reason) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        reason.form.requestSubmit();
      } else if (event.key === "Escape") {
        reason.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = event.key.toLowerCase();
    if (CHOICES[key] && reason) {
      const choice = document.getElementById("decision-" + CHOICES[key]);
      if (!choice) return;
      event.preventDefault();  // the letter chooses; it is not typed into the reason
      choice.checked = true;
      reason.focus();
    } else if (key === "n") {
      if (follow("next-entry") || follow("first-entry")) event.preventDefault();
    } else if (key === "q") {
      if (follow("back-to-queue")) event.preventDefault();
    }
  });

  // The closest passage to a quote that is not in its paper: asked of the server when opened.
  const load = async (details) => {
    if (details.dataset.loaded) return;
    details.dataset.loaded = "1";
    const body = details.querySelector(".closest-body");
    try {
      const response = await fetch(details.dataset.src, { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      body.replaceChildren(...page.body.childNodes);
    } catch (error) {
      delete details.dataset.loaded;
      const p = document.createElement("p");
      p.className = "problem";
      p.textContent = "The closest passage could not be loaded; use the link to open it.";
      body.append(p);
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    for (const details of document.querySelectorAll("details.closest[data-src]")) {
      details.addEventListener("toggle", () => { if (details.open) load(details); });
      if (details.dataset.auto) details.open = true;
    }
  });
})();
