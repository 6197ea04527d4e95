"""On a real single-node SLURM (slurmctld + slurmd + munge on loopback, tests/slurm.py), the two ways an
HPC user runs bioevidence (issue 29 item 4), each compared byte for byte with one process:

* dask-jobqueue's ``SLURMCluster`` submitting real ``sbatch`` jobs, one of them cancelled with
  ``scancel`` mid-run (a node lost): the other worker finishes and the reports are unchanged;
* ``examples/slurm/validate.sbatch``: one ``sbatch --wait`` job that starts its scheduler and
  workers and runs ``validate --scheduler-file``, with no Python session kept open.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import slurm
from clusters import need_distributed, wait_for_workers, without_timestamps, write_jsonl

pytestmark = pytest.mark.heavy(seconds=60)

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def _exe() -> str:
    return shutil.which("bioevidence", path=str(BIN)) or "bioevidence"


def _common(batch: Path, snapshots: Path) -> list[str]:
    return [str(batch), "--profile", "literature-claim", "--snapshot-dir", str(snapshots), "--format", "jsonl"]


def _one_process(batch: Path, snapshots: Path, out: Path) -> int:
    done = subprocess.run([_exe(), "validate", *_common(batch, snapshots), "--workers", "1", "-o", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (1, 2), done.stderr
    return done.returncode


def test_dask_jobqueue_runs_real_sbatch_jobs_and_a_cancelled_job_changes_no_report(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    need_distributed()
    from dask_jobqueue import SLURMCluster

    # 4 copies of the 378 CIViC records (half quote the paper, half paraphrase it, whose diagnosis reads
    # the whole paper): about 10 s in one process, long enough to lose a job mid-run
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records * 4)
    expected = _one_process(batch, snapshots, tmp_path / "one.jsonl")
    with slurm.single_node_slurm(tmp_path / "slurm"), SLURMCluster(
            cores=1, processes=1, memory="1GB", walltime="00:30:00", log_directory=str(tmp_path / "logs"),
            scheduler_options={"host": "127.0.0.1", "dashboard_address": ":0"},
            worker_extra_args=["--host", "127.0.0.1"]) as cluster:
        cluster.scale(jobs=2)
        wait_for_workers(cluster.scheduler_address, 2)
        running = slurm.jobs()
        assert len(running) == 2, running  # two real SLURM jobs, each holding one worker
        command = [_exe(), "validate", *_common(batch, snapshots), "--scheduler", cluster.scheduler_address,
                   "--progress-every", "0.2", "-o", str(tmp_path / "dask.jsonl")]
        # many small shards (workers read them from the shared filesystem), so a job is lost mid-run
        run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "BIOEVIDENCE_SHARD_BYTES": "100000"})
        assert run.stderr is not None
        lines = []
        for raw in run.stderr:
            lines.append(json.loads(raw))
            if lines[-1].get("batches", 0) >= 2:
                break
        cancelled = subprocess.run(["scancel", running[0]], capture_output=True, text=True, timeout=30, check=False)
        assert cancelled.returncode == 0, cancelled.stderr
        still_running = run.poll() is None
        rest = run.stderr.read()
        code = run.wait(timeout=600)
        run.stderr.close()
    assert still_running, "the run ended before the job was cancelled: nothing was lost mid-run"
    assert code == expected, rest
    assert lines[0]["progress"] == "cluster" and lines[0]["scheduler"] == cluster.scheduler_address
    assert lines[0]["workers"] == 2 and "dashboard" in lines[0]
    progress = [json.loads(line) for line in rest.splitlines() if line.startswith('{"progress"')]
    assert progress and progress[-1]["batches"] == progress[-1]["of"]
    assert without_timestamps((tmp_path / "dask.jsonl").read_text()) == without_timestamps(
        (tmp_path / "one.jsonl").read_text())


def test_the_sbatch_recipe_validates_with_no_python_session_kept_open(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    need_distributed()
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records)
    expected = _one_process(batch, snapshots, tmp_path / "one.jsonl")
    script = REPO / "examples" / "slurm" / "validate.sbatch"
    out = tmp_path / "reports.jsonl"
    with slurm.single_node_slurm(tmp_path / "slurm"):  # sets SLURM_CONF, which sbatch reads
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               "BIOEVIDENCE_PYTHON": sys.executable}
        started = time.monotonic()
        job = subprocess.run(["sbatch", "--wait", "--ntasks=2", "-o", str(tmp_path / "job.log"), str(script),
                              str(batch), "literature-claim", str(snapshots), str(out)],
                             capture_output=True, text=True, timeout=600, env=env, check=False)
        took = time.monotonic() - started
    log = (tmp_path / "job.log").read_text() if (tmp_path / "job.log").exists() else ""
    assert job.returncode == expected, f"{job.stdout}{job.stderr}\n{log}"  # sbatch --wait: the job's exit code
    assert "Submitted batch job" in job.stdout and took < 600
    assert without_timestamps(out.read_text()) == without_timestamps((tmp_path / "one.jsonl").read_text())
    cluster_line = next(json.loads(line) for line in log.splitlines() if line.startswith('{"progress": "cluster"'))
    assert cluster_line["workers"] >= 1 and cluster_line["scheduler"].startswith("tcp://")  # the batch log says where
