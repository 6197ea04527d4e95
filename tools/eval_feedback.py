"""Lexical ranking methods for `ask --retriever bm25` on SciFact: chosen on tune, read once on held-out.

RM3 pseudo-relevance feedback (:mod:`bioevidence.librarian.feedback`) and the lower-bounded
term-frequency normalisations BM25+ and BM25L (tools/tfnorm.py).

Split as in tools/scifact_eval.py (held-out = train claims whose id is divisible by 3). The whole
`ask` (offline planner, judge, ranking) runs with and without the method;
paper-level BEIR nDCG@10 is read from `answer.papers`, and the median / p90 ms a question are timed once
loaded.

Usage::

    .venv/bin/python tools/eval_feedback.py tune                      # today's + the RM3 grid, tune only
    .venv/bin/python tools/eval_feedback.py held-out --docs 10 --terms 10 --weight 0.5   # one configuration
    .venv/bin/python tools/eval_feedback.py tune --method plus --delta 0.1 0.25 0.45     # BM25+ (or --method l)

``--index`` (default /tmp/bioevidence_scifact_index) is built from the corpus when missing (about 5 s).
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from scifact_eval import DATA, split, timed_asks


def main() -> None:
    from bioevidence.librarian.feedback import Feedback
    from bioevidence.librarian.index import LocalIndex, build_index
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian
    from tfnorm import LowerBound

    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=("tune", "held-out"))
    ap.add_argument("--method", choices=("rm3", "plus", "l"), default="rm3")
    ap.add_argument("--delta", type=float, nargs="*", default=[0.1, 0.25, 0.45], help="BM25+ / BM25L delta")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_index")
    ap.add_argument("--docs", type=int, nargs="*", default=[3, 5, 10])
    ap.add_argument("--terms", type=int, nargs="*", default=[10, 20])
    ap.add_argument("--weight", type=float, nargs="*", default=[0.5, 0.7, 0.9])
    ap.add_argument("--max-df", type=float, nargs="*", default=[0.1])
    ap.add_argument("--mode", choices=("replace", "add"), default="replace",
                    help="RM3 hits replace the broad subquery's, or join the fusion as one more subquery")
    ap.add_argument("--fb-weight", type=float, nargs="*", default=[1.0],
                    help="the added subquery's weight (--mode add)")
    ap.add_argument("--no-baseline", action="store_true", help="skip today's ranking (no RM3)")
    args = ap.parse_args()
    root = Path(args.data) / "claims" / "scifact"
    index = Path(args.index)
    if not (index / "index.sqlite").is_file():
        stats = build_index([root / "corpus.jsonl.gz"], index)
        print(f"built index: {stats.docs} docs in {stats.seconds:.1f}s")
    claims = split([json.loads(x) for x in (root / "claims_train.jsonl").read_text().splitlines() if x.strip()],
                   args.part)
    lexicon = default_lexicon(Path(args.data) / "references")
    grid: list[Feedback | float] = (
        [Feedback(d, t, w, f, args.mode, fw) for d, t, w, f, fw in
         itertools.product(args.docs, args.terms, args.weight, args.max_df, args.fb_weight)]
        if args.method == "rm3" else list(args.delta))
    configs: list[Feedback | float | None] = ([] if args.no_baseline else [None]) + grid
    if args.part == "held-out" and len(grid) != 1:
        raise SystemExit("held-out is read once, for one configuration chosen on tune: give one of each knob")
    print(f"SciFact train, {args.part} ({len(claims)} claims), `ask --retriever bm25`, whole ask, once loaded")
    head = {"rm3": "RM3 (docs, terms, original weight, max df[, add: subquery weight])", "plus": "BM25+ delta",
            "l": "BM25L delta"}
    print(f"| {head[args.method]} | {args.part} nDCG@10 | median ms | p90 ms |")
    print("|---|---|---|---|")
    local = LocalIndex(index)
    for cfg in configs:
        if isinstance(cfg, Feedback) or cfg is None:
            lib = Librarian(local, lexicon=lexicon, retriever="bm25", feedback=cfg)
        else:
            lib = Librarian(local, lexicon=lexicon, retriever="bm25", feedback=None,
                            backend=LowerBound(local, args.method, cfg))
        lib.ask(claims[0]["claim"])  # loaded
        nd, median, p90 = timed_asks(lib, claims)
        label = ("today's (no RM3, no floor)" if cfg is None else f"{cfg}" if isinstance(cfg, float)
                 else f"{cfg.docs}, {cfg.terms}, {cfg.original_weight}, {cfg.max_df}"
                 + (f", add {cfg.weight}" if cfg.mode == "add" else ""))
        print(f"| {label} | {nd:.4f} | {median:.0f} | {p90:.0f} |", flush=True)


if __name__ == "__main__":
    main()
