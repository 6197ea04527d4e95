"""The existing-scheduler recipe of docs/scale.md, run as written: ``dask scheduler`` and ``dask worker``
processes found through a scheduler file. The SLURM recipes run on a real SLURM in test_slurm.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from clusters import (
    need_distributed,
    scheduler_and_workers,
    without_timestamps,
    write_jsonl,
)

BIN = Path(sys.executable).parent


def _bioevidence(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("bioevidence", path=str(BIN)) or "bioevidence"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, check=False)


def _same_reports(records: list[dict[str, Any]], snapshots: Path, tmp_path: Path, *where: str) -> None:
    """``where``: ``--scheduler ADDRESS`` or ``--scheduler-file FILE``."""
    batch = write_jsonl(tmp_path / "records.jsonl", records)
    common = [str(batch), "--profile", "literature-claim", "--snapshot-dir", str(snapshots), "--format", "jsonl"]
    one = _bioevidence("validate", *common, "--workers", "1", "-o", str(tmp_path / "one.jsonl"))
    dask = _bioevidence("validate", *common, *where, "-o", str(tmp_path / "dask.jsonl"))
    assert dask.returncode == one.returncode in (1, 2), dask.stderr
    assert dask.stderr == one.stderr
    assert without_timestamps((tmp_path / "dask.jsonl").read_text()) == without_timestamps(
        (tmp_path / "one.jsonl").read_text())


def test_an_existing_scheduler_found_through_a_scheduler_file(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    need_distributed()
    file = tmp_path / "scheduler.json"
    with scheduler_and_workers(file, 2):
        _same_reports(civic_records, snapshots, tmp_path, "--scheduler-file", str(file))  # issue 29 item 4

