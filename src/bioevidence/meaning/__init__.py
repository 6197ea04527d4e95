"""Meaning: does a sentence support a claim, contradict it, or neither?

Below both **find** (the librarian labels the sentences it returns and the answer's direction) and
**check** (the gate routes a record whose verified quotes contradict its own evidence line to
review); it imports neither. The model and its pinned weights: :mod:`.model`; the labels a person
reads, with ``undetermined`` below a threshold chosen on held-out data: :mod:`.labels`.
"""

from .labels import LABELS, StanceLabel, StanceModel, available, load_model, stance, unavailable

__all__ = ["LABELS", "StanceLabel", "StanceModel", "available", "load_model", "stance", "unavailable"]
