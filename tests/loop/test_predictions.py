"""The predictions CSV is written from the gate's decisions (issue 13, item 6): validate, export,
sample, label, score, all through the CLI on the bundled example records and a real SQLite queue."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bioevidence.cli import cli
from bioevidence.loop.audit import ADMISSION_LABELS, MAPPING_LABELS, PREDICTION_COLUMNS
from bioevidence.loop.predictions import COLUMNS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "records"
LOOP_DOC = Path(__file__).resolve().parents[2] / "docs" / "loop.md"


def _run(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_predictions_from_reports_and_queue_feed_audit_sample_and_score(tmp_path: Path) -> None:
    reports, queue, preds = tmp_path / "reports.jsonl", tmp_path / "q.sqlite", tmp_path / "preds.csv"
    assert _run("validate", EXAMPLES, "-o", reports).exit_code == 1  # one example is rejected
    assert _run("review", "add", EXAMPLES, "--queue", queue).exit_code == 0
    made = _run("review", "predictions", "--method", "curation-v1", "--reports", reports, "--queue", queue,
                "--subset", "examples", "-o", preds)
    assert made.exit_code == 0, made.output
    rows = _rows(preds.read_text())
    assert tuple(rows[0]) == COLUMNS and set(PREDICTION_COLUMNS) <= set(rows[0])
    decided = {(json.loads(line)["record_id"], d["use"]): (json.loads(line)["input_sha256"], d["admission_status"])
               for line in reports.read_text().splitlines() for d in json.loads(line)["use_decisions"]}
    # one row per record and use, the queue's entries adding nothing new (same records, same hashes)
    assert {(r["case_id"], r["requested_use"]): (r["record_sha256"], r["predicted_status"]) for r in rows} == decided
    assert len(rows) == len(decided) and {r["method"] for r in rows} == {"curation-v1"}
    assert {r["subset"] for r in rows} == {"examples"}

    audit = tmp_path / "audit"
    sampled = _run("review", "audit-sample", "--predictions", preds, "--size", "3", "--controls", "2", "--seed", "7",
                   "--output-dir", audit)
    assert sampled.exit_code == 0, sampled.output
    sheet = _rows((audit / "audit_sheet.csv").read_text())
    for row in sheet:
        row.update(reviewer_id="orcid:0000-0002-1825-0097", admission_label="admitted", mapping_label="correct")
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(sheet[0]))
        writer.writeheader()
        writer.writerows(sheet)
    scored = _run("review", "audit-score", "--manifest", audit / "audit_manifest.json", "--labels", labels,
                  "--format", "json")
    assert scored.exit_code == 0, scored.output
    routes = {r["route"]: r for r in json.loads(scored.stdout)["routes"]}
    assert routes["admitted"]["audited"] == 3 and routes["admitted"]["errors"] == 0


def test_a_case_id_naming_two_different_records_is_refused(tmp_path: Path) -> None:
    first = json.loads((EXAMPLES / "01_admitted_curated_claim.json").read_text())
    second = json.loads(json.dumps(first))
    second["statement"]["scope"] = ["NCBITaxon:10090"]  # another record, same record_id
    second["evidence_items"][0]["scope"] = ["NCBITaxon:10090"]
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps(second))
    _run("validate", tmp_path / "a.json", tmp_path / "b.json", "-o", tmp_path / "r.jsonl")
    result = _run("review", "predictions", "--method", "m", "--reports", tmp_path / "r.jsonl")
    assert result.exit_code == 3 and "two different records" in json.loads(result.stderr)["message"]


def test_the_csv_formats_and_label_values_are_documented() -> None:
    """docs/loop.md names every column of the predictions file and every allowed label value."""
    doc = LOOP_DOC.read_text(encoding="utf-8")
    for word in (*COLUMNS, *ADMISSION_LABELS, *MAPPING_LABELS, "reviewer_id", "minutes_spent",
                 "review predictions"):
        assert f"`{word}`" in doc, word
