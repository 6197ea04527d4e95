"""A knowledge base folder and its ledger of entries.

::

    KB/
      kb.json          {"version": 1, "model": ..., "chunker": ..., "entries": N, "updated_at": ...}
      snapshots/       content-addressed store + literature.json: every tier's bytes, pinned
      entries.jsonl    one line per entry: identifiers, the tier reached, the pinned hash, and each
                       attempt at a better tier with the reason it failed
      index/           the local index (bm25) of the entries' documents, with index/dense/ vectors
      vector-cache/    per-document vectors by content key (resume; shared by merges)

``entries.jsonl`` is appended (flushed and synced) after each entry, so an interrupted build
resumes with the next entry; a torn last line is ignored. It is rewritten atomically, in
bibliography order, when a build finishes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError

__all__ = ["TIERS", "Attempt", "EntryRecord", "KnowledgeBase"]

TIERS = ("fulltext", "abstract", "metadata")
KB_VERSION = 1


@dataclass(frozen=True)
class Attempt:
    tier: str  # the tier tried
    via: str  # local-file | snapshot | europepmc | ncbi | bibtex
    ok: bool
    reason: str = ""


@dataclass
class EntryRecord:
    key: str  # the bibliography's key (or the identifier, for a list of ids)
    fingerprint: str  # hash of what the entry says: a changed entry is acquired again
    ids: list[str]
    title: str
    tier: str  # fulltext | abstract | metadata
    via: str
    sha256: str  # the pinned bytes the entry's passages come from
    format: str  # snapshot | jats | text | abstract-text | bibtex
    work: str | None = None  # catalogue key in snapshots/ (read as the librarian reads it)
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    journal: str = ""
    source: str = ""  # the .bib it came from
    attempts: list[Attempt] = field(default_factory=list)
    pdf_sha256: str | None = None  # a PDF's own pinned bytes; ``sha256`` is then the text extracted from it
    extractor: str = ""  # what extracted that text ("pypdf 7.1.1"): same PDF and extractor, same text

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> EntryRecord:
        raw = dict(raw)
        raw["attempts"] = [Attempt(**a) for a in raw.get("attempts", [])]
        return cls(**raw)

    def why(self) -> str:
        """Why each better tier failed, for the per-entry report."""
        failed = [f"{a.tier} via {a.via}: {a.reason}" for a in self.attempts if not a.ok and a.reason]
        return "; ".join(failed)


def fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


class KnowledgeBase:
    """Paths and the ledger of one knowledge base folder."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    snapshots = property(lambda self: self.root / "snapshots")
    ledger = property(lambda self: self.root / "entries.jsonl")
    index = property(lambda self: self.root / "index")
    cache = property(lambda self: self.root / "vector-cache")
    meta_path = property(lambda self: self.root / "kb.json")

    def exists(self) -> bool:
        return self.meta_path.is_file()

    def require(self) -> KnowledgeBase:
        if not self.exists():
            raise ConfigurationError(f"{self.root} is not a knowledge base (no kb.json); build one with "
                                     "`bioevidence kb build refs.bib --kb DIR`")
        return self

    def meta(self) -> dict[str, Any]:
        return json.loads(self.meta_path.read_text(encoding="utf-8")) if self.exists() else {}

    def write_meta(self, **values: Any) -> None:
        from ...io import atomic_write_text

        meta = {"version": KB_VERSION, **self.meta(), **values}
        atomic_write_text(self.meta_path, json.dumps(meta, indent=2, sort_keys=True) + "\n")

    def records(self) -> dict[str, EntryRecord]:
        """Every entry in the ledger by key (a later line replaces an earlier one; a torn line is skipped)."""
        out: dict[str, EntryRecord] = {}
        if not self.ledger.is_file():
            return out
        for line in self.ledger.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028 is no line end
            try:
                rec = EntryRecord.from_json(json.loads(line))
            except (ValueError, TypeError, KeyError):
                continue  # the line an interruption cut short
            out[rec.key] = rec
        return out

    def append(self, record: EntryRecord) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with self.ledger.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def rewrite(self, records: Iterable[EntryRecord]) -> None:
        from ...io import atomic_write_text

        atomic_write_text(self.ledger, "".join(json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":"))
                                               + "\n" for r in records))

    def __iter__(self) -> Iterator[EntryRecord]:
        return iter(self.records().values())
