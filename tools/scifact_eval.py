"""What the SciFact evaluation scripts share (tools/eval_*.py, bench_hybrid.py, bench_bm25.py,
bench_dense.py): the data folder, BEIR's nDCG@10, the tune / held-out split and the timed whole-`ask`
loop. Imported by name (a script's own folder is on ``sys.path``); not part of the package.

The split: SciFact's test labels are withheld and its dev split is not in ../shared/data, so the
809 train claims are split by id, **held-out = claims whose id is divisible by 3**, tune = the rest.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


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
