"""The stance model: a MiniLM-L12 cross-encoder fine-tuned to three classes (supports,
contradicts, neutral) by ``tools/train_stance.py``, int8 ONNX, run by onnxruntime on the CPU.

Its files ship in the package (``bioevidence/_data/stance/``: ``model.onnx``, ``tokenizer.json``,
``model.json``), or sit in the folder ``BIOEVIDENCE_STANCE_MODEL`` names (weights built with
``tools/train_stance.py --out DIR``, or a copy kept outside the installation). ``model.json`` is
the model card: the SHA-256 of the two other files (checked before they are read: a changed file is
refused, never silently run), the temperature and the undetermined threshold chosen on the
calibration part of the data, and what it was trained on.
Nothing is fetched at run time.

Each pair runs alone: the int8 export quantises activations over its whole input, so a pair batched
with others could score differently, and a label must not depend on its neighbours.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, IntegrityError
from ..limits import usable_cpus
from ..resources import data_dir

__all__ = ["ENV", "EXTRA", "ModelCard", "StanceOnnx", "model_dir", "missing_runtime"]

EXTRA = "pip install 'bioevidence[librarian]'"
RUNTIME = ("onnxruntime", "tokenizers", "numpy")
#: names the folder of the model's three files, in place of the package's
ENV = "BIOEVIDENCE_STANCE_MODEL"


def model_dir() -> Path:
    """The folder of the model's files: ``$BIOEVIDENCE_STANCE_MODEL`` when set, else the package's
    (``FileNotFoundError`` when the package has none)."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    return data_dir("stance")


def missing_runtime() -> str | None:
    """The first module the model needs that is not installed (None when all are)."""
    import importlib.util

    for module in RUNTIME:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):
            return module
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ModelCard:
    """``model.json``: name, labels, temperature, threshold, max_tokens and the files' SHA-256."""

    def __init__(self, folder: Path) -> None:
        path = folder / "model.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"the stance model card {path} cannot be read ({exc}); reinstall "
                                     "bioevidence") from exc
        try:
            self.name = str(raw["name"])
            self.labels = tuple(str(x) for x in raw["labels"])
            self.temperature = float(raw["temperature"])
            self.threshold = float(raw["threshold"])
            self.max_tokens = int(raw["max_tokens"])
            self.model_sha256 = str(raw["model_sha256"])
            self.tokenizer_sha256 = str(raw["tokenizer_sha256"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"the stance model card {path} lacks {exc}; reinstall bioevidence") from exc
        if self.labels != ("supports", "contradicts", "neutral") or not 0 < self.temperature < 100 \
                or not 0 < self.threshold <= 1:
            raise ConfigurationError(f"the stance model card {path} is not one this version reads; reinstall "
                                     "bioevidence")
        self.raw = raw


class StanceOnnx:
    """``probabilities(pairs)``: an ``(n, 3)`` array of calibrated P(supports, contradicts, neutral)
    for ``(claim, sentence)`` pairs. Thread-safe (one lock around the session)."""

    def __init__(self, folder: Path | None = None, *, threads: int | None = None) -> None:
        module = missing_runtime()
        if module is not None:
            raise ConfigurationError(f"the stance model needs {module}, which is not installed: {EXTRA}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        self.card = ModelCard(folder)
        for name, want in (("model.onnx", self.card.model_sha256), ("tokenizer.json", self.card.tokenizer_sha256)):
            path = folder / name
            if not path.is_file():
                raise ConfigurationError(f"the stance model file {path} is missing; reinstall bioevidence")
            if _sha256(path) != want:
                raise IntegrityError(f"{path} is not the pinned stance model file (SHA-256 differs from "
                                     "model.json); reinstall bioevidence")
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.enable_truncation(self.card.max_tokens, strategy="only_second")
        self._tok.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or min(usable_cpus(), 2)
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()

    def logits(self, claim: str, sentence: str) -> Any:
        import numpy as np

        enc = self._tok.encode(claim, sentence)
        ids = np.asarray([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64)}
        return self._session.run(["logits"], feed)[0][0]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> Any:
        import numpy as np

        out = np.zeros((len(pairs), 3), dtype=np.float64)
        with self._lock:
            for n, (claim, sentence) in enumerate(pairs):
                z = np.asarray(self.logits(claim, sentence), dtype=np.float64) / self.card.temperature
                z -= z.max()
                e = np.exp(z)
                out[n] = e / e.sum()
        return out
