"""Dense and hybrid retrieval over a local index that has dense vectors (``index/dense/``).

:class:`DenseRetriever` encodes the question once and ranks documents by their best chunk's
cosine. :meth:`DenseRetriever.apply` turns the librarian's lexical pool (its fused subquery
scores) into the pool of ``--retriever dense`` (dense only: the cosines min-max scaled over the
dense list, so the papers' scores spread as BM25's do) or ``hybrid`` (both lists fused by
:func:`bioevidence.librarian.fusion.fuse_lists`); the rest of ``ask`` (passages, judge, caps,
evidence items) is unchanged, so every quote is still cut from the pinned passages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from .fusion import FusionSpec, fuse_lists, minmax

if TYPE_CHECKING:  # pragma: no cover
    from .dense import DenseIndex, TextEncoder
    from .index import LocalIndex
    from .results import Paper

__all__ = ["CHOICES", "RETRIEVERS", "DenseRetriever", "choose"]

RETRIEVERS = ("bm25", "dense", "hybrid")
CHOICES = ("auto", *RETRIEVERS)  # what `ask --retriever` accepts; auto: the best one installed
DENSE_DOCS = 200  # documents the dense list contributes (tuned on SciFact: 200 > 100 > 50)
# Papers of the fused list the judge reads, best first. On the SciFact tuning claims, `ask --retriever
# hybrid` with all of them (about 240 a question), 100, 50 or 30 gives the same nDCG@10 (0.7431) at a
# median 248 / 172 / 51 / 77 ms a question (this machine, shared): 50 (docs/librarian.md).
JUDGED = 50


def choose(index: LocalIndex | None) -> tuple[str, str]:
    """``(retriever, why)`` for ``--retriever auto``: ``hybrid`` when the index has dense vectors and
    their model's stack is installed (held-out SciFact nDCG@10 0.768 against bm25's 0.70,
    docs/librarian.md), else ``bm25``, with the reason in words and the fix."""
    from .dense import DenseIndex, require_kb_extra

    if index is None:
        return "bm25", "auto: a remote service has no dense vectors"
    folder = Path(index.path) / "dense"
    if not (folder / "units.json").is_file():
        return "bm25", "auto: the index has no dense vectors (`index build ... --dense` adds them)"
    try:
        require_kb_extra("hybrid retrieval", model=DenseIndex.model_of(folder))
    except ConfigurationError as exc:
        return "bm25", f"auto: the index has dense vectors but {exc.message}"
    return "hybrid", "auto: the index has dense vectors and their model is installed"


@dataclass
class DenseRetriever:
    index: LocalIndex
    spec: FusionSpec = field(default_factory=FusionSpec)
    encoder: TextEncoder | None = None
    dense: DenseIndex | None = None
    depth: int = DENSE_DOCS
    pool: int | None = JUDGED  # papers judged, best fused first (None: all of them)

    def __post_init__(self) -> None:
        from .dense import DenseIndex, load_encoder, require_kb_extra

        if self.dense is None:
            folder = Path(self.index.path) / "dense"
            require_kb_extra("--retriever dense/hybrid", model=DenseIndex.model_of(folder))
            self.dense = DenseIndex.load(folder)
        if self.dense.model and self.encoder is None:  # each encoder checks its own stack
            self.encoder = load_encoder(self.dense.model)
        self.spec = self.spec.for_model(self.dense.model)
        if len(self.dense) and max(int(u[0]) for u in self.dense.units) >= self.index.n:
            raise ConfigurationError(f"the dense vectors of {self.index.path} do not match its documents; "
                                     "rebuild them with `bioevidence index build ... --dense`")

    def embed(self, text: str) -> Any:
        assert self.encoder is not None
        return self.encoder.encode_query(text)

    def chunks(self, question: str | Any, k: int = 200) -> list[tuple[int, float]]:
        """``(row, cosine)`` of the ``k`` best chunks (``question`` may be a ready vector)."""
        assert self.dense is not None
        vec = self.embed(question) if isinstance(question, str) else question
        return self.dense.search(vec, k)

    def docs(self, question: str | Any, k: int | None = None) -> list[tuple[int, float]]:
        """``(doc idx, best chunk cosine)``, best first, at most ``k`` (default ``depth``) documents."""
        assert self.dense is not None
        k = k or self.depth
        want = k * 4
        while True:
            rows = self.chunks(question, want)
            best: dict[int, float] = {}
            for row, score in rows:
                best.setdefault(int(self.dense.units[row][0]), score)
            if len(best) >= k or len(rows) >= len(self.dense):
                return list(best.items())[:k]
            want *= 4

    def apply(self, question: str, pool: list[Paper], retriever: str) -> list[Paper]:
        """The pool ``retriever`` asks for (see module docstring), best first, ``fused`` rescored."""
        from .results import Paper

        if retriever not in RETRIEVERS:
            raise ConfigurationError(f"retriever {retriever!r} is not one of {', '.join(RETRIEVERS)}")
        if retriever == "bm25":
            return pool
        dense = self.docs(question)
        by_idx = {p.doc.idx: p for p in pool}
        fused: list[tuple[Any, float]]
        if retriever == "dense":
            # min-max over the dense list, as hybrid scales each list (dense alone is hybrid with dense
            # weight 1): raw cosines of the 200 best documents lie within a few hundredths of each other,
            # so a paper score of (cos + 1) / 2 made every paper equal and the sentence order a
            # scramble of section priors (issue 23)
            fused = list(minmax(dense))
        else:
            fused = fuse_lists([(p.doc.idx, p.fused) for p in pool], dense, self.spec)
        out: list[Paper] = []
        for idx, score in fused[: self.pool]:
            assert isinstance(idx, int)
            paper = by_idx.get(idx) or Paper(self.index.docs[idx], 0.0, "dense")
            paper.fused = score
            out.append(paper)
        return out
