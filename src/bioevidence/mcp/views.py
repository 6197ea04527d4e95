"""What a tool returns by default, and what ``details: true`` adds (issue 27, context cost).

A result is read by a model, so every byte costs context. By default a tool returns what an agent
acts on: ids, verbatim text, locators, hashes, stance and the verdict; the rest (the full report,
the plan, the evidence record, the papers' authors and scores) comes with ``details: true``. The
values are the library's own, never relabelled: a stance or a direction is passed through as the
librarian returned it (``undetermined`` / ``stance_by: unavailable`` when no stance weights ship).
"""

from __future__ import annotations

from typing import Any

#: An evidence item's keys by default; ``relevance`` and ``stance_confidence`` only when set, and the
#: flags only when true.
ITEM = ("rank", "doc_id", "text", "locator", "start", "end", "sha256", "stance", "stance_by", "stance_confidence",
        "relevant", "relevance")
FLAGS = ("retracted", "expression_of_concern")
PAPER = ("rank", "doc_id", "title", "year", "pmid", "pmcid", "doi")
FINDING = ("rule_id", "severity", "route", "message", "field_path", "blocking_uses", "fix")


def _some(value: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {key: value[key] for key in keys if value.get(key) is not None}
    out.update({flag: True for flag in FLAGS if value.get(flag)})
    return out


def item(value: dict[str, Any]) -> dict[str, Any]:
    """An evidence item as a tool returns it by default."""
    return _some(value, ITEM)


def paper(value: dict[str, Any]) -> dict[str, Any]:
    return _some(value, PAPER)


def stance_note(debug: dict[str, Any]) -> str | None:
    """Why sentences carry no direction (``debug.stance``: no stance weights here), as the librarian says it."""
    note = debug.get("stance")
    return note if isinstance(note, str) else None


def found(answer: Any, details: bool) -> dict[str, Any]:
    """``Answer.to_json()`` as ``ask`` and ``find`` return it."""
    full = answer.to_json()
    out: dict[str, Any] = {"question": full["question"], "items": full["items"], "papers": full["papers"],
                           "withheld_retracted": full["withheld_retracted"]}
    if full["fallback"]:
        out["fallback"] = full["fallback"]
    made = full.get("provenance") or {}
    if made.get("retriever"):  # which retriever `auto` chose, and why
        out["retriever"] = {"name": made["retriever"], "why": made.get("retriever_why"),
                            "feedback": made.get("feedback")}
    if (note := stance_note(full["debug"])) is not None:
        out["stance_note"] = note
    if details:
        out.update(plan=full["plan"], source_artifacts=full["source_artifacts"],
                   evidence_items=full["evidence_items"])
    else:  # the papers the items come from
        out["items"] = [item(i) for i in full["items"]]
        cited = {i["doc_id"] for i in full["items"]}
        out["papers"] = [paper(p) for p in full["papers"] if p["doc_id"] in cited]
    return out


def validation(view: dict[str, Any] | None, details: bool) -> dict[str, Any] | None:
    """A :func:`~.tools.report_view` without the full report (and with lean findings) unless ``details``."""
    if view is None or details:
        return view
    out = {key: value for key, value in view.items() if key != "report"}
    out["findings"] = [{key: f.get(key) for key in FINDING} for f in view["findings"]]  # fix: null when none
    return out
