"""What the SciFact evaluation scripts share (tools/eval_*.py, bench_hybrid.py, bench_bm25.py,
bench_dense.py): the data folder, BEIR's nDCG@10, the tune / held-out split and the timed whole-`ask`
loop. Imported by name (a script's own folder is on ``sys.path``); not part of the package.

The split: SciFact's test labels are withheld and its dev split is not in ../shared/data, so the
809 train claims are split by id, **held-out = claims whose id is divisible by 3**, tune = the rest.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    """BEIR's nDCG@10 with binary relevance."""
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def split(claims: list[dict[str, Any]], part: str) -> list[dict[str, Any]]:
    """The claims of ``part`` ("tune" or "held-out")."""
    return [c for c in claims if (c["id"] % 3 == 0) == (part == "held-out")]


def timed_asks(lib: Any, claims: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Mean nDCG@10 of ``lib.ask`` over ``claims`` and its median and p90 ms a question (once loaded)."""
    lat, nd = [], []
    for c in claims:
        t = time.perf_counter()
        answer = lib.ask(c["claim"])
        lat.append(time.perf_counter() - t)
        nd.append(ndcg10([p.doc.doc_id for p in answer.papers], {str(d) for d in c.get("cited_doc_ids", [])}))
    return statistics.mean(nd), statistics.median(lat) * 1e3, sorted(lat)[int(len(lat) * 0.9)] * 1e3


def compare_with_hybrid(index: Any, lexicon: Any, claims: list[dict[str, Any]], label: str,
                        variant: Any) -> None:
    """Whole `ask --retriever hybrid` on tune and held-out: today's, then with ``variant(dense)``
    (a replacement for the librarian's dense retriever, built from today's) under ``label``."""
    from bioevidence.librarian.librarian import Librarian, Settings

    for name, make in (("today's hybrid", None), (label, variant)):
        lib = Librarian(index, lexicon=lexicon, retriever="hybrid", settings=Settings(top_k=10, max_abstract_papers=10))
        if make is not None:
            lib.dense = make(lib.dense)
        lib.ask(claims[0]["claim"])
        for part in ("tune", "held-out"):
            chosen = split(claims, part)
            nd, median, p90 = timed_asks(lib, chosen)
            print(f"ask --retriever hybrid, {name}, {part} {len(chosen)}: nDCG@10 {nd:.4f}, "
                  f"median {median:.0f} ms, p90 {p90:.0f} ms", flush=True)


Row = tuple[str, Any, float, float]  # label, configuration, tune score, held-out score


def grid_table(grid: list[tuple[str, Any]], score: Any, tune: list[Any], held: list[Any],
               heading: str = "configuration") -> tuple[list[Row], Row]:
    """Score every ``(label, config)`` of ``grid`` on tune and held-out with ``score(config, part)``,
    print the markdown table (the winner on tune marked) and return the rows and the winner."""
    t0 = time.perf_counter()
    table = [(label, cfg, score(cfg, tune), score(cfg, held)) for label, cfg in grid]
    print(f"grid of {len(grid)} in {time.perf_counter() - t0:.1f} s; tune {len(tune)}, held-out {len(held)} claims\n")
    best = max(table, key=lambda t: t[2])
    print(f"| {heading} | tune | held-out |")
    print("|---|---|---|")
    for label, _, t, h in table:
        mark = " **(winner on tune)**" if label == best[0] else ""
        print(f"| {label}{mark} | {t:.4f} | {h:.4f} |")
    return table, best
