"""A grounder written outside the engine (the public ``Grounder`` protocol) cannot admit by mistake:
the validator gives each of its findings the catalogue's severity and blocking, and a code outside the
catalogue fails closed. Found by the ClinVar case (tools/cases): a grounder returning ``BEV017`` as
``info``, or as ``error`` blocking no use, had the record admitted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Finding, Grounding, Validator

RECORD = Path(__file__).resolve().parents[2] / "examples" / "records" / "01_admitted_curated_claim.json"


@dataclass
class Says:
    """A custom grounder that returns one fixed finding."""

    finding: Finding
    name: str = "custom:test"

    def ground(self, record: dict[str, Any]) -> Grounding:
        return Grounding([self.finding])


def _report(finding: Finding | None) -> Any:
    record = json.loads(RECORD.read_text())
    grounders = [Says(finding)] if finding is not None else []
    return Validator(grounders=grounders).validate(record)


def test_the_record_is_admitted_when_the_grounder_finds_nothing() -> None:
    report = _report(None)
    assert report.overall_status == "admitted"


@pytest.mark.parametrize(("code", "written", "blocking", "status", "severity"), [
    ("BEV017", "info", ["research_summary"], "rejected", "error"),   # the grounder understated its severity
    ("BEV017", "error", [], "rejected", "error"),                    # an error that blocks no use
    ("BEV015", "error", [], "review_required", "review"),            # the catalogue's severity wins both ways
    ("BEV031", "error", ["research_summary"], "admitted", "info"),   # a note never blocks
])
def test_a_grounder_finding_takes_the_catalogue_severity_and_blocks_every_use(
        code: str, written: str, blocking: list[str], status: str, severity: str) -> None:
    report = _report(Finding(code, written, "seen by the custom grounder", "$.evidence_items[0]", blocking))
    assert report.overall_status == status
    (found,) = [f for f in report.findings if f.rule_id == code]
    assert found.severity == severity
    assert found.blocking_uses == ([] if severity == "info" else ["research_summary"])
    assert found.message == "seen by the custom grounder"


@pytest.mark.parametrize("code", ["BEV999", "SCHEMA", "RECORD_INTEGRITY"])
def test_a_code_outside_the_grounder_rules_fails_closed(code: str) -> None:
    report = _report(Finding(code, "info", "made up", "$"))
    assert report.overall_status == "rejected"
    (failure,) = [f for f in report.findings if f.rule_id == "GROUNDER_FAILURE"]
    assert "custom:test" in failure.message and repr(code) in failure.message
