"""The pin stage: the content-addressed store, the catalogue of works, pinned reference
releases and the only network clients (Europe PMC, NCBI E-utilities, Crossref).

Light modules are re-exported here; the HTTP clients (httpx, lxml) are imported from their
own modules (``bioevidence.sources.http``, ``.europepmc``, ``.eutils``, ``.crossref``, ``.pin``).
"""

from __future__ import annotations

from .catalogue import CATALOGUE_NAME, Catalogue, Work
from .identifiers import PublicationId, canonical, parse_identifier
from .metadata import Notice, WorkMetadata, parse_metadata
from .store import Problem, SnapshotStore, sha256_hex

__all__ = [
    "CATALOGUE_NAME",
    "Catalogue",
    "Notice",
    "Problem",
    "PublicationId",
    "SnapshotStore",
    "Work",
    "WorkMetadata",
    "canonical",
    "parse_identifier",
    "parse_metadata",
    "sha256_hex",
]
