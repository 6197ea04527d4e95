"""Issue 24 item 15: messages name the likely cause.

An empty file says "empty", a misspelt field names the allowed one it is close to (and the fix
renames it), a missing profile file says "no such file", and ``sources pull --from`` takes the
release as downloaded from upstream (``cl.obo``), a folder holding it or the file itself.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "examples" / "labels" / "01_b_cell.json"


@pytest.mark.parametrize("name,content", [("empty.json", b""), ("blank.yaml", b"\n\n"), ("bom.json", b"\xef\xbb\xbf")])
def test_an_empty_file_is_called_empty(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 3
    error = json.loads(result.stderr)
    assert error["message"].startswith("the file is empty") and error["line"] == 1


def test_a_misspelt_field_names_the_one_meant_and_the_fix_renames_it(tmp_path: Path) -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    item = record["evidence_items"][0]
    item["extracted_txt"] = item.pop("extracted_text")
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path), "--no-grounding"])
    assert result.exit_code == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert "did you mean 'extracted_text'?" in finding["message"]
    assert finding["fix"] == {"action": "rename", "field_path": "$.evidence_items[0].extracted_txt",
                              "value": "extracted_text"}
    text = CliRunner().invoke(cli, ["validate", str(path), "--no-grounding", "--format", "text"])
    assert "fix: rename the field extracted_txt to extracted_text" in text.stdout
    record["evidence_items"][0]["zzz"] = 1  # nothing close: removed, no guess
    path.write_text(json.dumps(record), encoding="utf-8")
    messages = [f["message"] for f in json.loads(CliRunner().invoke(cli, ["validate", str(path),
                                                                           "--no-grounding"]).stdout)["findings"]]
    assert any(m.startswith('unknown field "zzz" (objects are closed)') for m in messages), messages


def test_a_missing_profile_file_says_no_such_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(RECORD), "--profile", str(tmp_path / "mine.yaml")])
    assert result.exit_code == 3
    assert "no such file" in json.loads(result.stderr)["message"]
    folder = CliRunner().invoke(cli, ["validate", str(RECORD), "--profile", str(tmp_path)])
    assert "is a folder, not a profile file" in json.loads(folder.stderr)["message"]


def test_sources_pull_takes_the_upstream_file_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   shared_data: Path) -> None:
    mirror = tmp_path / "downloads"
    mirror.mkdir()
    upstream = mirror / "cl.obo"  # what https://github.com/obophenotype/cell-ontology/releases/... serves
    upstream.write_bytes(gzip.decompress((shared_data / "references" / "cl_2026-06-08.obo.gz").read_bytes()))
    runner = CliRunner()
    for n, given in enumerate((mirror, upstream)):
        monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / f"home{n}"))
        result = runner.invoke(cli, ["sources", "pull", "cl", "--from", str(given)])
        assert result.exit_code == 0, result.output
        assert (tmp_path / f"home{n}" / "releases" / "cl_2026-06-08.obo").read_bytes() == upstream.read_bytes()
    upstream.write_bytes(upstream.read_bytes()[:-100])  # not the pinned bytes: refused
    monkeypatch.setenv("BIOEVIDENCE_HOME", str(tmp_path / "home2"))
    refused = runner.invoke(cli, ["sources", "pull", "cl", "--from", str(upstream)])
    assert refused.exit_code == 3 and not (tmp_path / "home2" / "releases" / "cl_2026-06-08.obo").exists()
