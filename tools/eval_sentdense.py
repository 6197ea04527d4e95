"""Sentence-level dense scoring for ``hybrid`` on SciFact, tuned on the tuning split, reported on held-out.

Split as in tools/eval_fusion.py: **held-out = train claims whose id is divisible by 3** (never used
to choose anything), **tune = the others**. Today's dense list scores a document by its best chunk's
cosine (about one ~200-word chunk per SciFact abstract, title prepended), so a claim that matches
one sentence is diluted by the rest of the abstract. Here every sentence of every abstract (the
index's sentence spans) is encoded with the same model (all-MiniLM-L6-v2), in three ways:

* ``plain``: the sentence alone; ``plain+title``: the same, plus the title as a unit of its own;
* ``titled`` (``--titled``): ``"<title>. <sentence>"`` (the title prepended, as chunks do);
  ``plain⊕title``: a cheap stand-in for it, ``normalize(v(sentence) + v(title))``.

A document's sentence score is the max sentence cosine (``max``), the mean of its two best
(``top2``), or ``a·max + (1 − a)·chunk cosine`` (``mix a``). The top 200 documents of that score
(as ``DENSE_DOCS``) are fused with the librarian's lexical pool by the convex combination hybrid uses
(dense weight tuned on tune), or by a three-list convex (lexical, chunk-dense, sentence-dense).

Prints a markdown table: configuration, tune and held-out list-level nDCG@10 (no judge), the
winner on tune marked, and the median extra time of the sentence scoring per question. The lexical
lists and question vectors come from ``tools/eval_prf.py``'s cache (``--lists``, built here the same
way when missing); the sentence vectors are cached in ``--vectors`` (encoding ~46k sentences twice
takes minutes on this CPU). ``--final KIND AGG W_CHUNK W_SENT`` (``AGG`` ``max``, ``top2`` or
``mix_0.5``) runs today's ``hybrid`` and that configuration through the whole ``ask --retriever
hybrid`` (judge on) on tune and held-out, timed per question once loaded. Needs the kb extra.

    PYTHONPATH=src .venv/bin/python tools/eval_sentdense.py [--index /tmp/bioevidence_scifact_dense] [--titled]
    PYTHONPATH=src .venv/bin/python tools/eval_sentdense.py --final plain max 0.3 0.2
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import time
from pathlib import Path
from typing import Any, cast

from scifact_eval import DATA, compare_with_hybrid, grid_table, ndcg10


def lists(index: Any, dense: Any, cache: Path) -> list[dict[str, Any]]:
    """Per train claim: id, relevant doc ids, the lexical pool and the question vector (cached)."""
    import numpy as np

    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings, fuse

    if cache.is_file():
        rows: list[dict[str, Any]] = pickle.loads(cache.read_bytes())
        return rows
    claims = [json.loads(x) for x in (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines()
              if x.strip()]
    lib = Librarian(index, lexicon=default_lexicon(DATA / "references"),
                    settings=Settings(top_k=10, max_abstract_papers=10))
    rows = []
    for c in claims:
        results, _ = lib._search(lib.planner.plan(c["claim"]))
        rows.append({"id": c["id"], "claim": c["claim"], "rel": {str(d) for d in c.get("cited_doc_ids", [])},
                     "lex": [(p.doc.idx, p.fused) for p in fuse(results)],
                     "q": np.asarray(dense.embed(c["claim"]), dtype=np.float32)})
    cache.write_bytes(pickle.dumps(rows))
    return rows


def sentence_vectors(index: Any, encoder: Any, folder: Path, kinds: tuple[str, ...]) -> dict[str, Any]:
    """``doc`` (sentence → doc idx, sorted), ``title`` vectors (one a doc) and the sentence vectors of
    ``kinds`` (``plain``, ``titled``), each cached in ``folder/<key>.npy`` as soon as it is encoded."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    doc, plain, titled = [], [], []
    for d in index.docs:
        for p in index.passages(d.idx):
            for a, b in p.sentences:
                s = p.text[a:b].strip()
                if s:
                    doc.append(d.idx)
                    plain.append(s)
                    titled.append(f"{d.title}. {s}" if d.title else s)
    out = {"doc": np.asarray(doc, dtype=np.int32)}
    texts = {"title": [d.title or "" for d in index.docs], "plain": plain, "titled": titled}
    for key in ("title", *kinds):
        path = folder / f"{key}.npy"
        if not path.is_file():
            t = time.perf_counter()
            np.save(path, encoder.encode(texts[key]))
            print(f"encoded {len(texts[key])} {key} texts in {time.perf_counter() - t:.0f} s", flush=True)
        out[key] = np.load(path)
    return out


def main() -> None:
    import numpy as np

    from bioevidence.librarian.fusion import convex
    from bioevidence.librarian.hybrid import DENSE_DOCS, DenseRetriever
    from bioevidence.librarian.index import LocalIndex

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_dense")
    ap.add_argument("--lists", default="/tmp/bioevidence_prf_lists.pkl", help="eval_prf.py's list cache")
    ap.add_argument("--vectors", default="/tmp/bioevidence_sentdense", help="sentence vector cache folder")
    ap.add_argument("--titled", action="store_true", help="also encode title-prepended sentences (slow)")
    ap.add_argument("--final", nargs=4, metavar=("KIND", "AGG", "W_CHUNK", "W_SENT"),
                    help="only run the whole ask --retriever hybrid (judge on), today's and this configuration")
    args = ap.parse_args()
    index = LocalIndex(Path(args.index))
    dense = DenseRetriever(index)
    assert dense.dense is not None
    rows = lists(index, dense, Path(args.lists))
    kinds = ("plain", "titled") if args.titled else ("plain",)
    sv = sentence_vectors(index, dense.encoder, Path(args.vectors), kinds)
    mean = sv["plain"] + sv["title"][sv["doc"]]  # a cheap stand-in for "title. sentence": the mean vector
    sv["mean"] = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    kinds = ("plain", "plain+title", "plain⊕title", *(("titled",) if "titled" in sv else ()))
    name = [d.doc_id for d in index.docs]
    n = index.n
    sdoc = sv["doc"]
    assert np.all(np.diff(sdoc) >= 0)
    starts = np.searchsorted(sdoc, np.arange(n))
    has = np.bincount(sdoc, minlength=n) > 0
    cvec = np.asarray(dense.dense.vectors)
    cdoc = np.asarray([int(u[0]) for u in dense.dense.units])
    corder = np.argsort(cdoc, kind="stable")
    csorted = cvec[corder]
    chas = np.bincount(cdoc, minlength=n) > 0
    cstarts = np.searchsorted(cdoc[corder], np.arange(n))

    def per_doc_max(scores: Any, st: Any, present: Any) -> Any:
        m = np.maximum.reduceat(scores, np.minimum(st, len(scores) - 1))
        return np.where(present, m, -1.0)

    def sent_scores(q: Any, kind: str) -> dict[str, Any]:
        """Per-doc ``max`` and ``top2`` sentence cosines for one question (arrays over all docs)."""
        vec = sv["mean" if kind == "plain⊕title" else "titled" if kind == "titled" else "plain"]
        s = vec @ q
        mx = per_doc_max(s, starts, has)
        first = np.zeros(len(s), dtype=bool)  # the first best sentence of each doc, masked for the second
        hit = np.flatnonzero(s == mx[sdoc])
        _, at = np.unique(sdoc[hit], return_index=True)
        first[hit[at]] = True
        s2 = np.where(first, -1.0, s)
        second = per_doc_max(s2, starts, has)
        if kind == "plain+title":
            t = sv["title"] @ q
            second = np.where(t > mx, mx, np.maximum(second, t))
            mx = np.maximum(mx, t)
        second = np.where(second <= -1.0, mx, second)  # a one-sentence doc: its sentence twice
        return {"max": mx, "top2": (mx + second) / 2}

    def top(score: Any, k: int = DENSE_DOCS) -> list[tuple[int, float]]:
        idx = np.argpartition(-score, k - 1)[:k]
        idx = idx[np.lexsort((idx, -score[idx]))]
        return [(int(i), float(score[i])) for i in idx]

    t0 = time.perf_counter()
    lat = []
    for r in rows:
        r["chunk"] = dense.docs(r["q"], DENSE_DOCS)
        r["chunk_all"] = per_doc_max(csorted @ r["q"], cstarts, chas)
        t = time.perf_counter()
        r["sent"] = {kind: sent_scores(r["q"], kind) for kind in kinds}
        lat.append((time.perf_counter() - t) / len(kinds))
    print(f"scores for {len(rows)} claims in {time.perf_counter() - t0:.1f} s; sentence scoring median "
          f"{statistics.median(lat) * 1e3:.1f} ms a question (one kind)\n")

    def dlist(r: dict[str, Any], kind: str, agg: str) -> list[tuple[int, float]]:
        if agg.startswith("mix"):
            a = float(agg.split()[1])
            return top(a * r["sent"][kind]["max"] + (1 - a) * r["chunk_all"])
        return top(r["sent"][kind][agg])

    def run(r: dict[str, Any], cfg: tuple[Any, ...]) -> list[int]:
        kind, agg, w_chunk, w_sent = cfg
        ls, ws = [r["lex"]], [1.0 - w_chunk - w_sent]
        if w_chunk:
            ls.append(r["chunk"])
            ws.append(w_chunk)
        if w_sent:
            ls.append(dlist(r, kind, agg))
            ws.append(w_sent)
        return [cast(int, k) for k, _ in convex(ls, ws)[:10]]

    grid: list[tuple[str, tuple[Any, ...]]] = [("today's hybrid (lexical 0.6, chunk-dense 0.4)", ("", "", 0.4, 0.0))]
    for w in (0.3, 0.5):
        grid.append((f"lexical + chunk-dense {w}", ("", "", w, 0.0)))
    for kind in kinds:
        for agg in ("max", "top2", "mix 0.5"):
            for w in (0.3, 0.4, 0.5, 0.6):
                grid.append((f"{kind} {agg}, sentence-dense {w}", (kind, agg, 0.0, w)))
            for wc, ws in ((0.2, 0.2), (0.2, 0.3), (0.3, 0.2), (0.1, 0.3), (0.3, 0.3)):
                grid.append((f"{kind} {agg}, three lists: chunk {wc} + sentence {ws}", (kind, agg, wc, ws)))
    if args.final:
        kind, agg, wc, ws = args.final
        final(index, dense, (kind, agg.replace("_", " "), float(wc), float(ws)), sent_scores, dlist)
        return
    tune = [r for r in rows if r["id"] % 3]
    held = [r for r in rows if r["id"] % 3 == 0]

    def score(cfg: tuple[Any, ...], part: list[dict[str, Any]]) -> float:
        return statistics.mean(ndcg10([name[i] for i in run(r, cfg)], r["rel"]) for r in part)

    _, best = grid_table(grid, score, tune, held, "configuration (list level)")
    print(f"\nwinner on tune: {best[0]} {best[1]}: tune {best[2]:.4f}, held-out {best[3]:.4f}")


def final(index: Any, dense: Any, cfg: tuple[Any, ...], sent_scores: Any, dlist: Any) -> None:
    """The whole ``ask --retriever hybrid`` (judge on), today's and with ``cfg``'s fusion, on both parts."""
    from bioevidence.librarian.fusion import convex
    from bioevidence.librarian.hybrid import DenseRetriever
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.results import Paper

    kind, agg, w_chunk, w_sent = cfg

    class Sentences(DenseRetriever):
        def apply(self, question: str, pool: list[Paper], retriever: str) -> list[Paper]:
            q = self.embed(question)
            r = {"sent": {kind: sent_scores(q, kind)}}
            if agg.startswith("mix"):
                r["chunk_all"] = chunk_all(q)
            ls = [[(p.doc.idx, p.fused) for p in pool]]
            ws = [1.0 - w_chunk - w_sent]
            if w_chunk:
                ls.append(self.docs(q))
                ws.append(w_chunk)
            ls.append(dlist(r, kind, agg))
            ws.append(w_sent)
            by_idx = {p.doc.idx: p for p in pool}
            out = []
            for idx, score in convex(ls, ws)[: self.pool]:
                doc = cast(int, idx)
                paper = by_idx.get(doc) or Paper(self.index.docs[doc], 0.0, "dense")
                paper.fused = score
                out.append(paper)
            return out

    def chunk_all(q: Any) -> Any:
        import numpy as np

        best = np.full(index.n, -1.0, dtype=np.float32)
        np.maximum.at(best, np.asarray([int(u[0]) for u in dense.dense.units]), np.asarray(dense.dense.vectors) @ q)
        return best

    claims = [json.loads(x) for x in (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines()
              if x.strip()]
    lexicon = default_lexicon(DATA / "references")
    compare_with_hybrid(index, lexicon, claims, f"{kind} {agg} chunk {w_chunk:g} sentence {w_sent:g}",
                        lambda d: Sentences(index, encoder=d.encoder, dense=d.dense))


if __name__ == "__main__":
    main()
