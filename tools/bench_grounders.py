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
* throughput: the 10,000 records once loaded (including the first pass);
* the CEILING beside it: JSON parse of the 10,000 records as JSON lines + JSON encode of their
  10,000 reports alone (orjson, the fastest JSON library installed; best of 3 in the same process),
  what no validator reading and writing JSON can beat.

``--checks default`` (the default) runs the meaning checks as the profile says (``general``: no
cues, the direction check ``auto``: the stance model reads each verified quote once per process, then
from its cache); ``--checks off`` runs neither (``--no-cues --direction off``), so the two runs give
the direction check's cost: its first pass is one model call per distinct (claim, quote).

``--reference-python PATH`` (a Python with bioai-evidence-validator 0.8.0, e.g.
``$BIOEVIDENCE_REFERENCE_PYTHON``) runs the peer side by side in the same run: its Python API in its own
interpreter (a fresh process per run; each of the ``--runs`` runs right after ours; first one cold run
that shows its load, over the first-pass records only, one per paper, which read every snapshot as a full
run does: it keeps nothing on disk, so only the page cache is filled, and a full cold run would add
minutes), ``RecordValidator(profile="general")`` with its equivalent grounders over the same inputs:
``SourceBytesGrounder`` + ``LiteratureGrounder`` over the same snapshot folder (one ``SnapshotStore`` for
both, as tools/cases/civic_literature.py builds them; its CLI builds one per grounder), ``OntologyGrounder``
over the same Cell Ontology release with the root ``cell_type: CL:0000000`` (and ``cell_type`` as a locator
key, as its CLI's ``--term-root`` wires it) and ``GeneGrounder`` over the same HGNC set. The same records
go to it as one JSONL file (this script's ``records``, dumped with ``json.dumps``; read before its clock
starts). It is measured the same way: load (imports, both references parsed, the store and catalogue, the
validator) apart; records/s once loaded, first pass included; the same figures after the first pass.
What was converted for it: the Cell Ontology and HGNC files are gzip here, and its ``Ontology.from_obo`` and
``Genes.from_hgnc`` take the plain file's bytes (its CLI reads the path's bytes as they are, so a ``.gz``
fails), so its side decompresses them in memory, inside its load: byte for byte the released files. Nothing
else: its ``SnapshotStore.from_directory`` reads the ``.gz`` snapshots itself, and the catalogue
(``literature.json``) is in its own format (written by its ``ground``). A record it refuses (an exception,
or a ``SCHEMA`` / ``RECORD_INTEGRITY`` finding: its grounders never see such a record) is listed by reason
with its record ids, and only the records it validated count in its throughput (the time of a refused
record is left out) and in the verdict comparison (overall status per tool over those records). Its
``general`` profile runs no meaning check, so ``--checks off`` is the like-for-like comparison; with
``--checks default`` ours also runs the direction check (here its BEV036 note only when no stance model is
installed). The peer has no preload and no paper cache: it parses the cited paper's JATS twice a
record (``verified_items``, then ``check``); only the snapshot bytes are kept once read.

    .venv/bin/python tools/bench_grounders.py [--records 10000] [--runs 5] [--checks default|off]
        [--reference-python PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SNAPSHOTS = DATA / "civic_corpus" / "snapshots"
CELL_ONTOLOGY = DATA / "references" / "cl_2026-06-08.obo.gz"
HGNC = DATA / "references" / "hgnc_complete_set_2026-09-30.tsv.gz"


def records(n: int) -> list[dict[str, Any]]:
    """``n`` records cycling over the corpus papers: a quote of the first long paragraph of each."""
    from bioevidence.text.jats import parse_jats

    catalogue = json.loads((SNAPSHOTS / "literature.json").read_text())["works"]
    manifest = json.loads((DATA / "civic_corpus" / "manifest.json").read_text())
    base: list[dict[str, Any]] = []
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
        snapshot_dir=SNAPSHOTS, ontologies=(CELL_ONTOLOGY,), term_roots={"cell_type": "CL:0000000"}, genes=(HGNC,)))
    papers = next(g for g in grounders if isinstance(g, LiteratureGrounder)).preload()
    off = build_checks(GrounderOptions(cues=False, direction="off")) if checks == "off" else []
    validator = Validator("general", grounders=grounders, checks=off)
    loaded = time.perf_counter() - start
    distinct = len({r["source_artifacts"][0]["uri"] for r in recs})
    start = time.perf_counter()
    statuses: dict[str, int] = {}
    per_record: list[str] = []
    first_pass = 0.0
    for index, record in enumerate(recs):
        status = validator.validate(record).overall_status
        statuses[status] = statuses.get(status, 0) + 1
        per_record.append(status)
        if index + 1 == distinct:
            first_pass = time.perf_counter() - start
    spent = time.perf_counter() - start
    after = (n - distinct) / (spent - first_pass) if n > distinct and spent > first_pass else 0.0
    reports = [validator.validate(record).to_dict() for record in recs[:distinct]]
    return {"load_s": loaded, "first_pass_s": first_pass, "records_per_s": n / spent, "after_first_per_s": after,
            "ceiling_per_s": ceiling(recs, [reports[i % len(reports)] for i in range(n)]),
            "papers": papers,
            "distinct": distinct, "statuses": statuses, "per_record": per_record,
            "first_verified": sum(bool(r["verified_evidence_item_ids"]) for r in reports),
            "first_codes": dict(Counter(f["rule_id"] for r in reports for f in r["findings"])),
            "grounders": [g.name for g in grounders]}


def ceiling(recs: list[dict[str, Any]], reports: list[dict[str, Any]]) -> float:
    """Records a second of JSON parse of the records' lines + JSON encode of their reports alone (orjson,
    best of 3): the figure no validator can beat in one process."""
    from bench_gate import parse_encode_seconds

    return len(recs) / parse_encode_seconds([json.dumps(record).encode() for record in recs], reports, 3)


# Runs in 0.8.0's interpreter: argv 1-5 the records (JSONL), the snapshot folder, the Cell Ontology (.obo.gz),
# the HGNC set (.tsv.gz) and its release; prints one JSON object. Records are read before the clock starts.
PEER_SIDE = r"""
import json, sys, time
recs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
start = time.perf_counter()
import gzip
from pathlib import Path
from bioevidence_validator.engine import RecordValidator
from bioevidence_validator.grounding import SnapshotStore, SourceBytesGrounder
from bioevidence_validator.identifiers import GeneGrounder, Genes, Ontology, OntologyGrounder
from bioevidence_validator.literature import CATALOG, LiteratureGrounder

snapshots = Path(sys.argv[2])
store = SnapshotStore.from_directory(snapshots)
catalogue = json.loads((snapshots / CATALOG).read_text(encoding="utf-8"))
roots = {"cell_type": ["CL:0000000"]}
grounders = [SourceBytesGrounder(store), LiteratureGrounder(store, catalogue),
             OntologyGrounder([Ontology.from_obo(gzip.decompress(Path(sys.argv[3]).read_bytes()))], roots,
                              locator_keys=list(roots)),
             GeneGrounder(Genes.from_hgnc(gzip.decompress(Path(sys.argv[4]).read_bytes()), sys.argv[5]))]
validator = RecordValidator(profile="general", grounders=grounders)
loaded = time.perf_counter() - start
distinct = len({r["source_artifacts"][0]["uri"] for r in recs})
clock = time.perf_counter
first = after = 0.0
done_first = done_after = 0
statuses, per_record, refused = {}, [], {}
for index, record in enumerate(recs):
    t = clock()
    try:
        report = validator.validate(record)
    except Exception as error:  # a record it cannot take: listed, not counted
        spent, why = clock() - t, f"raised {type(error).__name__}: {error}"
    else:
        spent = clock() - t
        shape = [f for f in report["findings"] if f["rule_id"] in ("SCHEMA", "RECORD_INTEGRITY")]
        why = f"{shape[0]['rule_id']}: {shape[0]['message']}" if shape else None
    if why is not None:
        refused.setdefault(why[:300], []).append(record.get("record_id"))
        per_record.append(None)
        continue
    status = report["overall_status"]
    statuses[status] = statuses.get(status, 0) + 1
    per_record.append(status)
    if index < distinct:
        first, done_first = first + spent, done_first + 1
    else:
        after, done_after = after + spent, done_after + 1
validated = done_first + done_after
literature = grounders[1]  # outside the clock: which first-pass quotes it verified, and its findings' codes
first_records = [r for r, status in zip(recs[:distinct], per_record) if status is not None]
first_verified = sum(bool(literature.verified_items(r)) for r in first_records)
first_codes = {}
for r in first_records:
    for f in validator.validate(r)["findings"]:
        first_codes[f["rule_id"]] = first_codes.get(f["rule_id"], 0) + 1
print(json.dumps({"load_s": loaded, "first_pass_s": first,
                  "records_per_s": validated / (first + after) if first + after else 0.0,
                  "after_first_per_s": done_after / after if after else 0.0,
                  "validated": validated, "distinct": distinct, "statuses": statuses, "per_record": per_record,
                  "refused": refused, "first_verified": first_verified, "first_codes": first_codes,
                  "grounders": [g.name for g in grounders]}))
"""


def peer_run(python: str, batch: Path) -> dict[str, Any]:
    """One fresh 0.8.0 process over the records in ``batch``."""
    release = HGNC.name.removeprefix("hgnc_complete_set_").split(".")[0]
    done = subprocess.run([python, "-c", PEER_SIDE, str(batch), str(SNAPSHOTS), str(CELL_ONTOLOGY), str(HGNC), release],
                          capture_output=True, text=True, cwd=batch.parent)
    if done.returncode:
        raise SystemExit(f"bioai-evidence-validator 0.8.0 failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checks", choices=["default", "off"], default="default",
                        help="meaning checks as the profile says (default) or none (off)")
    parser.add_argument("--reference-python", metavar="PATH",
                        help="a Python with bioai-evidence-validator 0.8.0: run its API side by side")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run(args.records, args.checks)))
        return
    cmd = [sys.executable, __file__, "--child", "--records", str(args.records), "--checks", args.checks]
    with tempfile.TemporaryDirectory(prefix="bench-grounders-") as work:
        batch, first = Path(work) / "records.jsonl", Path(work) / "first-pass.jsonl"
        if args.reference_python:
            recs = records(args.records)
            lines = [json.dumps(record) + "\n" for record in recs]
            batch.write_text("".join(lines), encoding="utf-8")
            distinct = len({r["source_artifacts"][0]["uri"] for r in recs})
            first.write_text("".join(lines[:distinct]), encoding="utf-8")
        cold = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        peer_cold = peer_run(args.reference_python, first) if args.reference_python else None
        results, peers = [], []
        for _ in range(args.runs):  # ours, then the peer's, run after run: both see the same load
            results.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
            if args.reference_python:
                peers.append(peer_run(args.reference_python, batch))
    last = results[-1]
    print(f"grounders: {', '.join(last['grounders'])}; meaning checks: {args.checks}")
    print(f"first run (caches possibly cold): load {cold['load_s']:.2f} s")
    print(f"warm load CL + HGNC + corpus ({last['papers']} papers indexed): median "
          f"{statistics.median(r['load_s'] for r in results):.3f} s over {args.runs} processes")
    print(f"first pass (one record per paper, {last['distinct']} papers, bytes re-hashed): median "
          f"{statistics.median(r['first_pass_s'] for r in results):.3f} s")
    rate = statistics.median(r['records_per_s'] for r in results)
    top = statistics.median(r['ceiling_per_s'] for r in results)
    print(f"throughput through Validator.validate: median {rate:,.0f} records/s ({args.records:,} records; "
          f"statuses {last['statuses']})")
    print(f"ceiling (JSON parse of the records' lines + JSON encode of their reports alone, orjson): median "
          f"{top:,.0f} records/s -> validation runs at {rate / top:.1%} of it")
    after = statistics.median(r['after_first_per_s'] for r in results)
    print(f"after the first pass (every record seen before): median {after:,.0f} records/s")
    if peer_cold is not None:
        report_peer(peers, peer_cold, results, rate, after, top, args.records)


def report_peer(peers: list[dict[str, Any]], cold: dict[str, Any], results: list[dict[str, Any]], rate: float,
                after: float, top: float, n: int) -> None:
    """The peer's figures beside ours, what it refused, and both tools' verdicts on the records it validated."""
    last, ours = peers[-1], results[-1]
    load = statistics.median(p['load_s'] for p in peers)
    first_pass = statistics.median(p['first_pass_s'] for p in peers)
    our_first = statistics.median(r['first_pass_s'] for r in results)
    print(f"reference bioai-evidence-validator 0.8.0 (its Python API, profile general, no meaning checks; "
          f"grounders: {', '.join(last['grounders'])}):")
    print(f"  first run: load {cold['load_s']:.2f} s")
    print(f"  warm load (imports, CL + HGNC parsed from the decompressed files, snapshot store + catalogue, "
          f"RecordValidator): median {load:.3f} s over {len(peers)} processes -> ours is "
          f"{load / statistics.median(r['load_s'] for r in results):.1f}x faster")
    print(f"  first pass (one record per paper, {last['distinct']} papers, bytes decompressed and hashed): median "
          f"{first_pass:.3f} s -> ours is {first_pass / our_first:.1f}x faster")
    theirs = statistics.median(p['records_per_s'] for p in peers)
    theirs_after = statistics.median(p['after_first_per_s'] for p in peers)
    print(f"  throughput through RecordValidator.validate: median {theirs:,.0f} records/s ({last['validated']:,} of "
          f"{n:,} records validated; statuses {last['statuses']}) -> ours is {rate / theirs:.1f}x; "
          f"{theirs / top:.2%} of the same ceiling" if theirs else "  throughput: no record validated")
    if theirs_after:
        print(f"  after the first pass: median {theirs_after:,.0f} records/s -> ours is {after / theirs_after:.1f}x")
    refused = last["refused"]
    if not refused:
        print("  refused: none (every record validated, no SCHEMA or RECORD_INTEGRITY finding)")
    for why, ids in refused.items():
        shown = ", ".join(str(i) for i in ids[:10]) + (f", … ({len(ids)} records)" if len(ids) > 10 else "")
        print(f"  refused {len(ids)} record(s): {why} [{shown}]")
    pairs = [(o, p) for o, p in zip(ours["per_record"], last["per_record"], strict=True) if p is not None]
    mine = Counter(o for o, _ in pairs)
    peer = Counter(p for _, p in pairs)
    differ = Counter(f"ours {o} / 0.8.0 {p}" for o, p in pairs if o != p)
    print(f"verdicts on the {len(pairs):,} records 0.8.0 validated (overall status, last run): ours {dict(mine)}; "
          f"0.8.0 {dict(peer)}; same on {len(pairs) - sum(differ.values()):,}"
          + (f"; differ: {dict(differ)}" if differ else ""))
    print(f"first-pass records (one per paper): quote verified by ours on {ours['first_verified']}/{ours['distinct']}, "
          f"by 0.8.0's LiteratureGrounder on {last['first_verified']}/{last['distinct']}; finding codes: ours "
          f"{ours['first_codes'] or 'none'}, 0.8.0 {last['first_codes'] or 'none'}")


if __name__ == "__main__":
    main()
