"""The two recipes of docs/scale.md, run as written as far as this machine allows: an existing
scheduler (``dask scheduler`` and ``dask worker`` processes, found through a scheduler file) and
SLURM through dask-jobqueue (its generated job script run with bash, as sbatch would run it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clusters import (
    need_distributed,
    processes,
    scheduler_and_workers,
    wait_for_workers,
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


def test_slurm_through_dask_jobqueue_job_scripts(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    need_distributed()
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        message = "dask-jobqueue is not installed; pip install dask-jobqueue to test the SLURM recipe"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with SLURMCluster(cores=1, processes=1, memory="2GB", walltime="01:00:00",
                      scheduler_options={"host": "127.0.0.1", "dashboard_address": ":0"},
                      worker_extra_args=["--host", "127.0.0.1"]) as slurm:
        text = slurm.job_script()
        assert "#SBATCH" in text and slurm.scheduler_address in text and "--name dummy-name" in text
        scripts = []
        for job in range(2):  # what cluster.scale(jobs=2) hands to sbatch: one script per job, named apart
            scripts.append(tmp_path / f"job-{job}.sh")
            scripts[-1].write_text(text.replace("dummy-name", f"SLURMCluster-{job}"))
        with processes(["bash", str(scripts[0])], ["bash", str(scripts[1])]):
            wait_for_workers(slurm.scheduler_address, 2)
            _same_reports(civic_records[:120], snapshots, tmp_path, "--scheduler", slurm.scheduler_address)
