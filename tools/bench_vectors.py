"""Choose the vector index: exact NumPy vs FAISS (flat, HNSW) vs usearch (HNSW), on real vectors.

Vectors: the SciFact chunk vectors of ``tools/eval_fusion.py``'s index (all-MiniLM-L6-v2), as they
are (a knowledge-base size), and tiled with noise to ``--large`` rows (a large corpus). Queries: the
SciFact train claims, encoded. Figures: build seconds (incl. writing the file), median query ms for
the top 100 (one thread), recall@100 against exact search.

    .venv/bin/python tools/bench_vectors.py [--index /tmp/bioevidence_scifact_dense] [--large 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


def bench(X: Any, Q: Any, k: int = 100) -> None:
    import faiss
    import numpy as np
    from usearch.index import Index

    faiss.omp_set_num_threads(1)
    truth = [set(np.argpartition(-(X @ q), k)[:k].tolist()) for q in Q]
    d = tempfile.mkdtemp()
    out: list[tuple[str, float, float, float]] = []

    def timed(search: Any) -> tuple[float, float]:
        lat, rec = [], []
        for q, tr in zip(Q, truth, strict=True):
            t = time.perf_counter()
            ids = search(q)
            lat.append(time.perf_counter() - t)
            rec.append(len(tr & set(ids)) / k)
        return statistics.median(lat) * 1e3, statistics.mean(rec)

    t = time.perf_counter()
    np.save(f"{d}/v.npy", X)
    Xm = np.load(f"{d}/v.npy", mmap_mode="r")
    b = time.perf_counter() - t
    out.append(("numpy exact (memory-mapped .npy)", b, *timed(lambda q: np.argpartition(-(Xm @ q), k)[:k].tolist())))
    t = time.perf_counter()
    flat = faiss.IndexFlatIP(X.shape[1])
    flat.add(X)
    faiss.write_index(flat, f"{d}/f.idx")
    out.append(("faiss IndexFlatIP", time.perf_counter() - t, *timed(lambda q: flat.search(q[None], k)[1][0].tolist())))
    t = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(X.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 80
    hnsw.add(X)
    faiss.write_index(hnsw, f"{d}/h.idx")
    b = time.perf_counter() - t
    hnsw.hnsw.efSearch = 128
    out.append(("faiss HNSW (M 32, efC 80, efS 128)", b, *timed(lambda q: hnsw.search(q[None], k)[1][0].tolist())))
    t = time.perf_counter()
    u = Index(ndim=X.shape[1], metric="ip", dtype="f32")
    u.add(np.arange(len(X)), X, threads=1)
    u.save(f"{d}/u.usearch")
    out.append(("usearch HNSW (defaults)", time.perf_counter() - t,
                *timed(lambda q: u.search(q, k, exact=False).keys.tolist())))
    for name, build, ms, rec in out:
        print(f"| {len(X):,} | {name} | {build:.2f} | {ms:.3f} | {rec:.3f} |", flush=True)


def main() -> None:
    import numpy as np

    from bioevidence.librarian.dense import DenseIndex, load_encoder

    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_dense")
    ap.add_argument("--large", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    X = np.ascontiguousarray(DenseIndex.load(Path(args.index) / "dense").vectors, dtype=np.float32)
    claims = [json.loads(x)["claim"] for x in (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text()
              .splitlines() if x.strip()][: args.queries]
    Q = load_encoder().encode(claims)
    print("| vectors | index | build s | query ms (top 100) | recall@100 |")
    print("|---|---|---|---|---|")
    bench(X, Q)
    rng = np.random.default_rng(0)
    reps = -(-args.large // len(X))
    big = np.vstack([X + 0.05 * rng.standard_normal(X.shape).astype(np.float32) for _ in range(reps)])[: args.large]
    big /= np.linalg.norm(big, axis=1, keepdims=True)
    bench(big, Q)


if __name__ == "__main__":
    main()
