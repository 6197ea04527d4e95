"""Benchmark BM25 engines on the SciFact corpus with one tokenizer: build time, query latency, nDCG@10.

Usage: .venv/bin/python tools/bench_bm25.py [--data ../shared/data] [--markdown]

Engines: rank-bm25 (pure Python), bm25s (sparse matrices, NumPy), tantivy (Rust), each fed the
same analysed tokens (bioevidence.librarian.analysis.analyze), k1=1.2 b=0.75 where settable.
Prints one table; figures go into docs/librarian.md (``--markdown``: as that doc states them, the table
``tools/reproduce.py bm25-engines --timings`` compares; rank-bm25 and tantivy come with the bench extra).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

from bioevidence.librarian.analysis import analyze
from scifact_eval import ndcg10


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    ap.add_argument("--markdown", action="store_true", help="the table as docs/librarian.md states it")
    args = ap.parse_args()
    root = Path(args.data) / "claims" / "scifact"
    with gzip.open(root / "corpus.jsonl.gz", "rt") as fh:
        corpus = [json.loads(line) for line in fh]
    claims = [json.loads(line) for line in (root / "claims_train.jsonl").read_text().splitlines()]
    ids = [str(d["doc_id"]) for d in corpus]
    texts = [d["title"] + " " + " ".join(d["abstract"]) for d in corpus]
    t0 = time.perf_counter()
    docs = [analyze(t) for t in texts]
    t_an = time.perf_counter() - t0
    queries = [analyze(c["claim"]) for c in claims]
    rels = [{str(x) for x in c["cited_doc_ids"]} for c in claims]
    print(f"corpus {len(docs)} docs, {len(queries)} queries, analysis {t_an:.2f}s")
    rows = []

    def run(name: str, build, search) -> None:  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        eng = build()
        t_build = time.perf_counter() - t0
        lat, scores = [], []
        for q, rel in zip(queries, rels, strict=True):
            t1 = time.perf_counter()
            ranked = search(eng, q)
            lat.append(time.perf_counter() - t1)
            scores.append(ndcg10(ranked, rel))
        rows.append((name, t_build, statistics.median(lat) * 1000, sum(scores) / len(scores)))

    import numpy as np
    from rank_bm25 import BM25Okapi

    run("rank-bm25", lambda: BM25Okapi(docs, k1=1.2, b=0.75),
        lambda e, q: [ids[i] for i in np.argsort(-e.get_scores(q))[:10]])

    import bm25s

    def b_build():  # type: ignore[no-untyped-def]
        r = bm25s.BM25(k1=1.2, b=0.75)
        r.index(bm25s.tokenization.convert_tokenized_to_string_list(docs) if False else docs, show_progress=False)
        return r

    def b_search(e, q):  # type: ignore[no-untyped-def]
        s = e.get_scores(q)
        return [ids[i] for i in np.argsort(-s)[:10]]

    run("bm25s", b_build, b_search)

    import tantivy

    def t_build():  # type: ignore[no-untyped-def]
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("body", stored=False, tokenizer_name="whitespace")
        sb.add_text_field("id", stored=True, tokenizer_name="raw")
        schema = sb.build()
        index = tantivy.Index(schema)
        w = index.writer()
        for i, d in zip(ids, docs, strict=True):
            w.add_document(tantivy.Document(body=" ".join(d), id=i))
        w.commit()
        index.reload()
        return index

    def t_search(index, q):  # type: ignore[no-untyped-def]
        searcher = index.searcher()
        terms = [t for t in q if t.isalnum()]
        if not terms:
            return []
        query = index.parse_query(" OR ".join(terms), ["body"])
        hits = searcher.search(query, 10).hits
        return [searcher.doc(a)["id"][0] for _, a in hits]

    run("tantivy", t_build, t_search)

    if args.markdown:
        print("| engine | build s | median query ms | nDCG@10 |\n|---|---|---|---|")
        for name, tb, ql, nd in rows:
            print(f"| {name} | {tb:.2f} | {ql:.2f} | {nd:.4f} |")
        return
    print(f"{'engine':<10} {'build s':>8} {'median query ms':>16} {'nDCG@10':>8}")
    for name, tb, ql, nd in rows:
        print(f"{name:<10} {tb:8.2f} {ql:16.2f} {nd:8.4f}")


if __name__ == "__main__":
    main()
