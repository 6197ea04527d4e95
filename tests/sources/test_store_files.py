"""``SnapshotStore(root, files={sha: path})``: a pinned release read where it lies (a data file shipped
as ``name.jsonl.gz``, not renamed to its hash), re-hashed on read like the folder's own files."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from bioevidence import IntegrityError, SnapshotStore


def test_a_release_file_is_read_in_place_by_its_hash_and_a_wrong_hash_is_refused(shared_data: Path,
                                                                                tmp_path: Path) -> None:
    release = shared_data / "civic_corpus" / "civic-evidence.jsonl.gz"
    data = gzip.decompress(release.read_bytes())
    sha = hashlib.sha256(data).hexdigest()
    store = SnapshotStore(tmp_path / "empty", files={sha: release})
    assert store.has(sha) and store.read(sha) == data
    assert (sha, release) in list(store.entries())
    assert not (tmp_path / "empty").exists()  # reading never creates the folder
    wrong = "0" * 64
    with pytest.raises(IntegrityError):
        SnapshotStore(tmp_path, files={wrong: release}).read(wrong)
