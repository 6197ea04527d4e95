"""The stance model's runtime, end to end, on a model whose answers are worked out by hand.

No stance weights ship (docs/stance.md), so the gold-label tests beside this file skip. What they
cannot reach is checked here with the word-vote model of ``tests/stance_fixture.py``: a real ONNX
graph run by onnxruntime through a real ``tokenizers`` tokenizer, whose probabilities the test
computes itself with numpy. If the card's temperature or threshold were ignored, the label rule
changed, the pair truncated from the wrong side, a file's SHA-256 not checked, or
``BIOEVIDENCE_STANCE_MODEL`` not honoured, a test here fails.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="the stance model needs the librarian extra")

import numpy as np

import bioevidence
import stance_fixture as fx
from bioevidence.errors import ConfigurationError, IntegrityError
from bioevidence.meaning import StanceModel, available, load_model, unavailable
from bioevidence.meaning.model import ENV, StanceOnnx, model_dir

CLAIMS = ["BRAF V600E confers sensitivity to vemurafenib in melanoma.",
          "KRAS mutations are associated with resistance to gefitinib.",
          "Aspirin lowers the risk of stroke."]
# every pair of two fixture words, and real sentences, so every branch of the label rule is reached
SENTENCES = [" ".join(p) + "." for p in itertools.combinations_with_replacement(sorted(fx.VOTES), 2)] + [
    "Tumours carrying BRAF V600E responded to vemurafenib.",
    "Tumours with KRAS mutations did not respond to gefitinib, and no partial response was seen.",
    "We searched PubMed for trials published before 2010.",
    "The weather in Paris was mild on the day of the survey.",
    "Perhaps it rained.", "", "It rained."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fx.build(tmp_path_factory.mktemp("word-votes"))


def test_every_probability_is_the_one_worked_out_by_hand(folder: Path) -> None:
    onnx = StanceOnnx(folder, threads=1)
    pairs = [(c, s) for c in CLAIMS for s in SENTENCES]
    got = onnx.probabilities(pairs)
    want = np.asarray([fx.expected_probabilities(c, s) for c, s in pairs])
    assert got.shape == (len(pairs), 3)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_every_label_follows_the_card_threshold_as_docs_state(folder: Path) -> None:
    model = StanceModel(folder, threads=1)
    seen = set()
    for claim in CLAIMS:
        labels = model.label(claim, SENTENCES)
        for sentence, label in zip(SENTENCES, labels, strict=True):
            want, confidence = fx.expected_label(claim, sentence)
            assert (label.stance, round(label.confidence, 5)) == (want, round(confidence, 5)), sentence
            seen.add(label.stance)
    assert seen == {"supports", "contradicts", "neutral", "undetermined"}  # every branch was reached


def test_the_temperature_and_threshold_of_the_card_are_the_ones_used(tmp_path: Path) -> None:
    claim, sentence = CLAIMS[0], "Perhaps tumours responded."
    hot = fx.build(tmp_path / "hot", temperature=6.0, threshold=0.45)
    got = StanceOnnx(hot, threads=1).probabilities([(claim, sentence)])[0]
    np.testing.assert_allclose(got, fx.expected_probabilities(claim, sentence, temperature=6.0), atol=1e-5)
    label = StanceModel(hot, threads=1).label(claim, [sentence])[0]
    want, confidence = fx.expected_label(claim, sentence, temperature=6.0, threshold=0.45)
    assert want == "supports" and (label.stance, round(label.confidence, 5)) == (want, round(confidence, 5))
    # the same model with a higher threshold asked of it: the direction is no longer shown
    strict = StanceModel(hot, threads=1, threshold=0.99).label(claim, [sentence])[0]
    assert strict.stance == "undetermined" and strict.confidence == pytest.approx(label.confidence)


def test_a_long_sentence_is_cut_after_max_tokens_and_the_claim_is_kept_whole(tmp_path: Path) -> None:
    short = fx.build(tmp_path / "short", max_tokens=12)
    claim = "KRAS mutations not associated with sensitivity"  # 6 words, every one read
    head = "tumours were followed"  # [CLS] + 6 + [SEP] + 3 + [SEP] = 12 tokens: the last to fit
    sentence = f"{head} responded responded responded"  # cut: the votes after the 12th token never count
    got = StanceOnnx(short, threads=1).probabilities([(claim, sentence)])[0]
    np.testing.assert_allclose(got, fx.expected_probabilities(claim, head), atol=1e-5)
    assert not np.allclose(got, fx.expected_probabilities(claim, sentence), atol=1e-3)


def test_a_label_does_not_depend_on_its_neighbours(folder: Path) -> None:
    model = StanceModel(folder, threads=1)
    claim, sentence = CLAIMS[1], SENTENCES[-6]
    alone = model.label(claim, [sentence])[0]
    among = model.label(claim, ["The weather was mild.", sentence, "No."])[1]
    assert alone == among


def test_every_file_is_checked_against_its_pinned_sha256(folder: Path, tmp_path: Path) -> None:
    for name in ("model.onnx", "tokenizer.json"):
        copy = tmp_path / name
        fx.build(copy)
        with (copy / name).open("ab") as fh:
            fh.write(b" ")
        with pytest.raises(IntegrityError, match=rf"{name}.*SHA-256"):
            StanceOnnx(copy)
        (copy / name).unlink()
        with pytest.raises(ConfigurationError, match=rf"{name} is missing"):
            StanceOnnx(copy)
    card = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    assert card["model_sha256"] == hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()


@pytest.mark.parametrize(("change", "words"), [
    ({"labels": ["contradicts", "supports", "neutral"]}, "not one this version reads"),
    ({"temperature": 0}, "not one this version reads"),
    ({"temperature": 100}, "not one this version reads"),
    ({"threshold": 0}, "not one this version reads"),
    ({"threshold": 1.01}, "not one this version reads"),
    ({"threshold": "high"}, "lacks"),
    ({"max_tokens": None}, "lacks"),
])
def test_a_card_this_version_cannot_read_is_refused(tmp_path: Path, change: dict, words: str) -> None:
    copy = fx.build(tmp_path / "card")
    card = json.loads((copy / "model.json").read_text(encoding="utf-8")) | change
    (copy / "model.json").write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=words):
        StanceOnnx(copy)


def test_the_threshold_of_one_is_a_card_this_version_reads(tmp_path: Path) -> None:
    copy = fx.build(tmp_path / "one", threshold=1.0)
    label = StanceModel(copy, threads=1).label(CLAIMS[0], ["Tumours responded."])[0]
    assert label.stance == "undetermined"  # p < 1 always: a threshold of 1 shows no direction


def test_the_environment_names_the_model_folder(folder: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(folder))
    assert model_dir() == folder and available() and unavailable() is None
    model = load_model()
    assert model is load_model()  # loaded once for this folder
    assert model.card.name.startswith("word-votes")
    claim, sentence = CLAIMS[0], "Tumours responded."
    assert [lab.stance for lab in bioevidence.stance(claim, [sentence, "The weather."])] == [
        fx.expected_label(claim, sentence)[0], "neutral"]
    assert bioevidence.stance(claim, sentence)[0] == model.label(claim, [sentence])[0]
    other = fx.build(tmp_path / "other", {"responded": (0.0, 5.0, 0.0)})
    monkeypatch.setenv(ENV, str(other))
    assert load_model() is not model and bioevidence.stance(claim, sentence)[0].stance == "contradicts"
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(ENV, str(empty))
    why = unavailable()
    assert why is not None and ENV in why and str(empty) in why and "--out" in why and not available()
    with pytest.raises(ConfigurationError, match=ENV):
        load_model()
