"""The librarian on CIViC questions: is the cited paper found, do the first sentences answer?

Questions are built from the CIViC evidence statements in ``civic_corpus/civic-evidence.jsonl.gz``
(the statement, as a question: "<statement>?"), asked over an index of the pinned CIViC snapshots,
with the planner's vocabulary from the older, independent CIViC export
``claims/civic/civic.biomarkers.tsv`` (2016) and the HGNC / Cell Ontology releases.

Printed, over statements whose paper is pinned with full text or abstract:

* the statement's cited paper among the first 10 papers;
* the share of questions whose first 5 sentences contain the answer, judged by the statement's own
  words: a sentence of the cited paper holding at least half of the statement's analysed terms;
* the stance of those answering sentences against the statement's direction (Supports →
  supports, Does Not Support → contradicts);
* with ``--records``: each question's evidence record validated against the snapshots
  (admitted / review / rejected, and the reasons).

    .venv/bin/python tools/eval_civic.py [--index /tmp/civic_index] [--records] [--markdown]

``--markdown`` ends with these figures (the latency left out: a timing) as docs/librarian.md's table,
its region ``civic-questions`` (``tools/reproduce.py civic-questions`` regenerates it with ``--records``
and compares it exactly).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from bioevidence.librarian.analysis import analyze
    from bioevidence.librarian.index import build_index
    from bioevidence.librarian.librarian import Librarian

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--index", default="/tmp/bioevidence_civic_index")
    ap.add_argument("--records", action="store_true", help="also build and validate each question's record")
    ap.add_argument("--markdown", action="store_true", help="end with docs/librarian.md's table of the figures")
    args = ap.parse_args()
    data = Path(args.data)
    snapshots = data / "civic_corpus" / "snapshots"
    if not (Path(args.index) / "index.sqlite").is_file():
        build_index([snapshots], args.index)
    lib = Librarian(args.index, references=data / "references",
                    vocabularies=(data / "claims" / "civic" / "civic.biomarkers.tsv",))
    indexed = {d.pmid for d in lib.index.docs} if lib.index is not None else set()
    with gzip.open(data / "civic_corpus" / "civic-evidence.jsonl.gz", "rt") as fh:
        rows = [json.loads(x) for x in fh]
    rows = [r for r in rows if r["citation_id"] in indexed]
    found = answered = answered_third = 0
    stance: collections.Counter[tuple[str, str]] = collections.Counter()
    statuses: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    latency = []
    retracted = 0
    validator = None
    for row in rows:
        question = row["evidence_statement"].strip().rstrip(".") + "?"
        t0 = time.perf_counter()
        answer = lib.ask(question)
        latency.append(time.perf_counter() - t0)
        pmid = row["citation_id"]
        doc = next(d for d in lib.index.docs if d.pmid == pmid)  # type: ignore[union-attr]
        retracted += doc.retracted
        if any(p.doc.pmid == pmid for p in answer.papers[:10]):
            found += 1
        words = set(analyze(row["evidence_statement"]))
        expect = "supports" if row["evidence_direction"] == "Supports" else "contradicts"
        hit = False
        for item in answer.items()[:5]:
            if item["pmid"] == pmid and len(words & set(analyze(item["text"]))) >= len(words) / 2:
                hit = True
                stance[(expect, item["stance"])] += 1
        answered += hit
        answered_third += any(item["pmid"] == pmid and len(words & set(analyze(item["text"]))) >= len(words) / 3
                              for item in answer.items()[:5])
        if args.records and answer.ranked:
            from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
            from bioevidence.gate.validator import Validator
            from bioevidence.librarian.records import record_for

            if validator is None:
                validator = Validator("librarian-evidence", grounders=build_grounders(
                    GrounderOptions(snapshot_dir=snapshots)))
            report = validator.validate(record_for(answer))
            statuses[report.overall_status] += 1
            reasons.update(report.reason_codes())
    n = len(rows)
    print(f"{n} CIViC statements with their paper pinned ({retracted} citing a retracted paper, withheld by default)")
    print(f"cited paper in the first 10 papers: {found}/{n} = {found / n:.3f}")
    print(f"first 5 sentences hold the answer (a sentence of the cited paper with at least half of the "
          f"statement's own words): {answered}/{n} = {answered / n:.3f}; with a third: {answered_third}/{n} = "
          f"{answered_third / n:.3f}")
    print("stance of answering sentences (rows: the statement's direction; columns: predicted)")
    for gold in ("supports", "contradicts"):
        print(f"  {gold:>12}: " + ", ".join(f"{p} {stance[(gold, p)]}" for p in ("supports", "contradicts",
                                                                                  "neutral")))
    if args.records:
        print("records: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
              + "; reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    print(f"median ask latency {statistics.median(latency) * 1000:.0f} ms")
    if args.markdown:
        shown = {gold: ", ".join(f"{count} {label}" for label, count in sorted(
            ((p, c) for (g, p), c in stance.items() if g == gold), key=lambda pc: (-pc[1], pc[0])))
            for gold in ("supports", "contradicts")}
        table = [("the statement's cited paper among the first 10 papers", f"{found} / {n}"),
                 ("a sentence of the cited paper among the first 5, holding at least half of the statement's own "
                  "words", f"{answered} / {n} ({answered / n:.3f})"),
                 ("the same with at least a third of the statement's words", f"{answered_third} / {n} "
                  f"({answered_third / n:.3f})")]
        if args.records:
            table.append(("records admitted unchanged by `librarian-evidence`", f"{statuses['admitted']} / {n}"))
        table.append(("stance of those answering sentences, by the statement's direction",
                      "; ".join(f"{gold}: {shown[gold] or 'none'}" for gold in ("supports", "contradicts"))))
        print("\n| measure | figure |\n|---|---|")
        for label, value in table:
            print(f"| {label} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
