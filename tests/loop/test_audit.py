"""Audit sampling and scoring, exact bounds and agreement statistics (exact values, seeds, CLI)."""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bioevidence.cli import cli
from bioevidence.errors import ConfigurationError, InputError
from bioevidence.loop.audit import PREDICTION_COLUMNS, agreement, audit_sample, audit_score, render_audit, write_csv
from bioevidence.loop.stats import (
    cohen_kappa,
    krippendorff_alpha,
    percent_agreement,
    sample_size,
    upper_bound,
    wilson,
)

# -- exact values ------------------------------------------------------------------------------


def test_299_error_free_audits_bound_the_error_below_one_percent() -> None:
    assert upper_bound(0, 299) < 0.01 <= upper_bound(0, 298)
    assert upper_bound(0, 299) == pytest.approx(1 - 0.05 ** (1 / 299), abs=1e-6)


def test_one_error_in_100_at_95_percent_is_0_0466() -> None:
    assert round(upper_bound(1, 100, 0.95), 4) == 0.0466


@pytest.mark.parametrize(("target", "n"), [(0.01, 299), (0.05, 59), (0.10, 29)])
def test_sample_size_for_a_target_rate(target: float, n: int) -> None:
    assert sample_size(target) == n


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
@settings(max_examples=60, deadline=None)
def test_the_bound_is_exact_and_never_understates(case: tuple[int, int], confidence: float) -> None:
    errors, n = case
    bound = upper_bound(errors, n, confidence)
    if errors == n:
        assert bound == 1.0
        return

    def cdf(p: float) -> float:
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(errors + 1))

    assert cdf(bound) <= 1 - confidence + 1e-9  # rounded up: at the bound, seeing so few errors is unlikely
    assert cdf(max(bound - 2e-6, 0.0)) >= 1 - confidence - 1e-9  # and it is tight to the rounding


def test_wilson_interval_and_agreement_statistics_match_known_values() -> None:
    assert wilson(3, 50) == (0.020615, 0.162171)
    assert wilson(0, 0) is None
    pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("b", "b"), ("a", "a")]
    assert cohen_kappa(pairs) == pytest.approx(0.6153846)
    units = [["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"], ["a", "a", "b"], ["c"]]
    assert krippendorff_alpha(units) == pytest.approx(1 / 3)
    assert percent_agreement([["a", "a"], ["a", "b"]]) == 0.5
    assert krippendorff_alpha([["a", "a"], ["a", "a"]]) is None and cohen_kappa([("a", "a")]) is None


@pytest.mark.parametrize(("errors", "n", "confidence"), [(-1, 3, 0.95), (4, 3, 0.95), (0, 3, 1.0)])
def test_invalid_bound_arguments_are_refused(errors: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError, match=r"must|need"):
        upper_bound(errors, n, confidence)


# -- sampling ----------------------------------------------------------------------------------

def _predictions(n: int = 400) -> list[dict[str, str]]:
    routes = ["admitted"] * 3 + ["review_required", "rejected"]
    return [{"case_id": f"case-{i:04d}", "requested_use": "research_summary", "record_sha256": f"{i:064x}",
             "profile_sha256": "ab" * 32, "method": "gemma-270m", "predicted_status": routes[i % 5]}
            for i in range(n)]


def test_same_seed_same_sample_whatever_the_input_order() -> None:
    rows = _predictions()
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    sheet_a, manifest_a = audit_sample(rows, seed=7, target=0.05, controls=10)
    sheet_b, manifest_b = audit_sample(shuffled, seed=7, target=0.05, controls=10)
    assert sheet_a == sheet_b and manifest_a == manifest_b
    assert manifest_a["sample"] == {"admitted": 59, "controls": 10}
    assert manifest_a["if_no_errors_admitted_error_below"] < 0.05
    assert audit_sample(rows, seed=8, target=0.05, controls=10)[0] != sheet_a


def test_the_sheet_is_blinded_and_controls_are_mixed_in() -> None:
    sheet, manifest = audit_sample(_predictions(), seed=3, size=20, controls=8)
    text = write_csv(sheet, list(sheet[0]))
    for word in ("admitted", "review_required", "rejected", "route"):
        assert word not in text
    routes = [c["route"] for c in manifest["cases"]]
    assert routes.count("admitted") == 20 and len(routes) == 28
    assert routes != sorted(routes, key=lambda r: r != "admitted")  # shuffled, not admitted-first
    assert manifest["population"] == {"admitted": 240, "review_required": 80, "rejected": 80, "not_admitted": 0}


def test_sampling_refuses_ambiguous_requests() -> None:
    with pytest.raises(ConfigurationError, match="exactly one"):
        audit_sample(_predictions(), seed=1, size=5, target=0.1)
    mixed = [*_predictions(10), {**_predictions(1)[0], "method": "other"}]
    with pytest.raises(ConfigurationError, match="--method"):
        audit_sample(mixed, seed=1, size=5)
    with pytest.raises(InputError, match="twice"):
        audit_sample([*_predictions(3), _predictions(1)[0]], seed=1, size=2)


# -- scoring -----------------------------------------------------------------------------------

def _label(case: dict[str, Any], admission: str, mapping: str = "correct", reviewer: str = "r1") -> dict[str, str]:
    keys = ("audit_id", "case_id", "requested_use", "record_sha256", "profile_sha256")
    return {**{k: case[k] for k in keys}, "reviewer_id": reviewer, "admission_label": admission,
            "mapping_label": mapping, "rationale": "read the paper", "minutes_spent": "4"}


def test_scoring_counts_errors_per_route_with_exact_bounds() -> None:
    _, manifest = audit_sample(_predictions(), seed=5, size=100, controls=20)
    labels = []
    admitted = [c for c in manifest["cases"] if c["route"] == "admitted"]
    others = [c for c in manifest["cases"] if c["route"] != "admitted"]
    labels += [_label(c, "admitted") for c in admitted[1:]]
    labels.append(_label(admitted[0], "rejected"))  # one admitted record should not have been
    labels += [_label(c, "rejected") for c in others[1:]]
    labels.append(_label(others[0], "admitted"))  # one good record held back
    labels.append(_label(others[0], "rejected", reviewer="r2"))  # a tie: uncertain
    score = audit_score(manifest, labels)
    by_route = {r["route"]: r for r in score["routes"]}
    assert by_route["admitted"]["errors"] == 1 and by_route["admitted"]["audited"] == 100
    assert round(score["admitted_error_upper_bound"], 4) == 0.0466
    assert by_route["admitted"]["errors_in_route_at_most"] == math.ceil(score["admitted_error_upper_bound"] * 240)
    assert sum(r["uncertain"] for r in score["routes"]) == 1
    assert "**Admitted error rate below 4.66% at 95% confidence.**" in render_audit(score)


def test_scoring_refuses_labels_for_other_records() -> None:
    _, manifest = audit_sample(_predictions(), seed=5, size=3)
    case = manifest["cases"][0]
    with pytest.raises(InputError, match="record_sha256 differs"):
        audit_score(manifest, [{**_label(case, "admitted"), "record_sha256": "0" * 64}])
    with pytest.raises(InputError, match="was not sampled"):
        audit_score(manifest, [{**_label(case, "admitted"), "audit_id": "audit-9999"}])


def test_agreement_over_an_annotation_sheet() -> None:
    rows = [{"case_id": f"c{i}", "requested_use": "u", "reviewer_id": r, "admission_label": label,
             "mapping_label": "correct"}
            for i, (a, b) in enumerate([("admitted", "admitted"), ("admitted", "rejected"), ("rejected", "rejected"),
                                        ("rejected", "rejected"), ("admitted", "admitted")])
            for r, label in (("r1", a), ("r2", b))]
    out = agreement(rows)
    assert out["columns"]["admission_label"]["percent_agreement"] == 0.8
    assert out["columns"]["admission_label"]["cohen_kappa"] == pytest.approx(0.6153846)
    assert out["columns"]["mapping_label"]["krippendorff_alpha"] is None  # one category: undefined


# -- the command line --------------------------------------------------------------------------

def test_audit_sample_and_score_at_the_command_line(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.csv"
    predictions.write_text(write_csv(_predictions(), PREDICTION_COLUMNS))
    out = tmp_path / "audit"
    args = ["review", "audit-sample", "--predictions", str(predictions), "--target", "0.1", "--controls", "5",
            "--seed", "11", "--output-dir", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    assert "sampled 29 admitted + 5 controls" in result.stdout
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 3 and "never overwritten" in again.stderr
    sheet = list(csv.DictReader(io.StringIO((out / "audit_sheet.csv").read_text())))
    manifest = json.loads((out / "audit_manifest.json").read_text())
    routes = {c["audit_id"]: c["route"] for c in manifest["cases"]}
    for row in sheet:
        row.update(reviewer_id="r1", admission_label="admitted" if routes[row["audit_id"]] == "admitted"
                   else "rejected", mapping_label="correct", rationale="ok", minutes_spent="3")
    labels = tmp_path / "labels.csv"
    labels.write_text(write_csv(sheet, list(sheet[0])))
    scored = CliRunner().invoke(cli, ["review", "audit-score", "--manifest", str(out / "audit_manifest.json"),
                                      "--labels", str(labels)])
    assert scored.exit_code == 0, scored.stderr
    assert "| admitted | 240 | 29 | 0 |" in scored.stdout and "below 9.8" in scored.stdout
    # 0.8.0's spellings (docs/migrating.md): --annotations is --labels; --profile-id is accepted, --split is not
    old_name = CliRunner().invoke(cli, ["review", "audit-score", "--manifest", str(out / "audit_manifest.json"),
                                        "--annotations", str(labels)])
    assert old_name.exit_code == 0 and old_name.stdout == scored.stdout
    with_id = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "audit2"), "--profile-id", "literature-claim"])
    assert with_id.exit_code == 0 and "--profile-id is not needed" in with_id.stderr
    assert (tmp_path / "audit2" / "audit_sheet.csv").read_bytes() == (out / "audit_sheet.csv").read_bytes()
    split = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "audit3"), "--split", "test"])
    assert split.exit_code == 3 and "--split is 0.8.0's" in split.stderr and not (tmp_path / "audit3").exists()


def test_agreement_at_the_command_line(tmp_path: Path) -> None:
    sheet = tmp_path / "annotations.csv"
    sheet.write_text("case_id,requested_use,reviewer_id,admission_label,mapping_label,note\n"
                     "c1,u,r1,admitted,correct,x\nc1,u,r2,admitted,incorrect,y\n")
    result = CliRunner().invoke(cli, ["review", "agreement", str(sheet)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["columns"]["admission_label"]["percent_agreement"] == 1.0
