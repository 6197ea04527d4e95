"""``ground``: pin every publication a record cites and write the pinned hashes into it.

Pure parts (:func:`publication_ids`, :func:`apply_pins`) take and return values; :func:`ground`
drives a :class:`~bioevidence.sources.pin.Pinner` and returns the updated records with a
:class:`GroundSummary`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .catalogue import Catalogue
from .identifiers import parse_identifier
from .metadata import parse_metadata
from .pin import Pinner, PinResult
from .store import SnapshotStore

__all__ = ["GroundSummary", "apply_pins", "ground", "publication_ids"]


@dataclass
class GroundSummary:
    """What a ``ground`` run did, per identifier."""

    pinned: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)
    no_fulltext: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def add(self, result: PinResult) -> None:
        if result.status == "failed":
            self.failed[result.ident] = result.error or "unknown error"
        else:
            getattr(self, result.status).append(result.ident)

    def to_json(self) -> dict[str, Any]:
        return {
            "pinned": sorted(self.pinned),
            "known": sorted(self.known),
            "no_fulltext": sorted(self.no_fulltext),
            "not_found": sorted(self.not_found),
            "failed": dict(sorted(self.failed.items())),
        }


def _artifact_id(artifact: dict[str, Any]) -> str | None:
    if artifact.get("source_type") not in (None, "publication"):
        return None
    for key in ("uri", "id"):
        parsed = parse_identifier(artifact.get(key))
        if parsed is not None:
            return parsed.key
    return None


def publication_ids(record: Any, *, file: str | None = None) -> list[str]:
    """Canonical ids of the publications a record cites (``source_artifacts`` of type publication)."""
    if not isinstance(record, dict):
        raise InputError("a record is a JSON/YAML object", file=file)
    artifacts = record.get("source_artifacts", [])
    if not isinstance(artifacts, list):
        raise InputError("source_artifacts must be a list", file=file)
    out: list[str] = []
    for artifact in artifacts:
        if isinstance(artifact, dict) and (ident := _artifact_id(artifact)) and ident not in out:
            out.append(ident)
    return out


def apply_pins(record: dict[str, Any], catalogue: Catalogue, store: SnapshotStore | None = None) -> dict[str, Any]:
    """A copy of ``record`` whose publication sources carry the pinned ``sha256``,
    ``observed_sha256`` and ``retrieved_at`` (and a title when missing)."""
    out = copy.deepcopy(record)
    for artifact in out.get("source_artifacts", []):
        if not isinstance(artifact, dict):
            continue
        ident = _artifact_id(artifact)
        work = catalogue.get(ident) if ident else None
        if work is None:
            continue
        artifact["sha256"] = work.pinned_sha256
        artifact["observed_sha256"] = work.pinned_sha256
        artifact["retrieved_at"] = str(work.extra.get("refreshed_at") or work.retrieved_at)
        if not artifact.get("version"):
            artifact["version"] = f"{work.resolver} {artifact['retrieved_at'][:10]}"
        if not artifact.get("title") and store is not None:
            meta = parse_metadata(store.read(work.metadata_sha256), want=work.key)
            if meta.title:
                artifact["title"] = meta.title
    return out


def ground(
    records: Iterable[tuple[str, Any]],
    pinner: Pinner,
    *,
    refresh: bool = False,
    workers: int = 8,
    progress: Callable[[PinResult], None] | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], GroundSummary]:
    """Pin every cited publication of ``records`` (``(name, record)`` pairs) and pin the records."""
    items = list(records)
    wanted: list[str] = []
    for name, record in items:
        for ident in publication_ids(record, file=name):
            if ident not in wanted:
                wanted.append(ident)
    summary = GroundSummary()
    for result in pinner.pin_many(wanted, refresh=refresh, workers=workers, progress=progress):
        summary.add(result)
    grounded = [(name, apply_pins(record, pinner.catalogue, pinner.store)) for name, record in items]
    return grounded, summary
