"""What a report says about itself and what the validator does around grounders and checks (issue 30:
survivors of the gate group's mutation run in ``gate/validator.py``).

The envelope is checked against values computed here independently: the installed distribution's version,
SHA-256 of the profile file's bytes and of the schema in its canonical form (sorted keys, compact, ASCII:
``json.dumps``), the fixed ``SOURCE_DATE_EPOCH`` time; tests/gate/test_reference_parity.py compares the
fields 0.8.0 also writes (input hash, versions, schema validity) with 0.8.0's own reports. Around grounders
and checks: a failing one fails closed with a finding that says which and why, the others still run, and
what several grounders verified is pooled.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Finding, Grounding, Validator
from bioevidence.errors import InputError
from bioevidence.gate.grounding import CheckContext
from bioevidence.gate.profiles import parse_profile
from builders import item, record

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "records" / "01_admitted_curated_claim.json"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_envelope_names_the_validator_profile_and_schema_by_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rec = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    report = Validator().validate(rec).to_dict()
    schema = json.loads((REPO / "schemas" / "bioevidence_core.schema.json").read_text(encoding="utf-8"))
    canonical_schema = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    canonical_record = json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    profile = REPO / "profiles" / f"{rec['profile_id']}.yaml"
    assert report["validator"] == "bioevidence"
    assert report["validator_version"] == importlib.metadata.version("bioevidence")
    assert report["record_id"] == rec["record_id"]
    assert (report["profile_id"], report["profile_sha256"]) == (rec["profile_id"], _sha(profile.read_bytes()))
    assert report["profile_version"] == parse_profile(profile.read_bytes(), source=str(profile)).version
    assert report["schema_version"] == schema["version"]
    assert report["schema_sha256"] == _sha(canonical_schema)
    assert report["schema_sources"] == [{"role": "baseline", "version": schema["version"],
                                         "sha256": _sha(canonical_schema)}]
    assert report["input_sha256"] == _sha(canonical_record)
    assert report["validated_at"] == "2025-12-01T00:00:00+00:00"
    assert report["schema_valid"] is True
    broken = dict(rec)
    del broken["statement"]
    assert Validator().validate(broken).to_dict()["schema_valid"] is False


def test_without_source_date_epoch_the_time_is_now_in_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    before = datetime.now(UTC)
    stamped = datetime.fromisoformat(Validator().validate(record()).to_dict()["validated_at"])
    assert stamped.utcoffset() is not None and stamped.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    assert before <= stamped <= datetime.now(UTC)


@pytest.mark.parametrize("value", [[], "a record", 3, None, {"record_id": 5}])
def test_a_value_that_is_no_record_gets_a_report_with_no_record_id(value: Any) -> None:
    report = Validator().validate(value)
    assert report.record_id is None and report.overall_status == "rejected"
    assert report.profile_id == "general"  # no usable profile_id: the default profile


def test_data_that_is_not_json_is_an_input_error_naming_why() -> None:
    with pytest.raises(InputError, match=r"^record is not plain JSON data: "):
        Validator().validate({"record_id": {1, 2}})


def test_a_profile_id_that_is_no_built_in_is_one_integrity_error_first_naming_the_built_ins() -> None:
    rec = record("general", ["knowledge_base"])
    rec["profile_id"] = "my-lab"
    report = Validator().validate(rec)
    first = report.findings[0]
    assert (first.rule_id, first.severity, first.field_path, first.blocking_uses) == (
        "RECORD_INTEGRITY", "error", "$.profile_id", ["knowledge_base"])
    assert first.message == ("profile_id 'my-lab' is not a built-in profile (cell-type, dataset-label, general, "
                             "librarian-evidence, literature-claim); pass --profile PATH to its YAML file.")
    # the profile mismatch the integrity check would add on the same field is replaced, not repeated
    assert [f.field_path for f in report.findings].count("$.profile_id") == 1


@dataclass
class Verifies:
    """A grounder that verifies the given evidence items (and may add one finding)."""

    items: frozenset[str]
    name: str
    says: list[Finding] = field(default_factory=list)
    grounds_literature: bool = True

    def ground(self, record: dict[str, Any]) -> Grounding:
        return Grounding(list(self.says), self.items)


@dataclass
class GroundFails:
    name: str = "custom:broken"

    def ground(self, record: dict[str, Any]) -> Grounding:
        raise ValueError("the index is gone")


@dataclass
class CheckFails:
    name: str = "custom:broken"
    kind: str = "custom-check"

    def check(self, record: dict[str, Any], context: CheckContext) -> Grounding:
        raise ValueError("the model is gone")


@dataclass
class Returns:
    finding: Finding
    name: str = "custom:returns"
    kind: str = "custom-check"

    def check(self, record: dict[str, Any], context: CheckContext) -> Grounding:
        return Grounding([self.finding])


TWO_VERIFIED = b"""\
id: two-verified
version: "1"
description: both evidence types must be verified by a grounder
predicates: []
subject_types: []
object_types: []
uses:
  knowledge_base:
    required_evidence_types: [curated_annotation, sample_link]
    verified_evidence_types: [curated_annotation, sample_link]
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
"""


def _two_items() -> dict[str, Any]:
    rec = record("general", ["knowledge_base"], items=[item(1, "curated_annotation"), item(2, "sample_link")])
    rec["profile_id"] = "two-verified"
    return rec


def test_what_several_grounders_verified_is_pooled() -> None:
    profile = parse_profile(TWO_VERIFIED, source="two-verified.yaml")
    grounders = [Verifies(frozenset({"t:item-1"}), "custom:a"), Verifies(frozenset({"t:item-2"}), "custom:b")]
    report = Validator(profile, grounders=grounders).validate(_two_items())
    assert report.overall_status == "admitted", [f.rule_id for f in report.findings]
    assert report.verified == frozenset({"t:item-1", "t:item-2"})
    one = Validator(profile, grounders=grounders[1:]).validate(_two_items())
    assert "BEV020" in one.reason_codes()  # the control: one grounder's items alone are not enough


def test_a_failing_grounder_fails_closed_and_the_next_grounder_still_runs() -> None:
    profile = parse_profile(TWO_VERIFIED, source="two-verified.yaml")
    later = Verifies(frozenset({"t:item-1", "t:item-2"}), "custom:later",
                     [Finding("BEV017", "error", "the quote is not in the paper", "$.evidence_items[0]", [])])
    report = Validator(profile, grounders=[GroundFails(), later]).validate(_two_items())
    failure = next(f for f in report.findings if f.rule_id == "GROUNDER_FAILURE")
    assert (failure.severity, failure.field_path, failure.blocking_uses) == ("error", "$", ["knowledge_base"])
    assert failure.message == "grounder custom:broken failed: ValueError: the index is gone"
    assert "BEV017" in report.reason_codes() and report.verified == frozenset({"t:item-1", "t:item-2"})
    assert report.overall_status == "rejected"


def test_a_failing_check_fails_closed_naming_the_check_and_its_error() -> None:
    report = Validator("general", checks=[CheckFails()]).validate(record("general", ["knowledge_base"]))
    (failure,) = report.findings
    assert (failure.rule_id, failure.severity, failure.field_path, failure.blocking_uses) == (
        "GROUNDER_FAILURE", "error", "$", ["knowledge_base"])
    assert failure.message == "check custom:broken failed: ValueError: the model is gone"
    assert report.overall_status == "rejected"


@pytest.mark.parametrize("code", ["BEV999", "SCHEMA"])
def test_a_check_returning_a_code_outside_the_grounder_rules_fails_closed_naming_itself(code: str) -> None:
    returned = Finding(code, "info", "looks fine", "$.statement", [])
    report = Validator("general", checks=[Returns(returned)]).validate(record("general", ["knowledge_base"]))
    (failure,) = report.findings
    assert (failure.rule_id, failure.field_path, failure.blocking_uses) == ("GROUNDER_FAILURE", "$", ["knowledge_base"])
    assert failure.message == (f"custom:returns returned rule {code!r}, which is not a grounder rule of the "
                               "catalogue (bioevidence.gate.rules)")


def test_the_unknown_profile_finding_comes_first_among_other_integrity_errors() -> None:
    rec = record("general", ["knowledge_base"])
    rec["profile_id"] = "my-lab"
    rec["statement"]["scope"] = ["NCBITaxon:9606", "NCBITaxon:9606"]
    report = Validator().validate(rec)
    assert [f.field_path for f in report.findings] == ["$.profile_id", "$.statement.scope"]


def test_misuse_of_the_api_is_a_configuration_error_naming_the_fix() -> None:
    from bioevidence.errors import ConfigurationError
    from bioevidence.gate.validator import validate

    with pytest.raises(ConfigurationError, match=r"^grounding=False \(--no-grounding\) turns grounding off; pass no "
                                                 r"grounders with it$"):
        Validator(grounders=[Verifies(frozenset(), "custom:a")], grounding=False)
    with pytest.raises(ConfigurationError, match=r"^profile must be a built-in name, a path or a Profile$"):
        validate(record(), profile=3)  # type: ignore[arg-type]
