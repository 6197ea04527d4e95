"""``bioevidence stance PAIRS.jsonl`` and ``bioevidence.stance()``.

No stance weights ship (docs/stance.md), so the command is run here on the word-vote model of
``tests/stance_fixture.py`` (named by ``BIOEVIDENCE_STANCE_MODEL``, as a user names weights they
built), whose every label the test works out by hand; the tests below the marker check what a user
sees without weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="the stance model needs the librarian extra")

import bioevidence
import stance_fixture as fx
from bioevidence.cli import main
from bioevidence.errors import ConfigurationError
from bioevidence.meaning import available
from bioevidence.meaning.model import ENV

no_weights = pytest.mark.skipif(available(), reason="this build holds stance weights")

CLAIM = "BRAF V600E confers sensitivity to vemurafenib in melanoma."


@pytest.fixture
def word_votes(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = fx.build(tmp_path_factory.mktemp("word-votes"))
    monkeypatch.setenv(ENV, str(folder))
    return folder


@pytest.mark.usefixtures("word_votes")
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
    for row, sentence in zip(rows, ["BRAF V600E melanomas responded to vemurafenib.", "We searched PubMed for trials."],
                             strict=True):
        want, confidence = fx.expected_label(CLAIM, sentence)
        assert row == {"id": row["id"], "stance": want, "confidence": round(confidence, 4)}
    assert [r["stance"] for r in rows] == ["supports", "neutral"]
    errors = [json.loads(line) for line in err.splitlines()]
    assert len(errors) == 4 and all("line" in e for e in errors)
    assert [e["line"] for e in errors] == ["2", "3", "5", "6"] or [e["line"] for e in errors] == [2, 3, 5, 6]
    assert code == 3


@pytest.mark.usefixtures("word_votes")
def test_a_file_of_good_pairs_exits_0_with_probabilities(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = tmp_path / "pairs.jsonl"
    sentence = "Perhaps no tumour responded."
    pairs.write_text(json.dumps({"id": 1, "claim": CLAIM, "sentence": sentence}) + "\n", encoding="utf-8")
    assert main(["stance", str(pairs), "--probabilities"]) == 0
    row = json.loads(capsys.readouterr().out)
    want = fx.expected_probabilities(CLAIM, sentence)
    assert row["probabilities"] == dict(zip(("supports", "contradicts", "neutral"),
                                            (round(float(p), 4) for p in want), strict=True))
    assert row["stance"] == fx.expected_label(CLAIM, sentence)[0]


@pytest.mark.usefixtures("word_votes")
def test_the_text_table_names_the_model_and_its_threshold(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "claim": CLAIM, "sentence": "No tumour responded, not one."}) + "\n",
                     encoding="utf-8")
    assert main(["stance", str(pairs), "--format", "text"]) == 0
    head, line = capsys.readouterr().out.splitlines()
    assert "word-votes" in head and "threshold 0.6" in head
    want, confidence = fx.expected_label(CLAIM, "No tumour responded, not one.")
    assert line.split() == ["p1", want, f"{confidence:.3f}"]


def test_a_missing_file_is_one_line_and_exit_3(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["stance", str(tmp_path / "none.jsonl")]) == 3
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.usefixtures("word_votes")
def test_python_api_labels_a_list_or_one_sentence() -> None:
    labels = bioevidence.stance(CLAIM, ["The weather in Paris was mild on Tuesday.", "It rained."])
    assert [lab.stance for lab in labels] == [fx.expected_label(CLAIM, s)[0] for s in
                                              ("The weather in Paris was mild on Tuesday.", "It rained.")]
    assert bioevidence.stance(CLAIM, "Tumours responded.")[0].stance == "supports"


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


@pytest.mark.usefixtures("word_votes")
def test_pairs_from_standard_input_are_labelled() -> None:
    from click.testing import CliRunner

    from bioevidence.cli import cli

    line = json.dumps({"id": "s", "claim": CLAIM, "sentence": "Tumours responded."}) + "\n"
    result = CliRunner().invoke(cli, ["stance", "-"], input=line)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stance"] == fx.expected_label(CLAIM, "Tumours responded.")[0]


def test_standard_input_over_the_limit_is_refused_before_more_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from bioevidence.errors import LimitError
    from bioevidence.io import read_stdin

    stream = io.BytesIO(b"x" * 3000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))
    with pytest.raises(LimitError, match="standard input"):
        read_stdin(limit=1024)
    assert stream.tell() == 1025  # one byte past the limit, no more
    stream.seek(0)
    assert read_stdin(limit=3000) == b"x" * 3000
