"""`ask --retriever hybrid` once loaded: nDCG@10 and seconds per question for caps on the papers the
judge reads (`hybrid.JUDGED`), on the SciFact tuning or held-out train claims (split as in
tools/eval_fusion.py: held-out = id divisible by 3).

    .venv/bin/python tools/bench_hybrid.py tune all 100 50 30
    .venv/bin/python tools/bench_hybrid.py held 50 all      [--index /tmp/bioevidence_scifact_bge]
"""

from __future__ import annotations

import argparse
import json

from scifact_eval import DATA, timed_asks


def main() -> None:
    from bioevidence.librarian.index import LocalIndex
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian, Settings

    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["tune", "held"])
    ap.add_argument("caps", nargs="+", help="numbers of papers judged, or 'all'")
    ap.add_argument("--index", default="/tmp/bioevidence_scifact_bge", help="built by tools/eval_fusion.py")
    args = ap.parse_args()
    lines = (DATA / "claims" / "scifact" / "claims_train.jsonl").read_text().splitlines()
    claims = [json.loads(x) for x in lines if x.strip()]
    chosen = [c for c in claims if (c["id"] % 3 == 0) == (args.part == "held")]
    lib = Librarian(LocalIndex(args.index), lexicon=default_lexicon(DATA / "references"), retriever="hybrid",
                    settings=Settings(top_k=10, max_abstract_papers=10))
    for cap in args.caps:
        lib.dense.pool = None if cap == "all" else int(cap)
        lib.ask(chosen[0]["claim"])
        nd, median, p90 = timed_asks(lib, chosen)
        print(f"{args.part} {len(chosen)} claims, judged {cap}: nDCG@10 {nd:.4f}, median {median:.0f} ms, "
              f"p90 {p90:.0f} ms", flush=True)


if __name__ == "__main__":
    main()
