"""The source-bytes grounder.

:class:`SourceBytesGrounder` (``source-bytes``) checks every source artifact of a record, of any
type: bytes for its ``sha256`` are in the store (else BEV015) and re-hash to it (else BEV014).
``observed_sha256`` is ignored (the contracts compare it, BEV002). Bytes are streamed and
hashed, never kept. A pinned file that cannot be read or inflates past the cap is not
"missing": the store's ``SourceAccessError`` / ``LimitError`` propagates and the validator
reports a GROUNDER_FAILURE (an operational error for the operator; the record is rejected).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import IntegrityError, SourceError
from ...sources.store import SHA256_RE, SnapshotStore
from ..findings import Finding
from ..grounding import Grounding, finding
from .common import requested_uses

__all__ = ["SourceBytesGrounder"]

# The store's file names: <sha256>[.<ext>][.gz] (see bioevidence.sources.store).
_NAME_RE = re.compile(r"^(?P<sha>[0-9a-f]{64})(?:\.[a-z0-9]{1,16})?(?:\.gz)?$")


class SourceBytesGrounder:
    """Every source artifact's bytes are pinned in the store and hash to its ``sha256``."""

    name = "source-bytes"

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    @classmethod
    def from_directory(cls, folder: Path | str) -> SourceBytesGrounder:
        return cls(SnapshotStore(folder))

    def ground(self, record: dict[str, Any]) -> Grounding:
        uses = requested_uses(record)
        found: list[Finding] = []
        sources = record.get("source_artifacts")
        for index, source in enumerate(sources if isinstance(sources, list) else []):
            if not isinstance(source, dict):
                continue
            sha = source.get("sha256")
            path = f"$.source_artifacts[{index}]"
            if not isinstance(sha, str) or not SHA256_RE.match(sha):
                found.append(finding("BEV015", f"sha256 {sha!r} is not a SHA-256, so no pinned bytes can "
                                     "be found for this source", f"{path}.sha256", uses))
                continue
            try:
                self.store.check(sha)
            except IntegrityError as exc:
                found.append(finding("BEV014", f"the pinned bytes for {sha} do not hash to it: {exc.message}",
                                     f"{path}.sha256", uses))
            except SourceError:
                found.append(finding("BEV015", f"no bytes for sha256 {sha} are pinned in {self.store.root}; "
                                     "pin the source (bioevidence ground) or point --snapshot-dir at the "
                                     "folder that holds it", f"{path}.sha256", uses))
        return Grounding(found)
