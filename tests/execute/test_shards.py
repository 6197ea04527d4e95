"""Workers read their shard and write their part (issue 29 item 4, "data through the scheduler"):
the client cuts the input at line ends and appends the parts in order, so no record or report passes
through the scheduler or the client's memory, and the output is one process's, byte for byte.

* every cut of a real JSONL batch (blank lines, an unreadable line, a line over the cap, no final
  newline), at every shard size from 1 byte up, gives back exactly the jobs one reader gives;
* ``validate --scheduler local:2 -o`` over JSONL and JSON inputs cut into many shards: the bytes,
  stderr lines and exit code of one process;
* a client killed with SIGKILL mid-run and resumed with ``--resume`` runs only the shards without a
  part and ends with the uninterrupted run's bytes.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bioevidence.gate.inputs import read_jobs
from bioevidence.gate.shards import plan, shard_bytes
from bioevidence.io import MAX_BYTES
from clusters import need_distributed, write_jsonl

pytestmark = pytest.mark.heavy(seconds=35)
FIXED = {"SOURCE_DATE_EPOCH": "1767225600"}  # validated_at fixed: runs compare byte for byte


def _awkward(path: Path, records: list[dict[str, Any]], *, long_line: bool = False) -> Path:
    """Real records with what a cut must keep in place: blank lines, a broken line, a line over the
    cap (optional: 50 MB) and no newline after the last record."""
    lines = [json.dumps(r).encode() for r in records]
    lines.insert(3, b"")
    lines.insert(7, b"   ")
    lines.insert(11, b'{"record_id": "broken", ')
    if long_line:
        lines.insert(13, b'{"padding": "' + b"a" * MAX_BYTES + b'"}')
    path.write_bytes(b"\n".join(lines))
    return path


def _jobs(path: Path, **kw: Any) -> list[tuple[int | None, bytes, str | None]]:
    return [(j.line, j.data, j.error.message if j.error else None) for j in read_jobs(path, **kw)]


def test_every_cut_gives_back_the_jobs_of_one_reader(civic_records: list[dict[str, Any]], tmp_path: Path) -> None:
    batch = _awkward(tmp_path / "records.jsonl", civic_records[:60])
    whole = _jobs(batch)
    size = batch.stat().st_size
    lengths = sorted({len(r) for r in batch.read_bytes().split(b"\n")})
    targets = {1, 2, 100, lengths[len(lengths) // 2], size // 7, size // 2, size - 1, size, size * 3}
    table = []
    for target in sorted(targets):
        shards = plan([batch], tmp_path / "parts", target=target)
        got = [job for shard in shards for job in [(j.line, j.data, j.error.message if j.error else None)
                                                   for j in shard.jobs()]]
        table.append((target, len(shards)))
        assert got == whole, f"target {target}: {len(shards)} shards"
        ranges = [(p.start, p.stop) for s in shards for p in s.pieces]
        assert ranges[0][0] == 0 and ranges[-1][1] == size  # the shards tile the file, end to end
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    print("\n".join(f"shard target {t:>7} bytes: {n:>3} shards" for t, n in table))
    assert table[0][1] == len([x for x in batch.read_bytes().split(b"\n")])  # 1 byte: one line a shard
    assert table[-1][1] == 1


def test_a_line_over_the_cap_stays_one_error_in_its_shard(civic_records: list[dict[str, Any]],
                                                          tmp_path: Path) -> None:
    batch = _awkward(tmp_path / "big.jsonl", civic_records[:20], long_line=True)
    whole = _jobs(batch)
    assert any(m and "MB limit for one record" in m for _, _, m in whole)
    for target in (1 << 20, 8 << 20):
        got = [(j.line, j.data, j.error.message if j.error else None)
               for s in plan([batch], tmp_path / "parts", target=target) for j in s.jobs()]
        assert got == whole


def test_shards_are_sized_from_the_work_alone() -> None:
    assert shard_bytes(0) == shard_bytes(10 << 20) == 4 << 20  # small inputs: at least 4 MB a shard
    assert shard_bytes(1 << 30) == (1 << 30) // 64  # 1 GB: 64 shards of 16 MB
    assert shard_bytes(100 << 30) == 64 << 20  # at most 64 MB a shard


def _validate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bioevidence", "validate", *args], capture_output=True, text=True,
                          env={**os.environ, **FIXED, **(env or {})}, timeout=600, check=False)


def test_sharded_cluster_run_writes_one_process_bytes(civic_records: list[dict[str, Any]], snapshots: Path,
                                                      tmp_path: Path) -> None:
    need_distributed()
    batch = _awkward(tmp_path / "records.jsonl", civic_records[:150])
    single = tmp_path / "single.json"
    single.write_text(json.dumps(civic_records[200]), encoding="utf-8")
    common = [str(batch), str(single), "--profile", "literature-claim", "--snapshot-dir", str(snapshots),
              "--format", "jsonl"]
    one = _validate(*common, "--workers", "1", "-o", str(tmp_path / "one.jsonl"))
    assert one.returncode == 3, one.stderr  # the broken line: an input error in the batch
    sharded = _validate(*common, "--scheduler", "local:2", "-o", str(tmp_path / "dask.jsonl"),
                        env={"BIOEVIDENCE_SHARD_BYTES": "20000"})
    assert sharded.returncode == one.returncode, sharded.stderr
    assert sharded.stderr == one.stderr and '"input_error"' in one.stderr
    assert (tmp_path / "dask.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert not (tmp_path / "dask.jsonl.parts").exists() and not (tmp_path / "dask.jsonl.partial").exists()
    assert len(plan([batch, single], tmp_path / "p", target=20000)) >= 10  # it was cut into many shards


def test_a_killed_client_resumes_running_only_the_shards_without_a_part(
        civic_records: list[dict[str, Any]], snapshots: Path, tmp_path: Path) -> None:
    need_distributed()
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records * 2)
    common = [str(batch), "--profile", "literature-claim", "--snapshot-dir", str(snapshots), "--format", "jsonl"]
    env = {**os.environ, **FIXED, "BIOEVIDENCE_SHARD_BYTES": "40000"}
    out = tmp_path / "dask.jsonl"
    parts = tmp_path / "dask.jsonl.parts"
    run = subprocess.Popen([sys.executable, "-m", "bioevidence", "validate", *common, "--scheduler", "local:2",
                            "-o", str(out)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)  # its own process group: the client and its local workers
    deadline = time.monotonic() + 300
    while len(list(parts.glob("part-*.json"))) < 3 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before it could be killed"
    os.killpg(run.pid, signal.SIGKILL)  # the client and its workers at once, as a lost node
    run.wait()
    kept = sorted(p.name for p in parts.glob("part-*.json"))
    total = len(plan([batch], tmp_path / "p", target=40000))
    assert 3 <= len(kept) < total and not out.exists()
    resumed = _validate(*common, "--scheduler", "local:2", "-o", str(out), "--resume", "--progress-every", "60",
                        env={"BIOEVIDENCE_SHARD_BYTES": "40000"})
    one = _validate(*common, "--workers", "1", "-o", str(tmp_path / "one.jsonl"))
    assert resumed.returncode == one.returncode in (1, 2), resumed.stderr
    cluster = json.loads(resumed.stderr.splitlines()[0])
    assert cluster["progress"] == "cluster" and cluster["batches"] == total - len(kept)  # only the rest ran
    assert out.read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert not parts.exists()


def test_resume_refuses_parts_made_for_other_inputs(civic_records: list[dict[str, Any]], snapshots: Path,
                                                    tmp_path: Path) -> None:
    need_distributed()
    batch = write_jsonl(tmp_path / "records.jsonl", civic_records[:10])
    parts = tmp_path / "out.jsonl.parts"
    parts.mkdir()
    (parts / "run.json").write_text(json.dumps({"fingerprint": "another run"}), encoding="utf-8")
    refused = _validate(str(batch), "--profile", "literature-claim", "--snapshot-dir", str(snapshots),
                        "--scheduler", "local:1", "-o", str(tmp_path / "out.jsonl"), "--resume")
    assert refused.returncode == 3 and "asked something else" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
