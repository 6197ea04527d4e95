"""The direction check (BEV034-BEV036): do verified quotes say what their evidence line says they say?

The literature grounder proves that a quote is the paper's text; it cannot see that a sentence cited
by a *supporting* line says the opposite of the claim. This check reads each verified quote (an
evidence item the literature grounder located in its pinned paper) against the claim with the
stance model of :mod:`bioevidence.meaning`, and sends the record to review (BEV034, judgment: never
fed back to a model as a fix) when the model's label, at or above the model card's threshold, is
the opposite of the line's direction: a ``supports`` line citing a sentence the model reads as
``contradicts``, or a ``contradicts`` line citing one it reads as ``supports``. ``neutral`` lines,
unverified items (the grounders already say why) and labels below the threshold (``undetermined``,
``neutral``) are left alone: the check names disagreements it is confident of, it does not ask every
quote to prove a direction.

The claim is the statement as a reader reads it: the subject's and object's labels around the
predicate in words (``BRAF V600E`` ``associated_with`` ``melanoma`` → "BRAF V600E is associated with
melanoma"; :func:`claim_text`).

Modes (the profile's ``checks.direction``, overridden by ``--direction``): ``auto`` runs when the
model can (its runtime, onnxruntime, tokenizers and numpy, is installed: the ``librarian`` extra; and
its weights are in the installation) and otherwise adds a note saying why (BEV036, blocks nothing);
``required`` sends the record to review when it cannot run (BEV035); ``off`` never runs. Whatever the
mode, an error inside the check (weights that fail their pinned SHA-256, a model that raises) is
BEV035: review, never admitted.

Labels are cached in-process per (model, claim, sentence), so validating the same records again
costs a dictionary look-up per quote (docs/grounders.md "Direction" for the figures).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import ConfigurationError, excerpt
from ..findings import Finding
from ..grounding import CheckContext, Grounding, finding
from ..profiles import DIRECTION_MODES
from .common import requested_uses

__all__ = ["SHIPPED", "DirectionChecker", "Labeller", "claim_text", "clear_cache"]

#: ``model=SHIPPED``: the model shipped in the package, loaded on first need when its runtime is installed
SHIPPED = "shipped"
INSTALL = "pip install 'bioevidence[librarian]'"
CACHE_LIMIT = 200_000  # labels kept in-process (about 40 MB at most); cleared whole when full

_CACHE: dict[tuple[str, str, str], Any] = {}
_CACHE_LOCK = threading.Lock()


class Labeller(Protocol):
    """What the check needs of a stance model (:class:`bioevidence.meaning.StanceModel` is one)."""

    name: str
    threshold: float

    def label(self, claim: str, sentences: Sequence[str]) -> Sequence[Any]: ...


# -- the claim as a reader reads it -----------------------------------------------------------------

PREDICATES = {
    "associated_with": "is associated with", "not_associated_with": "is not associated with",
    "contributes_to": "contributes to", "does_not_support": "does not support", "expressed_in": "is expressed in",
    "marker_of": "is a marker of", "has_label": "has the label", "participates_in": "participates in",
    "part_of": "is part of", "has_part": "has part", "located_in": "is located in", "causes": "causes",
    "treats": "treats", "regulates": "regulates", "interacts_with": "interacts with", "is_a": "is a",
    "positively_regulates": "positively regulates", "negatively_regulates": "negatively regulates",
}
# a predicate whose first word reads as a state takes "is" ("correlated_with" → "is correlated with")
_STATE = re.compile(r"^(?:\w+ed|a|an|the|part|member|marker|type|subclass|sensitive|resistant|predictive|"
                    r"prognostic|diagnostic|essential|necessary|sufficient|responsible|specific|enriched)$")


def predicate_phrase(predicate: str) -> str:
    """``associated_with`` → "is associated with"; a CURIE's local name (``biolink:related_to``) or
    camelCase (``positivelyRegulates``) is read the same way."""
    if predicate in PREDICATES:
        return PREDICATES[predicate]
    local = predicate.rsplit(":", 1)[-1]
    if local in PREDICATES:
        return PREDICATES[local]
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", local).replace("_", " ").replace("-", " ").lower().split()
    if words and _STATE.match(words[0]) and words[0] not in ("is", "has"):
        words = ["is", *words]
    return " ".join(words) or predicate


def _name(entity: object) -> str | None:
    if not isinstance(entity, dict):
        return None
    for key in ("label", "id"):  # the human label; the identifier only when no label is given
        value = entity.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


def claim_text(statement: object) -> str | None:
    """The statement as one sentence ("BRAF V600E is associated with melanoma"), or ``None`` when it
    has no subject, predicate or object to read."""
    if not isinstance(statement, dict):
        return None
    subject, obj, predicate = _name(statement.get("subject")), _name(statement.get("object")), \
        statement.get("predicate")
    if subject is None or obj is None or not isinstance(predicate, str) or not predicate.strip():
        return None
    return f"{subject} {predicate_phrase(predicate.strip())} {obj}"


# -- which quotes are read --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Target:
    index: int  # of the evidence item
    item_id: str
    quote: str
    line: str  # the line's id (or its place when it has none)
    line_path: str
    direction: str  # supports | contradicts


def _targets(record: dict[str, Any], context: CheckContext) -> list[_Target]:
    """Verified quotes (located by the literature grounder) cited by a supporting or contradicting line."""
    located = {q.item_id for q in context.quotes} & context.verified
    if not located:
        return []
    by_id: dict[str, tuple[int, str]] = {}
    raw_items = record.get("evidence_items")
    for index, item in enumerate(raw_items if isinstance(raw_items, list) else []):
        if isinstance(item, dict) and item.get("id") in located and isinstance(item.get("extracted_text"), str):
            by_id.setdefault(item["id"], (index, item["extracted_text"]))
    statement = record.get("statement")
    lines = statement.get("evidence_lines") if isinstance(statement, dict) else None
    out: list[_Target] = []
    for n, line in enumerate(lines if isinstance(lines, list) else []):
        if not isinstance(line, dict) or line.get("direction") not in ("supports", "contradicts"):
            continue
        raw_id = line.get("id")
        name = raw_id if isinstance(raw_id, str) else f"#{n + 1}"
        for item_id in dict.fromkeys(i for i in line.get("evidence_item_ids") or [] if isinstance(i, str)):
            if item_id in by_id:
                index, quote = by_id[item_id]
                out.append(_Target(index, item_id, quote, name, f"$.statement.evidence_lines[{n}]",
                                   line["direction"]))
    return out


# -- the check --------------------------------------------------------------------------------------

class DirectionChecker:
    """The direction check. ``mode`` (``auto``, ``required``, ``off``) overrides the record's profile
    (``checks.direction``); ``None`` follows it. ``model``: :data:`SHIPPED` (the packaged model, loaded
    on first need; ``folder`` names another copy of its files), ``None`` (as when its runtime is not
    installed), or any :class:`Labeller`."""

    name = "direction"
    kind = "direction"

    def __init__(self, mode: str | None = None, *, model: Labeller | str | None = SHIPPED,
                 folder: Path | None = None) -> None:
        if mode is not None and mode not in DIRECTION_MODES:
            raise ConfigurationError(f"direction mode {mode!r} is not one of {', '.join(DIRECTION_MODES)}")
        if isinstance(model, str) and model != SHIPPED:
            raise ConfigurationError(f"model must be a stance model, None or {SHIPPED!r}, not {model!r}")
        self.mode = mode
        self._model = model
        self._folder = folder
        self._loaded: Labeller | None = None
        self._failure: str | None = None
        self._runtime: bool | None = None
        self._missing: str | None = None  # why the shipped model cannot run here (meaning.unavailable)
        self._lock = threading.Lock()

    def _labeller(self) -> tuple[Labeller | None, str | None]:
        """``(model, None)``; ``(None, None)`` when no runtime is installed; ``(None, why)`` when the
        model could not be loaded."""
        if self._model is None:
            return None, None
        if not isinstance(self._model, str):
            return self._model, None
        with self._lock:
            if self._loaded is None and self._failure is None:
                from ...meaning import unavailable
                from ...meaning.model import EXTRA, missing_runtime

                if self._runtime is None:
                    if self._folder is None:
                        self._missing = unavailable()
                    else:  # a folder given here needs the runtime, not the shipped weights
                        module = missing_runtime()
                        self._missing = module and f"the stance model's runtime ({module}) is not installed: {EXTRA}"
                    self._runtime = self._missing is None
                if not self._runtime:
                    return None, None
                try:
                    from ...meaning import StanceModel, load_model

                    self._loaded = StanceModel(self._folder) if self._folder is not None else load_model()
                except Exception as exc:  # fail closed: every record needing the model goes to review
                    self._failure = f"the stance model could not be loaded ({type(exc).__name__}: {exc})"
            return self._loaded, self._failure

    def check(self, record: dict[str, Any], context: CheckContext) -> Grounding:
        mode = self.mode or context.profile.checks.direction
        if mode == "off":
            return Grounding()
        uses = requested_uses(record)
        try:
            targets = _targets(record, context)
            if not targets:
                return Grounding()
            model, failure = self._labeller()
            if model is None:
                if failure is not None:
                    return Grounding([_failed(failure, uses)])
                why = self._missing or f"no stance model was given ({INSTALL} installs the shipped one)"
                if mode == "required":
                    return Grounding([finding(
                        "BEV035", f"this profile requires the direction check, and it cannot run: {why}",
                        "$.statement.evidence_lines", uses)])
                return Grounding([finding(
                    "BEV036", f"the direction check did not run: {why}", "$.statement.evidence_lines", uses)])
            claim = claim_text(record.get("statement"))
            if claim is None:
                return Grounding([_failed("the statement has no subject, predicate and object to read as a claim",
                                          uses)] if mode == "required" else [])
            labels = _labels(model, claim, [t.quote for t in targets])
            return Grounding([f for t in targets if (f := _disagreement(t, labels[t.quote], model, claim, uses))])
        except Exception as exc:  # fail closed: review, never admitted
            return Grounding([_failed(f"the direction check failed ({type(exc).__name__}: {exc})", uses)])


def _failed(why: str, uses: list[str]) -> Finding:
    return finding("BEV035", f"{why}; the record is not admitted until a person reads its quotes against their "
                   "evidence lines", "$.statement.evidence_lines", uses)


def _disagreement(target: _Target, label: Any, model: Labeller, claim: str, uses: list[str]) -> Finding | None:
    opposite = "contradicts" if target.direction == "supports" else "supports"
    stance, confidence = str(label.stance), float(label.confidence)
    if stance != opposite or confidence < model.threshold:
        return None
    cited = "supporting" if target.direction == "supports" else "contradicting"
    return finding(
        "BEV034", f"evidence line {excerpt(target.line, 60)} cites this quote as {cited}, but the stance model "
        f"({model.name}) reads it as '{stance}' toward the claim {excerpt(claim, 120)} (confidence {confidence:.2f}, "
        f"threshold {model.threshold:.2f}): {excerpt(target.quote, 160)}",
        f"$.evidence_items[{target.index}].extracted_text", uses)


def _model_key(model: Labeller) -> str:
    card = getattr(model, "card", None)
    sha = getattr(card, "model_sha256", None)
    return f"{model.name}@{sha}@{model.threshold}" if isinstance(sha, str) else f"{model.name}@{id(model)}"


def _labels(model: Labeller, claim: str, quotes: list[str]) -> dict[str, Any]:
    """The model's label of each quote toward ``claim``, from the in-process cache when known."""
    key = _model_key(model)
    out: dict[str, Any] = {}
    missing: list[str] = []
    for quote in dict.fromkeys(quotes):
        hit = _CACHE.get((key, claim, quote))
        if hit is None:
            missing.append(quote)
        else:
            out[quote] = hit
    if missing:
        labels = list(model.label(claim, missing))
        if len(labels) != len(missing):
            raise ValueError(f"the stance model returned {len(labels)} labels for {len(missing)} sentences")
        with _CACHE_LOCK:
            if len(_CACHE) + len(missing) > CACHE_LIMIT:
                _CACHE.clear()
            for quote, label in zip(missing, labels, strict=True):
                _CACHE[(key, claim, quote)] = label
                out[quote] = label
    return out


def clear_cache() -> None:
    """Forget every cached label (benchmarks measure the first pass with it)."""
    with _CACHE_LOCK:
        _CACHE.clear()
