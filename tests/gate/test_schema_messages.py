"""Schema findings name the allowed values and the fix (issue 13, item 2): no "... or 4 other
candidates", unknown keys listed with the keys allowed there, a missing field named with an add fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bioevidence.gate.schema import record_schema
from builders import adjudication, record

SCHEMA = json.loads(record_schema().path.read_text(encoding="utf-8"))


def _set(rec: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = rec
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


ENUMS = [
    pytest.param(("source_artifacts", 0, "source_type"), "SourceType", id="source_type"),
    pytest.param(("evidence_items", 0, "extraction_method"), "ExtractionMethod", id="extraction_method"),
    pytest.param(("statement", "evidence_lines", 0, "direction"), "EvidenceDirection", id="direction"),
    pytest.param(("statement", "statement_status"), "StatementStatus", id="statement_status"),
    pytest.param(("adjudications", 0, "decision"), "AdjudicationDecision", id="decision"),
    pytest.param(("adjudications", 0, "reviewer", "agent_type"), "AgentType", id="agent_type"),
]


@pytest.mark.parametrize(("path", "enum"), ENUMS)
def test_a_wrong_enum_value_lists_every_allowed_value_and_the_choose_fix(path: tuple[Any, ...], enum: str) -> None:
    rec = record("general", adjudications=[adjudication(1, ["knowledge_base"])])
    _set(rec, path, "not-a-value")
    (finding,) = record_schema().findings(rec, ["knowledge_base"])
    allowed = SCHEMA["$defs"][enum]["enum"]
    assert "candidates" not in finding.message
    assert all(value in finding.message for value in allowed), finding.message
    assert finding.fix is not None and finding.fix.action == "choose" and finding.fix.value == allowed
    assert finding.fix.field_path == finding.field_path


def test_unknown_keys_get_one_finding_each_naming_the_keys_allowed_there() -> None:
    rec = record()
    rec["statement"]["subject"]["colour"] = "blue"
    rec["notes"] = 1
    rec["extra"] = 2
    findings = record_schema().findings(rec, ["knowledge_base"])
    assert sorted(f.field_path for f in findings) == ["$.extra", "$.notes", "$.statement.subject.colour"]
    subject = next(f for f in findings if f.field_path == "$.statement.subject.colour")
    assert "allowed here: entity_type, id, label" in subject.message
    assert subject.fix is not None and (subject.fix.action, subject.fix.field_path) == ("remove", subject.field_path)


def test_a_missing_field_is_named_with_an_add_fix() -> None:
    rec = record()
    del rec["statement"]["subject"]["label"]
    (finding,) = record_schema().findings(rec, ["knowledge_base"])
    assert finding.message == 'required field "label" is missing'
    assert finding.fix is not None and finding.fix.action == "add"
    assert finding.fix.field_path == "$.statement.subject.label"


@pytest.mark.parametrize(("field", "value", "says"), [
    pytest.param("retrieved_at", "yesterday", "2026-06-08T12:00:00Z", id="date-time"),
    pytest.param("sha256", "abc", "64 lowercase hexadecimal digits", id="sha256"),
])
def test_format_errors_say_what_the_value_should_look_like(field: str, value: str, says: str) -> None:
    rec = record()
    rec["source_artifacts"][0][field] = value
    (finding,) = record_schema().findings(rec, ["knowledge_base"])
    assert says in finding.message and f'"{value}"' in finding.message
