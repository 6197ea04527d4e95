"""Files bioevidence writes get ordinary permissions: the umask for a new file, the old mode for a
replaced one, never the 0600 of the temporary file they are written through (issue 13, item 4)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bioevidence.io import atomic_write_text, current_umask

REPO = Path(__file__).resolve().parents[1]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("umask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)],
                         ids=["umask-022", "umask-002", "umask-077"])
def test_validate_output_file_follows_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    """`validate -o` run under a umask creates its report with 0666 less that umask."""
    out = tmp_path / "reports.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "bioevidence", "validate", str(REPO / "examples" / "records"), "--no-grounding",
         "-o", str(out)],
        preexec_fn=lambda: os.umask(umask), capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert mode(out) == expected


def test_replacing_a_file_keeps_its_mode(tmp_path: Path) -> None:
    """Rewriting an existing file keeps the mode its owner gave it."""
    target = tmp_path / "summary.md"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert mode(target) == 0o640


def test_current_umask_reads_without_changing_it() -> None:
    """The umask read for new files is the process's own, and reading it leaves it as it was."""
    old = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        assert current_umask() == 0o027
    finally:
        os.umask(old)
