"""The predictions CSV that ``review audit-sample`` reads, written from what the gate decided.

One row per record and requested use (``PREDICTION_COLUMNS`` plus ``subset``):

* ``case_id``: the record's ``record_id`` (``sha256:<input_sha256>`` when it has none);
* ``requested_use``; ``record_sha256`` (the report's ``input_sha256``: the SHA-256 of the record
  as canonical JSON, the same hash the review queue keeps); ``profile_sha256``;
* ``method``: the name of the pipeline, model or curation team whose records these are (given by
  the caller: audits compare methods);
* ``predicted_status``: the gate's decision for that use (``admitted``, ``review_required`` or
  ``rejected``), i.e. the route the record took;
* ``subset``: optional free label (a batch, a month).

Rows come from validation reports (``validate -o reports.jsonl``) and from a review queue, whose
entries keep the report the gate made when the record was queued (the route, not a person's later
decision). Pure functions; the CLI reads the files.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..gate.report import Report
from .audit import PREDICTION_COLUMNS, ROUTES

COLUMNS = (*PREDICTION_COLUMNS, "subset")


def case_id(report: Report) -> str:
    return report.record_id or f"sha256:{report.input_sha256}"


def prediction_rows(reports: Iterable[Report], *, method: str, subset: str = "") -> list[dict[str, str]]:
    """One row per report and use, in order; the same case and use twice is kept once when it is the same
    record (same hash) and refused when two different records share an id."""
    if not method.strip():
        raise InputError("--method must name the pipeline, model or team whose records these are")
    rows: list[dict[str, str]] = []
    seen: dict[tuple[str, str], str] = {}
    for report in reports:
        for decision in report.use_decisions:
            if decision.admission_status not in ROUTES:
                continue  # "not_evaluated": nothing was decided
            key = (case_id(report), decision.use)
            if key in seen:
                if seen[key] != report.input_sha256:
                    raise InputError(f"case {key[0]} use {key[1]} has two different records (sha256 "
                                     f"{seen[key][:12]}… and {report.input_sha256[:12]}…); give each record its "
                                     "own record_id or export them separately")
                continue
            seen[key] = report.input_sha256
            rows.append({"case_id": key[0], "requested_use": decision.use, "record_sha256": report.input_sha256,
                         "profile_sha256": report.profile_sha256, "method": method,
                         "predicted_status": decision.admission_status, "subset": subset})
    return rows


def reports_from_lines(values: Iterable[Any], *, file: str) -> list[Report]:
    """Reports from the parsed lines of ``validate`` JSON/JSONL output; input-error entries are skipped."""
    out: list[Report] = []
    for number, value in enumerate(values, start=1):
        if isinstance(value, dict) and "error" in value and "overall_status" not in value:
            continue
        if not isinstance(value, dict) or "use_decisions" not in value:
            raise InputError("not a validation report (write them with bioevidence validate -o reports.jsonl)",
                             file=file, line=number)
        data = {k: v for k, v in value.items() if k not in ("file", "line")}
        try:
            out.append(Report.from_dict(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"validation report lacks {exc}", file=file, line=number) from exc
    return out
