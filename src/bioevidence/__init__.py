"""bioevidence: the evidence layer for life-science AI agents.

The supported public API is the sorted ``__all__`` below; everything else is internal.
Names are imported lazily so ``import bioevidence`` stays cheap (no lxml, linkml,
openai until a feature needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import (
    BioevidenceError,
    BioevidenceWarning,
    BusyError,
    ClusterError,
    ConfigurationError,
    InputError,
    IntegrityError,
    LimitError,
    ModelError,
    RetrievalError,
    SourceAccessError,
    SourceError,
)

_LAZY: dict[str, str] = {
    "LLM": "bioevidence.loop.llm",
    "OpenAITransport": "bioevidence.loop.llm",
    "Librarian": "bioevidence.librarian.librarian",
    "GrounderOptions": "bioevidence.gate.grounders.config",
    "build_grounders": "bioevidence.gate.grounders.config",
    "revise": "bioevidence.loop.revise",
    "arevise": "bioevidence.loop.revise",
    "Attempt": "bioevidence.loop.revise",
    "Feedback": "bioevidence.loop.revise",
    "build_record": "bioevidence.loop.draft",
    "load_draft": "bioevidence.loop.draft",
    "draft_json_schema": "bioevidence.loop.draft",
    "DraftBuilder": "bioevidence.loop.draft",
    "ReviewQueue": "bioevidence.loop.queue",
    "upper_bound": "bioevidence.loop.stats",
    "sample_size": "bioevidence.loop.stats",
    "Catalogue": "bioevidence.sources.catalogue",
    "SnapshotStore": "bioevidence.sources.store",
    "Work": "bioevidence.sources.catalogue",
    "parse_identifier": "bioevidence.sources.identifiers",
    "release_path": "bioevidence.sources.releases",
    "Finding": "bioevidence.gate.findings",
    "GateSpec": "bioevidence.gate.spec",
    "Fix": "bioevidence.gate.findings",
    "Grounder": "bioevidence.gate.grounding",
    "Grounding": "bioevidence.gate.grounding",
    "Profile": "bioevidence.gate.profiles",
    "Report": "bioevidence.gate.report",
    "Validator": "bioevidence.gate.validator",
    "load_profile": "bioevidence.gate.profiles",
    "validate": "bioevidence.gate.validator",
    "load_record": "bioevidence.gate.inputs",
    "stance": "bioevidence.meaning.labels",
    "StanceLabel": "bioevidence.meaning.labels",
}

__all__ = [
    "Attempt",
    "BioevidenceError",
    "BioevidenceWarning",
    "BusyError",
    "Catalogue",
    "ClusterError",
    "ConfigurationError",
    "DraftBuilder",
    "Feedback",
    "Finding",
    "Fix",
    "GateSpec",
    "Grounder",
    "GrounderOptions",
    "Grounding",
    "InputError",
    "IntegrityError",
    "LLM",
    "Librarian",
    "LimitError",
    "ModelError",
    "OpenAITransport",
    "Profile",
    "Report",
    "RetrievalError",
    "ReviewQueue",
    "SnapshotStore",
    "SourceAccessError",
    "SourceError",
    "StanceLabel",
    "Validator",
    "Work",
    "__version__",
    "arevise",
    "build_grounders",
    "build_record",
    "draft_json_schema",
    "load_draft",
    "load_profile",
    "load_record",
    "parse_identifier",
    "release_path",
    "revise",
    "sample_size",
    "stance",
    "upper_bound",
    "validate",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bioevidence' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:  # pragma: no cover
    from .gate.findings import Finding, Fix
    from .gate.grounders.config import GrounderOptions, build_grounders
    from .gate.grounding import Grounder, Grounding
    from .gate.inputs import load_record
    from .gate.profiles import Profile, load_profile
    from .gate.report import Report
    from .gate.spec import GateSpec
    from .gate.validator import Validator, validate
    from .librarian.librarian import Librarian
    from .loop.draft import DraftBuilder, build_record, draft_json_schema, load_draft
    from .loop.llm import LLM, OpenAITransport
    from .loop.queue import ReviewQueue
    from .loop.revise import Attempt, Feedback, arevise, revise
    from .loop.stats import sample_size, upper_bound
    from .meaning.labels import StanceLabel, stance
    from .sources.catalogue import Catalogue, Work
    from .sources.identifiers import parse_identifier
    from .sources.releases import release_path
    from .sources.store import SnapshotStore
