"""Lower-bounded term-frequency normalisation for the local backend: BM25+ and BM25L (Lv and Zhai,
CIKM 2011), computed from the index's stored BM25 scores (no re-indexing).

The index stores bm25s's Lucene-style BM25, ``s = idf · x`` with ``x = tf / (tf + k1 · L)`` and
``L = 1 − b + b · |d| / avgdl``. BM25+ adds ``δ · idf`` to every matching term (a long document's
match is never worth less than δ); BM25L recovers the length-normalised frequency ``c = tf / L =
k1 · x / (1 − x)`` and scores ``idf · (c + δ) / (k1 + c + δ)``. δ is on the Lucene scale (no
``k1 + 1`` factor): Lv and Zhai's δ = 1 for BM25+ is δ ≈ 0.45 here.

Tried for issue 28 and not adopted, so it lives in tools/ for ``tools/eval_feedback.py --method plus|l``
(``Librarian(index, backend=LowerBound(index, "plus", 0.25))``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bioevidence.librarian.backend import LocalBackend, Scoring
from bioevidence.librarian.index import K1, LocalIndex

__all__ = ["LowerBound"]


class LowerBound(LocalBackend):
    """A :class:`LocalBackend` scoring text terms with BM25+ (``variant="plus"``) or BM25L (``"l"``)."""

    def __init__(self, index: LocalIndex | str, variant: str = "plus", delta: float = 0.25, *,
                 scoring: Scoring | None = None) -> None:
        super().__init__(index, scoring=scoring)
        if variant not in ("plus", "l"):
            raise ValueError(f"variant {variant!r}: use 'plus' (BM25+) or 'l' (BM25L)")
        self.variant, self.delta = variant, delta

    def _idf(self, field_name: str, token: str) -> float:
        r = self.index.retriever(field_name)
        tid = r.vocab_dict.get(token)
        indptr = r.scores["indptr"]
        if tid is None or tid + 1 >= len(indptr):
            return 0.0
        n = int(r.scores.get("num_docs", self.index.n))
        df = int(indptr[tid + 1] - indptr[tid])
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _field_scores(self, field_name: str, toks: Sequence[str]) -> Any:
        import numpy as np

        total = np.zeros(self.index.n, dtype=np.float32)
        for tok in toks:
            s = np.asarray(self.index.scores(field_name, [tok]), dtype=np.float64)
            idf = self._idf(field_name, tok)
            if idf <= 0 or s.size == 0:
                continue
            hit = s > 0
            if self.variant == "plus":
                s = np.where(hit, s + self.delta * idf, 0.0)
            else:
                x = np.clip(s / idf, 0.0, 1.0 - 1e-9)
                c = K1 * x / (1.0 - x) + self.delta
                s = np.where(hit, idf * c / (K1 + c), 0.0)
            total += s.astype(np.float32)
        return total
