"""Curator questions over the CIViC corpus: is the cited paper found, and how high (issue 28 item 3)?

    .venv/bin/python tools/eval_curator.py [--n 0] [--index /tmp/bioevidence_civic_dense] [--json | --markdown]

The questions are the ones ``tools/civic_questions.py`` writes as a curator types them ("Does BRAF
V600E confer sensitivity to vemurafenib in melanoma?"), from the 2016 CIViC export and today's
evidence items, one per paper, each with the PubMed id its CIViC item cites. They are asked over an
index of the 300 pinned CIViC papers built with dense vectors (``index build --dense``, built here
when absent), three ways side by side:

* **when the issue was filed**: ``--retriever bm25`` without the drug-name and abbreviation pairs
  the index now mines and without RM3 feedback (the planner of that release reads the same HGNC and
  CIViC vocabularies);
* **bm25 now**: ``--retriever bm25`` with the mined pairs and RM3 feedback (its default);
* **default now**: ``ask`` with no ``--retriever`` (``auto``: hybrid on this index, it has vectors).

Printed per part (tune = even PubMed id, held-out = odd, as ``civic_questions.py`` splits them;
nothing here was tuned on either): the cited paper among the first 1 / 5 / 10 papers, its nDCG@10
(one relevant paper), the share of questions with a sentence of the cited paper among the first 5
sentences, and the median seconds a question once loaded. ``--n 0`` asks every question; ``--n N``
the balanced sample of N that ``civic_questions.py`` draws.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from civic_questions import DATA, PARTS, CivicQuestion, candidates, sample


def dense_index(where: Path, data: Path) -> Path:
    """The CIViC snapshots indexed with dense vectors under ``where`` (built when absent)."""
    if not (where / "dense" / "units.json").is_file():
        from click.testing import CliRunner

        from bioevidence.cli import cli

        t0 = time.perf_counter()
        built = CliRunner().invoke(cli, ["index", "build", str(data / "civic_corpus" / "snapshots"),
                                         "--index", str(where), "--dense"])
        if built.exit_code != 0:
            raise SystemExit(built.output)
        print(f"built {where} with dense vectors in {time.perf_counter() - t0:.0f} s", flush=True)
    return where


def librarians(index: Path, data: Path) -> dict[str, Any]:
    from bioevidence.librarian.index import LocalIndex
    from bioevidence.librarian.lexicon import default_lexicon
    from bioevidence.librarian.librarian import Librarian
    from bioevidence.librarian.planner import OfflinePlanner

    lexicon = default_lexicon(data / "references", (data / "claims" / "civic" / "civic.biomarkers.tsv",))
    ix = LocalIndex(index)
    return {"when the issue was filed (bm25, no mined names)":
            Librarian(ix, lexicon=lexicon, planner=OfflinePlanner(lexicon), retriever="bm25", feedback=None),
            "bm25 now": Librarian(ix, lexicon=lexicon, retriever="bm25"),
            "default now (auto)": Librarian(ix, lexicon=lexicon)}


def ask(lib: Any, q: CivicQuestion) -> dict[str, Any]:
    t0 = time.perf_counter()
    found = lib.ask(q.question)
    seconds = time.perf_counter() - t0
    papers = [p.doc.pmid for p in found.papers]
    rank = papers.index(q.pmid) + 1 if q.pmid in papers else None
    first5 = {found.papers[s.paper].doc.pmid for s in found.ranked[:5]}
    return {"rank": rank, "sentence5": q.pmid in first5, "seconds": seconds,
            "retriever": found.provenance.get("retriever")}


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    ranks = [r["rank"] for r in rows]
    n = max(1, len(rows))
    return {"questions": len(rows),
            **{f"first_{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)},
            "ndcg10": sum(1 / math.log2(r + 1) for r in ranks if r is not None and r <= 10) / n,
            "sentence_first_5": sum(r["sentence5"] for r in rows) / n,
            "median_s": statistics.median(r["seconds"] for r in rows) if rows else 0.0}


def doc_table(table: dict[str, dict[str, dict[str, float]]], chosen: dict[str, str]) -> str:
    """The held-out and all rows, part by part, as docs/librarian.md states them (today's default in bold)."""
    out = ["| asked | retriever | part | cited paper first | first 5 | first 10 | nDCG@10 "
           "| a sentence of it in the first 5 | median s |", "|---|---|---|---|---|---|---|---|---|"]
    for n, part in enumerate(("held-out", "all")):
        for name, parts in table.items():
            f = parts[part]
            cells = [f"{f[k]:.3f}" for k in ("first_1", "first_5", "first_10", "ndcg10", "sentence_first_5")]
            label = name if n == 0 else name.removesuffix(" (bm25, no mined names)")
            if name.startswith("default"):
                label = f"**{label}**"
                cells = [c if k in (1, 2) else f"**{c}**" for k, c in enumerate(cells)]
            out.append(f"| {label} | {chosen[name]} | {part} ({int(f['questions'])}) | {' | '.join(cells)} | "
                       f"{f['median_s']:.3f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--index", default="/tmp/bioevidence_civic_dense", help="built here with --dense if missing")
    ap.add_argument("--n", type=int, default=0, help="0: every question; N: civic_questions.py's sample of N")
    ap.add_argument("--json", action="store_true", help="the figures as one JSON object")
    ap.add_argument("--markdown", action="store_true", help="the held-out and all rows as docs/librarian.md states "
                    "them (the region `tools/reproduce.py curator-questions --timings` compares)")
    args = ap.parse_args()
    data = Path(args.data)
    pool = candidates(data)
    qs = pool if args.n == 0 else sample(pool, args.n)
    libs = librarians(dense_index(Path(args.index), data), data)
    for lib in libs.values():  # load the models and tables once, outside the timings
        lib.ask(qs[0].question)
    table: dict[str, dict[str, dict[str, float]]] = {}
    chosen: dict[str, str] = {}
    for name, lib in libs.items():
        rows = [(q, ask(lib, q)) for q in qs]
        chosen[name] = str(rows[0][1]["retriever"])
        table[name] = {part: figures([r for q, r in rows if q.part == part]) for part in PARTS}
        table[name]["all"] = figures([r for _, r in rows])
    if args.json:
        print(json.dumps({"questions": len(qs), "retriever": chosen, "figures": table}, indent=1))
        return
    if args.markdown:
        print(doc_table(table, chosen))
        return
    print(f"{len(qs)} curator questions over {len({q.pmid for q in qs})} pinned CIViC papers "
          f"({', '.join(f'{p}: {sum(q.part == p for q in qs)}' for p in PARTS)})\n")
    print("| asked | retriever | part | cited paper first | first 5 | first 10 | nDCG@10 "
          "| a sentence of it in the first 5 | median s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, parts in table.items():
        for part, f in parts.items():
            print(f"| {name} | {chosen[name]} | {part} ({int(f['questions'])}) | {f['first_1']:.3f} | "
                  f"{f['first_5']:.3f} | {f['first_10']:.3f} | {f['ndcg10']:.3f} | {f['sentence_first_5']:.3f} | "
                  f"{f['median_s']:.3f} |")


if __name__ == "__main__":
    main()
