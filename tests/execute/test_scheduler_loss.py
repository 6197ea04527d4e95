"""Losing the scheduler mid-run (issue 29 item 4): in 2 of 12 kills the client used to wait forever
("closing client"), and in 1 it exited 1 with a ClosedClientError traceback. Killed with SIGKILL
while a batch runs, the scheduler's loss is now one JSON error line and exit 3 within a bounded time,
with nothing written to the output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from clusters import need_distributed, scheduler_and_workers, write_jsonl

pytestmark = pytest.mark.heavy(seconds=60)


@pytest.mark.parametrize("kill_after", [2.0, 5.0])
def test_a_killed_scheduler_ends_the_run_with_exit_3_and_no_output(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path, kill_after: float) -> None:
    need_distributed()
    file = tmp_path / "scheduler.json"
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records * 20)  # long enough to be mid-run
    out = tmp_path / "out.jsonl"
    with scheduler_and_workers(file, 1) as sched:
        run = subprocess.Popen([sys.executable, "-m", "bioevidence", "validate", str(batch), "--profile",
                                "literature-claim", "--snapshot-dir", str(snapshots), "--scheduler-file",
                                str(file), "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "BIOEVIDENCE_DASK_GRACE": "20"})
        time.sleep(kill_after)
        assert run.poll() is None, "the run finished before the scheduler could be killed"
        sched.send_signal(signal.SIGKILL)
        t0 = time.monotonic()
        try:
            _, err = run.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            run.kill()
            pytest.fail("the client never exited after losing its scheduler")
        waited = time.monotonic() - t0
    assert run.returncode == 3, err
    assert waited < 120, waited
    lines = []
    for line in filter(str.strip, err.splitlines()):  # every stderr line is JSON
        try:
            lines.append(json.loads(line))
        except ValueError:
            pytest.fail(f"a stderr line is not JSON: {line!r}\n{err}")
    assert lines[-1]["error"] == "cluster_error", lines
    assert "Traceback" not in err
    assert not out.exists(), "a lost run left an output file"
