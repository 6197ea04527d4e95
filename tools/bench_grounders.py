"""Benchmark: 10,000 records citing the CIViC papers, validated by ``Validator.validate`` with the
source-bytes, literature, ontology (Cell Ontology) and gene (HGNC) grounders, in one process.

Each record is a complete, schema-valid ``general`` record: a gene (KRAS) expressed in a cell type
(T cell), supported by one verbatim 15-word quote from one CIViC paper at its paragraph anchor.
Every run is a fresh process. Printed figures (medians over ``--runs`` processes, after one
cold-cache run that fills the on-disk caches):

* load: building the grounders (CL + HGNC + the corpus catalogue) and indexing every paper
  (``LiteratureGrounder.preload``), from warm caches;
* first pass: validating one record per paper, which re-hashes each paper's pinned bytes once
  (verification is lazy: on the first record that cites a paper);
* throughput: the 10,000 records once loaded (including the first pass).

``--checks default`` (the default) runs the meaning checks as the profile says (``general``: no
cues, the direction check ``auto``: the stance model reads each verified quote once per process, then
from its cache); ``--checks off`` runs neither (``--no-cues --direction off``), so the two runs give
the direction check's cost: its first pass is one model call per distinct (claim, quote).

    .venv/bin/python tools/bench_grounders.py [--records 10000] [--runs 5] [--checks default|off]
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
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SNAPSHOTS = DATA / "civic_corpus" / "snapshots"


def records(n: int) -> list[dict[str, Any]]:
    """``n`` records cycling over the corpus papers: a quote of the first long paragraph of each."""
    from bioevidence.text.jats import parse_jats

    catalogue = json.loads((SNAPSHOTS / "literature.json").read_text())["works"]
    manifest = json.loads((DATA / "civic_corpus" / "manifest.json").read_text())
    base = []
    for pmid in manifest["corpus"]:
        work = catalogue[f"pmid:{pmid}"]
        if not work["fulltext_sha256"]:
            continue
        article = parse_jats(gzip.decompress((SNAPSHOTS / f"{work['fulltext_sha256']}.xml.gz").read_bytes()))
        para = next((p for p in article.passages if p.kind == "paragraph" and len(p.text.split()) > 15), None)
        if para is None:
            continue
        summary = json.loads(gzip.decompress((SNAPSHOTS / f"{work['metadata_sha256']}.json.gz").read_bytes()))
        title = summary["result"][pmid]["title"]
        quote = " ".join(para.text.split()[:15])
        base.append(_record(len(base), pmid, work, title, para.id, quote))
    return [base[i % len(base)] for i in range(n)]


def _record(n: int, pmid: str, work: dict[str, Any], title: str, anchor: str, quote: str) -> dict[str, Any]:
    sha = work["fulltext_sha256"]
    return {
        "record_id": f"bench:{n}", "profile_id": "general", "requested_uses": ["research_summary"],
        "statement": {
            "id": "bench:statement", "statement_status": "proposed", "predicate": "expressed_in",
            "subject": {"id": "HGNC:6407", "label": "KRAS", "entity_type": "gene"},
            "object": {"id": "CL:0000084", "label": "T cell", "entity_type": "cell_type"},
            "scope": ["NCBITaxon:9606"],
            "evidence_lines": [{"id": "bench:line", "direction": "supports", "evidence_item_ids": ["bench:item"]}]},
        "source_artifacts": [{"id": "bench:source", "title": title, "source_type": "publication",
                              "uri": f"pmid:{pmid}", "version": "1", "retrieved_at": work["retrieved_at"],
                              "sha256": sha, "observed_sha256": sha}],
        "evidence_items": [{"id": "bench:item", "source_artifact_id": "bench:source", "locator": f"body#{anchor}",
                            "extracted_text": quote, "evidence_type": "publication_result",
                            "extraction_method": "manual_curation", "scope": ["NCBITaxon:9606"]}],
        "adjudications": [],
    }


def run(n: int, checks: str = "default") -> dict[str, Any]:
    recs = records(n)
    start = time.perf_counter()
    from bioevidence.gate.grounders.config import GrounderOptions, build_checks, build_grounders
    from bioevidence.gate.grounders.literature import LiteratureGrounder
    from bioevidence.gate.validator import Validator

    grounders = build_grounders(GrounderOptions(
        snapshot_dir=SNAPSHOTS, ontologies=(DATA / "references" / "cl_2026-06-08.obo.gz",),
        term_roots={"cell_type": "CL:0000000"}, genes=(DATA / "references" / "hgnc_complete_set_2026-09-30.tsv.gz",)))
    papers = next(g for g in grounders if isinstance(g, LiteratureGrounder)).preload()
    off = build_checks(GrounderOptions(cues=False, direction="off")) if checks == "off" else []
    validator = Validator("general", grounders=grounders, checks=off)
    loaded = time.perf_counter() - start
    distinct = len({r["source_artifacts"][0]["uri"] for r in recs})
    start = time.perf_counter()
    statuses: dict[str, int] = {}
    first_pass = 0.0
    for index, record in enumerate(recs):
        status = validator.validate(record).overall_status
        statuses[status] = statuses.get(status, 0) + 1
        if index + 1 == distinct:
            first_pass = time.perf_counter() - start
    spent = time.perf_counter() - start
    after = (n - distinct) / (spent - first_pass) if n > distinct and spent > first_pass else 0.0
    return {"load_s": loaded, "first_pass_s": first_pass, "records_per_s": n / spent, "after_first_per_s": after,
            "papers": papers,
            "distinct": distinct, "statuses": statuses, "grounders": [g.name for g in grounders]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checks", choices=["default", "off"], default="default",
                        help="meaning checks as the profile says (default) or none (off)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.records, args.checks)))
        return
    cmd = [sys.executable, __file__, "--child", "--records", str(args.records), "--checks", args.checks]
    cold = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    results = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
               for _ in range(args.runs)]
    last = results[-1]
    print(f"grounders: {', '.join(last['grounders'])}; meaning checks: {args.checks}")
    print(f"first run (caches possibly cold): load {cold['load_s']:.2f} s")
    print(f"warm load CL + HGNC + corpus ({last['papers']} papers indexed): median "
          f"{statistics.median(r['load_s'] for r in results):.3f} s over {args.runs} processes")
    print(f"first pass (one record per paper, {last['distinct']} papers, bytes re-hashed): median "
          f"{statistics.median(r['first_pass_s'] for r in results):.3f} s")
    print(f"throughput through Validator.validate: median "
          f"{statistics.median(r['records_per_s'] for r in results):,.0f} records/s ({args.records:,} records; "
          f"statuses {last['statuses']})")
    print(f"after the first pass (every record seen before): median "
          f"{statistics.median(r['after_first_per_s'] for r in results):,.0f} records/s")


if __name__ == "__main__":
    main()
