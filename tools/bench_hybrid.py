"""`ask --retriever hybrid` once loaded: nDCG@10 and seconds per question for caps on the papers the
judge reads (`hybrid.JUDGED`), on the SciFact tuning or held-out train claims (split as in
tools/eval_fusion.py: held-out = id divisible by 3).

    .venv/bin/python tools/bench_hybrid.py tune all 100 50 30
    .venv/bin/python tools/bench_hybrid.py held 50 all      [--index /tmp/bioevidence_scifact_dense]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def main() -> None:
    from bioevidence.librarian.index import LocalIndex
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings

    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["tune", "held"])
    ap.add_argument("caps", nargs="+", help="numbers of papers judged, or 'all'")
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_dense", help="built by tools/eval_fusion.py")
    args = ap.parse_args()
    lines = (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines()
    claims = [json.loads(x) for x in lines if x.strip()]
    chosen = [c for c in claims if (c["id"] % 3 == 0) == (args.part == "held")]
    lib = Librarian(LocalIndex(args.index), lexicon=default_lexicon(DATA / "references"), retriever="hybrid",
                    settings=Settings(top_k=10, max_abstract_papers=10))
    for cap in args.caps:
        lib.dense.pool = None if cap == "all" else int(cap)
        lib.ask(chosen[0]["claim"])
        lat, nd = [], []
        for c in chosen:
            t = time.perf_counter()
            answer = lib.ask(c["claim"])
            lat.append(time.perf_counter() - t)
            nd.append(ndcg10([p.doc.doc_id for p in answer.papers], {str(d) for d in c.get("cited_doc_ids", [])}))
        print(f"{args.part} {len(chosen)} claims, judged {cap}: nDCG@10 {statistics.mean(nd):.4f}, median "
              f"{statistics.median(lat) * 1e3:.0f} ms, p90 {sorted(lat)[int(len(lat) * 0.9)] * 1e3:.0f} ms", flush=True)


if __name__ == "__main__":
    main()
