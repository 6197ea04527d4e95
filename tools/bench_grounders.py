"""Benchmark: 10,000 records citing the CIViC papers through the literature, ontology and gene grounders.

Prints the load time (CL + HGNC + corpus, from warm caches after a first cold run) and the
throughput once loaded, as medians of several runs, each in a fresh process-level state.
Until the Validator is wired, grounders are called directly; to bench through it, build
``Validator(profile=..., grounders=grounders)`` and call ``.validate(record)`` in ``run``.

    .venv/bin/python tools/bench_grounders.py [--records 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def records(n: int) -> list[dict]:
    from bioevidence.sources.catalogue import Catalogue
    from bioevidence.text.jats import parse_jats

    snap = DATA / "civic_corpus" / "snapshots"
    catalogue = Catalogue.load(snap)
    manifest = json.loads((DATA / "civic_corpus" / "manifest.json").read_text())
    base = []
    for pmid in manifest["corpus"]:
        work = catalogue[f"pmid:{pmid}"]
        if not work.fulltext_sha256:
            continue
        article = parse_jats(gzip.decompress((snap / f"{work.fulltext_sha256}.xml.gz").read_bytes()))
        para = next((p for p in article.passages if p.kind == "paragraph" and len(p.match.split()) > 15), None)
        if para is None:
            continue
        quote = " ".join(para.match.split()[:15])
        base.append({"requested_uses": ["u"], "statement": {
            "subject": {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
            "object": {"id": "CL:0000084", "label": "T cell", "entity_type": "cell_type"},
            "scope": ["NCBITaxon:9606"]},
            "source_artifacts": [{"id": "s", "source_type": "publication", "uri": f"pmid:{pmid}",
                                  "sha256": work.pinned_sha256}],
            "evidence_items": [{"id": "e", "source_artifact_id": "s", "locator": f"#{para.id}",
                                "extracted_text": quote}]})
    return [base[i % len(base)] for i in range(n)]


def run(n: int) -> dict[str, float]:
    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders

    recs = records(n)
    start = time.perf_counter()
    grounders = build_grounders(GrounderOptions(
        snapshot_dir=DATA / "civic_corpus" / "snapshots",
        ontologies=(DATA / "references" / "cl_2026-06-08.obo.gz",), term_roots={"cell_type": "CL:0000000"},
        genes=(DATA / "references" / "hgnc_complete_set_2026-09-30.tsv.gz",)))
    grounders[0].preload()  # type: ignore[attr-defined]
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    verified = 0
    for record in recs:
        for grounder in grounders:
            verified += len(grounder.ground(record).verified)
    spent = time.perf_counter() - start
    return {"load_s": loaded, "records_per_s": n / spent, "verified": verified}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.records)))
        return
    cmd = [sys.executable, __file__, "--child", "--records", str(args.records)]
    cold = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    results = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
               for _ in range(args.runs)]
    print(f"first run (caches possibly cold): load {cold['load_s']:.2f} s")
    print(f"warm load CL + HGNC + corpus: median {statistics.median(r['load_s'] for r in results):.3f} s "
          f"over {args.runs} processes")
    print(f"throughput: median {statistics.median(r['records_per_s'] for r in results):,.0f} records/s "
          f"({args.records:,} records, literature + ontology + genes; verified items {results[0]['verified']:,})")


if __name__ == "__main__":
    main()
