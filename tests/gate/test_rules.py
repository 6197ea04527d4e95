"""Every rule the gate itself emits: one record that triggers it, and the nearest valid record that does not.

Grounder rules (BEV014-BEV019, BEV022-BEV026) are triggered in tests/gate/grounders/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bioevidence import Validator
from bioevidence.gate.grounding import Grounding
from builders import OTHER_HASH, adjudication, item, record

Rec = dict[str, Any]


def _set(path: str, value: Any) -> Callable[[Rec], None]:
    def edit(r: Rec) -> None:
        keys = path.split(".")
        target: Any = r
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        last = keys[-1]
        if last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
    return edit


def _do(*edits: Callable[[Rec], None]) -> Callable[[Rec], None]:
    def edit(r: Rec) -> None:
        for e in edits:
            e(r)
    return edit


def _contradict(r: Rec) -> None:
    r["evidence_items"].append(item(9))
    r["statement"]["evidence_lines"].append({"id": "t:line-c", "direction": "contradicts",
                                              "evidence_item_ids": ["t:item-9"]})


def _neutral(r: Rec) -> None:
    r["evidence_items"].append(item(9))
    r["statement"]["evidence_lines"].append({"id": "t:line-c", "direction": "neutral",
                                              "evidence_item_ids": ["t:item-9"]})


def _only_neutral(r: Rec) -> None:
    r["statement"]["evidence_lines"][0]["direction"] = "neutral"


def _dup_item(r: Rec) -> None:
    r["evidence_items"].append(dict(r["evidence_items"][0]))


def _independent(decision: str, reviewer: str = "software:reviewer") -> Callable[[Rec], None]:
    def edit(r: Rec) -> None:
        r["adjudications"].append(adjudication(7, ["knowledge_base"], decision, "software", reviewer))
    return edit


# (id, profile, uses, trigger edit, nearest-valid edit, code, overall status of the trigger)
CASES: list[tuple[str, str, list[str] | None, Callable[[Rec], None], Callable[[Rec], None], str, str]] = [
    ("schema-missing-field", "general", None, lambda r: r.pop("requested_uses"), lambda r: None, "SCHEMA", "rejected"),
    ("schema-bad-date", "general", None, _set("source_artifacts.0.retrieved_at", "2026-13-01"),
     _set("source_artifacts.0.retrieved_at", "2026-12-01T00:00:00Z"), "SCHEMA", "rejected"),
    ("schema-bad-enum", "general", None, _set("evidence_items.0.extraction_method", "guess"),
     _set("evidence_items.0.extraction_method", "deterministic_parser"), "SCHEMA", "rejected"),
    ("schema-unknown-field", "general", None, _set("statement.confidence", 0.9), lambda r: None, "SCHEMA", "rejected"),
    ("integrity-profile-mismatch", "general", None, _set("profile_id", "dataset-label"),
     lambda r: None, "RECORD_INTEGRITY", "rejected"),
    ("integrity-unknown-use", "general", None, _set("requested_uses", ["knowledge_base", "publishing"]),
     _set("requested_uses", ["knowledge_base", "research_summary"]), "RECORD_INTEGRITY", "rejected"),
    ("integrity-duplicate-item", "general", None, _dup_item, lambda r: None, "RECORD_INTEGRITY", "rejected"),
    ("integrity-dangling-source", "general", None, _set("evidence_items.0.source_artifact_id", "t:nowhere"),
     lambda r: None, "RECORD_INTEGRITY", "rejected"),
    ("integrity-unresolved-line", "general", None, _set("statement.evidence_lines.0.evidence_item_ids", ["t:x"]),
     lambda r: None, "RECORD_INTEGRITY", "rejected"),
    ("integrity-duplicate-scope", "general", None, _set("statement.scope", ["a", "a"]),
     lambda r: None, "RECORD_INTEGRITY", "rejected"),
    ("integrity-review-other-statement", "general", None,
     lambda r: r["adjudications"].append(dict(adjudication(1, ["knowledge_base"]), statement_id="t:other")),
     lambda r: r["adjudications"].append(adjudication(1, ["knowledge_base"])), "RECORD_INTEGRITY", "rejected"),
    ("BEV001-rejected", "general", None, _set("statement.statement_status", "rejected"),
     _set("statement.statement_status", "accepted"), "BEV001", "rejected"),
    ("BEV001-superseded", "general", None, _set("statement.statement_status", "superseded"),
     _set("statement.statement_status", "proposed"), "BEV001", "rejected"),
    ("BEV002", "general", None, _set("source_artifacts.0.observed_sha256", OTHER_HASH),
     lambda r: r["source_artifacts"][0].pop("observed_sha256"), "BEV002", "rejected"),
    ("BEV003-predicate", "literature-claim", None, _set("statement.predicate", "causes"),
     _set("statement.predicate", "contributes_to"), "BEV003", "rejected"),
    ("BEV003-subject", "literature-claim", None, _set("statement.subject.entity_type", "protein"),
     _set("statement.subject.entity_type", "variant"), "BEV003", "rejected"),
    ("BEV004", "general", None, _contradict, _neutral, "BEV004", "review_required"),
    ("BEV005", "general", None, _set("evidence_items.0.scope", ["NCBITaxon:10090"]),
     _set("evidence_items.0.scope", ["NCBITaxon:9606"]), "BEV005", "rejected"),
    ("BEV006", "general", None, _only_neutral, lambda r: None, "BEV006", "review_required"),
    ("BEV007", "dataset-label", None, lambda r: r["evidence_items"].pop(1) and
     r["statement"]["evidence_lines"][0]["evidence_item_ids"].pop(1), lambda r: None, "BEV007", "rejected"),
    ("BEV008", "literature-claim", None, _set("evidence_items.0.extraction_method", "llm_extraction"),
     _set("evidence_items.0.extraction_method", "manual_curation"), "BEV008", "review_required"),
    ("BEV009", "literature-claim", None, _set("evidence_items.0.extraction_method", "normalized_string_match"),
     _set("evidence_items.0.extraction_method", "deterministic_parser"), "BEV009", "review_required"),
    ("BEV010", "general", ["training_data"], lambda r: None,
     lambda r: r["adjudications"].append(adjudication(1, ["training_data"])), "BEV010", "rejected"),
    ("BEV010-software-accept", "general", ["training_data"],
     lambda r: r["adjudications"].append(adjudication(1, ["training_data"], agent_type="software")),
     lambda r: r["adjudications"].append(adjudication(1, ["training_data"])), "BEV010", "rejected"),
    ("BEV011", "general", None, lambda r: r["adjudications"].append(adjudication(1, ["knowledge_base"], "reject")),
     lambda r: r["adjudications"].append(adjudication(1, ["knowledge_base"], "accept")), "BEV011", "rejected"),
    ("BEV012", "general", None, lambda r: r["adjudications"].append(adjudication(1, ["knowledge_base"], "defer")),
     lambda r: r["adjudications"].append(adjudication(1, ["knowledge_base"], "accept")), "BEV012", "review_required"),
    ("BEV013", "general", None,
     lambda r: (r["evidence_items"].__setitem__(0, item(1, method="llm_extraction")),
                r["evidence_items"].append(item(2, method="normalized_string_match")),
                r["statement"]["evidence_lines"][0]["evidence_item_ids"].append("t:item-2")),
     lambda r: (r["evidence_items"].__setitem__(0, item(1, method="llm_extraction")),
                r["evidence_items"].append(item(2, method="manual_curation")),
                r["statement"]["evidence_lines"][0]["evidence_item_ids"].append("t:item-2")),
     "BEV013", "review_required"),
]


@pytest.mark.parametrize(("profile", "uses", "trigger", "valid", "code", "status"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_rule_triggers_and_nearest_valid_record_does_not(profile: str, uses: list[str] | None,
                                                         trigger: Callable[[Rec], None],
                                                         valid: Callable[[Rec], None], code: str, status: str) -> None:
    validator = Validator(profile)
    bad = record(profile, uses)
    trigger(bad)
    report = validator.validate(bad)
    assert code in report.reason_codes(), report.to_json()
    assert report.overall_status == status
    good = record(profile, uses)
    valid(good)
    good_report = validator.validate(good)
    assert code not in good_report.reason_codes(), good_report.to_json()
    assert good_report.overall_status == "admitted", good_report.to_json()


def _verified_profile(tmp_path: Any) -> Any:
    path = tmp_path / "verified.yaml"
    path.write_text(
        "id: verified\nversion: '1'\ndescription: needs grounded evidence\npredicates: []\nsubject_types: []\n"
        "object_types: []\nuses:\n  knowledge_base:\n    required_evidence_types: [curated_annotation]\n"
        "    require_human_acceptance: false\n    allow_llm_only: false\n    allow_string_match_only: false\n"
        "    verified_evidence_types: [curated_annotation]\n    require_independent_review: true\n"
    )
    return path


class _Verifies:
    """A real (tiny) grounder: verifies the listed item ids and reports nothing else."""

    name = "test-verifier@1"

    def __init__(self, ids: set[str]) -> None:
        self.ids = frozenset(ids)

    def ground(self, record: Rec) -> Grounding:
        return Grounding([], self.ids)


def test_BEV020_unverified_type_goes_to_review_and_verified_item_admits(tmp_path: Any) -> None:
    path = _verified_profile(tmp_path)
    rec = record("general")
    rec["profile_id"] = "verified"
    rec["adjudications"].append(adjudication(7, ["knowledge_base"], "accept", "software", "software:reviewer"))
    unverified = Validator(path, grounders=[_Verifies(set())]).validate(rec)
    assert unverified.reason_codes() == ["BEV020"] and unverified.overall_status == "review_required"
    no_grounders = Validator(path).validate(rec)
    assert "BEV020" in no_grounders.reason_codes()
    verified = Validator(path, grounders=[_Verifies({"t:item-1"})]).validate(rec)
    assert verified.overall_status == "admitted", verified.to_json()
    assert verified.grounding == ["test-verifier@1"]


@pytest.mark.parametrize(("reviews", "status"), [
    pytest.param([], "review_required", id="absent"),
    pytest.param([("accept", "software:reviewer")], "admitted", id="independent-accept"),
    pytest.param([("accept", "software:reviewer"), ("defer", "software:other")], "review_required", id="mixed"),
    pytest.param([("reject", "software:reviewer")], "review_required", id="reject-is-review-not-reject"),
    pytest.param([("accept", "software:author")], "review_required", id="author-is-not-independent"),
])
def test_BEV021_independent_review(tmp_path: Any, reviews: list[tuple[str, str]], status: str) -> None:
    path = _verified_profile(tmp_path)
    rec = record("general", items=[item(1, created_by={"id": "software:author", "agent_type": "software"})])
    rec["profile_id"] = "verified"
    for n, (decision, who) in enumerate(reviews):
        rec["adjudications"].append(adjudication(n, ["knowledge_base"], decision, "software", who))
    report = Validator(path, grounders=[_Verifies({"t:item-1"})]).validate(rec)
    assert report.overall_status == status
    assert ("BEV021" in report.reason_codes()) == (status != "admitted")


class _Broken:
    name = "broken@0"

    def ground(self, record: Rec) -> Grounding:
        raise RuntimeError("index file unreadable")


def test_a_failing_grounder_never_admits_the_record() -> None:
    report = Validator("general", grounders=[_Broken()]).validate(record())
    assert report.overall_status == "rejected"
    assert report.reason_codes() == ["GROUNDER_FAILURE"]
    assert "index file unreadable" in report.findings[0].message


def test_use_scoped_findings_block_only_their_use() -> None:
    rec = record("general", ["knowledge_base", "training_data"])
    report = Validator("general").validate(rec)
    assert report.decision("knowledge_base") == "admitted"
    assert report.decision("training_data") == "rejected"
    assert report.overall_status == "rejected"  # any error finding rejects overall, as in the reference


def test_structural_findings_stop_before_contracts() -> None:
    rec = record("general", ["training_data"])
    rec["statement"]["statement_status"] = "rejected"
    rec["evidence_items"][0]["source_artifact_id"] = "t:missing"
    report = Validator("general").validate(rec)
    assert report.reason_codes() == ["RECORD_INTEGRITY"]


def test_fixable_findings_carry_a_machine_readable_fix() -> None:
    rec = record("literature-claim")
    rec["statement"]["predicate"] = "causes"
    rec["evidence_items"][0]["scope"] = ["NCBITaxon:10090"]
    report = Validator("literature-claim").validate(rec)
    fixes = {f.rule_id: f.fix for f in report.findings}
    assert fixes["BEV003"] is not None and fixes["BEV003"].value == ["associated_with", "contributes_to"]
    assert fixes["BEV005"] is not None and fixes["BEV005"].field_path == "$.evidence_items[0].scope"
    assert fixes["BEV005"].value == ["NCBITaxon:9606"]
    assert report.to_dict()["findings"][0]["fix"]["action"] in {"choose", "replace"}


def test_every_catalogue_code_is_emitted_by_some_test(request: pytest.FixtureRequest) -> None:
    """Each code the gate can emit appears in a report some test of this session produced (not merely
    in a test's text): codes are collected from every report as the suite runs (tests/conftest.py)."""
    from conftest import whole_suite
    from emitted import EMITTED, missing

    if not whole_suite(request.config):
        pytest.skip("checked only when the whole suite runs (the codes come from every other test)")
    absent = missing(EMITTED)
    assert absent == [], f"no test run emitted {absent}: add a test whose record gets these findings"


def test_an_unknown_code_is_refused_naming_the_catalogue() -> None:
    from bioevidence.gate.rules import rule

    assert rule("BEV017").severity == "error" and rule("BEV004").route == "judgment"
    with pytest.raises(KeyError, match=r"rule 'BEV999' is not in the catalogue \(bioevidence.gate.rules\)"):
        rule("BEV999")


def test_rules_doc_is_generated_from_the_catalogue() -> None:
    """docs/rules.md is the catalogue rendered (here, in the gate group of tools/mutation.py, so that a
    mutant of ``render_markdown`` fails a test of its own group)."""
    from bioevidence.gate.rules import render_markdown

    doc = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert doc.read_text(encoding="utf-8") == render_markdown(), "run `python -m bioevidence.gate.rules docs/rules.md`"
