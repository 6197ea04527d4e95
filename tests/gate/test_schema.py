"""The record schema: LinkML is the source of truth, the committed JSON Schema is generated from it,
and the compiled hot-path validator accepts and rejects exactly what ``jsonschema`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bioevidence.gate.schema import record_schema
from bioevidence.gate.schemagen import render
from builders import corpus, record

REPO = Path(__file__).resolve().parents[2]

def test_committed_json_schema_is_generated_from_the_linkml_schema() -> None:
    committed = (REPO / "schemas" / "bioevidence_core.schema.json").read_text(encoding="utf-8")
    assert render(REPO / "schemas" / "bioevidence_core.yaml") == committed, (
        "schemas/bioevidence_core.schema.json is stale: run "
        "`bioevidence schema --generate -o schemas/bioevidence_core.schema.json`"
    )


def test_compiled_validator_accepts_and_rejects_exactly_what_jsonschema_does() -> None:
    from jsonschema import Draft202012Validator, FormatChecker

    schema = json.loads((REPO / "schemas" / "bioevidence_core.schema.json").read_text(encoding="utf-8"))
    reference = Draft202012Validator(schema, format_checker=FormatChecker())
    checkers = set(reference.format_checker.checkers)
    assert {"date-time", "uri"} <= checkers, "install rfc3339-validator and rfc3986-validator"
    compiled = record_schema()
    seen = accepted = 0
    disagreements = []
    for candidate in corpus():
        seen += 1
        expected = reference.is_valid(candidate)
        accepted += expected
        if compiled.is_valid(candidate) != expected:
            disagreements.append((expected, json.dumps(candidate)[:300]))
    assert disagreements == []
    assert seen > 3000 and 50 < accepted < seen - 2000  # the corpus holds both kinds in quantity


@pytest.mark.parametrize("value", ["2026-09-21T00:00:00", "2026-02-30T00:00:00Z", "yesterday"])
def test_bad_dates_are_schema_findings_at_their_path(value: str) -> None:
    rec = record()
    rec["source_artifacts"][0]["retrieved_at"] = value
    findings = record_schema().findings(rec, ["knowledge_base"])
    assert [(f.rule_id, f.field_path) for f in findings] == [("SCHEMA", "$.source_artifacts[0].retrieved_at")]
