"""Worker and thread counts follow the CPUs a process is given, not the node (issue 29 item 4): an
``sbatch -c 1`` job or a ``taskset`` on a many-core node must not start one worker per node core."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from bioevidence.execute.cluster import local_workers
from bioevidence.gate.batch import PARALLEL_THRESHOLD, default_workers
from bioevidence.limits import usable_cpus

PROBE = ("from bioevidence.limits import usable_cpus; from bioevidence.gate.batch import default_workers; "
         "from bioevidence.execute.cluster import local_workers; "
         "print(usable_cpus(), default_workers(10**6), local_workers(None))")


def test_the_affinity_mask_bounds_every_default() -> None:
    """Pinned to one CPU with taskset, the CPUs, the batch's forked workers and ``--scheduler local``'s
    workers are all 1, whatever ``os.cpu_count()`` says."""
    if shutil.which("taskset") is None:
        pytest.skip("taskset (util-linux) is not installed here")
    one = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, env={k: v for k, v in os.environ.items() if not k.startswith("SLURM_")})
    assert one.stdout.split() == ["1", "1", "1"], one.stdout


def test_a_slurm_allocation_caps_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SLURM_CPUS_PER_TASK`` (what ``sbatch -c N`` sets) caps the count; a larger value than the
    affinity mask allows changes nothing."""
    mask = len(os.sched_getaffinity(0))
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    assert usable_cpus() == 1
    assert default_workers(PARALLEL_THRESHOLD) == 1 and local_workers(None) == 1
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", str(mask + 62))
    assert usable_cpus() <= mask
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "not a number")
    assert 1 <= usable_cpus() <= mask


def test_a_small_batch_stays_in_one_process() -> None:
    """Below the parallel threshold forking costs more than it saves: one worker."""
    assert default_workers(PARALLEL_THRESHOLD - 1) == 1
    assert default_workers(PARALLEL_THRESHOLD) == min(usable_cpus(), 8)


def test_cluster_batches_are_cut_from_the_work_not_the_workers_present() -> None:
    """Started right after ``cluster.scale(jobs=2)``, 2,000 records became 4 batches instead of 8:
    the size is now a function of the records alone (at least MIN_BATCHES batches where the records
    allow, each between the task's base and 8 × base)."""
    from bioevidence.execute.cluster import MIN_BATCHES, DaskExecutor, batch_size_for

    assert batch_size_for(2_000, 250) == 250  # 8 batches, however many workers have joined
    assert batch_size_for(100_000, 250) == -(-100_000 // MIN_BATCHES)  # 1,563: 64 batches
    assert batch_size_for(10**7, 250) == 2_000  # capped at 8 x base
    # the executor's own choice reads nothing of the cluster (called without one)
    assert DaskExecutor.batch_size(None, 2_000, 250) == 250  # type: ignore[arg-type]
