"""Benchmark the offline librarian: index build throughput (MB/s of JATS) and median ask latency.

Usage: .venv/bin/python tools/bench_librarian.py [--data ../shared/data] [--out /tmp/bench_librarian]

Builds an index over ../shared/data/jats + civic_corpus/snapshots (JATS bytes as read from disk,
decompressed), then asks CIViC evidence statements (first 50) as questions; prints the median
latency after one warm-up question (the lexicon and idf table load once per process).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path


def jats_bytes(folder: Path) -> int:
    total = 0
    for p in folder.rglob("*"):
        if p.name.endswith((".xml", ".nxml")):
            total += p.stat().st_size
        elif p.name.endswith((".xml.gz", ".nxml.gz")):
            total += len(gzip.decompress(p.read_bytes()))
    return total


def main() -> None:
    from bioevidence.librarian.index import build_index
    from bioevidence.librarian.librarian import Librarian

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    ap.add_argument("--out", default="/tmp/bench_librarian_index")
    ap.add_argument("--questions", type=int, default=50)
    args = ap.parse_args()
    data = Path(args.data)
    sources = [data / "jats", data / "civic_corpus" / "snapshots"]
    size = sum(jats_bytes(s) for s in sources)
    stats = build_index(sources, args.out)
    print(f"index build: {stats.docs} docs, {stats.passages} passages, {size / 1e6:.1f} MB JATS in "
          f"{stats.seconds:.1f} s = {size / 1e6 / stats.seconds:.2f} MB/s")
    with gzip.open(data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        questions = [json.loads(x)["evidence_statement"] for x in fh][: args.questions]
    t0 = time.perf_counter()
    lib = Librarian(args.out, references=data / "references")
    lib.ask(questions[0])
    print(f"first ask incl. lexicon + idf load: {time.perf_counter() - t0:.2f} s")
    lat = []
    for q in questions:
        t = time.perf_counter()
        lib.ask(q)
        lat.append(time.perf_counter() - t)
    print(f"ask latency over {len(lat)} questions: median {statistics.median(lat) * 1000:.0f} ms, "
          f"max {max(lat) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
