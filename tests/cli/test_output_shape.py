"""Issue 24 item 13: ``validate DIR/`` prints the same shape whatever the number of files.

One record file named on the command line gets one JSON report (0.8.0's output); a folder, a JSONL
file or a file list gets JSONL, one report per record naming ``file`` and ``line``, however many
records it holds. ``line`` is a number everywhere: reports, error entries, stderr lines.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bioevidence.cli import cli

REPO = Path(__file__).resolve().parents[2]
RECORDS = sorted((REPO / "examples" / "records").glob("*.json"))


def _validate(*args: str) -> tuple[int, list[dict[str, object]], list[dict[str, object]]]:
    result = CliRunner().invoke(cli, ["validate", "--no-grounding", *args])
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    errors = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    return result.exit_code, lines, errors


@pytest.mark.parametrize("count", [1, 2, len(RECORDS)])
def test_a_folder_gives_jsonl_with_file_and_line_for_any_number_of_files(tmp_path: Path, count: int) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    for path in RECORDS[:count]:
        shutil.copy(path, folder / path.name)
    code, lines, _ = _validate(str(folder))
    assert code in (0, 1, 2)
    assert len(lines) == count
    for report in lines:
        assert list(report)[:2] == ["file", "line"] and report["line"] == 1
        assert Path(str(report["file"])).parent == folder


def test_a_jsonl_file_of_one_record_is_a_batch(tmp_path: Path) -> None:
    batch = tmp_path / "one.jsonl"
    batch.write_text(json.dumps(json.loads(RECORDS[0].read_text(encoding="utf-8"))) + "\n", encoding="utf-8")
    _, lines, _ = _validate(str(batch))
    assert len(lines) == 1 and lines[0]["file"] == str(batch) and lines[0]["line"] == 1


def test_one_record_file_is_one_json_report() -> None:
    result = CliRunner().invoke(cli, ["validate", "--no-grounding", str(RECORDS[0])])
    report = json.loads(result.stdout)
    assert "overall_status" in report and "file" not in report
    assert result.stdout.count("\n") > 1  # indented, as 0.8.0 writes it


def test_line_is_a_number_in_reports_error_entries_and_stderr(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    shutil.copy(RECORDS[0], folder / "a.json")
    (folder / "b.json").write_text('{\n  "record_id": "x",\n  "r": [1,\n}\n', encoding="utf-8")  # fails at line 4
    good = json.dumps(json.loads(RECORDS[0].read_text(encoding="utf-8")))
    (folder / "c.jsonl").write_text(f"{good}\n{{broken\n", encoding="utf-8")
    out = tmp_path / "reports.jsonl"
    code, _, errors = _validate(str(folder), "-o", str(out))
    assert code == 3
    entries = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(Path(str(e["file"])).name, e["line"], "error" in e) for e in entries] == [
        ("a.json", 1, False), ("b.json", 4, True), ("c.jsonl", 1, False), ("c.jsonl", 2, True)]
    assert all(type(e["line"]) is int for e in entries)
    assert [(Path(str(e["file"])).name, e["line"]) for e in errors] == [("b.json", 4), ("c.jsonl", 2)]
