"""Benchmark distribution: records/s in one process vs a Dask ``local:2`` cluster, and the cost of a batch.

Workloads (real data from ../shared/data, built as in tools/bench_gate.py and tools/bench_grounders.py):

* ``gate``: 10,000 CIViC ``literature-claim`` records, no grounders (about 10,000 records/s per core);
* ``grounded``: 4,000 records quoting the CIViC papers, validated with the source-bytes and
  literature grounders over the pinned snapshots (several times heavier per record);
* ``sharded``: whole ``validate`` processes from outside, ``--workers 1`` against ``--scheduler`` on the
  running 2-worker cluster with ``-o`` (workers read their shard and write their part): 100,000
  ungrounded records (``--sharded-records``) and 20,000 grounded ones;
* ``index``: ``index build`` over the SciFact corpus, the CIViC snapshots and the JATS folders.

For each: one process (``workers=1``), the fork executor on 2 cores (``workers=2``, this machine's
default for large batches) and Dask ``local:2`` (a LocalCluster of two worker processes on
127.0.0.1, started once; the start is reported apart). Per-batch overhead: a task that only counts
its batch, over the same batches (data shipped there and a count back), and over empty batches
(the fixed cost of a task round trip). Medians over ``--runs``; reports are checked equal.

    .venv/bin/python tools/bench_scale.py [--runs 5] [--only gate,grounded,sharded,index,overhead,cold] [--markdown]

``--markdown`` ends with the tables of docs/performance.md (``sharded``, ``overhead``: the timing step
``distribution``) and of docs/scale.md (``gate``, ``grounded``, ``index`` and the start-up figures of
``cold``: the timing step ``scale-workloads``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gate import DATA, civic_records
from bench_grounders import SNAPSHOTS
from bench_grounders import records as grounded_records


def _count(_context: Any, batch: Any) -> int:
    return len(batch)


class _Nothing:
    key = "bench-nothing"

    def load(self) -> None:
        return None


def _median_time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _strip(results: list[Any]) -> list[str]:
    import re

    return [re.sub(r'"validated_at":"[^"]*"', "", r.text) for r in results]


def bench_validate(name: str, records: list[dict[str, Any]], spec: Any, runs: int, client: Any = None,
                   local: dict[str, Any] | None = None) -> dict[str, Any]:
    """Without ``client``: one process and fork (no Dask thread in this process); with it: Dask,
    compared with the ``local`` figures measured before the cluster started (and its table row)."""
    from bioevidence.gate.batch import run
    from bioevidence.gate.inputs import Job

    jobs = [Job("bench.jsonl", i + 1, json.dumps(r).encode()) for i, r in enumerate(records)]
    n = len(jobs)
    if client is None:
        run(jobs[:50], spec, workers=1)  # load the gate (caches warm) before timing
        one_s, one = _median_time(lambda: run(jobs, spec, workers=1), runs)
        fork_s, fork = _median_time(lambda: run(jobs, spec, workers=2), runs)
        assert _strip(one) == _strip(fork), "reports differ"
        return {"one_s": one_s, "fork_s": fork_s, "reports": _strip(one)}
    assert local is not None
    run(jobs[:50], spec, scheduler=client)  # load the gate on each worker
    dask_s, dask = _median_time(lambda: run(jobs, spec, scheduler=client), runs)
    assert _strip(dask) == local["reports"], "reports differ"
    one_s, fork_s = local["one_s"], local["fork_s"]
    print(f"{name}: {n:,} records; one process {n / one_s:,.0f} records/s ({one_s:.2f} s); fork workers=2 "
          f"{n / fork_s:,.0f}/s ({one_s / fork_s:.2f}x); Dask local:2 {n / dask_s:,.0f}/s ({dask_s:.2f} s, "
          f"{one_s / dask_s:.2f}x one process)")
    return {"row": (f"`run()`, {n:,} records, {name}", f"{n / one_s:,.0f} records/s",
                    f"{n / fork_s:,.0f}/s ({one_s / fork_s:.2f}×)", f"{n / dask_s:,.0f}/s ({one_s / dask_s:.2f}×)")}


def bench_overhead(client: Any, runs: int) -> list[tuple[str, str]]:
    """A task's fixed cost on the cluster (empty batches) and the cost of moving records through it."""
    from bioevidence.execute.cluster import DaskExecutor
    from bioevidence.gate.inputs import Job

    executor = DaskExecutor(client, owns_client=False)
    rows = []
    empty: list[list[int]] = [[] for _ in range(200)]
    wall, _ = _median_time(lambda: list(executor.map(_count, _Nothing(), empty)), runs)
    print(f"overhead: 200 empty batches: {wall / 200 * 1e3:.1f} ms per batch (a task's round trip, 2 in flight "
          f"per worker)")
    rows.append(("one task, empty (its round trip through the scheduler)", f"{wall / 200 * 1e3:.1f} ms"))
    jobs = [Job("bench.jsonl", i + 1, json.dumps(r).encode()) for i, r in enumerate(civic_records(10_000))]
    for size in (250, 1250):
        batches = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        wall, _ = _median_time(lambda b=batches: list(executor.map(_count, _Nothing(), b)), runs)
        mb = sum(len(j.data) for j in jobs) / 1e6
        print(f"overhead: {len(batches)} batches of {size} records ({mb / len(batches):.2f} MB each), counting "
              f"only: {wall / len(batches) * 1e3:.1f} ms per batch ({wall:.2f} s for {mb:.0f} MB)")
        rows.append((f"one task carrying {size:,} records ({mb / len(batches):.2f} MB) through the scheduler, "
                     "counting them only", f"{wall / len(batches) * 1e3:.1f} ms"))
    return rows


def bench_index(runs: int, client: Any = None, local: float | None = None) -> tuple[float, tuple[str, ...]]:
    import shutil
    import tempfile

    from bioevidence.librarian.index import build_index

    sources = [DATA / "claims" / "scifact" / "corpus.jsonl.gz", SNAPSHOTS, DATA / "jats"]
    with tempfile.TemporaryDirectory() as tmp:
        def once() -> Any:
            out = Path(tmp) / "index"
            shutil.rmtree(out, ignore_errors=True)
            return build_index(sources, out, scheduler=client)

        took, stats = _median_time(once, runs)
    if client is None:
        return took, ()
    assert local is not None
    mb = stats.input_bytes / 1e6
    print(f"index: {stats.docs:,} docs, {mb:.1f} MB of text; one process {local:.2f} s ({mb / local:.2f} MB/s); "
          f"Dask local:2 {took:.2f} s ({mb / took:.2f} MB/s, {local / took:.2f}x)")
    return took, (f"`build_index`, SciFact + CIViC snapshots + JATS ({stats.docs:,} docs, {mb:.1f} MB of text)",
                  f"{local:.1f} s", "–", f"{took:.1f} s ({local / took:.2f}×)")


def _cli(*args: str) -> float:
    import os
    import shutil

    exe = shutil.which("bioevidence", path=str(Path(sys.executable).parent)) or "bioevidence"
    start = time.perf_counter()
    done = subprocess.run([exe, "validate", *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "SOURCE_DATE_EPOCH": "1767225600"})
    took = time.perf_counter() - start
    assert done.returncode in (0, 1, 2), done.stderr[-2000:]
    return took


def sharded_files(tmp: Path, workloads: dict[str, tuple[list[dict[str, Any]], list[str]]]) -> dict[str, Any]:
    """Each workload as a JSONL file, and its ``validate`` options."""
    out = {}
    for name, (records, options) in workloads.items():
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        out[name] = (path, len(records), options)
    return out


def bench_sharded(files: dict[str, Any], runs: int, address: str | None,
                  local: dict[str, float]) -> list[tuple[str, str, str, str]]:
    """Whole ``validate`` processes, from outside: ``--workers 1`` (one process) and, with ``address``,
    ``--scheduler ADDRESS`` on the running 2-worker cluster (workers read shards, write parts); the
    output bytes compared."""
    rows = []
    for name, (path, n, options) in files.items():
        one_out, dask_out = path.with_suffix(".one"), path.with_suffix(".dask")
        if address is None:
            local[name] = statistics.median(_cli(str(path), *options, "--workers", "1", "-o", str(one_out))
                                            for _ in range(runs))
            continue
        took = statistics.median(_cli(str(path), *options, "--scheduler", address, "-o", str(dask_out))
                                 for _ in range(runs))
        assert dask_out.read_bytes() == one_out.read_bytes(), "reports differ"
        one = local[name]
        print(f"sharded {name}: {n:,} records, whole process; one process {n / one:,.0f} records/s ({one:.2f} s); "
              f"Dask 2 workers reading shards {n / took:,.0f}/s ({took:.2f} s, {one / took:.2f}x one process)")
        rows.append((f"{name}, {n:,} records", f"{n / one:,.0f} records/s", f"{n / took:,.0f}/s", f"{one / took:.2f}×"))
    return rows


def cold_start(runs: int) -> list[tuple[str, str]]:
    """``bioevidence validate one.json`` with and without ``--scheduler local:2`` (a fresh cluster)."""
    import shutil
    import tempfile

    exe = shutil.which("bioevidence", path=str(Path(sys.executable).parent)) or "bioevidence"
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one.json"
        one.write_text(json.dumps(civic_records(1)[0]))

        def timed(*extra: str) -> float:
            start = time.perf_counter()
            subprocess.run([exe, "validate", str(one), *extra], capture_output=True, check=False)
            return time.perf_counter() - start

        plain = statistics.median(timed() for _ in range(runs))
        local = statistics.median(timed("--scheduler", "local:2") for _ in range(runs))
    imp = statistics.median(float(subprocess.run(
        [sys.executable, "-c", "import time; t = time.perf_counter(); import distributed; "
         "print(time.perf_counter() - t)"], capture_output=True, text=True, check=True).stdout) for _ in range(runs))
    print(f"cold start: `validate one.json` {plain:.2f} s; with --scheduler local:2 {local:.2f} s "
          f"(+{local - plain:.2f} s: import distributed {imp:.2f} s, start 2 workers, load the gate there)")
    return [("`validate one.json`, whole process: plain / `--scheduler local:2` (a fresh cluster, the gate loaded "
             "on both workers)", f"{plain:.2f} s / {local:.2f} s"),
            ("`import distributed`, in a fresh process", f"{imp:.2f} s")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="gate,grounded,sharded,index,overhead,cold")
    parser.add_argument("--markdown", action="store_true", help="end with the tables docs/performance.md shows")
    parser.add_argument("--sharded-records", type=int, default=100_000,
                        help="records of the ungrounded sharded workload (the grounded one has a fifth)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    import shutil
    import tempfile

    from distributed import Client, LocalCluster

    from bioevidence.gate.grounders.config import GrounderOptions
    from bioevidence.gate.spec import GateSpec

    gate = (civic_records(10_000), GateSpec.of("literature-claim"))
    grounded = (grounded_records(4_000), GateSpec.of("general", GrounderOptions(snapshot_dir=SNAPSHOTS)))
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    snap = ["--snapshot-dir", str(SNAPSHOTS)]
    files = sharded_files(tmp, {
        "ungrounded": (civic_records(args.sharded_records), ["--profile", "literature-claim", "--format", "jsonl"]),
        "grounded": (grounded_records(args.sharded_records // 5), ["--profile", "general", *snap, "--format", "jsonl"]),
    }) if "sharded" in only else {}
    local_sharded: dict[str, float] = {}
    bench_sharded(files, args.runs, None, local_sharded)
    sharded_rows: list[tuple[str, str, str, str]] = []
    overhead_rows: list[tuple[str, str]] = []
    # One process and fork first, with no Dask thread in this process competing for the GIL.
    local_gate = bench_validate("gate", *gate, args.runs) if "gate" in only else None
    local_grounded = bench_validate("grounded", *grounded, args.runs) if "grounded" in only else None
    local_index = bench_index(max(1, args.runs // 2))[0] if "index" in only else None
    workload_rows: list[tuple[str, ...]] = []
    start_rows: list[tuple[str, str]] = []
    # The cluster's workers stamp validated_at: fixed as the CLI runs fix it, so the bytes compare.
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(2)
        up = time.perf_counter() - start
        print(f"LocalCluster of 2 worker processes up in {up:.2f} s")
        start_rows.append(("a LocalCluster of 2 worker processes, up (once)", f"{up:.2f} s"))
        if local_gate is not None:
            workload_rows.append(bench_validate("no grounders", *gate, args.runs, client, local_gate)["row"])
        if local_grounded is not None:
            workload_rows.append(bench_validate("source bytes + literature grounders", *grounded, args.runs, client,
                                                local_grounded)["row"])
        if files:
            sharded_rows = bench_sharded(files, args.runs, cluster.scheduler_address, local_sharded)
        if "overhead" in only:
            overhead_rows = bench_overhead(client, args.runs)
        if local_index is not None:
            workload_rows.append(bench_index(max(1, args.runs // 2), client, local_index)[1])
    shutil.rmtree(tmp, ignore_errors=True)
    if "cold" in only:
        start_rows += cold_start(args.runs)
    if args.markdown:
        print_markdown(sharded_rows, overhead_rows, workload_rows, start_rows if workload_rows else [])


def _table(header: str, rows: list[tuple[str, ...]]) -> None:
    """One markdown table after a blank line: the header's cells, then each row's."""
    if rows:
        print(f"\n| {header} |\n|" + "---|" * (header.count(" | ") + 1))
        for row in rows:
            print("| " + " | ".join(row) + " |")


def print_markdown(sharded: list[tuple[str, str, str, str]], overhead: list[tuple[str, str]],
                   workloads: list[tuple[str, ...]], start: list[tuple[str, str]]) -> None:
    """The tables docs/performance.md shows (tools/reproduce.py's timing step ``distribution``) and, for
    the in-process workloads, those of docs/scale.md (step ``scale-workloads``)."""
    _table("`validate -o`, whole process, from outside | one process (`--workers 1`) | Dask, 2 workers reading "
           "shards | 2 workers / 1 process", list(sharded))
    _table("Dask on loopback | measured", list(overhead))
    _table("workload (Python API) | one process | fork, 2 workers | Dask `local:2`", workloads)
    _table("start-up | measured", list(start))

if __name__ == "__main__":
    main()
