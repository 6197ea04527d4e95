"""Fusing ranked lists: SW-RRF as Perspicacité defines it, plain RRF, and a convex combination.

Each input list is ``[(key, score), ...]`` best first (one retriever for one query). Keys are
ids (documents or chunks), never text. All functions are pure and return ``[(key, fused)]``
sorted by fused score, ties broken by first appearance, so the result is deterministic.

* :func:`sw_rrf` — Perspicacité's "WRRF" (its v1 ``ProfondeChain`` / Advanced mode):
  ``F(d) = Σ_q σ((s_q(d) − threshold)·steepness) / (k + r_q(d))`` with 1-based ranks ``r_q``,
  ``σ`` the logistic function, and the reference's constants ``k = 60``, ``threshold = 0.8``,
  ``steepness = 30`` as defaults. The scores ``s_q`` must be on the scale the threshold was set
  for: Perspicacité feeds ``1/(1 + cosine distance)`` for vectors (:func:`chroma_score`) or a
  per-list min-max normalised hybrid score (:func:`minmax`).
* :func:`rrf` — ``Σ_q w_q / (k + r_q(d))``.
* :func:`convex` — ``Σ_q w_q · minmax(s_q)(d)`` over the union (a document missing from a
  list gets 0 from it).
* :func:`perspicacite_hybrid` — the reference's hybrid re-scoring of one query's vector
  candidates: BM25 over the candidates only, both min-max normalised, ``w_v·v + w_b·b``.

Weights and constants are arguments (tuned on SciFact train in ``tools/eval_fusion.py``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace

__all__ = ["FusionSpec", "chroma_score", "convex", "fuse_lists", "minmax", "perspicacite_hybrid", "rrf",
           "sigmoid", "sw_rrf"]

Ranked = Sequence[tuple[Hashable, float]]


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def chroma_score(cosine: float) -> float:
    """Perspicacité's vector score: ``1 / (1 + max(0, d))`` with cosine distance ``d = 1 − cosine``."""
    return 1.0 / (1.0 + max(0.0, 1.0 - cosine))


def minmax(ranked: Ranked) -> list[tuple[Hashable, float]]:
    """Scores rescaled to [0, 1] within the list; all equal → 0.5 (as the reference)."""
    if not ranked:
        return []
    lo = min(s for _, s in ranked)
    hi = max(s for _, s in ranked)
    if hi - lo <= 0:
        return [(k, 0.5) for k, _ in ranked]
    return [(k, (s - lo) / (hi - lo)) for k, s in ranked]


def _sorted(acc: Mapping[Hashable, float], order: Mapping[Hashable, int]) -> list[tuple[Hashable, float]]:
    return sorted(acc.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def _first_seen(lists: Sequence[Ranked]) -> dict[Hashable, int]:
    order: dict[Hashable, int] = {}
    for ranked in lists:
        for key, _ in ranked:
            order.setdefault(key, len(order))
    return order


def sw_rrf(lists: Sequence[Ranked], *, k: float = 60.0, threshold: float = 0.8, steepness: float = 30.0,
           weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Sigmoid-weighted RRF (see module docstring); a key listed twice in one list counts once,
    at its best rank (the reference walks each list once, keyed by chunk)."""
    acc: dict[Hashable, float] = {}
    for q, ranked in enumerate(lists):
        w = 1.0 if weights is None else weights[q]
        seen: set[Hashable] = set()
        for rank, (key, score) in enumerate(ranked, 1):
            if key in seen:
                continue
            seen.add(key)
            acc[key] = acc.get(key, 0.0) + w * sigmoid((score - threshold) * steepness) / (k + rank)
    return _sorted(acc, _first_seen(lists))


def rrf(lists: Sequence[Ranked], *, k: float = 60.0, weights: Sequence[float] | None = None
        ) -> list[tuple[Hashable, float]]:
    acc: dict[Hashable, float] = {}
    for q, ranked in enumerate(lists):
        w = 1.0 if weights is None else weights[q]
        seen: set[Hashable] = set()
        for rank, (key, _) in enumerate(ranked, 1):
            if key not in seen:
                seen.add(key)
                acc[key] = acc.get(key, 0.0) + w / (k + rank)
    return _sorted(acc, _first_seen(lists))


def convex(lists: Sequence[Ranked], weights: Sequence[float]) -> list[tuple[Hashable, float]]:
    acc: dict[Hashable, float] = {}
    for ranked, w in zip(lists, weights, strict=True):
        best: dict[Hashable, float] = {}
        for key, s in minmax(ranked):
            best[key] = max(best.get(key, 0.0), s)
        for key, s in best.items():
            acc[key] = acc.get(key, 0.0) + w * s
    return _sorted(acc, _first_seen(lists))


def perspicacite_hybrid(vector: Ranked, bm25: Mapping[Hashable, float], *, vector_weight: float = 0.5,
                        bm25_weight: float = 0.5) -> list[tuple[Hashable, float]]:
    """Re-score one query's vector candidates: ``w_v·minmax(vector) + w_b·minmax(BM25 over the
    candidates)``, min-max normalised again (what the reference's sigmoid then sees)."""
    v = dict(minmax(vector))
    b = dict(minmax([(key, bm25.get(key, 0.0)) for key, _ in vector]))
    combined = [(key, vector_weight * v[key] + bm25_weight * b[key]) for key, _ in vector]
    order = {key: i for i, (key, _) in enumerate(vector)}
    return minmax(sorted(combined, key=lambda kv: (-kv[1], order[kv[0]])))


# The convex weight of the dense list, tuned per model on the SciFact tuning split
# (tools/eval_fusion.py, docs/librarian.md): a stronger model earns a larger share.
DENSE_WEIGHT = {"all-MiniLM-L6-v2": 0.4, "bge-small-en-v1.5": 0.7}
_DEFAULT_WEIGHT = DENSE_WEIGHT["bge-small-en-v1.5"]  # an unknown model: the default model's


@dataclass(frozen=True)
class FusionSpec:
    """How ``hybrid`` fuses the lexical and dense lists (defaults: the winner of
    ``tools/eval_fusion.py`` on the SciFact tuning split, see docs/librarian.md).

    ``dense_weight`` None means the weight tuned for the index's model (:data:`DENSE_WEIGHT`),
    filled in by :meth:`for_model` once the index is open."""

    method: str = "convex"  # sw_rrf | rrf | convex
    dense_weight: float | None = None  # convex: weight of the dense list (lexical gets 1 − it); rrf: of dense
    k: float = 60.0
    threshold: float = 0.8
    steepness: float = 30.0

    def for_model(self, model: str) -> FusionSpec:
        """This spec with its dense weight set: the one given, else the one tuned for ``model``."""
        if self.dense_weight is not None:
            return self
        return replace(self, dense_weight=DENSE_WEIGHT.get(model, _DEFAULT_WEIGHT))

    @property
    def weight(self) -> float:
        return self.dense_weight if self.dense_weight is not None else _DEFAULT_WEIGHT


def fuse_lists(lexical: Ranked, dense: Ranked, spec: FusionSpec) -> list[tuple[Hashable, float]]:
    """The lexical list (any positive scores) and the dense list (cosines) fused by ``spec``.

    SW-RRF sees the dense list on Perspicacité's vector scale (:func:`chroma_score`) and the
    lexical list min-max normalised (the scale its hybrid scores have)."""
    if spec.method == "sw_rrf":
        return sw_rrf([minmax(lexical), [(key, chroma_score(c)) for key, c in dense]], k=spec.k,
                      threshold=spec.threshold, steepness=spec.steepness)
    if spec.method == "rrf":
        return rrf([lexical, dense], k=spec.k, weights=[1.0 - spec.weight, spec.weight])
    if spec.method == "convex":
        return convex([lexical, dense], [1.0 - spec.weight, spec.weight])
    from ..errors import ConfigurationError

    raise ConfigurationError(f"fusion method {spec.method!r} is not one of sw_rrf, rrf, convex")
