"""A word-vote stance model the tests build, so the model's whole path runs without the real weights.

No stance weights ship (docs/stance.md), yet everything around them must be right the day they do:
the model card and its SHA-256 checks, the temperature, the threshold, ``bioevidence stance``, the
answer's direction and the gate's direction check. This module writes the three files a real build
writes (``model.onnx``, ``tokenizer.json``, ``model.json``) for a model whose every output the tests
can work out by hand:

* the tokenizer is a word-level vocabulary (the ``tokenizers`` library; unknown words → ``[UNK]``),
  with BERT's pair template ``[CLS] claim [SEP] sentence [SEP]`` and type ids 0 / 1;
* the ONNX graph (written here as protobuf bytes: the ``onnx`` package is not a test dependency) is
  ``logits = ReduceSum(Gather(W, input_ids), axis 1)``: each token adds its row of ``W``
  (supports, contradicts, neutral) and ``[UNK]``, ``[CLS]``, ``[SEP]`` add nothing.

So a sentence's logits are the sum of its words' votes (the claim's words too), and
:func:`expected_probabilities` computes the calibrated probabilities from the same table with
numpy, independently of ``bioevidence.meaning``. It is not a stance model: it only makes the real
runtime run a model whose answers are known.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

SPECIAL = ("[UNK]", "[CLS]", "[SEP]")
#: the default votes (supports, contradicts, neutral) of the fixture's words
VOTES: dict[str, tuple[float, float, float]] = {
    "responded": (3.0, 0.0, 0.0), "sensitivity": (2.0, 0.0, 0.0), "associated": (1.0, 0.0, 0.0),
    "improved": (2.5, 0.0, 0.0), "not": (-1.0, 4.0, 0.0), "resistance": (0.0, 2.5, 0.0),
    "no": (0.0, 2.0, 0.0), "weather": (0.0, 0.0, 6.0), "searched": (0.0, 0.0, 5.0),
    "perhaps": (0.4, 0.3, 0.2),
}
WORD = re.compile(r"\w+")  # the words that can carry a vote (punctuation never does)


# -- protobuf, by hand (the few message fields an ONNX model needs) --------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(raw)) + raw


def _tensor(name: str, array: np.ndarray) -> bytes:
    kind = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}[array.dtype]
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, kind) + _bytes(8, name) + _bytes(9, array.astype(array.dtype.newbyteorder("<")).tobytes())


def _value_info(name: str, elem_type: int, dims: tuple[int | str, ...]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in dims)
    tensor_type = _int(1, elem_type) + _bytes(2, shape)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op: str, inputs: list[str], outputs: list[str], name: str, attrs: bytes = b"") -> bytes:
    return (b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
            + _bytes(3, name) + _bytes(4, op) + attrs)


def onnx_bytes(weights: np.ndarray) -> bytes:
    """An ONNX model (IR 8, opset 13): ``logits[b, c] = Σ_t weights[input_ids[b, t], c]``; it declares
    the three inputs a BERT cross-encoder takes (the runtime feeds all three)."""
    keepdims = _bytes(5, _bytes(1, "keepdims") + _int(3, 0) + _int(20, 2))  # AttributeProto INT
    graph = (
        _bytes(1, _node("Gather", ["W", "input_ids"], ["votes"], "gather"))
        + _bytes(1, _node("ReduceSum", ["votes", "axes"], ["logits"], "sum", keepdims))
        + _bytes(2, "word_votes")
        + _bytes(5, _tensor("W", weights.astype(np.float32)))
        + _bytes(5, _tensor("axes", np.asarray([1], dtype=np.int64)))
        + b"".join(_bytes(11, _value_info(n, 7, ("batch", "tokens")))
                   for n in ("input_ids", "attention_mask", "token_type_ids"))
        + _bytes(12, _value_info("logits", 1, ("batch", 3)))
    )
    return _int(1, 8) + _bytes(2, "bioevidence-tests") + _bytes(7, graph) + _bytes(8, _bytes(1, "") + _int(2, 13))


# -- the tokenizer and the card ---------------------------------------------------------------------

def vocabulary(votes: Mapping[str, tuple[float, float, float]]) -> dict[str, int]:
    return {tok: n for n, tok in enumerate([*SPECIAL, *sorted(votes)])}


def tokenizer_json(vocab: dict[str, int]) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return str(tok.to_str())


def build(folder: Path, votes: Mapping[str, tuple[float, float, float]] = VOTES, *, temperature: float = 1.5,
          threshold: float = 0.6, max_tokens: int = 128) -> Path:
    """Write the three files of a word-vote model into ``folder``; its card pins their SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary(votes)
    weights = np.zeros((len(vocab), 3), dtype=np.float32)
    for word, row in votes.items():
        weights[vocab[word]] = row
    (folder / "model.onnx").write_bytes(onnx_bytes(weights))
    (folder / "tokenizer.json").write_text(tokenizer_json(vocab), encoding="utf-8")
    card = {"name": "word-votes (tests/stance_fixture.py)", "labels": ["supports", "contradicts", "neutral"],
            "temperature": temperature, "threshold": threshold, "max_tokens": max_tokens,
            "model_sha256": hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest(),
            "tokenizer_sha256": hashlib.sha256((folder / "tokenizer.json").read_bytes()).hexdigest()}
    (folder / "model.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return folder


# -- what the model must answer, worked out without bioevidence --------------------------------------

def expected_probabilities(claim: str, sentence: str, votes: Mapping[str, tuple[float, float, float]] = VOTES,
                           temperature: float = 1.5) -> np.ndarray:
    """softmax(Σ votes of the claim's and the sentence's words / temperature), words split as the
    fixture's tokenizer splits them (runs of word characters)."""
    z = np.zeros(3)
    for word in WORD.findall(claim) + WORD.findall(sentence):
        z += np.asarray(votes.get(word, (0.0, 0.0, 0.0)))
    z = z / temperature
    e = np.exp(z - z.max())
    return np.asarray(e / e.sum())


def expected_label(claim: str, sentence: str, votes: Mapping[str, tuple[float, float, float]] = VOTES,
                   temperature: float = 1.5, threshold: float = 0.6) -> tuple[str, float]:
    """The label docs/stance.md promises for these probabilities: neutral when it is the most likely
    class; else the likelier direction, shown only at or above the threshold (else undetermined)."""
    ps, pc, pn = expected_probabilities(claim, sentence, votes, temperature)
    if pn >= max(ps, pc):
        return "neutral", float(pn)
    direction, p = ("supports", ps) if ps >= pc else ("contradicts", pc)
    return (direction if p >= threshold else "undetermined"), float(p)


__all__ = ["VOTES", "build", "expected_label", "expected_probabilities", "onnx_bytes"]
