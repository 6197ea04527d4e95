"""Audits of what got through: seeded, blinded samples and per-route error rates with exact bounds.

**Sample** (:func:`audit_sample`). Predictions are rows of ``case_id``, ``requested_use``,
``record_sha256``, ``profile_sha256``, ``method``, ``predicted_status`` (the route:
``admitted``, ``review_required``, ``rejected`` or ``not_admitted``) and optional ``subset``.
Rows are sorted before sampling and drawn with ``random.Random(seed)``, so the same seed gives
the same sample whatever the input order. Admitted records are sampled (``size``, or the
smallest size that bounds the admitted error below ``target`` if the audit finds no error);
``controls`` records from the other routes are mixed in and everything is shuffled. The
**sheet** for auditors carries an opaque audit id, the case, the use and the hashes, and blank
label columns -- nothing on it names a route. The **manifest** (kept from auditors) holds the
routes, the population per route, the seed and the hash of the predictions.

**Score** (:func:`audit_score`). Filled-in sheet rows are checked against the manifest (known
audit id, same case, use and hashes). An audited admitted record is an error when the auditor
would not admit it or calls the mapping incorrect; a record on another route is an error when
the auditor would admit it and calls the mapping correct (a good record held back). Several
auditors of one record are resolved by majority; a tie or ``uncertain`` labels make it
uncertain (not counted). Per route: error rate, Wilson interval, exact one-sided upper bound,
and at most how many errors the whole route holds.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._version import __version__
from ..errors import ConfigurationError, InputError
from .stats import sample_size, upper_bound, wilson

__all__ = ["LABEL_COLUMNS", "PREDICTION_COLUMNS", "ROUTES", "SHEET_COLUMNS", "agreement", "audit_sample", "audit_score",
           "csv_cell", "read_csv", "render_audit", "write_csv"]

ROUTES = ("admitted", "review_required", "rejected", "not_admitted")
PREDICTION_COLUMNS = ("case_id", "requested_use", "record_sha256", "profile_sha256", "method", "predicted_status")
SHEET_COLUMNS = ("audit_id", "case_id", "requested_use", "record_sha256", "profile_sha256")
LABEL_COLUMNS = ("reviewer_id", "admission_label", "mapping_label", "rationale", "minutes_spent")
ADMISSION_LABELS = ("admitted", "review_required", "rejected")
MAPPING_LABELS = ("correct", "incorrect", "uncertain")
MANIFEST_MARKER = "bioevidence audit manifest: keep from auditors (it names each case's route)"


def read_csv(data: bytes | str, *, file: str | None = None, required: Sequence[str] = (),
             optional: Sequence[str] = ()) -> list[dict[str, str]]:
    """Rows of a CSV (UTF-8, an Excel BOM tolerated) with exactly the named columns."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data.removeprefix("\ufeff")
    reader = csv.DictReader(io.StringIO(text))
    columns = list(reader.fieldnames or [])
    missing = [c for c in required if c not in columns]
    unknown = [c for c in columns if c not in required and c not in optional]
    if missing or unknown or len(set(columns)) != len(columns):
        raise InputError(f"CSV columns must be {', '.join(required)}" + (f" (optional: {', '.join(optional)})"
                         if optional else "") + f"; got {', '.join(columns) or 'none'}", file=file)
    rows = []
    for number, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            raise InputError("row has a different number of fields than the header", file=file, line=number)
        rows.append({k: _uncell(v).strip() for k, v in row.items()})
    return rows


#: First characters that make a spreadsheet read a cell as a formula (or, tab and line breaks, hide one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value: Any) -> Any:
    """A cell safe to open in a spreadsheet (CSV injection): text starting with ``= + - @``, a tab or a
    line break gets a leading ``'`` so it stays text; so does text starting with ``'``, so that
    :func:`read_csv` takes exactly that ``'`` off again. A carriage return becomes a newline first: the
    csv module quotes a cell holding a newline but not one holding a lone carriage return, which a
    spreadsheet would read as the start of a new row (and its formula). Numbers are unchanged."""
    if not isinstance(value, str):
        return value
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + value if value.startswith((*FORMULA_STARTS, "'")) else value


def _uncell(value: str) -> str:
    """A cell as it was before :func:`csv_cell` (a spreadsheet's own ``'=…`` means ``=…`` too)."""
    return value[1:] if value.startswith("'") and value[1:2] and value[1] in (*FORMULA_STARTS, "'") else value


def write_csv(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Every CSV bioevidence writes (predictions, audit sheets, the web exports): each cell through :func:`csv_cell`."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: csv_cell(row.get(c, "")) for c in columns})
    return out.getvalue()


def _predictions(rows: Sequence[Mapping[str, str]], method: str | None, use: str | None) -> list[dict[str, str]]:
    methods = sorted({r["method"] for r in rows})
    if method is None:
        if len(methods) > 1:
            raise ConfigurationError(f"predictions hold several methods ({', '.join(methods)}); choose one with "
                                     "--method")
        method = methods[0] if methods else None
    chosen = [dict(r) for r in rows if r["method"] == method and (use is None or r["requested_use"] == use)]
    seen: set[tuple[str, str]] = set()
    for r in chosen:
        if r["predicted_status"] not in ROUTES:
            raise InputError(f"case {r['case_id']}: predicted_status {r['predicted_status']!r} is not one of "
                             f"{', '.join(ROUTES)}")
        key = (r["case_id"], r["requested_use"])
        if key in seen:
            raise InputError(f"case {r['case_id']} appears twice for use {r['requested_use']} and method {method}")
        seen.add(key)
    if not chosen:
        raise ConfigurationError("no predictions match the chosen method and use")
    return sorted(chosen, key=lambda r: (r["case_id"], r["requested_use"]))


def audit_sample(predictions: Sequence[Mapping[str, str]], *, seed: int, size: int | None = None,
                 target: float | None = None, confidence: float = 0.95, controls: int = 0,
                 method: str | None = None, use: str | None = None) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The blinded sheet rows and the manifest of a seeded audit sample (see module docstring)."""
    if (size is None) == (target is None):
        raise ConfigurationError("give exactly one of --size N and --target RATE")
    if size is not None and size < 1:
        raise ConfigurationError("--size must be at least 1")
    if controls < 0:
        raise ConfigurationError("--controls must not be negative")
    wanted = size if size is not None else sample_size(float(target or 0), confidence)
    rows = _predictions(predictions, method, use)
    admitted = [r for r in rows if r["predicted_status"] == "admitted"]
    others = [r for r in rows if r["predicted_status"] != "admitted"]
    rng = random.Random(seed)
    picked = rng.sample(admitted, min(wanted, len(admitted)))
    control_rows = rng.sample(others, min(controls, len(others)))
    sample = picked + control_rows
    rng.shuffle(sample)
    cases = []
    sheet = []
    for index, r in enumerate(sample, start=1):
        audit_id = f"audit-{index:04d}"
        sheet.append({"audit_id": audit_id, **{c: r[c] for c in SHEET_COLUMNS[1:]}})
        cases.append({"audit_id": audit_id, **{c: r[c] for c in SHEET_COLUMNS[1:]}, "route": r["predicted_status"],
                      **({"subset": r["subset"]} if r.get("subset") else {})})
    canonical = json.dumps(rows, sort_keys=True, separators=(",", ":")).encode()
    manifest = {
        "marker": MANIFEST_MARKER, "validator_version": __version__, "method": rows[0]["method"], "use": use,
        "seed": seed, "confidence": confidence, "target": target, "requested_size": wanted,
        "predictions_sha256": hashlib.sha256(canonical).hexdigest(),
        "population": {route: sum(r["predicted_status"] == route for r in rows) for route in ROUTES},
        "sample": {"admitted": len(picked), "controls": len(control_rows)},
        "if_no_errors_admitted_error_below": upper_bound(0, len(picked), confidence) if picked else None,
        "cases": cases,
    }
    return sheet, manifest


def _verdict(route: str, label: Mapping[str, str]) -> str:
    """``error``, ``ok`` or ``uncertain`` for one auditor's labels of a record on ``route``."""
    admission, mapping = label["admission_label"], label["mapping_label"]
    if route == "admitted":
        if admission != "admitted" or mapping == "incorrect":
            return "error"
        return "uncertain" if mapping == "uncertain" else "ok"
    if admission == "admitted" and mapping == "correct":
        return "error"
    return "uncertain" if mapping == "uncertain" and admission == "admitted" else "ok"


def audit_score(manifest: Mapping[str, Any], labels: Sequence[Mapping[str, str]], *,
                confidence: float | None = None) -> dict[str, Any]:
    """Per-route error rates of an audit; labels are filled-in sheet rows."""
    if manifest.get("marker") != MANIFEST_MARKER:
        raise InputError("this is not an audit manifest written by `bioevidence review audit-sample`")
    level = float(confidence if confidence is not None else manifest["confidence"])
    cases = {c["audit_id"]: c for c in manifest["cases"]}
    verdicts: dict[str, list[str]] = {}
    minutes: dict[str, list[float]] = {}
    seen: set[tuple[str, str]] = set()
    for number, label in enumerate(labels, start=2):
        case = cases.get(label.get("audit_id", ""))
        if case is None:
            raise InputError(f"label row {number}: audit id {label.get('audit_id')!r} was not sampled", line=number)
        for column in SHEET_COLUMNS[1:]:
            if label.get(column) != case[column]:
                raise InputError(f"label row {number}: {column} differs from the sampled record "
                                 f"({label.get(column)!r} vs {case[column]!r}); label the record that was sampled",
                                 line=number)
        if label["admission_label"] not in ADMISSION_LABELS or label["mapping_label"] not in MAPPING_LABELS:
            raise InputError(f"label row {number}: admission_label must be one of {', '.join(ADMISSION_LABELS)} and "
                             f"mapping_label one of {', '.join(MAPPING_LABELS)}", line=number)
        if not label.get("reviewer_id"):
            raise InputError(f"label row {number}: reviewer_id is blank", line=number)
        key = (case["audit_id"], label["reviewer_id"])
        if key in seen:
            raise InputError(f"label row {number}: {label['reviewer_id']} labelled {case['audit_id']} twice",
                             line=number)
        seen.add(key)
        verdicts.setdefault(case["audit_id"], []).append(_verdict(case["route"], label))
        if label.get("minutes_spent"):
            try:
                minutes.setdefault(case["route"], []).append(float(label["minutes_spent"]))
            except ValueError as exc:
                raise InputError(f"label row {number}: minutes_spent must be a number", line=number) from exc
    population: Mapping[str, int] = manifest["population"]
    routes = []
    for route in ROUTES:
        audited = [a for a, c in cases.items() if c["route"] == route and a in verdicts]
        if not audited and not any(c["route"] == route for c in cases.values()):
            continue
        resolved = [_majority(verdicts[a]) for a in audited]
        counted = [v for v in resolved if v != "uncertain"]
        errors = counted.count("error")
        n = len(counted)
        bound = upper_bound(errors, n, level) if n else None
        routes.append({
            "route": route, "population": population.get(route, 0), "sampled": sum(
                c["route"] == route for c in cases.values()), "audited": n, "errors": errors,
            "uncertain": len(resolved) - n, "error_rate": errors / n if n else None,
            "error_rate_wilson": list(w) if (w := wilson(errors, n, level)) else None,
            "error_rate_upper_bound": bound,
            "errors_in_route_at_most": min(population.get(route, 0), math.ceil(bound * population.get(route, 0)))
            if bound is not None else None,
            "audit_minutes_mean": round(sum(minutes[route]) / len(minutes[route]), 2) if minutes.get(route) else None,
        })
    admitted = next((r for r in routes if r["route"] == "admitted"), None)
    return {"method": manifest["method"], "use": manifest.get("use"), "seed": manifest["seed"], "confidence": level,
            "routes": routes, "not_yet_audited": sorted(set(cases) - set(verdicts)),
            "admitted_error_upper_bound": admitted["error_rate_upper_bound"] if admitted else None}


def _majority(verdicts: Sequence[str]) -> str:
    counts = Counter(v for v in verdicts if v != "uncertain")
    if not counts:
        return "uncertain"
    (top, n), *rest = counts.most_common()
    return "uncertain" if rest and rest[0][1] == n else top


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}%"


def render_audit(score: Mapping[str, Any]) -> str:
    """A Markdown table of an audit score, with the admitted-error sentence."""
    level = f"{100 * score['confidence']:g}%"
    lines = [f"| route | population | audited | errors | uncertain | error rate | Wilson {level} | "
             f"upper bound {level} | errors in route at most |", "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in score["routes"]:
        w = r["error_rate_wilson"]
        lines.append(f"| {r['route']} | {r['population']} | {r['audited']} | {r['errors']} | {r['uncertain']} | "
                     f"{_pct(r['error_rate'])} | {f'{_pct(w[0])}–{_pct(w[1])}' if w else '–'} | "
                     f"{_pct(r['error_rate_upper_bound'])} | "
                     f"{'–' if r['errors_in_route_at_most'] is None else r['errors_in_route_at_most']} |")
    bound = score["admitted_error_upper_bound"]
    if bound is not None:
        lines += ["", f"**Admitted error rate below {_pct(bound)} at {level} confidence.**"]
    if score["not_yet_audited"]:
        lines += ["", f"{len(score['not_yet_audited'])} sampled record(s) not yet audited."]
    return "\n".join(lines) + "\n"


def agreement(rows: Sequence[Mapping[str, str]], columns: Sequence[str] = ("admission_label", "mapping_label"),
              *, unit: Sequence[str] = ("case_id", "requested_use")) -> dict[str, Any]:
    """Inter-reviewer agreement per label column: percent agreement, Cohen's κ (two reviewers),
    Krippendorff's α (nominal). A unit is one record and use; blank labels are missing ratings."""
    from .stats import cohen_kappa, krippendorff_alpha, percent_agreement

    reviewers = sorted({r["reviewer_id"] for r in rows})
    out: dict[str, Any] = {"reviewers": reviewers, "columns": {}}
    for column in columns:
        by_unit: dict[tuple[str, ...], dict[str, str]] = {}
        for number, r in enumerate(rows, start=2):
            key = tuple(r[c] for c in unit)
            if not r.get(column):
                continue
            ratings = by_unit.setdefault(key, {})
            if r["reviewer_id"] in ratings:
                raise InputError(f"row {number}: {r['reviewer_id']} rated {'/'.join(key)} twice", line=number)
            ratings[r["reviewer_id"]] = r[column]
        units = [list(v.values()) for _, v in sorted(by_unit.items())]
        pairs = [(v[reviewers[0]], v[reviewers[1]]) for _, v in sorted(by_unit.items())
                 if len(reviewers) == 2 and len(v) == 2]
        out["columns"][column] = {
            "units": len(units), "units_with_two_or_more": sum(len(u) >= 2 for u in units),
            "percent_agreement": percent_agreement(units), "krippendorff_alpha": krippendorff_alpha(units),
            "cohen_kappa": cohen_kappa(pairs) if len(reviewers) == 2 else None}
    return out
