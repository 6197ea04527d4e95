"""``ground``: pin every publication a record cites and write the pinned hashes into it.

Pure parts (:func:`publication_ids`, :func:`apply_pins`) take and return values; :func:`ground`
drives a :class:`~bioevidence.sources.pin.Pinner` and returns the updated records with a
:class:`GroundSummary`; writing the pins into many records can run on a Dask cluster.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ClusterError, ConfigurationError, InputError
from ..execute import BatchFailed, Ready, Recipe, map_batches
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
    kept: dict[str, str] = field(default_factory=dict)  # a refresh answered worse: the earlier pin stays

    def add(self, result: PinResult) -> None:
        if result.status == "failed":
            self.failed[result.ident] = result.error or "unknown error"
        elif result.status == "kept":
            self.kept[result.ident] = result.error or "the refresh answer was worse than the pin"
        else:
            getattr(self, result.status).append(result.ident)

    def to_json(self) -> dict[str, Any]:
        return {
            "pinned": sorted(self.pinned),
            "known": sorted(self.known),
            "no_fulltext": sorted(self.no_fulltext),
            "not_found": sorted(self.not_found),
            "failed": dict(sorted(self.failed.items())),
            "kept": dict(sorted(self.kept.items())),
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


@dataclass(frozen=True)
class _PinsRecipe:
    """A worker's context for writing pins into records: the catalogue and store of a shared
    snapshot folder, checked to be the catalogue this run pinned (``sha256`` of its text)."""

    folder: str
    sha256: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.folder}\0{self.sha256}".encode()).hexdigest()

    def load(self) -> tuple[Catalogue, SnapshotStore]:
        catalogue = Catalogue.load(self.folder)
        found = hashlib.sha256(catalogue.dumps().encode()).hexdigest()
        if found != self.sha256:
            raise ConfigurationError(f"the catalogue a worker read in {self.folder} is not the one this run pinned "
                                     f"(sha256 {found[:12]}…, expected {self.sha256[:12]}…); every worker must see "
                                     "the same shared snapshot folder")
        return catalogue, SnapshotStore(self.folder)


def _pin_batch(context: tuple[Catalogue, SnapshotStore], batch: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    catalogue, store = context
    return [apply_pins(record, catalogue, store) for _, record in batch]


def ground(
    records: Iterable[tuple[str, Any]],
    pinner: Pinner,
    *,
    refresh: bool = False,
    workers: int = 8,
    progress: Callable[[PinResult], None] | None = None,
    scheduler: Any = None,
) -> tuple[list[tuple[str, dict[str, Any]]], GroundSummary]:
    """Pin every cited publication of ``records`` (``(name, record)`` pairs) and pin the records.

    Pinning (the network) always runs here, ``workers`` threads under each service's rate limit:
    spreading it over machines would multiply the request rate the services allow. With
    ``scheduler`` (see :func:`bioevidence.gate.batch.run`) writing the pins into the records runs
    on Dask workers, which read the catalogue and store from the snapshot folder (shared), so the
    catalogue is saved there first; the records come back in input order.
    """
    items = list(records)
    wanted: list[str] = []
    for name, record in items:
        for ident in publication_ids(record, file=name):
            if ident not in wanted:
                wanted.append(ident)
    summary = GroundSummary()
    for result in pinner.pin_many(wanted, refresh=refresh, workers=workers, progress=progress):
        summary.add(result)
    if scheduler is None:
        recipe: Recipe[tuple[Catalogue, SnapshotStore]] = Ready((pinner.catalogue, pinner.store))
    else:
        folder = str(Path(pinner.store.root).resolve())
        pinner.catalogue.save(folder)
        recipe = _PinsRecipe(folder, hashlib.sha256(pinner.catalogue.dumps().encode()).hexdigest())
    grounded: list[tuple[str, dict[str, Any]]] = []
    for batch, out in map_batches(_pin_batch, recipe, items, scheduler=scheduler, base=64):
        if isinstance(out, BatchFailed):
            raise out.error or ClusterError(f"{out.message}; no grounded record was written")
        grounded.extend((name, record) for (name, _), record in zip(batch, out, strict=True))
    return grounded, summary
