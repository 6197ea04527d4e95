"""``bioevidence stance PAIRS.jsonl`` and ``bioevidence.stance()``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="the stance model needs the librarian extra")

import bioevidence
from bioevidence.cli import main
from bioevidence.errors import ConfigurationError
from bioevidence.meaning import available, unavailable

needs_weights = pytest.mark.skipif(not available(), reason=f"no stance model here: {unavailable()}")
no_weights = pytest.mark.skipif(available(), reason="this build holds stance weights")

CLAIM = "BRAF V600E confers sensitivity to vemurafenib in melanoma."


@needs_weights
def test_good_lines_are_labelled_and_each_bad_line_gets_one_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = tmp_path / "pairs.jsonl"
    lines = [json.dumps({"id": "a", "claim": CLAIM, "sentence": "BRAF V600E melanomas responded to vemurafenib."}),
             "{not json",
             json.dumps({"id": "b", "claim": CLAIM}),
             json.dumps({"id": 3, "claim": CLAIM, "sentence": "We searched PubMed for trials."}),
             json.dumps({"id": "a", "claim": CLAIM, "sentence": "again"}),
             json.dumps(["a", "list"])]
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["stance", str(pairs)])
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["a", "3"]
    assert all(r["stance"] in ("supports", "contradicts", "neutral", "undetermined") for r in rows)
    assert all(0.0 <= r["confidence"] <= 1.0 for r in rows)
    errors = [json.loads(line) for line in err.splitlines()]
    assert len(errors) == 4 and all("line" in e for e in errors)
    assert [e["line"] for e in errors] == ["2", "3", "5", "6"] or [e["line"] for e in errors] == [2, 3, 5, 6]
    assert code == 3


@needs_weights
def test_a_file_of_good_pairs_exits_0_with_probabilities(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": 1, "claim": CLAIM, "sentence": "It rained."}) + "\n", encoding="utf-8")
    assert main(["stance", str(pairs), "--probabilities"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert abs(sum(row["probabilities"].values()) - 1.0) < 1e-3


def test_a_missing_file_is_one_line_and_exit_3(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["stance", str(tmp_path / "none.jsonl")]) == 3
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@needs_weights
def test_python_api_labels_a_list_or_one_sentence() -> None:
    labels = bioevidence.stance(CLAIM, ["The weather in Paris was mild on Tuesday.", "It rained."])
    assert len(labels) == 2 and all(lab.stance == "neutral" for lab in labels)
    assert bioevidence.stance(CLAIM, "It rained.")[0].stance == "neutral"


@no_weights
def test_without_weights_bad_lines_are_still_reported_then_one_line_names_the_fix(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "a", "claim": CLAIM, "sentence": "Tumours responded."}) + "\n{bad\n",
                     encoding="utf-8")
    assert main(["stance", str(pairs)]) == 3
    out, err = capsys.readouterr()
    assert out == ""  # no label is made up
    errors = [json.loads(line) for line in err.splitlines()]
    assert len(errors) == 2 and errors[0]["line"] in (2, "2")
    assert "train_stance.py" in errors[1]["message"] if "message" in errors[1] else "train_stance.py" in str(errors[1])


@no_weights
def test_without_weights_the_python_api_raises_the_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"docs/stance\.md"):
        bioevidence.stance(CLAIM, "It rained.")
