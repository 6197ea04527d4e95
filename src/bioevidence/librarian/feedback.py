"""Pseudo-relevance feedback for the lexical pool: RM3 (Abdul-Jaleel et al., TREC 2004), as Anserini
implements it for BM25+RM3.

After the planned subqueries are searched and fused, the ``docs`` best papers are taken as relevant.
Each gives a term vector of its title and abstract (analysed tokens; terms of 2–20 letters or digits
that occur in at most ``max_df`` of the index's documents), cut to its ``terms`` most frequent and
scaled to sum 1; the relevance model is the sum of those vectors weighted by each paper's fused
score, cut to its ``terms`` heaviest and scaled to sum 1. The question's own terms (the broad
subquery's, each 1/|q|) are interpolated with it, ``original_weight`` · question + (1 −
``original_weight``) · model, and the expanded query is scored by BM25, each term's score times its
weight (the question's terms as the broad subquery scores them, the feedback terms over ``FB_FIELD``).
Its 50 best papers replace the broad subquery's hits (``mode`` "replace") or join them as one more
subquery of weight ``weight`` ("add"), and the subqueries are fused again; the
title and synonym subqueries are unchanged.

Feedback terms are counted (the ``max_df`` cut) and scored over titles and abstracts (``FB_FIELD``),
where the model comes from: over full texts nearly every topical word is in more than 10% of the papers,
and the few left are the feedback paper's own rare words, which lift it alone.

On by default for ``--retriever bm25`` over a local index (``Librarian(..., feedback="auto")``; ``None``
or ``--no-feedback`` turns it off; hybrid and dense were not measured with it). The defaults (1
document, 20 terms, original weight 0.7) were chosen on SciFact's tuning claims, where they lift
``--retriever bm25`` (Anserini's 10 / 10 / 0.5 lose 0.04 nDCG@10 there: a claim has about one relevant
abstract). Feedback re-orders the papers; the sentence ranking keeps each paper's fused score before
feedback as its prior (``Paper.base``), so the feedback paper's words do not draw every sentence from
it. docs/librarian.md has the figures.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .analysis import analyze
from .backend import Hit, LocalBackend
from .index import LocalIndex
from .planner import Plan
from .query import Or, Term, validate
from .results import Paper

__all__ = ["Feedback", "expand", "feed_back", "relevance_model"]

FB_FIELD = "TITLE_ABS"  # the field feedback terms are counted and scored over
_TERM = re.compile(r"[a-z0-9]{2,20}")


@dataclass(frozen=True)
class Feedback:
    """RM3 knobs, chosen on SciFact's tuning claims (Anserini's defaults are 10 documents, 10 terms, 0.5)."""

    docs: int = 1
    terms: int = 20
    original_weight: float = 0.7
    max_df: float = 0.1  # share of documents above which a term is not a feedback term (Anserini's 10%)
    #: "replace": the RM3 query's hits replace the broad subquery's; "add": they join the fusion as one
    #: more subquery of weight ``weight``, the broad subquery's hits kept
    mode: str = "replace"
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.mode not in ("replace", "add"):
            from ..errors import ConfigurationError

            raise ConfigurationError(f"feedback mode {self.mode!r} is not one of replace, add")


def _df(index: LocalIndex, field: str) -> tuple[dict[str, int], Any, int]:
    r = index.retriever(field)
    return r.vocab_dict, r.scores["indptr"], max(1, index.n)


def relevance_model(index: LocalIndex, papers: list[Paper], fb: Feedback, field: str = FB_FIELD) -> dict[str, float]:
    """RM1 over ``papers`` (the first ``fb.docs``, weighted by their fused score): term -> weight, summing to 1."""
    vocab, indptr, n = _df(index, field)
    limit = fb.max_df * n

    def frequent(term: str) -> bool:
        tid = vocab.get(term)
        return tid is None or tid + 1 >= len(indptr) or int(indptr[tid + 1] - indptr[tid]) > limit

    model: dict[str, float] = {}
    for paper in papers[: fb.docs]:
        text = index.field_text(paper.doc.idx, "TITLE_ABS")
        tf = Counter(t for t in analyze(text) if _TERM.fullmatch(t) and not frequent(t))
        top = sorted(tf.items(), key=lambda kv: (-kv[1], kv[0]))[: fb.terms]
        norm = sum(v for _, v in top)
        if not norm or paper.fused <= 0:
            continue
        for term, v in top:
            model[term] = model.get(term, 0.0) + v / norm * paper.fused
    best = sorted(model.items(), key=lambda kv: (-kv[1], kv[0]))[: fb.terms]
    total = sum(v for _, v in best)
    return {t: v / total for t, v in best} if total else {}


def _tokens(node: Any) -> list[str]:
    """The analysed tokens of a broad subquery's terms (an OR of terms, or one term)."""
    if isinstance(node, Term):
        return list(dict.fromkeys(analyze(node.text) or analyze(node.text, keep_stopwords=True)))
    if isinstance(node, Or):
        return [t for c in node.children for t in _tokens(c)]
    return []


def expand(backend: LocalBackend, broad: str, pool: list[Paper], fb: Feedback, *,
           limit: int = 50) -> tuple[list[Hit], dict[str, float]]:
    """The RM3 query's ``limit`` best hits (replacing the broad subquery ``broad``'s) and its feedback terms."""
    import numpy as np

    index = backend.index
    model = relevance_model(index, pool, fb)
    result = validate(broad)
    if not model or not result.valid or result.ast is None:
        return [], model
    _, original = backend.execute(result.ast)  # Σ BM25 of the question's terms (each weighs 1)
    size = len(_tokens(result.ast)) or 1
    scores = fb.original_weight / size * np.asarray(original, dtype=np.float64)
    for term, weight in model.items():
        scores += (1.0 - fb.original_weight) * weight * index.scores(FB_FIELD, [term])
    idx = np.flatnonzero(scores > 0)
    if idx.size == 0:
        return [], model
    order = idx[np.lexsort((idx, -scores[idx]))][:limit]
    return [Hit(index.docs[int(i)], float(scores[i]), broad) for i in order], model


def feed_back(backend: LocalBackend, plan: Plan, results: list[tuple[str, float, list[Hit]]], pool: list[Paper],
              fb: Feedback, *, limit: int = 50) -> tuple[list[tuple[str, float, list[Hit]]], dict[str, float]]:
    """``results`` with the broad subquery's hits replaced by the RM3 query's (``fb.mode`` "replace") or
    with the RM3 query's hits added as one more subquery (``fb.mode`` "add"); unchanged when the plan
    has no broad subquery or the pool gives no feedback term. Also returns the feedback terms."""
    broad = {s.query for s in plan.subqueries if s.tier == "broad"}
    out: list[tuple[str, float, list[Hit]]] = []
    model: dict[str, float] = {}
    for query, weight, hits in results:
        extra: list[Hit] = []
        if query in broad and not model:
            expanded, model = expand(backend, query, pool, fb, limit=limit)
            if fb.mode == "add":
                extra = expanded
            elif expanded:
                hits = expanded
        out.append((query, weight, hits))
        if extra:
            out.append((f"{query} (RM3)", fb.weight, extra))
    return out, model
