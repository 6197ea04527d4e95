"""Evaluate the offline librarian on SciFact train claims (no neural model).

Usage::

    .venv/bin/python tools/eval_scifact.py [--data ../shared/data] [--index /tmp/scifact_index]
        [--title-boost 0] [--judge-weight 0.3] [--synonym-weight 0.35] [--title-weight 0.1]
        [--phrase-weight 0.1] [--min-fraction 0.15] [--no-lexicon] [--plain] [--no-feedback] [--part all|tune|held-out]

Metrics: BEIR-protocol nDCG@10 and recall@10 over every claim (relevant = cited_doc_ids);
the share of gold rationale sentences among the first 5 and 10 returned sentences (items in
rank order, each item's sentences in order; claims with evidence: the mean of each claim's share,
the share of all gold sentences, and the share of claims with at least one);
nDCG@10 over claims with evidence only (relevant = evidence documents); rationale sentence
precision / recall / F1 (micro) for the gold evidence documents: the sentences the judge
selected in each gold document the librarian returned, against the gold rationale sentences
(a gold document not returned counts as all its rationales missed).
Any parameter changed here is tuned on *train*; report it as such.

``--markdown`` ends with the retrieval and rationale figures as docs/librarian.md's table (its region
``scifact-train``, regenerated and compared exactly by ``tools/reproduce.py scifact-train``; the stance
counts and the latency are left out: the first is issue 23's, the second a timing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from scifact_eval import DATA, ndcg10, split


def main() -> None:
    from bioevidence.librarian.backend import Scoring
    from bioevidence.librarian.index import build_index
    from bioevidence.librarian.judge import LexicalJudge
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings
    from bioevidence.librarian.planner import DEFAULT_WEIGHTS, OfflinePlanner

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_index")
    ap.add_argument("--title-boost", type=float, default=Scoring().title_boost)
    ap.add_argument("--judge-weight", type=float, default=Settings().judge_weight)
    ap.add_argument("--synonym-weight", type=float, default=DEFAULT_WEIGHTS["synonym"])
    ap.add_argument("--title-weight", type=float, default=DEFAULT_WEIGHTS["title"])
    ap.add_argument("--phrase-weight", type=float, default=DEFAULT_WEIGHTS["phrase"])
    ap.add_argument("--min-fraction", type=float, default=LexicalJudge().min_fraction)
    ap.add_argument("--no-lexicon", action="store_true")
    ap.add_argument("--plain", action="store_true", help="broad subquery only, no title boost, no judge")
    ap.add_argument("--part", choices=("all", "tune", "held-out"), default="all",
                    help="the claims read: all of train, or tools/scifact_eval.py's tune / held-out split")
    ap.add_argument("--no-feedback", action="store_true", help="without RM3 feedback (on by default for bm25)")
    ap.add_argument("--limit", type=int, default=0, help="first N claims only (0 = all)")
    ap.add_argument("--markdown", action="store_true", help="end with docs/librarian.md's table of these figures")
    ap.add_argument("--stance-model", help="label stance with this model (LLMStance) instead of the lexical rule")
    ap.add_argument("--base-url", help="OpenAI-compatible server for --stance-model [default: $OPENAI_BASE_URL]")
    args = ap.parse_args()
    stance_llm = None
    if args.stance_model:
        from bioevidence.librarian.stance import LLMStance
        from bioevidence.loop.llm import LLM, OpenAITransport

        stance_llm = LLMStance(LLM(OpenAITransport(args.base_url, timeout=600), args.stance_model))
    stance_calls = {"labelled": 0, "failed": 0}

    root = Path(args.data) / "claims" / "scifact"
    index = Path(args.index)
    if not (index / "index.sqlite").is_file():
        stats = build_index([root / "corpus.jsonl.gz"], index)
        print(f"built index: {stats.docs} docs in {stats.seconds:.1f}s")
    claims = [json.loads(x) for x in (root / "claims_train.jsonl").read_text().splitlines() if x.strip()]
    if args.part != "all":
        claims = split(claims, args.part)
    if args.limit:
        claims = claims[: args.limit]
    lexicon = None if args.no_lexicon or args.plain else default_lexicon(Path(args.data) / "references")
    weights = {"broad": 1.0, "synonym": args.synonym_weight, "title": args.title_weight,
               "phrase": args.phrase_weight}
    planner = OfflinePlanner(lexicon, weights=weights)
    if args.plain:
        planner.max_subqueries = 1
    lib = Librarian(index, lexicon=lexicon, use_lexicon=False, retriever="bm25", planner=planner,
                    scoring=Scoring(title_boost=0.0 if args.plain else args.title_boost),
                    settings=Settings(judge_weight=0.0 if args.plain else args.judge_weight, top_k=10,
                                      max_abstract_papers=10),
                    judge=LexicalJudge(min_fraction=0.0 if args.plain else args.min_fraction),
                    feedback=None if args.no_feedback or args.plain else "auto")
    beir, recall, ev_ndcg, lat = [], [], [], []
    tp = fp = fn = 0
    at: dict[int, list[int]] = {5: [0, 0], 10: [0, 0]}  # gold rationale sentences among the first k returned
    hit: dict[int, list[int]] = {5: [0, 0], 10: [0, 0]}  # claims with one among the first k
    share: dict[int, list[float]] = {5: [], 10: []}  # per claim: its gold sentences among the first k
    confusion: dict[tuple[str, str], int] = {}  # (gold, predicted) stance of returned sentences
    for c in claims:
        t0 = time.perf_counter()
        answer = lib.ask(c["claim"])
        lat.append(time.perf_counter() - t0)
        if stance_llm is not None:
            info = stance_llm.label(answer)
            stance_calls["labelled"] += info.get("labelled", 0)
            stance_calls["failed"] += "error" in info
        ranked = [p.doc.doc_id for p in answer.papers]
        cited = {str(x) for x in c["cited_doc_ids"]}
        beir.append(ndcg10(ranked, cited))
        recall.append(len(cited & set(ranked[:10])) / len(cited))
        labels = {(d, i): {"SUPPORT": "supports", "CONTRADICT": "contradicts"}[s["label"]]
                  for d, sets in c["evidence"].items() for s in sets for i in s["sentences"]}
        for it in answer.items():
            gold_label = next((labels[(it["doc_id"], i)] for i in it["sentences"] if (it["doc_id"], i) in labels),
                              "neutral")
            key = (gold_label, it["stance"])
            confusion[key] = confusion.get(key, 0) + 1
        if c["evidence"]:
            order = [(it["doc_id"], i) for it in answer.items() for i in it["sentences"]]
            gold_all = {(d, i) for d, sets in c["evidence"].items() for s in sets for i in s["sentences"]}
            for k in (5, 10):
                found = gold_all & set(order[:k])
                at[k][0] += len(found)
                at[k][1] += len(gold_all)
                hit[k][0] += bool(found)
                hit[k][1] += 1
                share[k].append(len(found) / len(gold_all))
            ev_docs = set(c["evidence"])
            ev_ndcg.append(ndcg10(ranked, ev_docs))
            picked = {p.doc.doc_id: {i for sp in p.spans for i in sp.sentences} for p in answer.papers}
            for doc_id, sets in c["evidence"].items():
                gold = {i for s in sets for i in s["sentences"]}
                pred = picked.get(doc_id, set())
                tp += len(gold & pred)
                fp += len(pred - gold)
                fn += len(gold - pred)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    mode = "plain BM25 (stemmed, broad query only)" if args.plain else (
        f"offline planner+judge (title_boost={args.title_boost}, judge_weight={args.judge_weight}, "
        f"synonym={args.synonym_weight}, title={args.title_weight}, phrase={args.phrase_weight}, "
        f"min_fraction={args.min_fraction}, lexicon={lexicon is not None}, "
        f"feedback={'off' if lib.feedback is None else 'RM3'})")
    print(f"SciFact train ({args.part}), {len(claims)} claims ({len(ev_ndcg)} with evidence) — {mode}")
    print(f"BEIR nDCG@10        {statistics.mean(beir):.4f}")
    print(f"BEIR recall@10      {statistics.mean(recall):.4f}")
    print(f"evidence nDCG@10    {statistics.mean(ev_ndcg) if ev_ndcg else 0:.4f}")
    print(f"rationale P/R/F1    {p:.4f} / {r:.4f} / {f1:.4f}")
    for k in (5, 10):
        print(f"first {k:>2} returned sentences: share of a claim's gold rationale sentences "
              f"{statistics.mean(share[k]) if share[k] else 0:.4f} (mean over claims); of all "
              f"{at[k][0] / max(1, at[k][1]):.4f} ({at[k][0]}/{at[k][1]}); claims with one "
              f"{hit[k][0] / max(1, hit[k][1]):.4f}")
    if stance_llm is not None:
        print(f"stance by {args.stance_model}: {stance_calls['labelled']} sentences labelled by the model, "
              f"{stance_calls['failed']} calls unusable (their sentences keep the offline label)")
    print("stance of returned sentences (rows: gold, a rationale's label or neutral; columns: predicted)")
    print(f"{'':>12} " + " ".join(f"{x:>11}" for x in ("supports", "contradicts", "neutral")))
    for gold_label in ("supports", "contradicts", "neutral"):
        row = [confusion.get((gold_label, x), 0) for x in ("supports", "contradicts", "neutral")]
        print(f"{gold_label:>12} " + " ".join(f"{v:>11}" for v in row))
    f1s = []
    for x in ("supports", "contradicts", "neutral"):
        tp_ = confusion.get((x, x), 0)
        pred = sum(v for (g, q), v in confusion.items() if q == x)
        real = sum(v for (g, q), v in confusion.items() if g == x)
        prec, rec = (tp_ / pred if pred else 0.0), (tp_ / real if real else 0.0)
        f1s.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
    print(f"stance macro-F1 over returned sentences: {statistics.mean(f1s):.4f} "
          f"(supports {f1s[0]:.3f}, contradicts {f1s[1]:.3f}, neutral {f1s[2]:.3f})")
    rationale = [(g, p) for (g, p), n in confusion.items() for _ in range(n) if g != "neutral"]
    if rationale:
        print(f"stance accuracy on returned rationale sentences: "
              f"{sum(g == p for g, p in rationale) / len(rationale):.4f} ({len(rationale)} sentences)")
    print(f"median ask latency  {statistics.median(lat) * 1000:.1f} ms")
    if args.markdown:
        print(f"\n| SciFact train ({args.part}, {len(claims)} claims; {len(ev_ndcg)} with evidence) | figure |")
        print("|---|---|")
        for label, value in (
                ("BEIR nDCG@10 (relevant: the cited abstracts)", f"{statistics.mean(beir):.4f}"),
                ("recall@10", f"{statistics.mean(recall):.4f}"),
                ("evidence nDCG@10 (claims with evidence; relevant: the evidence abstracts)",
                 f"{statistics.mean(ev_ndcg) if ev_ndcg else 0:.4f}"),
                ("rationale sentences chosen by the judge in the gold abstracts, P / R / F1",
                 f"{p:.3f} / {r:.3f} / {f1:.3f}"),
                *((f"share of a claim's gold rationale sentences among the first {k} returned (mean over claims)",
                   f"{statistics.mean(share[k]) if share[k] else 0:.3f}") for k in (5, 10))):
            print(f"| {label} | {value} |")


if __name__ == "__main__":
    main()
