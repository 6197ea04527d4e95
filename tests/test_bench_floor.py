"""The Python floor of tools/bench_gate.py (docs/performance.md, "Where item 1 stands") does the work a
report needs whatever the checks find: on real CIViC records its per-record work returns the very
``input_sha256`` the gate reports, and its schema verdict is the gate's. A floor doing work a report does
not need (another, slower form to hash) would read lower than the truth and overstate the distance to
the targets; one doing less would understate it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bioevidence.gate.schema import record_schema
from bioevidence.gate.validator import Validator

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench_gate(shared_data: Path):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import bench_gate as module
    finally:
        sys.path.remove(str(REPO / "tools"))
    return module


def test_the_floor_hashes_what_the_gate_reports_for_every_civic_record(bench_gate) -> None:  # type: ignore[no-untyped-def]
    records = bench_gate.civic_records(600)  # every CIViC evidence item of the corpus once per use, and more
    schema = record_schema()
    validator = Validator("literature-claim")
    for record in records:
        line = json.dumps(record).encode()
        report = validator.validate(record)
        digest = bench_gate.floor_work(schema, line, report.to_dict())
        assert digest == report.input_sha256, record["record_id"]
        assert report.schema_valid and not schema.findings(record, [])
