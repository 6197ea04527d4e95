"""Fusion functions: SW-RRF exactly as Perspicacité defines it, plain RRF, convex, min-max."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bioevidence.errors import ConfigurationError
from bioevidence.librarian.fusion import (
    FusionSpec,
    chroma_score,
    convex,
    fuse_lists,
    minmax,
    perspicacite_hybrid,
    rrf,
    sigmoid,
    sw_rrf,
)


def test_sw_rrf_is_the_sum_over_queries_of_the_sigmoid_weight_over_k_plus_rank() -> None:
    q1 = [("a", 0.9), ("b", 0.8), ("c", 0.5)]
    q2 = [("b", 0.95), ("a", 0.7)]
    fused = dict(sw_rrf([q1, q2]))

    def w(s: float) -> float:
        return 1 / (1 + math.exp(-(s - 0.8) * 30))

    assert fused["a"] == pytest.approx(w(0.9) / 61 + w(0.7) / 62)
    assert fused["b"] == pytest.approx(w(0.8) / 62 + w(0.95) / 61)
    assert fused["c"] == pytest.approx(w(0.5) / 63)
    assert [k for k, _ in sw_rrf([q1, q2])] == ["b", "a", "c"]


def test_sw_rrf_reference_figures_of_the_study() -> None:
    """The study's table: cosine 0.9 → 0.96, 0.8 → 0.73 on Chroma's 1/(1+d) scale... as sigmoid inputs."""
    assert sigmoid((0.9 - 0.8) * 30) == pytest.approx(0.9526, abs=1e-4)
    assert sigmoid((0.7 - 0.8) * 30) == pytest.approx(0.0474, abs=1e-4)
    assert chroma_score(0.9) == pytest.approx(1 / 1.1)
    assert chroma_score(0.5) == pytest.approx(1 / 1.5)
    assert chroma_score(-1.0) == pytest.approx(1 / 3)


def test_a_key_counts_once_per_list_at_its_best_rank() -> None:
    assert dict(sw_rrf([[("a", 0.9), ("a", 0.9)]]))["a"] == pytest.approx(sigmoid(3.0) / 61)
    assert dict(rrf([[("a", 1.0), ("b", 1.0), ("a", 1.0)]]))["a"] == pytest.approx(1 / 61)


def test_rrf_and_convex_weights() -> None:
    fused = dict(rrf([[("a", 3.0), ("b", 1.0)], [("b", 0.9)]], k=10, weights=[0.5, 2.0]))
    assert fused["a"] == pytest.approx(0.5 / 11)
    assert fused["b"] == pytest.approx(0.5 / 12 + 2.0 / 11)
    combo = dict(convex([[("a", 10.0), ("b", 5.0), ("c", 0.0)], [("c", 0.9), ("a", 0.1)]], [0.7, 0.3]))
    assert combo["a"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert combo["b"] == pytest.approx(0.7 * 0.5)
    assert combo["c"] == pytest.approx(0.3 * 1.0)


def test_minmax_of_equal_scores_is_one_half_as_in_the_reference() -> None:
    assert minmax([("a", 2.0), ("b", 2.0)]) == [("a", 0.5), ("b", 0.5)]
    assert minmax([]) == []


def test_perspicacite_hybrid_only_rescores_the_vector_candidates() -> None:
    vector = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    out = perspicacite_hybrid(vector, {"b": 10.0, "z": 99.0})
    # a: 0.5·1 + 0.5·0 = 0.5; b: 0.5·0.5 + 0.5·1 = 0.75; c: 0; then min-max again
    assert out == [("b", 1.0), ("a", pytest.approx(2 / 3)), ("c", 0.0)]  # "z" is never added: BM25 only re-ranks


def test_fuse_lists_dispatches_and_rejects_unknown_methods() -> None:
    lex, dense = [(1, 5.0), (2, 1.0)], [(2, 0.9), (3, 0.8)]
    for method in ("sw_rrf", "rrf", "convex"):
        assert {k for k, _ in fuse_lists(lex, dense, FusionSpec(method))} == {1, 2, 3}
    with pytest.raises(ConfigurationError, match="sw_rrf, rrf, convex"):
        fuse_lists(lex, dense, FusionSpec("max"))


@given(st.lists(st.lists(st.tuples(st.integers(0, 20), st.floats(0, 1)), max_size=15), max_size=4))
def test_fusion_is_deterministic_and_covers_every_key(lists: list[list[tuple[int, float]]]) -> None:
    keys = {k for ranked in lists for k, _ in ranked}
    for fused in (sw_rrf(lists), rrf(lists), convex(lists, [1.0] * len(lists))):
        assert {k for k, _ in fused} == keys
        scores = [s for _, s in fused]
        assert scores == sorted(scores, reverse=True)
    assert sw_rrf(lists) == sw_rrf(lists)
