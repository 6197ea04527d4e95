"""The content-addressed store: names are hashes of uncompressed bytes, never trusted."""

from __future__ import annotations

import gzip
import multiprocessing
import shutil
from pathlib import Path

import pytest

from bioevidence.errors import ConfigurationError, IntegrityError, SourceError
from bioevidence.sources.store import SnapshotStore, sha256_hex


def test_put_then_read_round_trips_and_names_file_by_uncompressed_hash(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"<article/>", ext="xml")
    assert sha == sha256_hex(b"<article/>")
    assert store.find(sha) == tmp_path / f"{sha}.xml.gz"
    assert store.read(sha) == b"<article/>"
    assert gzip.decompress((tmp_path / f"{sha}.xml.gz").read_bytes()) == b"<article/>"


def test_gzip_is_byte_stable(tmp_path: Path) -> None:
    a, b = SnapshotStore(tmp_path / "a"), SnapshotStore(tmp_path / "b")
    sha = a.put(b"same bytes", ext="json")
    b.put(b"same bytes", ext="json")
    assert (a.root / f"{sha}.json.gz").read_bytes() == (b.root / f"{sha}.json.gz").read_bytes()


def test_uncompressed_put_is_plain_file(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"plain", compress=False)
    assert (tmp_path / sha).read_bytes() == b"plain"
    assert store.read(sha) == b"plain"


def test_missing_hash_is_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        SnapshotStore(tmp_path).read("0" * 64)
    assert not isinstance(info.value, IntegrityError)
    assert "bioevidence ground" in info.value.message


@pytest.mark.parametrize("name", ["../etc/passwd", "A" * 64, "abc", "0" * 63 + "/", "0" * 65, ""], ids=repr)
def test_names_that_are_not_lowercase_sha256_are_refused(tmp_path: Path, name: str) -> None:
    store = SnapshotStore(tmp_path)
    for call in (store.find, store.has, store.read):
        with pytest.raises(ConfigurationError):
            call(name)


def test_bad_extension_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        SnapshotStore(tmp_path).put(b"x", ext="../x")


def test_corrupted_file_raises_integrity_error_naming_file(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"hello world", ext="txt")
    path = store.find(sha)
    assert path is not None
    path.write_bytes(gzip.compress(b"hello w0rld", mtime=0))
    with pytest.raises(IntegrityError) as info:
        SnapshotStore(tmp_path).read(sha)
    assert path.name in info.value.message


def test_truncated_gzip_raises_integrity_error(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"x" * 10000 + bytes(range(256)) * 40, ext="bin")
    path = store.find(sha)
    assert path is not None
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(IntegrityError) as info:
        SnapshotStore(tmp_path).read(sha)
    assert info.value.context["problem"] == "truncated"
    assert [p.kind for p in SnapshotStore(tmp_path).verify()] == ["truncated"]


def test_verified_bytes_are_cached_in_process(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"cached", ext="txt")
    assert store.read(sha) == b"cached"
    path = store.find(sha)
    assert path is not None
    path.unlink()
    assert store.read(sha) == b"cached"
    store.forget()
    with pytest.raises(SourceError):
        store.read(sha)


def test_put_repairs_a_corrupted_copy(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    sha = store.put(b"good", ext="txt")
    path = store.find(sha)
    assert path is not None
    path.write_bytes(b"garbage")
    assert store.put(b"good", ext="txt") == sha
    assert SnapshotStore(tmp_path).read(sha) == b"good"
    assert store.verify() == []


def test_verify_reports_missing_referenced_hashes(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    problems = store.verify(expected=["1" * 64])
    assert [(p.kind, p.sha256) for p in problems] == [("missing", "1" * 64)]


def _writer(root: str, seed: int) -> None:
    store = SnapshotStore(root)
    for i in range(30):
        store.put(f"payload {i % 10}".encode() * 500, ext="txt")
        store.put(f"own {seed} {i}".encode(), ext="txt")


def test_several_processes_writing_at_once_leave_only_whole_files(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), n)) for n in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    store = SnapshotStore(tmp_path)
    assert store.verify() == []
    assert len(list(store.entries())) == 10 + 4 * 30
    assert not list(tmp_path.glob("*.tmp"))


def test_reference_corpus_verifies(shared_data: Path) -> None:
    store = SnapshotStore(shared_data / "civic_corpus" / "snapshots")
    assert store.verify() == []
    assert len(list(store.entries())) == 300


def test_flipped_byte_in_a_copy_of_the_reference_corpus_is_named(shared_data: Path, tmp_path: Path) -> None:
    copy = tmp_path / "snapshots"
    shutil.copytree(shared_data / "civic_corpus" / "snapshots", copy)
    victim = sorted(copy.glob("*.xml.gz"))[3]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    victim.chmod(0o644)
    victim.write_bytes(bytes(raw))
    problems = SnapshotStore(copy).verify()
    assert [Path(p.path).name for p in problems] == [victim.name]
    assert problems[0].kind in ("corrupted", "truncated")
