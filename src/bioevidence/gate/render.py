"""Batch output formats for ``bioevidence validate``: json, jsonl, text and markdown.

Each takes the batch results in input order (``bioevidence.gate.batch.Result``); a result whose
status is ``error`` could not be read and its ``error`` says why.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from ..errors import escape_text
from .batch import Result

RULES_DOC = "docs/rules.md"


def where(result: Result) -> str:
    return result.file if result.line is None else f"{result.file}:{result.line}"


def counts(results: Sequence[Result]) -> Counter[str]:
    tally: Counter[str] = Counter({"admitted": 0, "review_required": 0, "rejected": 0, "error": 0})
    tally.update(r.status for r in results)
    return tally


def render_json(results: Sequence[Result]) -> str:
    if len(results) == 1:
        report = results[0].report
        if report is not None:
            return report.to_json() + "\n"
    return json.dumps([r.located() for r in results], indent=2, ensure_ascii=False) + "\n"


def render_jsonl(results: Sequence[Result]) -> str:
    return "".join(r.text + "\n" for r in results)


def render_text(results: Sequence[Result]) -> str:
    lines = []
    for r in results:
        report = r.report
        if report is None:
            lines.append(f"ERROR     {where(r)}  {r.error.message if r.error else 'unreadable'}")
            continue
        uses = " ".join(
            f"{d.use}={d.admission_status}" + (f"[{','.join(d.reason_codes)}]" if d.reason_codes else "")
            for d in report.use_decisions
        )
        status = {"admitted": "ADMITTED", "review_required": "REVIEW", "rejected": "REJECTED"}[r.status]
        lines.append(f"{status:<9} {where(r)}  {report.record_id or '-'}  {uses}".rstrip())
    tally = counts(results)
    lines.append(f"{len(results)} records: {tally['admitted']} admitted, {tally['review_required']} review required, "
                 f"{tally['rejected']} rejected, {tally['error']} input errors")
    return "\n".join(escape_text(line) for line in lines) + "\n"  # record ids and file names are input


def _codes_md(codes: Sequence[str], rules_link: str) -> str:
    return ", ".join(f"[{c}]({rules_link}#{c.lower()})" for c in codes) or "–"


def render_markdown(results: Sequence[Result], rules_link: str = RULES_DOC) -> str:
    tally = counts(results)
    lines = [
        "| file | record | status | uses | reasons |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        report = r.report
        if report is None:
            message = r.error.message if r.error else "unreadable"
            lines.append(f"| `{where(r)}` | – | **input error** | – | {message} |")
            continue
        uses = "<br>".join(f"{d.use}: {d.admission_status}" for d in report.use_decisions) or "–"
        lines.append(f"| `{where(r)}` | {report.record_id or '–'} | {r.status} | {uses} "
                     f"| {_codes_md(report.reason_codes(), rules_link)} |")
    lines += ["", f"**{len(results)} records**: {tally['admitted']} admitted, {tally['review_required']} review "
              f"required, {tally['rejected']} rejected, {tally['error']} input errors."]
    return "\n".join(escape_text(line) for line in lines) + "\n"  # record ids and file names are input


def batch_exit_code(results: Sequence[Result]) -> int:
    """3 if any input error, else 1 if any rejected, else 2 if any review, else 0."""
    statuses = {r.status for r in results}
    if "error" in statuses:
        return 3
    if "rejected" in statuses:
        return 1
    if "review_required" in statuses:
        return 2
    return 0
