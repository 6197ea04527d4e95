"""Point 5: a gzip bomb in a snapshot folder (1 MB on disk, 1 GiB inflated) costs megabytes, not gigabytes.

Measured before the defence on this machine: ``validate --snapshot-dir`` peaked at 2083 MB and
``sources verify`` at 2072 MB on this very bomb. Now gzip is inflated as a stream, hashed while
streaming, and refused past ``max_inflated`` (256 MiB by default): the source-bytes grounder and
``sources verify`` never hold more than a chunk. Every run here is a child process under a 1 GiB
address-space limit (the old code cannot even finish) and its peak RSS is read from ``wait4``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from bioevidence.errors import IntegrityError, LimitError
from bioevidence.sources.store import SnapshotStore
from security.harness import MB, gzip_bomb, run_cli

RECORD = Path(__file__).resolve().parents[2] / "examples" / "records" / "01_admitted_curated_claim.json"
CLAIMED = "ee" * 32  # the hash the attacker's record cites; the bomb is named for it


def _staged(tmp_path: Path, inflated: int = 1024 * MB) -> tuple[Path, Path]:
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    size = gzip_bomb(snapshots / f"{CLAIMED}.xml.gz", inflated)
    assert size < 2 * MB
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    for source in record["source_artifacts"]:
        source["sha256"] = CLAIMED
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return snapshots, path


def test_validate_refuses_the_bomb_as_an_operational_failure_in_bounded_memory(tmp_path: Path) -> None:
    snapshots, record = _staged(tmp_path)
    run = run_cli(["validate", str(record), "--snapshot-dir", str(snapshots)], cwd=tmp_path, cpu_seconds=30,
                  address_space_mb=1024)
    assert run.code == 1 and not run.traceback, run.stderr
    report = json.loads(run.stdout)
    failures = [f for f in report["findings"] if f["rule_id"] == "GROUNDER_FAILURE"]
    assert failures and "max_inflated" in failures[0]["message"] and "--max-inflated" in failures[0]["message"]
    assert report["overall_status"] == "rejected"  # fail closed
    assert run.peak_rss_mb < 150, run.peak_rss_mb


def test_sources_verify_reports_the_bomb_in_bounded_memory(tmp_path: Path) -> None:
    snapshots, _ = _staged(tmp_path)
    run = run_cli(["sources", "verify", str(snapshots)], cwd=tmp_path, cpu_seconds=30, address_space_mb=1024)
    assert run.code == 1 and not run.traceback, run.stderr
    kind, name, detail = run.stdout.splitlines()[0].split("\t")
    assert kind == "too_large" and name.startswith(CLAIMED) and "max_inflated" in detail
    assert run.peak_rss_mb < 150, run.peak_rss_mb


def test_the_cap_is_configurable_by_flag_and_environment(tmp_path: Path) -> None:
    """A genuine 40 MiB file: refused under a 32 MiB cap (flag or environment), verified under the default."""
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    data = bytes(40 * MB)
    sha = hashlib.sha256(data).hexdigest()
    (snapshots / f"{sha}.bin.gz").write_bytes(gzip.compress(data, mtime=0))
    assert run_cli(["sources", "verify", str(snapshots)], cwd=tmp_path).code == 0
    flag = run_cli(["sources", "verify", str(snapshots), "--max-inflated", "32M"], cwd=tmp_path)
    env = run_cli(["sources", "verify", str(snapshots)], cwd=tmp_path, env={"BIOEVIDENCE_MAX_INFLATED": "32M"})
    for run in (flag, env):
        assert run.code == 1 and run.stdout.startswith("too_large") and "32 MiB" in run.stdout
    bad = run_cli(["sources", "verify", str(snapshots), "--max-inflated", "lots"], cwd=tmp_path)
    assert bad.code == 3 and "not a positive size" in bad.stderr
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    for source in record["source_artifacts"]:
        source["sha256"] = sha
    (tmp_path / "r.json").write_text(json.dumps(record), encoding="utf-8")
    gate = ["validate", "r.json", "--snapshot-dir", str(snapshots)]
    assert "GROUNDER_FAILURE" not in run_cli(gate, cwd=tmp_path).stdout
    capped = run_cli([*gate, "--max-inflated", "32M"], cwd=tmp_path)
    assert capped.code == 1 and "GROUNDER_FAILURE" in capped.stdout and "32 MiB" in capped.stdout


def test_read_streams_and_check_keeps_nothing(tmp_path: Path) -> None:
    """The library: ``check`` verifies in a chunk of memory; ``read`` stops at the cap; both remember a refusal."""
    store = SnapshotStore(tmp_path, max_inflated=64 * MB)
    gzip_bomb(tmp_path / f"{CLAIMED}.xml.gz", 256 * MB)
    with pytest.raises(LimitError, match="64 MiB"):
        store.check(CLAIMED)
    with pytest.raises(LimitError, match="64 MiB"):
        store.read(CLAIMED)
    good = b"<article>pinned</article>"
    sha = store.put(good, "xml")
    store.check(sha)
    assert store.read(sha) == good


def test_a_truncated_or_garbage_gzip_snapshot_is_corrupted_not_a_crash(tmp_path: Path) -> None:
    data = b"<article>" + b"x" * 100_000 + b"</article>"
    sha = hashlib.sha256(data).hexdigest()
    packed = gzip.compress(data, mtime=0)
    store = SnapshotStore(tmp_path)
    (tmp_path / f"{sha}.xml.gz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(IntegrityError, match="truncated"):
        store.read(sha)
    (tmp_path / f"{sha}.xml.gz").write_bytes(b"\x1f\x8b\x08\x00garbage" * 10)
    with pytest.raises(IntegrityError):
        store.check(sha)


def test_an_ontology_bomb_is_refused_at_load(tmp_path: Path) -> None:
    bomb = tmp_path / "cl.obo.gz"
    gzip_bomb(bomb, 1024 * MB)
    run = run_cli(["validate", str(RECORD), "--ontology", str(bomb)], cwd=tmp_path, cpu_seconds=30,
                  address_space_mb=1024, env={"BIOEVIDENCE_HOME": str(tmp_path / "home")})
    assert run.code == 3 and not run.traceback, run.stderr
    error = json.loads(run.stderr.splitlines()[-1])
    assert "max_inflated" in error["message"] and error["file"] == str(bomb)
    assert run.peak_rss_mb < 400, run.peak_rss_mb  # at most the cap (256 MiB) of inflated bytes


@pytest.mark.parametrize("name", ["paper.xml.gz", "vocabulary.jsonl.gz", "hgnc.tsv.gz", "cl.obo.gz",
                                  "corpus.jsonl.gz"])
def test_local_papers_vocabularies_and_lexicon_releases_inflate_through_the_capped_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """`sources pin-local`, `ask --vocabulary`, the planner's HGNC/CL lexicon and `index build` over a
    JSONL corpus read gzip through the one capped reader: a bomb over BIOEVIDENCE_MAX_INFLATED is
    refused, never inflated whole."""
    from bioevidence.librarian.lexicon import Lexicon
    from bioevidence.sources.local import pin_local

    monkeypatch.setenv("BIOEVIDENCE_MAX_INFLATED", "4M")
    bomb = tmp_path / name
    gzip_bomb(bomb, 16 * MB)
    with pytest.raises(LimitError):
        if name.startswith("paper"):
            pin_local([bomb], tmp_path / "snapshots")
        elif name.startswith("corpus"):  # `index build corpus.jsonl.gz` (issue 25, cause 2)
            from bioevidence.librarian.corpus import source_units

            source_units(bomb)
        elif name.startswith("vocabulary"):
            Lexicon().add_vocabulary(bomb)
        else:
            Lexicon.load(bomb if name.startswith("hgnc") else None, bomb if name.startswith("cl") else None)
