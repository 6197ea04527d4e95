"""Issue 24 item 7: "admitted" says what was checked.

A record of a profile whose ``grounders:`` names ontology or gene releases (``cell-type``), validated
without them, is not admitted as if its identifiers had been checked: BEV029 (review) names the
identifiers and how to give the release, once. Text and markdown reports end with the checks that
ran and those that did not; with the releases the same records get their real verdicts (a swapped
CL id rejected, HER2 on HGNC:3430 named an alias of ERBB2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import bioevidence
from bioevidence.cli import cli
from builders import record

REPO = Path(__file__).resolve().parents[2]
LABELS = REPO / "examples" / "labels"
GENE_PROFILE = """\
id: gene-labels
version: "1"
description: gene labels of clusters, grounded in HGNC
predicates: [has_marker]
subject_types: [cluster]
object_types: [gene]
uses:
  marker_annotation:
    required_evidence_types: [curated_label]
    require_human_acceptance: false
    allow_llm_only: false
    allow_string_match_only: false
grounders:
  genes: [hgnc]
"""


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No release pulled and no snapshot store: what a first day looks like."""
    home = tmp_path / "home"
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(home))
    monkeypatch.delenv("BIOEVIDENCE_STORE", raising=False)
    return home


def _findings(stdout: str) -> list[dict[str, str]]:
    findings: list[dict[str, str]] = json.loads(stdout)["findings"]  # one record: one JSON report
    return findings


def test_a_swapped_cell_type_id_without_the_release_goes_to_review(empty_home: Path) -> None:
    """examples/labels/02 labels CL:0000236 (B cell) 'T cell'; 0.8.0-style admission hid that nothing checked it."""
    result = CliRunner().invoke(cli, ["validate", str(LABELS / "02_wrong_name.json")])
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    assert report["overall_status"] == "review_required"
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "BEV029"]
    assert finding["severity"] == "review"
    assert finding["message"].startswith("the ontology term CL:0000236 was not checked: profile 'cell-type' "
                                         "names the release cl")
    assert "bioevidence sources pull cl" in finding["message"]


def test_the_python_api_does_not_admit_unchecked_identifiers(empty_home: Path) -> None:
    rec = json.loads((LABELS / "01_b_cell.json").read_text(encoding="utf-8"))
    report = bioevidence.validate(rec)
    assert report.overall_status == "review_required"
    assert [f.rule_id for f in report.findings] == ["BEV029"]
    assert "CL:0000236" in report.findings[0].message


def test_a_profile_with_no_releases_is_not_affected(empty_home: Path) -> None:
    """dataset-label names no release: nothing is claimed, nothing is missing."""
    report = bioevidence.validate(record("dataset-label"))
    assert report.overall_status == "admitted"
    assert "BEV029" not in {f.rule_id for f in report.findings}


def _gene_case(tmp_path: Path) -> tuple[Path, Path]:
    profile = tmp_path / "gene-labels.yaml"
    profile.write_text(GENE_PROFILE, encoding="utf-8")
    rec = json.loads((LABELS / "01_b_cell.json").read_text(encoding="utf-8"))
    rec["profile_id"] = "gene-labels"
    rec["requested_uses"] = ["marker_annotation"]
    rec["statement"]["predicate"] = "has_marker"
    rec["statement"]["subject"] = {"id": "example:cluster-3", "label": "cluster 3", "entity_type": "cluster"}
    rec["statement"]["object"] = {"id": "HGNC:3430", "label": "HER2", "entity_type": "gene"}
    path = tmp_path / "her2.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    return profile, path


def test_a_gene_label_without_hgnc_goes_to_review_and_with_it_names_the_approved_symbol(
        empty_home: Path, tmp_path: Path, shared_data: Path) -> None:
    profile, path = _gene_case(tmp_path)
    runner = CliRunner()
    unchecked = runner.invoke(cli, ["validate", str(path), "--profile", str(profile), "--ontology",
                                    str(shared_data / "references" / "cl_2026-06-08.obo.gz")])  # no gene list
    assert unchecked.exit_code == 2, unchecked.output
    (finding,) = _findings(unchecked.stdout)
    assert finding["rule_id"] == "BEV029"
    assert finding["message"].startswith("the gene identifier HGNC:3430 was not checked")
    assert "--genes FILE" in finding["message"]
    checked = runner.invoke(cli, ["validate", str(path), "--profile", str(profile),
                                  "--genes", str(shared_data / "references" / "hgnc_complete_set_2026-09-30.tsv.gz")])
    assert checked.exit_code in (1, 2), checked.output
    rules = {f["rule_id"]: f["message"] for f in _findings(checked.stdout)}
    assert "BEV029" not in rules
    assert any("ERBB2" in message for message in rules.values()), rules
    assert "'HER2' is an alias of ERBB2 (the same gene" in rules["BEV017"]  # item 15: the likely cause, named


def test_text_and_markdown_name_what_was_checked_and_what_was_not(empty_home: Path) -> None:
    runner = CliRunner()
    text = runner.invoke(cli, ["validate", str(LABELS / "01_b_cell.json"), "--format", "text"])
    assert text.exit_code == 2, text.output
    lines = text.stdout.splitlines()
    assert lines[-2] == "1 record: 0 admitted, 1 review required, 0 rejected, 0 input errors"
    assert lines[-1] == ("checked: the record's structure and profile only; not checked: quotes against pinned "
                         "papers (--snapshot-dir), ontology terms (--ontology or the profile's release), gene "
                         "identifiers (--genes or the profile's release)")
    assert text.stdout.count("sources pull") == 1  # BEV029 says its instruction once (no repeated remedy)
    markdown = runner.invoke(cli, ["validate", str(LABELS), "--format", "markdown"])
    assert markdown.exit_code == 2, markdown.output
    assert "**2 records**: 0 admitted, 2 review required, 0 rejected, 0 input errors." in markdown.stdout
    assert "*checked: the record's structure and profile only; not checked: quotes against pinned papers" \
        in markdown.stdout


def test_with_the_releases_the_checks_line_names_them_and_the_swap_is_rejected(
        empty_home: Path, shared_data: Path) -> None:
    runner = CliRunner()
    for name in ("cl", "hgnc"):
        pulled = runner.invoke(cli, ["sources", "pull", name, "--from", str(shared_data / "references")])
        assert pulled.exit_code == 0, pulled.output
    result = runner.invoke(cli, ["validate", str(LABELS), "--profile", "cell-type", "--format", "text"])
    assert result.exit_code == 1, result.output
    assert "BEV029" not in result.stdout
    assert "'T cell' is the name of CL:0000084" in result.stdout
    # item 12: the fix reads as an instruction, its detail after it, as revise() feedback says it
    assert "\n          fix: set the label to \"B cell\" (or cite CL:0000084 if 'T cell' was meant)\n" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "checked: ontology terms (ontology:CL@2026-06-08), gene identifiers (genes:HGNC@2026-09-30); "
        "not checked: quotes against pinned papers (--snapshot-dir)")
