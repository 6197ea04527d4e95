"""Issue 30: ``bioevidence.validate``, the one-shot convenience, passes on what it is given.

Its docstring: a record parsed or a path to a ``.json``/``.yaml`` file; ``profile`` a built-in name, a path
or a ``Profile`` (anything else is a configuration error), defaulting to the built-in the record names;
``grounders`` run; ``grounding=False`` accepts unchecked quotes (no BEV029). And a grounder's code outside
the catalogue fails closed for every use (``GROUNDER_FAILURE``: error, scope all in docs/rules.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bioevidence
from bioevidence import ConfigurationError, Finding, Fix, Grounding, load_profile
from bioevidence.gate.inputs import load_record
from builders import record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADMITTED = EXAMPLES / "records" / "01_admitted_curated_claim.json"
YAML_RECORD = EXAMPLES / "records" / "06_yaml_record.yaml"
LABEL = EXAMPLES / "records" / "05_review_contradicted_label.json"
QUOTED = EXAMPLES / "claims" / "01_quoted.json"


@dataclass
class Says:
    """A custom grounder that returns fixed findings."""

    finding: Finding
    name: str = "custom:says"
    more: tuple[Finding, ...] = ()

    def ground(self, record: dict[str, Any]) -> Grounding:
        return Grounding([self.finding, *self.more])


@pytest.mark.parametrize("path", [ADMITTED, YAML_RECORD], ids=["json", "yaml"])
def test_a_record_given_as_a_path_is_read_and_validated_like_the_parsed_record(path: Path) -> None:
    """validate(str path) and validate(Path) read the file: same record, same verdict as the parsed record."""
    parsed = load_record(path)
    expected = bioevidence.validate(parsed)
    assert expected.overall_status == "admitted"  # both examples are admitted records (their names say so)
    for given in (path, str(path)):
        report = bioevidence.validate(given)
        assert report.record_id == parsed["record_id"]
        assert report.input_sha256 == expected.input_sha256
        assert report.overall_status == "admitted"


def test_the_profile_given_is_the_one_validated_against() -> None:
    """A dataset-label record validated with profile='general' is judged by general: binding and use both reject."""
    rec = json.loads(LABEL.read_text(encoding="utf-8"))
    assert rec["profile_id"] == "dataset-label"
    report = bioevidence.validate(rec, profile="general")
    assert report.profile_id == "general"
    assert report.overall_status == "rejected"
    # its profile_id is not the selected profile's, and general has no use reference_annotation
    assert [(f.rule_id, f.field_path) for f in report.findings] == [("RECORD_INTEGRITY", "$.profile_id"),
                                                                     ("RECORD_INTEGRITY", "$.requested_uses")]


@pytest.mark.parametrize("kind", ["path", "str", "Profile"])
def test_a_profile_outside_the_built_ins_is_used_when_given(tmp_path: Path, kind: str) -> None:
    """A record naming a non-built-in profile is validated against the profile file given (path, str or Profile)."""
    text = (EXAMPLES.parent / "profiles" / "general.yaml").read_text(encoding="utf-8")
    path = tmp_path / "lab-general.yaml"
    path.write_text(text.replace("id: general", "id: lab-general", 1), encoding="utf-8")
    profile: Any = {"path": path, "str": str(path), "Profile": load_profile(path)}[kind]
    rec = record("general")
    rec["profile_id"] = "lab-general"
    report = bioevidence.validate(rec, profile=profile)
    assert report.profile_id == "lab-general"
    assert report.overall_status == "admitted", report.to_json()
    unbound = bioevidence.validate(rec)  # without it: not a built-in profile, rejected
    assert unbound.overall_status == "rejected"


@pytest.mark.parametrize("profile", [42, ["general"]])
def test_a_profile_that_is_no_name_path_or_profile_is_a_configuration_error(profile: Any) -> None:
    """profile=42 or a list is refused as a ConfigurationError that says what a profile may be."""
    with pytest.raises(ConfigurationError, match="profile must be a built-in name, a path or a Profile"):
        bioevidence.validate(record("general"), profile=profile)


def test_the_grounders_given_run() -> None:
    """A grounder passed to validate() runs: its BEV017 (error) rejects the admitted example and it is named."""
    finding = Finding("BEV017", "error", "the label is not the term's name", "$.statement.object.label",
                      ["research_summary"])
    report = bioevidence.validate(ADMITTED, grounders=[Says(finding)])
    assert report.overall_status == "rejected"
    assert report.reason_codes() == ["BEV017"]
    assert report.grounding == ["custom:says"]


def test_grounding_false_accepts_an_unchecked_quote_and_the_default_sends_it_to_review() -> None:
    """The quoted claim with no literature grounder: review (BEV029) by default, admitted with grounding=False."""
    default = bioevidence.validate(QUOTED)
    assert default.overall_status == "review_required"
    assert default.reason_codes() == ["BEV029"]
    off = bioevidence.validate(QUOTED, grounding=False)
    assert off.overall_status == "admitted"
    assert off.grounding_off is True
    assert "BEV029" not in {f.rule_id for f in off.findings}


def test_a_grounder_code_outside_the_catalogue_rejects_every_requested_use() -> None:
    """Fail closed: the GROUNDER_FAILURE for an unknown code blocks each use, so each use decision is rejected."""
    uses = ["knowledge_base", "research_summary"]
    later = Finding("BEV031", "info", "quoted from a caption", "$.evidence_items[0].extracted_text")
    report = bioevidence.validate(record("general", uses),
                                  grounders=[Says(Finding("BEV999", "info", "made up", "$"), more=(later,))])
    assert later in report.findings  # the grounder's other findings are still read and reported
    assert report.overall_status == "rejected"
    (failure,) = [f for f in report.findings if f.rule_id == "GROUNDER_FAILURE"]
    assert (failure.severity, failure.blocking_uses) == ("error", uses)
    assert [(d.use, d.admission_status, d.reason_codes) for d in report.use_decisions] == [
        (use, "rejected", ["GROUNDER_FAILURE"]) for use in uses]


TWO_USES = ["knowledge_base", "research_summary"]


@pytest.mark.parametrize(("code", "written", "expected"), [
    pytest.param("BEV017", ["knowledge_base"], {"knowledge_base": "rejected", "research_summary": "rejected"},
                 id="scope-all-blocks-every-use"),
    pytest.param("BEV020", ["knowledge_base"], {"knowledge_base": "review_required", "research_summary": "admitted"},
                 id="scope-use-blocks-the-use-named"),
    pytest.param("BEV020", [], {"knowledge_base": "review_required", "research_summary": "review_required"},
                 id="scope-use-naming-none-blocks-every-use"),
    pytest.param("BEV020", ["training_data"], {"knowledge_base": "review_required",
                                               "research_summary": "review_required"},
                 id="scope-use-naming-an-unrequested-use-blocks-every-use"),
])
def test_a_grounder_finding_blocks_the_uses_its_catalogue_scope_says(code: str, written: list[str],
                                                                      expected: dict[str, str]) -> None:
    """Scope all blocks every requested use; scope use blocks the requested uses named, else every use."""
    finding = Finding(code, "error" if code == "BEV017" else "review", "seen by the grounder", "$.evidence_items[0]",
                      written)
    report = bioevidence.validate(record("general", TWO_USES), grounders=[Says(finding)])
    assert {d.use: d.admission_status for d in report.use_decisions} == expected, report.to_json()
    (found,) = [f for f in report.findings if f.rule_id == code]
    assert found.blocking_uses == [use for use, status in expected.items() if status != "admitted"]


def test_a_grounder_finding_keeps_its_fix_when_the_catalogue_corrects_its_severity() -> None:
    """BEV017 written as info becomes an error blocking every use, and the fix the grounder gave stays with it."""
    fix = Fix("replace", "$.statement.object.label", "B cell")
    finding = Finding("BEV017", "info", "the label is not the term's name", "$.statement.object.label", [], fix)
    report = bioevidence.validate(record("general", TWO_USES), grounders=[Says(finding)])
    (found,) = [f for f in report.findings if f.rule_id == "BEV017"]
    assert (found.severity, found.blocking_uses, found.fix) == ("error", TWO_USES, fix)
