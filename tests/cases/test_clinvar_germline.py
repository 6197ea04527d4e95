"""The ClinVar germline case (tools/cases/clinvar_germline.py) on the peer's sdist, read in place.

Targets of issue 26: our agreement with NCBI's 2023-09 review status is at least the peer's for
every use, and with grounding no controlled fault and no trust-boundary forgery is admitted; the
peer's figures are read from its committed results. The committed table is the regenerated one.
The grounder's own tests check that each forgery is caught by ``clinvar-snapshot`` for the stated
reason (the rule code at the stated place), so a grounder that stopped comparing would fail here.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bioevidence import SnapshotStore, Validator, load_profile
from cases import clinvar_germline as case
from cases.clinvar_germline_grounder import ClinVarSnapshotGrounder, Sample, build_record, perturb
from cases.common import REPO, CaseResult, example, peer_summary


@pytest.fixture(scope="module")
def result(sdist: Path) -> CaseResult:
    return case.run(sdist)


@pytest.fixture(scope="module")
def peer(sdist: Path) -> dict[str, Any]:
    return peer_summary(example(sdist, "clinvar_germline"))


@pytest.fixture(scope="module")
def sample(sdist: Path) -> Sample:
    return Sample.load(example(sdist, "clinvar_germline"))


@pytest.fixture(scope="module")
def store(sample: Sample) -> Iterator[Path]:
    with case.pinned_store(sample) as folder:
        yield folder


@pytest.fixture(scope="module")
def validators(sdist: Path, sample: Sample, store: Path) -> tuple[Validator, Validator]:
    profile = load_profile(example(sdist, "clinvar_germline") / "profile.yaml")
    return Validator(profile), Validator(profile, grounders=case.grounders_for(store, sample.sha256))


def _record(sample: Sample, stratum: str, dissent: bool = False) -> dict[str, Any]:
    for variant in sample.cases:
        record = build_record(variant, sample)
        lines = {x["direction"] for x in record["statement"]["evidence_lines"]}
        if variant["stratum"] == stratum and ("contradicts" in lines) == dissent:
            return record
    raise AssertionError(f"no {stratum} variant in the sample")


def test_agreement_is_at_least_the_peers_for_every_use(result: CaseResult, peer: dict[str, Any]) -> None:
    policy = peer["policy_reproduction"]
    assert set(result.summary["uses"]) == set(policy)
    for use, theirs in policy.items():
        ours = result.summary["uses"][use]
        assert ours["n"] == theirs["n"] == peer["variants"]
        assert ours["agreement"] >= theirs["agreement"], use


def test_no_fault_or_forgery_is_admitted_with_grounding(result: CaseResult, peer: dict[str, Any]) -> None:
    faults = peer["faults"]
    assert result.summary["controlled_faults"] == {"admitted": 0, "n": faults["controlled_fault"]["grounded"]["n"]}
    assert result.summary["trust_boundary"] == {"admitted": 0, "n": faults["trust_boundary"]["grounded"]["n"]}
    assert result.summary["controlled_faults"]["n"] == 160 and result.summary["trust_boundary"]["n"] == 32


def test_summary_shape_and_the_peers_figures(result: CaseResult, peer: dict[str, Any]) -> None:
    assert set(result.summary) == {"uses", "controlled_faults", "trust_boundary", "peer"}
    theirs = result.summary["peer"]
    assert theirs["uses"] == {u: {"agreement": p["agreement"], "n": p["n"]}
                              for u, p in peer["policy_reproduction"].items()}
    assert theirs["controlled_faults"]["admitted"] == peer["faults"]["controlled_fault"]["grounded"]["false_admissions"]
    assert theirs["trust_boundary"]["admitted"] == peer["faults"]["trust_boundary"]["grounded"]["false_admissions"]


def test_the_committed_table_is_the_regenerated_one(result: CaseResult) -> None:
    table = result.table
    assert table.startswith("# ") and table.endswith("\n")
    assert "## Notes" in table and "## Beyond 0.8.0" in table
    assert str(REPO) not in table and "/tmp" not in table
    assert (REPO / "docs" / "cases" / "clinvar-germline.md").read_text(encoding="utf-8") == table


def test_real_records_are_verified_and_unchanged_by_grounding(sample: Sample,
                                                              validators: tuple[Validator, Validator]) -> None:
    full, grounded = validators
    for stratum in ("single_submitter", "expert_panel", "conflicting"):
        record = _record(sample, stratum, dissent=stratum == "conflicting")
        plain, checked = full.validate(record), grounded.validate(record)
        assert checked.reason_codes() == plain.reason_codes()
        assert checked.verified == {item["id"] for item in record["evidence_items"]}


@pytest.mark.parametrize(("kind", "stratum", "dissent", "status", "code", "where"), [
    ("fabricated_expert_review", "no_criteria", False, "rejected", "BEV017", "$.evidence_items["),
    ("omitted_dissent", "expert_panel", True, "review_required", "BEV018", "$.evidence_items"),
    ("injected_dissent", "expert_panel", False, "rejected", "BEV016", "$.evidence_items["),
    ("claim_swap", "expert_panel", False, "rejected", "BEV017", "$.statement.object.id"),
    ("gene_swap", "expert_panel", False, "rejected", "BEV017", "$.statement.subject.label"),
])
def test_each_forgery_is_caught_by_the_clinvar_grounder_for_its_reason(
        sample: Sample, store: Path, validators: tuple[Validator, Validator], kind: str, stratum: str,
        dissent: bool, status: str, code: str, where: str) -> None:
    full, grounded = validators
    forged = perturb(_record(sample, stratum, dissent), kind)
    assert kind == "injected_dissent" or full.validate(forged).overall_status == "admitted"
    report = grounded.validate(forged)
    assert report.overall_status == status
    grounding = ClinVarSnapshotGrounder(SnapshotStore(store), sample.sha256).ground(forged)
    assert {f.rule_id for f in grounding.findings} == {code}
    assert all(f.field_path.startswith(where) for f in grounding.findings)
    assert all(f.blocking_uses == forged["requested_uses"] for f in grounding.findings)


def test_a_tampered_or_missing_sample_fails_closed(sample: Sample, tmp_path: Path) -> None:
    record = _record(sample, "expert_panel")
    missing = ClinVarSnapshotGrounder(SnapshotStore(tmp_path), sample.sha256).ground(record)
    assert [f.rule_id for f in missing.findings] == ["BEV015"] and not missing.verified
    (tmp_path / f"{sample.sha256}.jsonl.gz").write_bytes(gzip.compress(b'{"variation_id": "0"}\n', mtime=0))
    tampered = ClinVarSnapshotGrounder(SnapshotStore(tmp_path), sample.sha256).ground(record)
    assert [f.rule_id for f in tampered.findings] == ["BEV014"] and not tampered.verified
