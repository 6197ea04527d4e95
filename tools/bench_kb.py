"""Build speed and query speed of a knowledge base: the CIViC works pinned in ../shared/data, as a
.bib built into a knowledge base from the snapshots with no network (every entry at full text).

    .venv/bin/python tools/bench_kb.py [--out /tmp/bioevidence_civic_kb] [--questions 30]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    from bioevidence.librarian.kb.build import build_kb
    from bioevidence.librarian.kb.modes import KbAsker
    from bioevidence.sources.bibtex import snapshot_entries, to_bibtex

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/bioevidence_civic_kb")
    ap.add_argument("--questions", type=int, default=30)
    args = ap.parse_args()
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    snaps = DATA / "civic_corpus" / "snapshots"
    bib = out / "civic.bib"
    bib.write_text(to_bibtex(snapshot_entries(snaps, full_text_only=True)))
    marks: dict[str, float] = {}
    t0 = time.perf_counter()

    def progress(event: dict[str, object]) -> None:
        if event["event"] == "stage":
            marks["acquired"] = time.perf_counter() - t0
        if event["event"] == "encode" and "encode_start" not in marks:
            marks["encode_start"] = time.perf_counter() - t0

    report = build_kb([bib], out / "kb", snapshot_dir=snaps, offline=True, progress=progress)
    total = time.perf_counter() - t0
    enc = total - marks["encode_start"]
    print(json.dumps(report.to_json()))
    print(f"entries {len(report.entries)}: tiers {report.tiers()}")
    print(f"acquire (copy + pin from the snapshots) {marks['acquired']:.1f} s; index + chunking "
          f"{marks['encode_start'] - marks['acquired']:.1f} s; encode {report.chunks} chunks {enc:.1f} s "
          f"({report.chunks / enc:.1f} chunks/s); whole build {total:.1f} s")
    t1 = time.perf_counter()
    again = build_kb([bib], out / "kb", snapshot_dir=snaps, offline=True)
    print(f"rebuild (all resumed, vectors cached): {time.perf_counter() - t1:.1f} s, encoded {again.encoded}")
    with gzip.open(DATA / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        claims = [json.loads(line)["evidence_statement"] for line in fh][: args.questions]
    t2 = time.perf_counter()
    asker = KbAsker(out / "kb")
    asker.ask(claims[0])
    print(f"load (index, vectors, model, lexicon, grounder) + first question: {time.perf_counter() - t2:.1f} s")
    for mode in ("basic", "advanced", "agentic"):
        lat = []
        cited = 0
        for q in claims:
            t = time.perf_counter()
            answer = asker.ask(q, mode)
            lat.append(time.perf_counter() - t)
            cited += len(answer.citations)
        print(f"kb ask --mode {mode} --retriever hybrid: median {statistics.median(lat) * 1e3:.0f} ms, "
              f"max {max(lat) * 1e3:.0f} ms over {len(claims)} CIViC statements; {cited} citations, all gate-verified")


if __name__ == "__main__":
    main()
