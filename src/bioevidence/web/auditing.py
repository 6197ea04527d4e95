"""What the audit page counts, as pure functions of the queue listing.

* decisions per day, per rule code (each decision counted under every code that sent its record
  to a person) and per reviewer;
* agreement between reviewers: a unit is one queued record, each reviewer's rating is their
  latest decision on it; percent agreement and Krippendorff's α (nominal) over every unit two or
  more reviewers decided, Cohen's κ for each pair of reviewers with units in common
  (:mod:`bioevidence.loop.stats`);
* the exports: ``predictions.csv`` (the columns ``review audit-sample`` reads: one row per entry
  and requested use, its route now) and ``decisions.csv`` (one row per reviewer, entry and use, the
  columns ``review agreement`` reads).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from ..loop.audit import PREDICTION_COLUMNS, write_csv
from ..loop.listing import DecisionFact, Summary
from ..loop.stats import cohen_kappa, krippendorff_alpha, percent_agreement

__all__ = ["METHOD", "agreement", "by_code", "by_day", "by_reviewer", "decisions_csv", "predictions_csv"]

SERIES = ("accept", "reject", "defer")
METHOD = "bioevidence-gate+review"
ADMISSION = {"accept": "admitted", "reject": "rejected", "defer": "review_required"}


def _count(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, dict[str, int]]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for key, decision in pairs:
        table[key][decision] += 1
    return [(key, {s: table[key][s] for s in SERIES}) for key in sorted(table)]


def by_day(facts: Sequence[DecisionFact]) -> list[tuple[str, dict[str, int]]]:
    return _count((f.decided_at[:10], f.decision) for f in facts)


def by_code(facts: Sequence[DecisionFact]) -> list[tuple[str, dict[str, int]]]:
    return _count((code, f.decision) for f in facts for code in (f.queued_codes or ("none",)))


def by_reviewer(facts: Sequence[DecisionFact]) -> list[tuple[str, dict[str, int]]]:
    return _count((f.reviewer_id, f.decision) for f in facts)


def agreement(latest: dict[tuple[int, str], str]) -> dict[str, Any]:
    """Agreement over the entries several reviewers decided (see module docstring)."""
    ratings: dict[int, dict[str, str]] = defaultdict(dict)
    for (entry, reviewer), decision in latest.items():
        ratings[entry][reviewer] = decision
    units = [list(r.values()) for _, r in sorted(ratings.items()) if len(r) >= 2]
    reviewers = sorted({reviewer for _, reviewer in latest})
    pairs = []
    for a, b in combinations(reviewers, 2):
        common = [(r[a], r[b]) for r in ratings.values() if a in r and b in r]
        if common:
            pairs.append({"a": a, "b": b, "units": len(common), "kappa": cohen_kappa(common),
                          "percent": percent_agreement([list(p) for p in common])})
    return {"units": len(units), "reviewers": reviewers, "percent": percent_agreement(units) if units else None,
            "alpha": krippendorff_alpha(units) if units else None, "pairs": pairs}


def predictions_csv(rows: Sequence[Summary]) -> str:
    """Every entry and requested use with its route now, for ``bioevidence review audit-sample``."""
    out = []
    for r in rows:
        status = dict(r.use_status)
        for use in r.uses:
            out.append({"case_id": f"entry-{r.id}", "requested_use": use, "record_sha256": r.record_sha256,
                        "profile_sha256": r.profile_sha256, "method": METHOD,
                        "predicted_status": status.get(use, r.status), "subset": r.state})
    return write_csv(out, (*PREDICTION_COLUMNS, "subset"))


def decisions_csv(facts: Sequence[DecisionFact]) -> str:
    """Each reviewer's latest decision per entry and use, for ``bioevidence review agreement``."""
    latest: dict[tuple[str, int, str], DecisionFact] = {}
    for f in facts:
        for use in f.uses:
            latest[(f.reviewer_id, f.entry_id, use)] = f
    rows = [{"reviewer_id": reviewer, "case_id": f"entry-{entry}", "requested_use": use,
             "admission_label": ADMISSION[f.decision], "decision": f.decision, "decided_at": f.decided_at}
            for (reviewer, entry, use), f in sorted(latest.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0]))]
    return write_csv(rows, ("reviewer_id", "case_id", "requested_use", "admission_label", "decision", "decided_at"))
