"""A fingerprint of the code that turns pinned bytes into text (the JATS and plain-text readers and
normalisation), for on-disk caches of parsed articles: a cache entry written by another version of
the readers is never read back, so a reader fix takes effect without anyone clearing a cache."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from .._version import __version__

#: The modules whose code decides a parsed article's passages.
READERS = ("jats.py", "jats_walk.py", "jats_inline.py", "plain.py", "normalize.py", "tokens.py")


@functools.cache
def reader_fingerprint() -> str:
    """SHA-256 (hex) of the reader modules' source; the package version when a source is not readable
    (a build without ``.py`` files), so a new release still misses the old entries."""
    digest = hashlib.sha256()
    folder = Path(__file__).resolve().parent
    for name in READERS:
        try:
            digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
        except OSError:
            digest.update(f"{name}\0{__version__}\0".encode())
    return digest.hexdigest()
