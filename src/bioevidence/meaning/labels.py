"""The labels a person reads: ``supports``, ``contradicts``, ``neutral`` or ``undetermined``.

The model (:mod:`.model`) gives calibrated probabilities of supports / contradicts / neutral. The
label is the most probable class, except that a direction (supports or contradicts) whose
probability is below the card's ``threshold`` is shown as ``undetermined``: the threshold is the
lowest at which shown directions on the calibration part of the data were right at least 93% of the
time (tools/train_stance.py), so a person reading a direction can trust it, and a pair the model
cannot decide says so. ``confidence`` is the probability of the class shown (for ``undetermined``,
of the more probable direction).

Figures on data the model never saw (tools/eval_stance.py; docs/librarian.md "Stance").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .model import ENV, EXTRA, StanceOnnx, missing_runtime, model_dir

__all__ = ["LABELS", "StanceLabel", "StanceModel", "available", "load_model", "stance", "unavailable"]

#: every label a reader can see; the model's classes are the first three
LABELS = ("supports", "contradicts", "neutral", "undetermined")
DIRECTIONS = ("supports", "contradicts")


@dataclass(frozen=True)
class StanceLabel:
    stance: str  # one of LABELS
    confidence: float  # probability of the label shown (of the likelier direction when undetermined)
    probabilities: tuple[float, float, float]  # calibrated P(supports), P(contradicts), P(neutral)

    def as_dict(self) -> dict[str, Any]:
        return {"stance": self.stance, "confidence": round(self.confidence, 4)}


def decide(probabilities: Sequence[float], threshold: float) -> StanceLabel:
    """The label of one pair from its calibrated probabilities (pure; tested on its own)."""
    ps, pc, pn = (float(x) for x in probabilities)
    if pn >= ps and pn >= pc:
        return StanceLabel("neutral", pn, (ps, pc, pn))
    direction, p = ("supports", ps) if ps >= pc else ("contradicts", pc)
    if p < threshold:
        return StanceLabel("undetermined", p, (ps, pc, pn))
    return StanceLabel(direction, p, (ps, pc, pn))


class StanceModel:
    """The shipped model with its card's threshold: ``label(claim, sentences)``."""

    def __init__(self, folder: Path | None = None, *, threads: int | None = None,
                 threshold: float | None = None) -> None:
        self._onnx = StanceOnnx(folder, threads=threads)
        self.card = self._onnx.card
        self.name = self.card.name
        self.threshold = self.card.threshold if threshold is None else threshold

    def label_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[StanceLabel]:
        return [decide(row, self.threshold) for row in self._onnx.probabilities(pairs)]

    def label(self, claim: str, sentences: Sequence[str]) -> list[StanceLabel]:
        return self.label_pairs([(claim, s) for s in sentences])


_LOADED: dict[Path, StanceModel] = {}  # by folder: one load a process for each
_LOCK = threading.Lock()


def unavailable() -> str | None:
    """Why the shipped model cannot run here, in words that name the fix (``None`` when it can):
    its runtime (onnxruntime, tokenizers, numpy: the ``librarian`` extra) is not installed, or its
    weights are not in this installation. Damaged weights are not "unavailable": loading them fails
    (:class:`~bioevidence.errors.IntegrityError`) and every caller fails closed."""
    module = missing_runtime()
    if module is not None:
        return f"the stance model's runtime ({module}) is not installed: {EXTRA}"
    try:
        folder = model_dir()
    except FileNotFoundError:
        folder = None
    if folder is not None and os.environ.get(ENV, "").strip() and not (folder / "model.json").is_file():
        return (f"{ENV} names {folder}, which holds no model.json: point it at the folder "
                "`python tools/train_stance.py --out DIR` wrote (docs/stance.md)")
    if folder is None or not (folder / "model.json").is_file():
        return ("this installation holds no stance model weights (bioevidence/_data/stance): build them from a "
                "source checkout with `python tools/train_stance.py` (docs/stance.md)")
    return None


def available() -> bool:
    """True when the shipped model can run: its runtime is installed and its weights are present."""
    return unavailable() is None


def load_model() -> StanceModel:
    """The shipped model (or the one ``$BIOEVIDENCE_STANCE_MODEL`` names), loaded once a process for
    each folder (about 0.3 s; thread-safe); a :class:`~bioevidence.errors.ConfigurationError` naming
    the fix when it cannot run here."""
    with _LOCK:
        why = unavailable()
        if why is not None:
            raise ConfigurationError(why)
        folder = model_dir().resolve()
        if folder not in _LOADED:
            _LOADED[folder] = StanceModel(folder)
        return _LOADED[folder]


def stance(claim: str, sentences: str | Sequence[str]) -> list[StanceLabel]:
    """The stance of each sentence toward ``claim`` (a question is read as a claim)::

        >>> import bioevidence
        >>> [s.stance for s in bioevidence.stance("BRAF V600E confers sensitivity to vemurafenib.",
        ...     ["Tumours with BRAF V600E responded to vemurafenib."])]   # doctest: +SKIP
        ['supports']
    """
    if isinstance(sentences, str):
        sentences = [sentences]
    return load_model().label(claim, list(sentences))
