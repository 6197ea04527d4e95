"""On-disk cache of compact indexes built from pinned releases, keyed by the release's SHA-256.

Building an index from a full release (the Cell Ontology, the HGNC complete set, a JATS
paper) takes from milliseconds to seconds; loading it back from this cache takes a few
milliseconds. Entries are ``marshal`` dumps of plain values (tuples, dicts, strings, numbers):
fast, and unable to build arbitrary objects, unlike pickle. The key is the SHA-256 of the
source bytes plus a format version, so a changed release or index format never reuses a stale
entry; a damaged entry is rebuilt.

Location: ``$BIOEVIDENCE_CACHE``, else ``$BIOEVIDENCE_HOME/cache``, else
``$XDG_CACHE_HOME/bioevidence``, else ``~/.cache/bioevidence``. ``BIOEVIDENCE_CACHE=off``
disables it.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...io import atomic_write_bytes


def cache_root() -> Path | None:
    """The cache folder, or ``None`` when caching is off."""
    explicit = os.environ.get("BIOEVIDENCE_CACHE")
    if explicit:
        return None if explicit.lower() in ("off", "0", "none") else Path(explicit)
    home = os.environ.get("BIOEVIDENCE_HOME")
    if home:
        return Path(home) / "cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "bioevidence"


def cached(kind: str, sha256: str, version: int, build: Callable[[], Any], root: Path | None = None) -> Any:
    """The value ``build()`` returns for these source bytes, from the cache when present.

    ``build`` must return plain marshal-able values. Cache write failures are ignored (the
    value is still returned); a damaged entry is rebuilt and rewritten.
    """
    folder = root if root is not None else cache_root()
    if folder is None:
        return build()
    path = folder / kind / f"{sha256}.v{version}.marshal"
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, marshal.dumps(value))
    except (OSError, ValueError):
        pass
    return value
