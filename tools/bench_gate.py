"""Benchmark the gate: batch throughput and cold start of ``bioevidence validate``.

Builds 10,000 records from the CIViC corpus (../shared/data/civic_corpus; one record per CIViC
evidence item and use, cycled with fresh ids until 10,000), writes them as one JSONL file and
validates them with ``bioevidence validate`` without grounders, in one process (``--workers 1``)
and with ``--workers 2`` (whole process: start-up, parsing, validation and writing the reports).
Then times ``bioevidence validate one.json`` cold starts. Prints medians of several runs; with
``--reference-python`` it runs bioai-evidence-validator 0.8.0 side by side (its Python API over
the same records, and its CLI on one record) and prints the ratios.

The CEILING beside each throughput is what no validator can beat: parsing the input lines and
encoding as many reports (the reports this run wrote), with orjson, the fastest JSON library
installed, in one process and nothing else (no start-up, no I/O); with 2 workers, twice that.

``--no-checks`` validates with ``--no-cues --direction off`` (the records' profile,
``literature-claim``, runs the negation cue by default; with no grounder no quote is verified, so
the direction check has nothing to read): the difference is the cues' cost.

    python tools/bench_gate.py [--records 10000] [--runs 3] [--reference-python PATH] [--no-checks]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA", REPO.parent / "shared" / "data"))


def civic_records(n: int) -> list[dict]:
    corpus = DATA / "civic_corpus"
    with gzip.open(corpus / "civic-evidence.jsonl.gz", "rt", encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle]
    works = json.loads((corpus / "snapshots" / "literature.json").read_text())["works"]
    uses = ["research_summary", "knowledge_base"]
    out: list[dict] = []
    cycle = 0
    while len(out) < n:
        for civic in items:
            work = works.get(f"pmid:{civic['citation_id']}", {})
            sha = work.get("fulltext_sha256") or work.get("metadata_sha256") or "0" * 64
            for use in uses:
                if len(out) == n:
                    return out
                rid = f"civic:EID{civic['evidence_id']}/{use}/{cycle}"
                gene = civic["molecular_profile"].split()[0]
                supports = civic["evidence_direction"] == "Supports"
                item = {"id": f"{rid}/evidence/1", "source_artifact_id": f"{rid}/source/1",
                        "locator": f"pmid:{civic['citation_id']}#results",
                        "extracted_text": civic["evidence_statement"], "evidence_type": "publication_result",
                        "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}
                record = {
                    "record_id": rid, "profile_id": "literature-claim",
                    "statement": {
                        "id": f"{rid}/statement",
                        "subject": {"id": f"civic:MP{civic['molecular_profile_id']}",
                                    "label": civic["molecular_profile"], "entity_type": "variant"},
                        "predicate": "associated_with",
                        "object": {"id": f"DOID:{civic['doid'] or '4'}", "label": civic["disease"] or "disease",
                                   "entity_type": "disease"},
                        "scope": ["NCBITaxon:9606"],
                        "evidence_lines": [{"id": f"{rid}/line/1",
                                            "direction": "supports" if supports else "contradicts",
                                            "evidence_item_ids": [item["id"]],
                                            "rationale": f"CIViC {civic['evidence_type']} evidence on {gene}."}],
                        "statement_status": "proposed",
                    },
                    "source_artifacts": [{"id": f"{rid}/source/1", "title": civic["citation"],
                                          "source_type": "publication", "uri": f"pmid:{civic['citation_id']}",
                                          "version": "2026-09-29", "retrieved_at": "2026-09-29T01:12:31Z",
                                          "sha256": sha, "observed_sha256": sha}],
                    "evidence_items": [item],
                    "adjudications": [],
                    "requested_uses": [use],
                }
                out.append(record)
        cycle += 1
    return out


def timed(cmd: list[str], **kw: object) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - start


REFERENCE_API = r"""
import json, sys, time
from bioevidence_validator.engine import RecordValidator
records = [json.loads(l) for l in open(sys.argv[1])]
v = RecordValidator(profile="literature-claim")
t = time.perf_counter()
for r in records: v.validate(r)
print(len(records) / (time.perf_counter() - t))
"""


def parse_encode_seconds(lines: list[bytes], reports: list[Any], runs: int) -> float:
    """Best of ``runs``: seconds to parse ``lines`` and encode ``reports`` with orjson and nothing else
    (the ceiling no validator can beat; tools/bench_grounders.py uses it too)."""
    import orjson

    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for line in lines:
            orjson.loads(line)
        for report in reports:
            orjson.dumps(report)
        best = min(best, time.perf_counter() - start)
    return best


# Run in a fresh process (argv: the batch, its reports, runs); prints records and seconds as JSON.
CEILING = r"""
import json, sys
import orjson
sys.path.insert(0, sys.argv[4])
from bench_gate import parse_encode_seconds
lines = open(sys.argv[1], "rb").read().splitlines()
reports = [orjson.loads(line) for line in open(sys.argv[2], "rb").read().splitlines()]
print(json.dumps({"records": len(lines), "seconds": parse_encode_seconds(lines, reports, int(sys.argv[3]))}))
"""


def ceiling(batch: Path, reports: Path, runs: int) -> float:
    """Records a second of JSON parse of the input lines + JSON encode of the reports alone (best of
    ``runs``, in a fresh process: the figure no validator can beat on one core)."""
    out = subprocess.run([sys.executable, "-c", CEILING, str(batch), str(reports), str(max(runs, 3)),
                          str(Path(__file__).resolve().parent)], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    return float(data["records"] / data["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reference-python", help="Python of a venv with bioai-evidence-validator==0.8.0")
    parser.add_argument("--no-checks", action="store_true", help="validate with --no-cues --direction off")
    args = parser.parse_args()
    checks = ["--no-cues", "--direction", "off"] if args.no_checks else []
    exe = shutil.which("bioevidence", path=str(Path(sys.executable).parent)) or "bioevidence"
    records = civic_records(args.records)
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "batch.jsonl"
        batch.write_text("".join(json.dumps(r) + "\n" for r in records))
        one = Path(tmp) / "one.json"
        one.write_text(json.dumps(records[0], indent=2))
        size_mb = batch.stat().st_size / 1e6
        mean = batch.stat().st_size // len(records)
        print(f"{len(records)} records, {size_mb:.1f} MB JSONL, mean {mean} bytes/record")
        out = Path(tmp) / "reports.jsonl"
        rates: dict[int, float] = {}
        for workers in (1, 2):
            batch_times = [timed([exe, "validate", str(batch), "--profile", "literature-claim", "-o", str(out),
                                  "--workers", str(workers), *checks]) for _ in range(args.runs)]
            statuses: dict[str, int] = {}
            for line in out.read_text().splitlines():
                status = json.loads(line)["overall_status"]
                statuses[status] = statuses.get(status, 0) + 1
            batch_median = statistics.median(batch_times)
            rates[workers] = len(records) / batch_median
            print(f"batch --workers {workers}: median {batch_median:.2f} s over {args.runs} runs -> "
                  f"{rates[workers]:,.0f} records/s (whole process incl. start-up and writing reports; "
                  f"min {min(batch_times):.2f}, max {max(batch_times):.2f}); outcomes {statuses}")
        top = ceiling(batch, out, args.runs)
        for workers, rate in rates.items():
            print(f"ceiling --workers {workers} (JSON parse of the {len(records):,} input lines + JSON encode of "
                  f"{len(records):,} reports alone, orjson, x{workers} cores): {top * workers:,.0f} records/s -> "
                  f"validate runs at {rate / (top * workers):.1%} of it")
        rate = rates[1]
        cold = [timed([exe, "validate", str(one)]) for _ in range(max(5, args.runs))]
        print(f"cold start `bioevidence validate one.json`: median {statistics.median(cold):.3f} s "
              f"(min {min(cold):.3f}, max {max(cold):.3f}, {len(cold)} runs)")
        if args.reference_python:
            ref_bin = Path(args.reference_python).parent / "bioevidence"
            api = subprocess.run([args.reference_python, "-c", REFERENCE_API, str(batch)], capture_output=True,
                                 text=True, check=True)
            ref_rate = float(api.stdout.strip())
            print(f"reference 0.8.0 Python API: {ref_rate:,.0f} records/s (validate loop only) -> ours is "
                  f"{rate / ref_rate:.1f}x in one process, {rates[2] / ref_rate:.1f}x with --workers 2")
            ref_cold = [timed([str(ref_bin), "validate", str(one), "--profile", "literature-claim"])
                        for _ in range(max(3, args.runs))]
            print(f"reference 0.8.0 CLI one record: median {statistics.median(ref_cold):.3f} s -> ours is "
                  f"{statistics.median(ref_cold) / statistics.median(cold):.1f}x faster")


if __name__ == "__main__":
    main()
