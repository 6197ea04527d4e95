"""Does ``ask --retriever dense`` rank sentences by relevance? SciFact train, tune and held-out.

    .venv/bin/python tools/eval_dense_order.py --index /tmp/scifact_dense_index [--limit 300]

The index must hold dense vectors (``bioevidence index build corpus.jsonl.gz --index DIR --dense``).
For each retriever (bm25, dense, hybrid, and dense as it was before issue 23: paper scores
``(cos + 1) / 2``) it prints, over the claims with gold evidence:

* **paper nDCG@10** (relevant = the evidence documents) of ``answer.papers``;
* **10th / 1st paper score**: the median ratio of the tenth paper's score to the first's (how
  much the papers' scores spread; 0.94 before the fix);
* **gold share in the first 5 / 10 sentences**: per claim, the share of its gold rationale sentences
  among the first k returned sentences, averaged (what a reader reading the top of the list sees).

Stance is not labelled (a stub model), so the figures are about ranking only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scifact_eval import DATA, ndcg10, split


class NoStance:
    """A stance model that labels nothing (ranking figures only)."""

    def label(self, claim: str, sentences: list[str]) -> list[Any]:
        from bioevidence.meaning.labels import StanceLabel

        return [StanceLabel("neutral", 1.0, (0.0, 0.0, 1.0)) for _ in sentences]


def old_dense(retriever: Any) -> None:
    """``retriever.apply`` as it was before issue 23 for ``dense``: paper score ``(cos + 1) / 2``."""
    from bioevidence.librarian.results import Paper

    def apply(question: str, pool: list[Any], mode: str) -> list[Any]:
        by_idx = {p.doc.idx: p for p in pool}
        out = []
        for idx, cos in retriever.docs(question)[: retriever.pool]:
            paper = by_idx.get(idx) or Paper(retriever.index.docs[idx], 0.0, "dense")
            paper.fused = (cos + 1) / 2
            out.append(paper)
        return out

    retriever.apply = apply


def figures(lib: Any, claims: list[dict[str, Any]]) -> dict[str, float]:
    nd, ratio, share5, share10 = [], [], [], []
    for c in claims:
        answer = lib.ask(c["claim"])
        ranked = [p.doc.doc_id for p in answer.papers]
        nd.append(ndcg10(ranked, set(c["evidence"])))
        if len(answer.papers) >= 10 and answer.papers[0].score > 0:
            ratio.append(answer.papers[9].score / answer.papers[0].score)
        order = [(it["doc_id"], i) for it in answer.items() for i in it["sentences"]]
        gold = {(d, i) for d, sets in c["evidence"].items() for s in sets for i in s["sentences"]}
        share5.append(len(gold & set(order[:5])) / len(gold))
        share10.append(len(gold & set(order[:10])) / len(gold))
    return {"ndcg": statistics.mean(nd), "ratio": statistics.median(ratio) if ratio else 0.0,
            "share5": statistics.mean(share5), "share10": statistics.mean(share10)}


def main() -> None:
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings

    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True, help="a SciFact index built with --dense")
    ap.add_argument("--limit", type=int, default=0, help="claims per part (0: all)")
    args = ap.parse_args()
    root = DATA / "claims" / "scifact"
    claims = [json.loads(x) for x in (root / "claims_train.jsonl").read_text().splitlines() if x.strip()]
    claims = [c for c in claims if c["evidence"]]
    lexicon = default_lexicon(DATA / "references")
    print("| retriever | part | claims | paper nDCG@10 | 10th/1st paper score | gold share first 5 | first 10 |")
    print("|---|---|---|---|---|---|---|")
    for name in ("bm25", "dense (before: (cos+1)/2)", "dense", "hybrid"):
        retriever = name.split(" ")[0]
        lib = Librarian(args.index, lexicon=lexicon, retriever=retriever, stance_model=NoStance(),
                        settings=Settings(top_k=10, max_abstract_papers=10))
        if name.startswith("dense (before"):
            old_dense(lib.dense)
        for part in ("tune", "held-out"):
            chosen = split(claims, part)[: args.limit or None]
            f = figures(lib, chosen)
            print(f"| {name} | {part} | {len(chosen)} | {f['ndcg']:.4f} | {f['ratio']:.3f} | {f['share5']:.4f} | "
                  f"{f['share10']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
