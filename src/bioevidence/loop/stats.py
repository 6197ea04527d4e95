"""Statistics for audits and review: exact binomial bounds, Wilson intervals, agreement.

* :func:`upper_bound` -- exact one-sided Clopper–Pearson upper bound of an error rate: the
  largest rate under which seeing at most ``errors`` in ``n`` still has probability at least
  ``1 - confidence``. Binomial CDF summed in log space, solved by bisection, rounded **up** to
  1e-6 (so it never understates). 0 errors in 299 → below 0.01 at 95%.
* :func:`sample_size` -- the smallest audit that bounds the error below ``target`` when it
  finds no error (0.01 → 299, 0.05 → 59, 0.10 → 29 at 95%).
* :func:`wilson` -- Wilson score interval (two-sided).
* :func:`percent_agreement`, :func:`cohen_kappa` (two raters), :func:`krippendorff_alpha`
  (nominal, any number of raters, missing ratings allowed).

Pure functions of numbers and labels; the standard library only.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from statistics import NormalDist

__all__ = ["cohen_kappa", "krippendorff_alpha", "percent_agreement", "sample_size", "upper_bound", "wilson"]


def _check(errors: int, n: int, confidence: float) -> None:
    if not (isinstance(n, int) and isinstance(errors, int)) or n < 0 or not 0 <= errors <= n:
        raise ValueError(f"need 0 <= errors <= n as integers, got errors={errors}, n={n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def _log_cdf(errors: int, n: int, p: float) -> float:
    """log P(X <= errors) for X ~ Binomial(n, p), 0 < p < 1, by log-sum-exp."""
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
             for i in range(errors + 1)]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def upper_bound(errors: int, n: int, confidence: float = 0.95) -> float:
    """Exact one-sided upper confidence bound of the error rate after ``errors`` in ``n`` audits."""
    _check(errors, n, confidence)
    if n == 0 or errors == n:
        return 1.0
    target = math.log(1 - confidence)
    low, high = 0.0, 1.0  # the CDF falls as p rises: find p where it crosses 1 - confidence
    for _ in range(100):
        mid = (low + high) / 2
        if mid <= 0.0:
            low = mid
            continue
        if _log_cdf(errors, n, mid) > target:
            low = mid
        else:
            high = mid
    return min(1.0, math.ceil(high * 1e6 - 1e-9) / 1e6)


def sample_size(target: float, confidence: float = 0.95) -> int:
    """Smallest n whose zero-error upper bound is below ``target``."""
    if not 0 < target < 1:
        raise ValueError(f"target rate must be between 0 and 1, got {target}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    n = max(1, math.floor(math.log(1 - confidence) / math.log1p(-target)))
    while upper_bound(0, n, confidence) >= target:
        n += 1
    while n > 1 and upper_bound(0, n - 1, confidence) < target:
        n -= 1
    return n


def wilson(events: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of ``events / n`` (rounded to 1e-6); ``None`` when ``n`` is 0."""
    _check(events, n, confidence)
    if n == 0:
        return None
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = events / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, round(centre - half, 6)), min(1.0, round(centre + half, 6))


def percent_agreement(units: Sequence[Sequence[Hashable]]) -> float | None:
    """Share of agreeing pairs of ratings within units (units with one rating are skipped)."""
    agree = total = 0
    for unit in units:
        m = len(unit)
        if m < 2:
            continue
        counts = Counter(unit)
        agree += sum(c * (c - 1) for c in counts.values())
        total += m * (m - 1)
    return agree / total if total else None


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's κ for two raters over the same units; ``None`` when undefined (no pairs, one category)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in first.keys() | second.keys()) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(units: Sequence[Sequence[Hashable]]) -> float | None:
    """Krippendorff's α for nominal labels; each unit lists the ratings it received.

    Units with fewer than two ratings carry no pairable information and are skipped.
    ``None`` when undefined (no pairable units, or a single category throughout).
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    if n < 2:
        return None
    totals: Counter[Hashable] = Counter()
    disagree_observed = 0.0
    for unit in pairable:
        counts = Counter(unit)
        totals.update(counts)
        m = len(unit)
        disagree_observed += (m * m - sum(c * c for c in counts.values())) / (m - 1)
    disagree_expected = (n * n - sum(c * c for c in totals.values())) / (n - 1)
    if disagree_expected == 0:
        return None
    return 1 - disagree_observed / disagree_expected

