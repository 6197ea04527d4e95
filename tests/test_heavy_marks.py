"""tools/heavy_marks.py (issue 30 item 4) reads a JUnit report of the suite and flags the test files
whose ``heavy`` mark is far from their measured time, or that are long and unmarked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import heavy_marks  # noqa: E402


def _junit(path: Path, cases: dict[str, list[float]]) -> Path:
    rows = "".join(f'<testcase classname="{module}" name="t{i}" time="{t}"/>'
                   for module, times in cases.items() for i, t in enumerate(times))
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{rows}</testsuite></testsuites>')
    return path


def test_marks_far_from_the_measure_and_long_unmarked_files_are_flagged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marked = heavy_marks.marks()
    slurm = marked["tests/execute/test_slurm.py"][0]
    report = _junit(tmp_path / "junit.xml", {
        "tests.execute.test_slurm": [slurm / 2, slurm / 4],  # 0.75 × its mark: ok
        "tests.gate.grounders.test_whole_paper": [1.0],  # marked ~290 s, took 1 s: re-mark
        "tests.test_heavy_marks": [40.0],  # unmarked and over the 30 s floor
    })
    assert heavy_marks.measured(report)["tests/execute/test_slurm.py"] == pytest.approx(slurm * 0.75)
    assert heavy_marks.main([str(report)]) == 1
    table = capsys.readouterr().out
    row = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| tests/")}
    assert row["tests/execute/test_slurm.py"].endswith("| ok |")
    assert row["tests/gate/grounders/test_whole_paper.py"].endswith("| re-mark |")
    assert row["tests/test_heavy_marks.py"].endswith("| unmarked |")
    assert row["tests/loop/test_agent_model.py"].endswith("| not run |")  # marked, absent from the report
    assert heavy_marks.main([str(tmp_path / "none.xml")]) == 3
