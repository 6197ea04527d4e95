"""The built-in ``cell-type`` profile runs its pinned grounders with no flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli
from builders import record


def _cell_record(tmp_path: Path, curie: str, label: str) -> Path:
    rec = record("dataset-label")
    rec["profile_id"] = "cell-type"
    rec["statement"]["object"] = {"id": curie, "label": label, "entity_type": "cell_type"}
    rec["evidence_items"] = rec["evidence_items"][:1]
    rec["statement"]["evidence_lines"][0]["evidence_item_ids"] = [rec["evidence_items"][0]["id"]]
    path = tmp_path / "cell.json"
    path.write_text(json.dumps(rec))
    return path


def test_without_pulled_releases_validate_says_how_to_pull(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, ["validate", str(_cell_record(tmp_path, "CL:0000236", "B cell")),
                                      "--profile", "cell-type"])
    assert result.exit_code == 3
    assert "sources pull" in json.loads(result.stderr)["message"]


def test_pulled_releases_ground_the_label_with_no_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        shared_data: Path) -> None:
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    for name in ("cl", "hgnc"):
        pulled = runner.invoke(cli, ["sources", "pull", name, "--from", str(shared_data / "references")])
        assert pulled.exit_code == 0, pulled.output
    good = runner.invoke(cli, ["validate", str(_cell_record(tmp_path, "CL:0000236", "B cell")),
                               "--profile", "cell-type"])
    assert good.exit_code == 0, good.output
    report = json.loads(good.stdout)
    assert report["grounding"] == ["ontology:CL@2026-06-08", "genes:HGNC@2026-09-30"]
    wrong = runner.invoke(cli, ["validate", str(_cell_record(tmp_path, "CL:0000236", "T cell")),
                                "--profile", "cell-type"])
    assert wrong.exit_code == 1
    finding = json.loads(wrong.stdout)["findings"][0]
    assert finding["rule_id"] == "BEV017" and "CL:0000084" in finding["message"]  # 'T cell' is CL:0000084
