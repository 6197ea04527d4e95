"""A learned query adapter for ``hybrid`` on SciFact, and why the id split cannot judge it.

A linear map ``W`` (384 × 384, started at the identity) is applied to the question vector before
the dense search (the chunk vectors stay as they are), trained on tuning claims with a multi-positive
softmax over every chunk of the corpus (temperature ``--tau``, L2 pull towards the identity
``--lam``, full-batch Adam). The adapted dense top 200 is fused with the lexical pool by today's
convex combination.

SciFact claims share cited abstracts: with the id split of tools/eval_fusion.py (held-out = id
divisible by 3), most held-out claims have a relevant abstract that some tuning claim also cites, so
a learned method can score by remembering documents. This script measures both ways:

1. 5-fold cross-validation inside the tuning claims, folds by claim id (leaky) and folds by groups
   of claims that share a relevant abstract (doc-disjoint);
2. held-out, adapter trained on all tuning claims, reported on the held-out claims whose relevant
   abstracts a tuning claim also cites ("seen") and on the others ("unseen");
3. held-out, adapter trained only on the tuning claims that share no relevant abstract with any
   held-out claim.

Prints markdown tables (list-level BEIR nDCG@10, no judge). Lists and question vectors come from
tools/eval_prf.py's cache (``--lists``); needs the kb extra (PyTorch for the training).

    PYTHONPATH=src .venv/bin/python tools/eval_adapter.py [--index /tmp/bioevidence_scifact_dense]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any, cast

from eval_sentdense import lists
from scifact_eval import ndcg10


class Corpus:
    """The chunk vectors, chunk → document map and document names of a dense SciFact index."""

    def __init__(self, index: Any, dense: Any) -> None:
        import numpy as np

        self.names = [d.doc_id for d in index.docs]
        self.vectors = np.asarray(dense.dense.vectors, dtype=np.float32)
        self.cdoc = np.asarray([int(u[0]) for u in dense.dense.units])
        self.order = np.argsort(self.cdoc, kind="stable")
        self.starts = np.searchsorted(self.cdoc[self.order], np.arange(len(self.names)))
        self.by_name = {d: i for i, d in enumerate(self.names)}

    def dense_lists(self, q: Any, depth: int = 200) -> list[list[tuple[int, float]]]:
        """Per question vector (rows of ``q``), its ``depth`` best documents by best chunk cosine."""
        import numpy as np

        s = (q @ self.vectors.T)[:, self.order]
        best = np.maximum.reduceat(s, self.starts, axis=1)
        return [[(int(i), float(row[i])) for i in np.argsort(-row)[:depth]] for row in best]


def score(corpus: Corpus, rows: list[dict[str, Any]], q: Any, weight: float) -> tuple[float, float]:
    """Mean dense-only and hybrid (convex, ``weight`` on dense) nDCG@10 of ``rows`` with question
    vectors ``q``."""
    from bioevidence.librarian.fusion import convex

    dense_nd, hybrid_nd = [], []
    for r, dl in zip(rows, corpus.dense_lists(q), strict=True):
        dense_nd.append(ndcg10([corpus.names[i] for i, _ in dl], r["rel"]))
        fused = convex([r["lex"], dl], [1.0 - weight, weight])
        hybrid_nd.append(ndcg10([corpus.names[cast(int, k)] for k, _ in fused], r["rel"]))
    return statistics.mean(dense_nd), statistics.mean(hybrid_nd)


def avg(runs: list[tuple[int, tuple[float, float]]], j: int) -> float:
    """Claim-weighted mean of the ``j``-th score over folds given as (claims, scores)."""
    return sum(c * s[j] for c, s in runs) / sum(c for c, _ in runs)


def train(corpus: Corpus, rows: list[dict[str, Any]], *, tau: float, lam: float, steps: int) -> Any:
    """The adapter ``W`` learned on ``rows`` (deterministic: full batch, identity start)."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    q = torch.tensor(np.stack([r["q"] for r in rows]).astype(np.float32))
    v = torch.tensor(corpus.vectors)
    pos = torch.zeros(len(rows), len(corpus.vectors), dtype=torch.bool)
    for i, r in enumerate(rows):
        docs = [corpus.by_name[d] for d in r["rel"] if d in corpus.by_name]
        pos[i] = torch.tensor(np.isin(corpus.cdoc, docs))
    keep = pos.any(1)
    q, pos = q[keep], pos[keep]
    eye = torch.eye(q.shape[1])
    w = eye.clone().requires_grad_(True)
    opt = torch.optim.Adam([w], lr=1e-3)
    for _ in range(steps):
        logits = torch.nn.functional.normalize(q @ w.T, dim=1) @ v.T / tau
        loss = (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~pos, -1e9), 1)).mean()
        loss = loss + lam * ((w - eye) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach().numpy()


def vectors(rows: list[dict[str, Any]], w: Any = None) -> Any:
    import numpy as np

    q = np.stack([r["q"] for r in rows]).astype(np.float32)
    if w is None:
        return q
    q = q @ w.T
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def groups(rows: list[dict[str, Any]]) -> dict[int, str]:
    """Claim id → a name shared by every claim linked to it through shared relevant abstracts."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for r in rows:
        docs = sorted(r["rel"])
        for d in docs[1:]:
            parent[find(d)] = find(docs[0])
    return {r["id"]: find(sorted(r["rel"])[0]) for r in rows if r["rel"]}


def main() -> None:
    from bioevidence.librarian.hybrid import DenseRetriever
    from bioevidence.librarian.index import LocalIndex

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_dense")
    ap.add_argument("--lists", default="/tmp/bioevidence_prf_lists.pkl", help="eval_prf.py's list cache")
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--lam", type=float, default=0.0)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--weight", type=float, default=0.4, help="dense weight of the convex fusion")
    args = ap.parse_args()
    index = LocalIndex(Path(args.index))
    dense = DenseRetriever(index)
    assert dense.dense is not None
    rows = [r for r in lists(index, dense, Path(args.lists)) if r["rel"]]
    corpus = Corpus(index, dense)
    tune = [r for r in rows if r["id"] % 3 != 0]
    held = [r for r in rows if r["id"] % 3 == 0]
    tune_docs = set().union(*(r["rel"] for r in tune))
    held_docs = set().union(*(r["rel"] for r in held))
    seen = [r for r in held if r["rel"] & tune_docs]
    unseen = [r for r in held if not r["rel"] & tune_docs]
    disjoint = [r for r in tune if not r["rel"] & held_docs]
    print(f"{len(tune)} tuning claims, {len(held)} held-out: {len(seen)} share a relevant abstract with a "
          f"tuning claim, {len(unseen)} do not; {len(disjoint)} tuning claims share none with held-out\n")
    kw = {"tau": args.tau, "lam": args.lam, "steps": args.steps}
    grp = groups(rows)
    names = sorted({grp[r["id"]] for r in tune})
    fold_of_group = {g: i % 5 for i, g in enumerate(names)}
    print("| 5-fold CV inside tune | claims | dense today | dense adapted | hybrid today | hybrid adapted |")
    print("|---|---|---|---|---|---|")
    for label, fold in (("folds by claim id (leaky)", lambda r: (r["id"] // 3) % 5),
                        ("folds by shared-abstract group (doc-disjoint)", lambda r: fold_of_group[grp[r["id"]]])):
        t0 = time.perf_counter()
        base, adapted = [], []
        for k in range(5):
            test = [r for r in tune if fold(r) == k]
            w = train(corpus, [r for r in tune if fold(r) != k], **kw)
            base.append((len(test), score(corpus, test, vectors(test), args.weight)))
            adapted.append((len(test), score(corpus, test, vectors(test, w), args.weight)))
        n = sum(c for c, _ in base)
        print(f"| {label} | {n} | {avg(base, 0):.4f} | {avg(adapted, 0):.4f} | {avg(base, 1):.4f} | "
              f"{avg(adapted, 1):.4f} |  ({time.perf_counter() - t0:.0f} s)")
    print("\n| held-out | trained on | claims | dense today | dense adapted | hybrid today | hybrid adapted |")
    print("|---|---|---|---|---|---|---|")
    for trained_on, train_rows in (("all tune", tune), ("tune, doc-disjoint from held-out", disjoint)):
        w = train(corpus, train_rows, **kw)
        for part, chosen in (("all", held), ("seen abstracts", seen), ("unseen abstracts", unseen)):
            if trained_on != "all tune" and part != "all":
                continue
            b, a = score(corpus, chosen, vectors(chosen), args.weight), score(corpus, chosen, vectors(chosen, w),
                                                                                 args.weight)
            print(f"| {part} | {trained_on} ({len(train_rows)}) | {len(chosen)} | {b[0]:.4f} | {a[0]:.4f} | "
                  f"{b[1]:.4f} | {a[1]:.4f} |")


if __name__ == "__main__":
    main()
