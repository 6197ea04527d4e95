"""What an error prints and what it leaves written (issue 13, item 3), as README and docs/records.md say:

* a usage or configuration error is one JSON line on stderr, exit 3, and writes nothing (an existing
  ``-o`` file is left as it was);
* in a batch, a file or line that cannot be read is one JSON line on stderr and exit 3; every other
  record is still validated, and ``-o`` gets every report plus an error entry in the bad one's place,
  written atomically.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from builders import record

ENV_KEEP = ("PATH", "HOME", "LANG", "SYSTEMROOT")


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, check=False, env={"BIOEVIDENCE_HOME": str(cwd / "home"), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("args", [
    pytest.param(["validate", "--no-such-flag", "r.json"], id="unknown-flag"),
    pytest.param(["validate", "r.json", "--format", "yaml"], id="bad-choice"),
    pytest.param(["validate"], id="no-paths"),
    pytest.param(["review", "decide", "x", "accept"], id="bad-argument"),
    pytest.param(["validate", "r.json", "--profile", "no-such-profile"], id="configuration"),
    pytest.param(["validate", "r.json", "--snapshot-dir", "missing/"], id="missing-folder"),
])
def test_a_usage_or_configuration_error_is_one_json_line_and_writes_nothing(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "r.json").write_text(json.dumps(record()), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text("before\n")
    result = run(*args, "-o", out, cwd=tmp_path) if args[0] == "validate" else run(*args, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    assert error["error"] in ("usage_error", "configuration_error") and error["message"]
    assert out.read_text() == "before\n"
    assert result.stdout == ""


def test_a_batch_with_a_bad_line_writes_every_report_and_the_error_in_its_place(tmp_path: Path) -> None:
    good = json.dumps(record())
    (tmp_path / "batch.jsonl").write_text(f"{good}\n{{broken\n{good}\n", encoding="utf-8")
    out = tmp_path / "reports.jsonl"
    result = run("validate", "batch.jsonl", "-o", out, cwd=tmp_path)
    assert result.returncode == 3
    (line,) = result.stderr.splitlines()
    assert json.loads(line)["line"] == 2  # a number, as in the reports (issue 24 item 13)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["line"], r.get("overall_status"), r.get("error")) for r in rows] == [
        (1, "admitted", None), (2, None, "input_error"), (3, "admitted", None)]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".reports.jsonl.")]  # no temporary left


def test_one_unreadable_record_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{", encoding="utf-8")
    out = tmp_path / "report.json"
    result = run("validate", "r.json", "-o", out, cwd=tmp_path)
    assert result.returncode == 3 and len(result.stderr.splitlines()) == 1
    assert not out.exists()
