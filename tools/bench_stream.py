"""Peak memory of ``bioevidence validate`` over ever larger JSONL batches (issue 29 item 2).

    .venv/bin/python tools/bench_stream.py [--sizes 100000,500000,2000000] [--work /tmp/bioevidence-stream]

The records are the CIViC ones of ``tools/bench_gate.py`` (one per CIViC evidence item and use,
cycled with fresh ids), written once as the largest JSONL file; each size validates the first N
lines (``head -n N``) in one ``bioevidence validate`` process, reports streamed to ``/dev/null``.
Printed per size: input size, seconds, records/s and the process tree's peak RSS (the largest
resident set of the validating process or any of its workers, from ``getrusage`` of the children).
A flat RSS column is the claim: memory does not grow with the input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gate import civic_records


def write_batch(path: Path, n: int) -> None:
    if path.is_file() and sum(1 for _ in path.open("rb")) >= n:
        return
    base = civic_records(min(n, 10_000))
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            record = dict(base[i % len(base)])
            record["record_id"] = f"{record['record_id']}-{i}"
            fh.write(json.dumps(record) + "\n")


def measure(batch: Path, n: int, work: Path) -> dict[str, float]:
    part = work / f"first-{n}.jsonl"
    if not part.is_file():
        with part.open("wb") as fh:
            subprocess.run(["head", "-n", str(n), str(batch)], stdout=fh, check=True)
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.run([sys.executable, '-m', 'bioevidence', 'validate', sys.argv[1]],"
              " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
              "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script, str(part)], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    code, rss_kb = (int(x) for x in out.stdout.split())
    return {"records": n, "mb_in": part.stat().st_size / 1e6, "seconds": seconds, "per_s": n / seconds,
            "peak_rss_mb": rss_kb / 1024, "exit": code}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,500000,2000000")
    ap.add_argument("--work", default="/tmp/bioevidence-stream", type=Path)
    args = ap.parse_args()
    sizes = sorted(int(x) for x in args.sizes.split(","))
    args.work.mkdir(parents=True, exist_ok=True)
    batch = args.work / "civic.jsonl"
    write_batch(batch, sizes[-1])
    print(f"this machine: {len(os.sched_getaffinity(0))} CPUs; one `bioevidence validate FILE > /dev/null` a size\n")
    print("| records | input MB | seconds | records/s | peak RSS MB (process tree) | exit |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        m = measure(batch, n, args.work)
        print(f"| {n:,} | {m['mb_in']:,.0f} | {m['seconds']:.1f} | {m['per_s']:,.0f} | {m['peak_rss_mb']:,.0f} | "
              f"{m['exit']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
